/**
 * The world beneath slashkit's opencode plugin, for tests/node/opencode.test.ts: a fake opencode (the plugin input's
 * `client`, and the hooks called as opencode 1.18.33 calls them, docs/opencode.md) and a fake Python helper.
 *
 * The helper is faked behind the real Node host (node-host.ts): `SLASHKIT_PYTHON` names a small Node script that
 * the plugin spawns as it would spawn Python; it says `READY <its own socket>` and relays each request to this
 * process's control socket, naming itself, so a test scripts the answers and sees which helper (which session) got
 * which event. Everything a person would see is recorded: transcript lines, what reached the model, compactions,
 * toasts, and each command's answer (a thrown hook is opencode's HTTP 500).
 */
import type { Hooks, PluginInput } from '@opencode-ai/plugin'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SlashkitPlugin } from './opencode/plugins/slashkit.js'
import { VERSION } from './opencode/plugins/slashkit/wire.js'

/** A request the plugin sent a helper, and which helper (its process id) got it. */
/** An event a helper got: which helper, the session its environment names (`OPENCODE_SESSION_ID`), and the event. */
export type Sent = { helper: number; session: string; seq: number; event: string; e: Record<string, unknown> }
/** How the fake helper answers: fields of a sound answer (the version is the request's `seq`), or raw HTTP. */
export type Response = { wants?: string[]; reply?: unknown; effects?: unknown[] } | { raw: { status: number; text: string } }

/** The helper: a Node script that serves its own unix socket and relays each request to the control socket. */
const RELAY = `#!/usr/bin/env node
const http = require('node:http')
const control = process.env.SLASHKIT_FAKE_CONTROL
const parent = process.ppid
const path = require('node:path').join(process.env.SLASHKIT_FAKE_DIR, 'h' + process.pid + '.sock')
http.createServer((req, res) => {
  const body = []
  req.on('data', chunk => body.push(chunk))
  req.on('end', () => {
    const headers = { 'content-type': 'application/json', 'x-helper': String(process.pid), 'x-session': process.env.OPENCODE_SESSION_ID ?? '' }
    const relayed = http.request({ socketPath: control, path: req.url, method: 'POST', headers }, answer => {
      const back = []
      answer.on('data', chunk => back.push(chunk))
      answer.on('end', () => {
        res.writeHead(answer.statusCode, { 'content-type': 'application/json' })
        res.end(Buffer.concat(back))
        if (req.url === '/v1/exit') process.exit(0)
      })
    })
    relayed.on('error', () => res.destroy())
    relayed.end(Buffer.concat(body))
  })
}).listen(path, () => process.stdout.write('READY ' + path + '\\n'))
process.on('SIGTERM', () => process.exit(0))
setInterval(() => { if (process.ppid !== parent) process.exit(0) }, 200).unref()
`

