/**
 * The world beneath a slashkit plugin under `claude plugin test`: a fake Python helper and the engine calls
 * the plugin makes. The kit cannot start processes, so this answers `process.spawn` (a child that prints
 * `READY <socket>`, or one that fails to) and `http.fetch` (the helper's answers, scripted per test), and it
 * records what the plugin sent and did: bridge requests, spawns, transcript lines, toasts, commands run.
 *
 * Copied beside the test files into a laid-out plugin folder by tests/engine/test_kit.py; it imports only the
 * kit and the plugin's generated facts (host.ts, wire.ts), so the tests reach the plugin through the engine's `$`
 * alone.
 */
import type { Args, On } from 'claude-code'
import { mock, type MockClock } from 'claude-code/testing'
import { EVENT_PATH, EXIT_PATH, MAX_FORECAST_DEPTH, OPEN_PATH, VERSION } from './wire.js'

/** Where the n-th helper started says it listens. */
export function socket(n: number): string {
  return `/tmp/slashkit-kit/h${n}.sock`
}
/** Leads the stdout line that carries each request body the plugin sent. */
export const WIRE_MARK = 'slashkit-wire '
export const EVENT_URL = `http://localhost${EVENT_PATH}`
export const EXIT_URL = `http://localhost${EXIT_PATH}`
const OPEN_URL = `http://localhost${OPEN_PATH}`
/** The interpreter arguments a laid-out plugin starts, and how long it waits (slashkit.adapters.claude_code.plugins). */
export { ANSWER_TIMEOUT_MS, HELPER_ARGS, START_TIMEOUT_MS } from './host.js'

export const START = { surface: 'terminal', isInteractive: true, cwd: '/tmp/project' } as const
/** What the engine adds to a command the person typed. */
export const TYPED = { origin: { kind: 'composer' }, presentation: { isFullscreen: false, columns: 80 } } as const

export type { Effect } from '../hooks/bridge.js'
import type { Effect, WireReply } from '../hooks/bridge.js'
export { MAX_FORECAST_DEPTH, VERSION }

/** A bridge answer; what is left out is filled in (the next version, no wants, no reply, no effects). */
export type Answer = { version?: number; wants?: string[]; reply?: WireReply | null; effects?: Effect[] }

/**
 * How the fake helper answers one request: a bridge answer; a raw HTTP answer (`status`, `text`); a failed
 * request (`deny` stands for the engine's own error, such as `failed: ECONNRESET`); or none at all (`hang`).
 */
export type Response = Answer | { raw: { status: number; text: string } } | { deny: string } | { hang: true }

/** One request the plugin sent to /v1/event. */
export type Sent = { event: string; e: Record<string, unknown> }

/**
 * How a spawned child behaves: `ready` prints READY and lives until `exit()`; `deny` fails to start (as the
 * engine answers a missing interpreter); `throw` is a spawn hook that throws (the kit skips it, so nothing
 * answers the spawn); `exit` writes a traceback and exits 1 before READY; `silent` lives without ever
 * printing READY; `noisy` writes a flood, a READY that does not start a line, its own READY line and another
 * after it; `relative` writes READY with a relative path and nothing else.
 */
export type SpawnMode = 'ready' | 'deny' | 'throw' | 'exit' | 'silent' | 'noisy' | 'relative'

export type CommandRan = { command: string; args: string; origin: unknown }
type CommandAnswer = { text?: string; exitCode?: number }

export type HelperOptions = {
  /** What `$.store` holds at the start. */
  store?: Readonly<Record<string, unknown>>
  /** The environment `$.env.get` reads. */
  env?: Readonly<Record<string, string>>
  /** Where the mocked clock starts. */
  now?: number
  /** The paths `$.fs.exists` finds; absent, every path is there. */
  paths?: readonly string[]
  /** What `$.fs.read` of `/proc/self/status` answers; absent, the read is refused, as where there is no /proc. */
  procStatus?: string
}

const stdout = (globalThis as { console?: { log: (line: string) => void } }).console

const NO_HEADERS: Readonly<Record<string, string>> = {}
const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json' }

type Waiter = { ready: () => boolean; resolve: () => void }

/** The fake helper and engine, with everything the plugin did so far. */
export class FakeHelper {
  readonly clock: MockClock
  /** The argv of every `$.process.spawn`. */
  readonly spawned: string[][] = []
  /** Every path `$.fs.exists` was asked about, in order. */
  readonly looked: string[] = []
  /** Every /v1/event request but the saved chains' (`offered`), in order. */
  readonly sent: Sent[] = []
  /** Every `SavedAsked` request, which each session start sends: kept apart, so `sent` holds what a test did. */
  readonly offered: Sent[] = []
  /** What the plugin set its status to (`$.ui.status`), in order; undefined clears it. */
  readonly statuses: Array<string | undefined> = []
  /** The socket each request of `sent` went to. */
  readonly sockets: string[] = []
  /** The sockets of the /v1/exit requests the plugin sent. */
  readonly exits: string[] = []
  /** `$.ui.log` lines shown in the transcript, and those sent to the debug log. */
  readonly logs: string[] = []
  readonly debug: string[] = []
  readonly toasts: string[] = []
  readonly invalidated: string[] = []
  /** The panes opened and closed beneath the plugins, and whether an open is placed. */
  readonly panes: string[] = []
  placed = true
  /** What the plugin registered: `/name` for a command, the tool's name for a tool, with the spec. */
  readonly registered: Array<{ name: string; spec: unknown }> = []
  /** The names the engine refuses to register, as it refuses one a command of the person's holds already. */
  readonly taken = new Set<string>()
  /** Every command the engine ran beneath the plugin. */
  readonly ran: CommandRan[] = []
  /** How each spawn behaves, taken in order; `ready` once they run out. */
  spawnModes: SpawnMode[] = []
  /** The helper's script: its answer to each request (a promise holds the answer back). */
  answer: (sent: Sent) => Response | Promise<Response> = () => ({})
  /** Its answer to `SavedAsked`: by default, no saved chains. */
  saved: (sent: Sent) => Response | Promise<Response> = () => ({ reply: savedReply([]) })
  /** The argv of every `$.process.run`, and how each run ends: a result, or a rejection (a child the engine killed
   * at its timeout rejects the call). By default, as a `lich` that is not there: exit 127. */
  readonly processRuns: string[][] = []
  processRun: (argv: readonly string[]) => { exitCode: number; stdout: string } | { reject: string } = () => ({ exitCode: 127, stdout: '' })
  /** The engine's answer to a command run beneath the plugin; a throw makes the run fail. */
  command: (e: CommandRan) => CommandAnswer | Promise<CommandAnswer> = e => ({ text: `ran /${e.command} ${e.args}` })
  /** Every socket and path the plugin POSTed to, in order: `<socket> <path>`. */
  readonly posted: string[] = []
  /** The sockets of the helpers still running; a request to another is refused, as a dead helper's is. */
  readonly live = new Set<string>()
  /** The events the current helper has answered, as its `version` counts them. */
  private version = 0
  private readonly children: Array<(code: number) => void> = []
  private readonly waiters: Waiter[] = []

  constructor(clock: MockClock) {
    this.clock = clock
  }

  /** The events sent, by name only. */
  events(): string[] {
    return this.sent.map(s => s.event)
  }

  /** Resolves once the plugin has sent `count` requests for this event. */
  received(event: string, count = 1): Promise<Sent> {
    const matching = (): Sent[] => this.sent.filter(s => s.event === event)
    return this.until(() => matching().length >= count).then(() => matching()[count - 1] as Sent)
  }

  /** Resolves once the condition holds, checked after everything the fake records. */
  until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve()
    return new Promise(resolve => this.waiters.push({ ready, resolve }))
  }

  /** Ends every running child with this exit code, as a helper that dies does. */
  exit(code = 0): void {
    for (const end of this.children.splice(0)) end(code)
  }

  /** Marks that something was recorded, waking the waits it satisfies. */
  changed(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.ready()) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  }

  nextMode(): SpawnMode {
    return this.spawnModes.shift() ?? 'ready'
  }

  /** Registers a child that lives until `exit()`; resolves with its exit code. A new helper counts from 0. */
  lifetime(): Promise<number> {
    this.version = 0
    return new Promise(resolve => this.children.push(resolve))
  }

  /** Fills in a bridge answer the way the real helper writes one. */
  wire(answer: Answer): string {
    const version = answer.version ?? this.version + 1
    this.version = version
    return JSON.stringify({ v: VERSION, version, wants: answer.wants ?? [], reply: answer.reply ?? null, effects: answer.effects ?? [] })
  }
}