/** Waits until `ready()` holds, checking every few milliseconds; fails after `ms`. */
export async function until(ready: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!ready()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

/**
 * The core's answers to `/greet Bob && /bye Alice` in pi's extension (and omp's, over it), forecasts left out, each
 * report asked for: `wants` is what the shim is asked to report; the first step's prompt gets the note `NOTE`; once
 * its turn ended the second step runs, from a timer (`'timer'`, as pi's `agent_settled` has it) or at once
 * (`'run'`, omp's end of a run).
 */
export function chainOfTwo(wants: string[], next: 'timer' | 'run'): (sent: Sent) => { wants?: string[]; reply?: unknown; effects?: unknown[] } {
  let turns = 0
  const bye = { kind: 'run', command: 'bye', args: 'Alice', token: 3 }
  return sent => {
    switch (sent.event) {
      case 'ChainTyped':
        return { wants, reply: { kind: 'run.typed', args: 'Bob', token: 1 }, effects: [{ kind: 'log', text: '1/2: /greet Bob' }] }
      case 'PromptHanded':
        return { wants, reply: turns === 0 ? { kind: 'prompt', text: `${String(sent.e['text'])}\n\nNOTE` } : null }
      case 'TurnEnded':
        turns += 1
        if (sent.e['reason'] !== 'answer') return { effects: [{ kind: 'log', text: `stopped: ${String(sent.e['reason'])}` }] }
        if (turns !== 1) return {}
        return { wants, effects: [{ kind: 'log', text: '2/2: /bye Alice' }, next === 'timer' ? { kind: 'after', ms: 0, token: 2 } : bye] }
      case 'TimerFired':
        return { wants, effects: [bye] }
      case 'RunEnded':
        return sent.e['token'] === 3 ? { wants: next === 'timer' ? ['TurnEnded'] : wants, effects: [{ kind: 'log', text: 'all 2 command(s) ran' }] } : { wants }
    }
    return { wants }
  }
}

/** Whether a process still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export class FakeHelper {
  readonly dir = mkdtempSync(join(tmpdir(), 'slashkit-node-'))
  /** Every event a helper got, in order; and the helpers asked to exit. */
  readonly sent: Sent[] = []
  readonly exits: number[] = []
  /** The helper's script: its answer to each event. */
  answer: (sent: Sent) => Response = () => ({})
  private readonly server: Server

  constructor() {
    const control = join(this.dir, 'control.sock')
    const script = join(this.dir, 'helper')
    writeFileSync(script, RELAY)
    chmodSync(script, 0o755)
    this.server = createServer((req, res) => {
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (chunk: string) => (body += chunk))
      req.on('end', () => {
        const helper = Number(req.headers['x-helper'])
        if (req.url === '/v1/exit') {
          this.exits.push(helper)
          res.end('')
          return
        }
        const request = JSON.parse(body) as { v: number; seq: number; event: string; e: Record<string, unknown> }
        const sent = { helper, session: String(req.headers['x-session'] ?? ''), seq: request.seq, event: request.event, e: request.e }
        this.sent.push(sent)
        const response = request.v === VERSION ? this.answer(sent) : { raw: { status: 400, text: JSON.stringify({ v: VERSION, error: 'version' }) } }
        if ('raw' in response) {
          res.writeHead(response.raw.status, { 'content-type': 'application/json' })
          res.end(response.raw.text)
          return
        }
        const { wants = [], reply = null, effects = [] } = response
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ v: VERSION, version: request.seq, wants, reply, effects }))
      })
    })
    this.server.listen(control)
    process.env.SLASHKIT_FAKE_CONTROL = control
    process.env.SLASHKIT_FAKE_DIR = this.dir
    process.env.SLASHKIT_PYTHON = script
    // The fake stands in for a helper of the session's own, one per session (the shared helper, tested against the
    // real one in tests/adapters/test_shared_helper.py, would be a process these tests do not fake).
    process.env.SLASHKIT_HELPER = 'session'
    process.env.XDG_STATE_HOME = join(this.dir, 'state')
  }

  /** The names of the events sent, in order. */
  events(): string[] {
    return this.sent.map(s => s.event)
  }

  /** The helpers that got an event, in the order they first did. */
  helpers(): number[] {
    return [...new Set(this.sent.map(s => s.helper))]
  }

  /** Resolves once the n-th request for this event came. */
  async received(event: string, count = 1): Promise<Sent> {
    const matching = (): Sent[] => this.sent.filter(s => s.event === event)
    await until(() => matching().length >= count, `${event} #${count}`)
    return matching()[count - 1] as Sent
  }

  /**
   * Forgets the helper the plugin started at its `config` hook to ask for the saved chains, once it answered and
   * ended, so a test sees only its sessions' helpers.
   */
  async forgetSavedAsk(): Promise<void> {
    const { helper } = await this.received('SavedAsked')
    await until(() => !alive(helper), 'the end of the helper asked for the saved chains')
    this.sent.splice(0)
    this.exits.splice(0)
  }

  /** Ends every helper still running and removes the folder. */
  async close(): Promise<void> {
    for (const pid of this.helpers()) {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
    }
    await new Promise<void>(resolve => this.server.close(() => resolve()))
    rmSync(this.dir, { recursive: true, force: true })
  }
}

type Part = { type: string; text?: string; ignored?: boolean; id?: string; messageID?: string; sessionID?: string }
type Message = { info: { id: string; role: string; sessionID: string; providerID?: string; modelID?: string }; parts: Part[] }
type Hook = (input: unknown, output: unknown) => Promise<void>
/** What opencode's server answered a command: the message, or the error a hook threw (HTTP 500 for its caller). */
export type Outcome = { data?: unknown; error?: { name: string; data?: { message?: string } } }

const MODEL = { providerID: 'fake', modelID: 'fake-1' }

/**
 * opencode as the plugin meets it: its `client`, and each thing a person does driven through the plugin's hooks in
 * the order opencode calls them (measured on 1.18.33). A turn is `busy`, the model's answer, `idle`, then
 * `session.idle`; a command's template is expanded with the whole arguments before `command.execute.before`.
 */
export class FakeOpencode {
  hooks: Hooks = {}
  /** The lines the plugin wrote, by session: the person sees them, the model never does. */
  readonly lines: string[] = []
  /** What reached the model, turn by turn; and the sessions compacted. */
  readonly asked: string[] = []
  readonly compacted: string[] = []
  readonly toasts: string[] = []
  /** How long each toast was to stay, in order (opencode's default when none was given). */
  readonly toastDurations: number[] = []
  /** The commands the `config` hook added, as opencode lists them. */
  readonly added: Record<string, { template: string; description?: string }> = {}
  /** Commands run through the server's API (`client.session.command`): the plugin's steps. */
  readonly commands: string[] = []
  /** The commands opencode knows, with their templates. */
  templates: Record<string, string> = { greet: 'Greet $1 warmly.', review: 'Review $ARGUMENTS' }
  /** The model's answer to a prompt; the name of the error the next turn ends with, if any. */
  reply: (asked: string) => string = asked => `answered: ${asked}`
  failNext: string | undefined
  /** Sessions and their parents, as opencode stores them. */
  readonly parents = new Map<string, string>()
  private readonly messages = new Map<string, Message[]>()
  private counter = 0

  readonly client = {
    tui: {
      showToast: async ({ body }: { body: { message: string; duration?: number } }) => {
        this.toasts.push(body.message)
        this.toastDurations.push(body.duration ?? 5000)
        return { data: true }
      },
    },
    command: {
      list: async () => ({ data: Object.entries(this.templates).map(([name, template]) => ({ name, template })) }),
    },
    session: {
      get: async ({ path }: { path: { id: string } }) => ({ data: { id: path.id, parentID: this.parents.get(path.id) } }),
      messages: async ({ path }: { path: { id: string } }) => ({ data: this.messages.get(path.id) ?? [] }),
      prompt: async ({ path, body }: { path: { id: string }; body: { noReply?: boolean; messageID?: string; parts: Part[] } }) => {
        if (body.noReply === true) this.lines.push(body.parts.map(p => p.text ?? '').join(''))
        await this.message(path.id, body.parts, body.messageID)
        return { data: {} }
      },
      command: async ({ path, body }: { path: { id: string }; body: { command: string; arguments: string; messageID?: string } }) => {
        this.commands.push(`/${body.command} ${body.arguments}`.trim())
        return this.command(path.id, body.command, body.arguments, body.messageID)
      },
      summarize: async ({ path }: { path: { id: string } }) => {
        await this.turn(path.id, [{ type: 'compaction' }])
        return { data: true }
      },
    },
  }

  /** Loads the plugin as opencode does: its function with the input, then its config hook, whose `command` holds
   * the command files (`files`, name → template) and takes the plugin's. */
  async load(files: Record<string, string> = {}): Promise<void> {
    this.hooks = await SlashkitPlugin({ client: this.client } as unknown as PluginInput)
    const command = Object.fromEntries(Object.entries(files).map(([name, template]) => [name, { template }]))
    await this.hooks.config?.({ command })
    for (const [name, entry] of Object.entries(command)) {
      if (files[name] !== undefined) continue
      this.added[name] = entry
      if (name !== 'slash-chain') this.templates[name] = entry.template
    }
  }

  /** The person types `/command args` and presses Enter (the TUI sends it through the server's command API). */
  type(session: string, command: string, args: string): Promise<Outcome> {
    return this.command(session, command, args, undefined)
  }

  /** The person sends a prompt (the TUI sends a line led by its built-in `/compact` as a prompt, too). */
  async prompt(session: string, text: string): Promise<Outcome> {
    const parts: Part[] = [{ type: 'text', text, id: this.id('prt'), sessionID: session }]
    try {
      await this.message(session, parts, undefined)
    } catch (err) {
      // A `chat.message` that throws stores nothing and runs no turn (measured on 1.18.33): the caller gets HTTP 500.
      return thrown(err)
    }
    return this.turn(session, parts)
  }

  /** A message an earlier opencode stored in a session (before a crash, say): this one's plugin heard nothing of it. */
  earlier(session: string, text: string): void {
    this.store(session, { info: { id: this.id('msg'), role: 'user', sessionID: session }, parts: [{ type: 'text', text }] })
  }