/** A promise and the function that resolves it. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined
  const promise = new Promise<T>(r => {
    resolve = r
  })
  return { promise, resolve }
}

/** A promise that never settles: a helper that never answers. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined)
}

/** A reply that answers the typed command with this text. */
export function commandAnswer(value: string): WireReply {
  return { kind: 'command.answer', text: value }
}

/** A saved chain as the helper names it in a `saved` reply. */
export type SavedChain = { name: string; description: string; argument_hint: string }

/** The helper's answer to `SavedAsked`: these saved chains, and the names it leaves to the engine. */
export function savedReply(chains: SavedChain[], shadowed: string[] = []): WireReply {
  return { kind: 'saved', chains, shadowed }
}

/** A reply that answers the fail tool's call with this text (not an error). */
export function toolAnswer(value: string): WireReply {
  return { kind: 'tool.answer', text: value }
}

/**
 * Answers everything the slashkit plugins call beneath them; call it before the first call on `$`.
 * The clock, store and environment are the kit's mocks; the rest records into the returned FakeHelper.
 */
export function fakeHelper(on: On, options: HelperOptions = {}): FakeHelper {
  const fake = new FakeHelper(mock.clock(on, { now: options.now ?? 1_000_000 }))
  mock.store(on, options.store ?? {})
  // The fake is a helper of the session's own: the shared one is a process the kit cannot start (tests/engine).
  mock.env(on, { SLASHKIT_HELPER: 'session', ...options.env })
  // The hook's own variables, read with the others when a helper is started (bridge.ts, `shared`): none here.
  on('process.hookEnv', () => ({ value: {} }))

  on('fs.exists', (_, e) => {
    fake.looked.push(e.path)
    return { value: options.paths === undefined || options.paths.includes(e.path) }
  })
  on('fs.read', (_, e) => {
    if (e.path === '/proc/self/status' && options.procStatus !== undefined) return { value: options.procStatus }
    return { deny: `ENOENT: no such file or directory, open '${e.path}'` }
  })
  on('session.start', (_, e) => ({ cwd: e.cwd }))
  on('command.register', (_, e) => {
    if (fake.taken.has(e.name)) return { deny: `"/${e.name}" refused: it is the user's /${e.name}` }
    fake.registered.push({ name: `/${e.name}`, spec: e })
    return { value: { command: e.name } }
  })
  on('tool.register', (_, e) => {
    fake.registered.push({ name: e.name, spec: e })
    return { value: { tool: `mcp__slash-chain__${e.name}` } }
  })
  // The engine's own tools, beneath what a plugin's `tool.list` hook adds.
  on('tool.list', () => ({ value: [{ name: 'Bash', description: 'Runs a shell command', mcp: false }] }))
  on('command.list', () => ({
    value: [
      { name: 'compact', description: 'Clear conversation history but keep a summary', source: 'builtin' },
      { name: 'model', description: 'Set the AI model', source: 'builtin' },
      { name: 'slash-chain', description: 'Runs /a && /b', source: 'plugin', plugin: 'slash-chain' },
      // The saved chains the plugin registered, as the engine lists a plugin's commands.
      ...fake.registered
        .filter(r => r.name.startsWith('/') && r.name !== '/slash-chain')
        .map(r => ({ name: r.name.slice(1), description: '', source: 'plugin' as const, plugin: 'slash-chain' })),
    ],
  }))

  on('ui.log', (_, e) => {
    if (e.to === 'debug') fake.debug.push(e.text)
    else fake.logs.push(e.text)
    fake.changed()
    return { value: undefined }
  })
  on('ui.toast', (_, e) => {
    fake.toasts.push(e.text)
    fake.changed()
    return { value: undefined }
  })
  on('ui.status', (_, e) => {
    fake.statuses.push(e.text)
    fake.changed()
    return { value: undefined }
  })
  on('ui.invalidate', (_, e) => {
    fake.invalidated.push(e.event)
    fake.changed()
    return { value: undefined }
  })

  on('ui.open', (_, e) => {
    fake.panes.push(`open ${e.id}`)
    fake.changed()
    return { value: fake.placed ? { isPlaced: true } : { isPlaced: false, reason: 'no-surface' } }
  })
  on('ui.close', (_, e) => {
    fake.panes.push(`close ${e.id}`)
    fake.changed()
    return { value: undefined }
  })
  on('tool.describe', (_, e) => ({ description: e.description }))
  on('skill.prompt', (_, e) => ({ text: e.text }))
  on('turn.complete', (_, e) => ({ text: e.answer }))
  on('prompt.submit', (_, e) => ({ text: e.text }))

  on('process.run', (_, e) => {
    fake.processRuns.push([...e.argv])
    fake.changed()
    const ran = fake.processRun(e.argv)
    if ('reject' in ran) return { deny: ran.reject }
    return { value: { ...ran, stderr: '', isStdoutTruncated: false, isStderrTruncated: false } }
  })

  on('command.run', async (_, e) => {
    const ran = { command: e.command, args: e.args ?? '', origin: e.origin }
    fake.ran.push(ran)
    fake.changed()
    return await fake.command(ran)
  })

  on('process.spawn', async function* (_, e) {
    fake.spawned.push([...e.argv])
    fake.changed()
    const mode = fake.nextMode()
    if (mode === 'throw') throw new Error('spawn hook failed')
    if (mode === 'deny') return { deny: `failed to start: ENOENT: no such file or directory, posix_spawn '${e.argv[0] ?? ''}'` }
    if (mode === 'exit') {
      yield { stream: 'stderr', text: 'Traceback (most recent call last):\nModuleNotFoundError: No module named slashkit\n' }
      return { value: { code: 1, signal: null } }
    }
    const lifetime = fake.lifetime()
    const path = socket(fake.spawned.length)
    // The line may come in pieces, as a pipe delivers it.
    if (mode === 'ready') {
      fake.live.add(path)
      yield { stream: 'stdout', text: 'READY ' }
      yield { stream: 'stdout', text: `${path}\n` }
    }
    if (mode === 'noisy') {
      fake.live.add(path)
      yield { stream: 'stdout', text: 'x'.repeat(100_000) }
      yield { stream: 'stdout', text: ` READY ${socket(99)}\n` }
      yield { stream: 'stdout', text: `READY ${path}\nREADY ${socket(98)}\n` }
    }
    if (mode === 'relative') yield { stream: 'stdout', text: 'READY rel/s\n' }
    const code = await lifetime
    fake.live.delete(path)
    return { value: { code, signal: null } }
  })

  on('http.fetch', async (_, e) => {
    const init = e.init ?? {}
    fake.posted.push(`${init.socketPath ?? ''} ${e.url.replace('http://localhost', '')}`)
    // No shared helper listens here (the kit cannot start one: tests/engine), so no session opens.
    if (e.url.startsWith(OPEN_URL)) return { deny: `failed: ECONNREFUSED: no shared helper on ${init.socketPath ?? ''}` }
    if (e.url === EXIT_URL) {
      fake.exits.push(init.socketPath ?? '')
      fake.changed()
      return { value: { status: 200, ok: true, headers: NO_HEADERS, text: '' } }
    }
    const raw = typeof init.body === 'string' ? init.body : 'null'
    // One line per request on stdout: tests/engine/test_kit.py decodes each with the helper's own reader.
    // The kit gives test files a `console` (2.1.328), though a hooks module has none and no type declares it.
    stdout?.log(`${WIRE_MARK}${raw}`)
    const body = JSON.parse(raw) as { v: unknown; event: string; e: Record<string, unknown> }
    if (e.url !== EVENT_URL || init.method !== 'POST' || body.v !== VERSION) {
      return { deny: `fake helper: unexpected request ${e.url} ${JSON.stringify(init)}` }
    }
    const request = { event: body.event, e: body.e }
    const path = init.socketPath ?? ''
    if (!fake.live.has(path)) return { deny: `failed: ECONNREFUSED: nothing listens on ${path}` }
    const offer = request.event === 'SavedAsked'
    if (offer) fake.offered.push(request)
    else {
      fake.sent.push(request)
      fake.sockets.push(path)
    }
    fake.changed()
    const response = await (offer ? fake.saved : fake.answer)(request)
    if ('hang' in response) return await never<{ deny: string }>()
    if ('deny' in response) return { deny: response.deny }
    if ('raw' in response) {
      const { status, text: raw } = response.raw
      return { value: { status, ok: status >= 200 && status < 300, headers: NO_HEADERS, text: raw } }
    }
    return { value: { status: 200, ok: true, headers: JSON_HEADERS, text: fake.wire(response) } }
  })
  return fake
}

/** What the engine hands a typed command; `origin` as given. */
export function typed(command: string, args: string, origin: Args<'command.run'>['origin'] = TYPED.origin): Args<'command.run'> {
  return { command, args, origin, presentation: TYPED.presentation }
}