  /** opencode tells the plugin of an event. */
  event(type: string, properties: Record<string, unknown>): Promise<void> {
    return (this.hooks.event as Hook)({ event: { type, properties } }, undefined)
  }

  /** A tool part as opencode updates it, and the messages of the next model request, after the plugin's transform. */
  async transform<P extends object>(session: string, parts: P[]): Promise<P[]> {
    const messages = [{ info: { id: this.id('msg'), role: 'assistant', sessionID: session }, parts }]
    await (this.hooks['experimental.chat.messages.transform'] as Hook)({}, { messages })
    return parts
  }

  /** The plugin's fail tool, called by the model in a session. */
  fail(session: string, reason: unknown): Promise<{ result?: string; error?: string }> {
    return this.call('slash-chain_fail', session, { reason })
  }

  /** The plugin's self-command tool, called by the model in a session. */
  builtin(session: string, args: Record<string, unknown>): Promise<{ result?: string; error?: string }> {
    return this.call('slash-chain_builtin', session, args)
  }

  /** A tool the plugin gives the model, called in a session: its result, or the error the model reads. */
  private async call(name: string, session: string, args: Record<string, unknown>): Promise<{ result?: string; error?: string }> {
    const tool = this.hooks.tool?.[name]
    if (tool === undefined) throw new Error(`no tool ${name}`)
    try {
      return { result: String(await tool.execute(args as never, { sessionID: session } as never)) }
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) }
    }
  }

  private async command(session: string, command: string, args: string, messageID: string | undefined): Promise<Outcome> {
    const template = this.templates[command] ?? (command === 'slash-chain' ? '$ARGUMENTS' : undefined)
    if (template === undefined) return { error: { name: 'NotFound', data: { message: `no command ${command}` } } }
    const parts: Part[] = [{ type: 'text', text: template.replaceAll('$ARGUMENTS', args).replace(/\$1/, args) }]
    try {
      await (this.hooks['command.execute.before'] as Hook)({ command, sessionID: session, arguments: args }, { parts })
    } catch (err) {
      // The only way a hook answers a command without a turn: the server's caller gets HTTP 500.
      return thrown(err)
    }
    await this.message(session, parts, messageID)
    return this.turn(session, parts)
  }

  /** A user message is stored: `chat.message` first, as opencode calls it for every user message. */
  private async message(session: string, parts: Part[], messageID: string | undefined): Promise<void> {
    const id = messageID ?? this.id('msg')
    await (this.hooks['chat.message'] as Hook)({ sessionID: session, model: MODEL }, { message: { id, sessionID: session, role: 'user' }, parts })
    this.store(session, { info: { id, role: 'user', sessionID: session }, parts })
  }

  /** The turn that answers the newest user message, with the events opencode sends around it. */
  private async turn(session: string, parts: Part[]): Promise<Outcome> {
    await this.event('session.status', { sessionID: session, status: { type: 'busy' } })
    const compacts = parts.some(p => p.type === 'compaction')
    const asked = parts.map(p => (p.type === 'text' && p.ignored !== true ? (p.text ?? '') : '')).join('')
    if (compacts) this.compacted.push(session)
    else this.asked.push(asked)
    const failed = this.failNext
    this.failNext = undefined
    const answer: Message = { info: { id: this.id('msg'), role: 'assistant', sessionID: session, ...MODEL }, parts: [{ type: 'text', text: compacts ? 'summary' : this.reply(asked) }] }
    this.store(session, answer)
    if (failed !== undefined) await this.event('session.error', { sessionID: session, error: { name: failed } })
    await this.event('session.status', { sessionID: session, status: { type: 'idle' } })
    await this.event('session.idle', { sessionID: session })
    return failed === undefined ? { data: answer } : { error: { name: failed } }
  }

  private store(session: string, message: Message): void {
    this.messages.set(session, [...(this.messages.get(session) ?? []), message])
  }

  private id(prefix: string): string {
    this.counter += 1
    return `${prefix}_fake${String(this.counter).padStart(8, '0')}`
  }
}

/** What the server's caller gets when a hook threw (HTTP 500), with the hook's message. */
function thrown(err: unknown): Outcome {
  return { error: { name: 'UnknownError', data: { message: err instanceof Error ? err.message : String(err) } } }
}
