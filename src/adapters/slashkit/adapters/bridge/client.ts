/**
 * The host's end of the slashkit bridge, for any JavaScript host: starts the resident Python helper, sends it
 * the core's events one by one and carries out the effects it answers with. It decides nothing; every rule is
 * in Python. It reaches the outside world only through the `Host` its caller passes with each call, so a host's
 * shim supplies its own process, HTTP and clock (Claude Code's mod builds one from `$` per hook; a Node host
 * from `node:child_process` and `node:http`, ./node-host.ts). Protocol: docs/bridge.md (the version is `VERSION`).
 * The facts it shares with the helper come from `./wire.js`, which an installer generates beside it from the
 * helper's own (slashkit.adapters.bridge.shim.client_files).
 */

import {
  EFFECT_KINDS,
  EVENT_PATH,
  EVENTS,
  EXIT_PATH,
  MAX_BODY,
  MAX_FORECAST_DEPTH,
  MAX_TEXT,
  PROGRAM_START,
  OPEN_PATH,
  READY,
  REPLY_KINDS,
  SHARED_OPTION,
  SHELL_PATH,
  SHELL_WAIT_MS,
  STEP_OUTPUT,
  VERSION,
} from './wire.js'

/** An event's name, as the helper reads it (slashkit.adapters.bridge.protocol.EVENTS): a name it does not know fails tsc. */
export type EventName = (typeof EVENTS)[number]

export type Effect =
  | { kind: 'log'; text: string }
  | { kind: 'toast'; text: string }
  | { kind: 'after'; ms: number; token: number; fires?: Effect[] | null }
  | { kind: 'run'; command: string; args: string; token: number; then?: Effect[] | null }
  | { kind: 'shell'; text: string; token: number }
  | { kind: 'save.enabled'; enabled: boolean }
  | { kind: 'save.builtin'; enabled: boolean }
  | { kind: 'invalidate' }
  | { kind: 'progress'; text: string | null }

/** A reply the caller of `ask` answers its hook with (docs/bridge.md, "Answer"); every kind means one thing. */
export type Reply =
  | RunTyped
  | { kind: 'command.answer'; text: string }
  | { kind: 'tool.answer'; text: string }
  | { kind: 'control'; text: string }
  | { kind: 'deny'; text: string }
  | { kind: 'prompt'; text: string }
  | { kind: 'description'; text: string }
  | { kind: 'skill'; command: string; note: string }
  | Saved

/** The saved chains to offer in the host's command menu (`SavedAsked`), and the names left to the host's own. */
export type Saved = { kind: 'saved'; chains: Offered[]; shadowed: string[] }
export type Offered = { name: string; description: string; argument_hint: string }

/** Run the typed command with these args, and say how it ended through the answer's `ticket`. */
export type RunTyped = { kind: 'run.typed'; args: string; token: number; then?: Effect[] | null }

/** The helper needs to know who this session is to answer the event just sent; the client asks, never a shim. */
type AskWhoami = { kind: 'whoami'; token: number }

/** A reply as the helper writes it; `ask` never returns a `whoami`. */
export type WireReply = Reply | AskWhoami

/** True when two unions hold the same members. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/**
 * The kinds above are the helper's (slashkit.adapters.bridge.protocol.KINDS, generated into wire.ts): a kind one
 * side writes and the other does not read fails tsc.
 */
const KINDS_ARE_THE_HELPERS: [Same<Effect['kind'], (typeof EFFECT_KINDS)[number]>, Same<WireReply['kind'], (typeof REPLY_KINDS)[number]>] = [
  true,
  true,
]
void KINDS_ARE_THE_HELPERS

/** What the client needs of its host: the helper's process, its socket, a clock, and the effects' calls. */
export type Host = {
  /** The interpreter and arguments that start the helper (`-m slashkit.adapters.bridge.helper`). */
  readonly argv: readonly string[]
  /**
   * Finds the helper's argv in place of `argv`, once per helper started, however long that takes (a Python
   * environment made on first use): the start timeout counts from when it resolved. A rejection is the reason
   * the helper is unavailable.
   */
  readonly locate?: () => Promise<readonly string[]>
  /** How long the helper may take to say READY, and to answer one event. */
  readonly startTimeoutMs: number
  readonly answerTimeoutMs: number
  /** The line logged once when the helper cannot answer; `{why}` is replaced by the reason. */
  readonly unavailable: string
  /**
   * Starts the helper and feeds its output as it comes; resolves when it ended, saying how. `stop` is aborted
   * when the client gives the helper up: a host that can end a process it started ends it then (one that never
   * said READY cannot be asked to exit); one that cannot leaves it to the end of the session.
   */
  spawn(argv: readonly string[], stdout: (text: string) => void, stderr: (text: string) => void, stop: AbortSignal): Promise<string>
  /** POSTs a body to the helper's socket. */
  post(socketPath: string, path: string, body: string): Promise<{ status: number; text: string }>
  /** Resolves after `ms`, unless aborted first. */
  sleep(ms: number, signal: AbortSignal): Promise<void>
  /** The effects: a transcript line, a line for the debug log, a passing notice. */
  log(text: string): void
  debug(text: string): void
  toast(text: string): void
  /**
   * Calls `fire` after `ms` from the host's own timer (a command does not run inside another's hook). `fire`
   * resolves once what the timer led to has started (a run's host call made), so a host that must keep a hook
   * open until the next step is sent (pi's `agent_settled`, docs/pi.md) can wait for it; others ignore it.
   */
  after(ms: number, fire: () => Promise<void>): void
  /** Runs `/command args`; resolves with the text it returned, rejects with what it threw. */
  run(command: string, args: string): Promise<string>
  /** Stores the on/off setting every window shares. */
  saveEnabled(enabled: boolean): Promise<void>
  /** Stores the switch of the model's self-commands (`/slash-chain builtin on|off`) every window shares. */
  saveBuiltin(enabled: boolean): Promise<void>
  /** Asks the host for the tool descriptions again. */
  invalidate(): void
  /** Shows where a running chain is in the host's status area; null clears it. A host without one leaves it out. */
  progress?(text: string | null): void
  /**
   * Holds the host's exit until `work` settled, for a host that leaves once nothing it knows of is under way
   * (`claude -p`): a shell step, which runs in the helper, is no command in its queue. Others leave it out.
   */
  track?<T>(work: Promise<T>): Promise<T>
  /**
   * Who lich says this session is: the stdout of `$LICH_BIN whoami --json` when it exited 0 within
   * WHOAMI_TIMEOUT_MS (host.ts), else null (no LICH_BIN, or not an absolute path; a run that failed, timed out or
   * exited non-zero). Never rejects.
   */
  whoami(): Promise<string | null>
  /** A reason the helper is unavailable, as the line shows it (a host may drop its own prefixes). */
  plain(why: string): string
  /**
   * The person's shared helper (docs/bridge.md, "Transport"), looked up as a helper is to be started: null when
   * this session keeps a helper of its own (`SLASHKIT_HELPER=session`). Without it, a helper of its own too.
   */
  shared?(): Promise<Shared | null>
  /**
   * The helper this host talks to and what the client knows of it (`link()`), when the host runs several
   * sessions in one process (opencode serves many: one helper each, since events name no session). Without
   * it, one link for the whole process (Claude Code's, one session per process).
   */
  readonly link?: Link
}

/**
 * What the helper answered, or `undefined` when it could not (the line saying why is already logged). A
 * `run.typed` reply comes with its `ticket`: the shim runs the typed command with the reply's args and says how
 * it ended through it, once.
 */
export type Answer = { reply: Exclude<Reply, RunTyped> | null; ticket?: undefined } | { reply: RunTyped; ticket: Ticket } | undefined

/**
 * How the typed command a `run.typed` reply asked for ended: `resolved` with the text it returned (a `|` hands it
 * on), or `threw` with its error's message. Either reports it to the helper that asked, and carries out at once
 * what its good end was foreseen to do; only the first call counts.
 */
export type Ticket = {
  resolved(output: string): Promise<void>
  threw(error: string): Promise<void>
}

/**
 * One session's way to the person's shared helper: the socket a running one listens on, when the host can tell
 * without starting a process (undefined: a process is started, which starts the helper or finds it); what the
 * session brings when it opens there (slashkit.adapters.bridge.sessions: the helper's options, the working
 * directory, the variables the core reads, the process whose end ends the session, null for the one connecting);
 * and `found`, told the socket a started process named, so the host finds it next time without one.
 */
export type Shared = {
  socket: string | undefined
  opening: { options: readonly string[]; cwd: string; env: Record<string, string>; owner: number | null }
  found?(socket: string): void
}

/**
 * A helper the client talks to: its socket once it can take events, the abort that gives up the process it
 * started, the session it opened there (undefined for a helper of its own), and `located`, which resolves once
 * the process to start is known or none is needed (a start may wait a long time for `locate`, the start timeout
 * counts after it).
 */
type Helper = { socket: Promise<string>; stop: AbortController; session: Promise<string | undefined>; located: Promise<unknown> }

/** The longest line searched for `READY <socket path>`: a unix socket's path is at most 108 bytes. */
const MAX_READY_LINE = 4096
/** The helper's first line: `READY <absolute socket path>`, at the start of a line. */
const READY_LINE = new RegExp(String.raw`(?:^|\n)${READY} (/\S+)\n`)

/** One helper and what the client knows of it; a host with several sessions holds one per session. */
export type Link = {
  /** The running helper, started by the first event Python wants; undefined until then and after it failed. */
  helper: Helper | undefined
  /** The optional events the helper asked for in its newest answer; the others never start Python. */
  wants: ReadonlySet<string>
  /**
   * The version of the answer `wants` came from: two events on their way at once may be answered in either order,
   * and the older answer, arriving last, must not undo what the newer one asked for.
   */
  wantsAt: number
  /** Why the helper is unavailable, once that is logged; cleared by its next answer. */
  down: string | undefined
  /**
   * How many events this client has sent the current helper: each request carries its number (`seq`), and the
   * helper handles them in that order. A forecast made at version `at` holds while `sent === at`: the helper
   * has been sent nothing since.
   */
  sent: number
  /**
   * Reports that the client carried out a forecast (`applied`) that the current helper has not answered: on their
   * way, or lost with a helper that is gone. Until they are answered, the helper lags, and the events it wants
   * are a superset.
   */
  unanswered: number
}

/**
 * Work under way that a host's hook waits for before it returns, so that the next step is sent first (pi's
 * `agent_settled`, Claude Code's hooks where a chain goes on): the helper's answers, and timers with what they fire.
 */
export class Work {
  private readonly pending = new Set<Promise<unknown>>()

  /** Tracks `p` until it settles, and returns it as it is. */
  track<T>(p: Promise<T>): Promise<T> {
    const held = p.catch(() => undefined)
    this.pending.add(held)
    void held.then(() => this.pending.delete(held))
    return p
  }

  /**
   * Resolves once nothing tracked is under way. A piece of work tracks what it leads to before it settles; `pause`
   * lets what it starts within the microtasks after it begin before the set is read again.
   */
  async drained(pause: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    for (;;) {
      await pause()
      if (this.pending.size === 0) return
      await Promise.all([...this.pending])
    }
  }
}

/** A link with no helper yet. */
export function link(): Link {
  return { helper: undefined, wants: new Set(), wantsAt: 0, down: undefined, sent: 0, unanswered: 0 }
}

/** The link of every host that brings none. */
const shared = link()

function linkOf(host: Host): Link {
  return host.link ?? shared
}

/**
 * A text from outside cut to what the core reads of it (slashkit.adapters.bridge.protocol.MAX_TEXT), so the event
 * stays far under the helper's 1 MiB: a prompt's start (is it the running step's own?) and a turn's or a run's
 * text, which a `|` hands on cut shorter still (slashkit.core.texts.MAX_HANDED).
 */
export function bounded(text: string): string {
  return text.slice(0, MAX_TEXT)
}

const programStart = new RegExp(PROGRAM_START)

/**
 * Whether a prompt opens a loop or a group (`while`, `until`, `for`, `{`: slashkit.core.grammar.PROGRAM_START), so
 * it goes to the core (`LineTyped`) to run as a program if it is one; a longer one than the core reads is a prompt.
 */
export function opensProgram(text: string): boolean {
  return text.length <= MAX_TEXT && programStart.test(text)
}

/**
 * A value a tool call hands the shim (the model's input, of any type) bounded as `bounded` bounds a text: a string is
 * cut to what the core reads; any other value whose JSON is longer than that goes as null, which the core reads as it
 * reads every input that is no text (a command it refuses, no reason given).
 */
export function boundedInput(value: unknown): unknown {
  if (typeof value === 'string') return bounded(value)
  try {
    return (JSON.stringify(value) ?? '').length > MAX_TEXT ? null : value
  } catch {
    return null // a value JSON cannot write (a BigInt) is as good as none
  }
}

/** Whether the helper asked to hear this optional event. */
export function wanted(event: string, of: Link = shared): boolean {
  return of.wants.has(event)
}

/**
 * Starts the helper now if none runs, so that it starts while the shim still gathers the values of the event it
 * is about to send (Claude Code's mod reads the stored setting first: a round trip through the engine).
 */
export function prepare(host: Host): void {
  if (linkOf(host).helper === undefined) start(host)
}

/**
 * Sends one event and carries out the effects the answer holds; never throws. When the helper needs to know who
 * this session is to answer it (a `whoami` reply), the client asks the host (`Host.whoami`), sends what lich said
 * as `WhoamiAnswered` (`identity`), and that event's answer is the one returned: the helper never waits on lich.
 */
export async function ask(host: Host, event: EventName, e: unknown): Promise<Answer> {
  const answer = await exchange(host, event, e)
  if (answer?.reply?.kind !== 'whoami') return answered(host, answer)
  const output = await host.whoami().catch(() => null)
  // A helper given up while lich answered has forgotten what it asked: a fresh one is not started for it.
  if (linkOf(host).helper !== answer.from) return { reply: null }
  const second = await exchange(host, 'WhoamiAnswered', { token: answer.reply.token, ...identity(output) })
  return answered(host, second)
}

/**
 * Who lich says this session is, read from what `$LICH_BIN whoami --json` printed (`Host.whoami`): the `label` and
 * `name` of the object it printed when both are strings (its other fields do not matter), else neither: no lich, a
 * failure, output that is not JSON or lacks them. The core reads no JSON, so the client does.
 */
export function identity(output: string | null): { label: string | null; name: string | null } {
  try {
    const said: unknown = output === null ? null : JSON.parse(output)
    if (typeof said === 'object' && said !== null) {
      const { label, name } = said as Record<string, unknown>
      if (typeof label === 'string' && typeof name === 'string') return { label: bounded(label), name: bounded(name) }
    }
  } catch {
    // not JSON: lich told nothing
  }
  return { label: null, name: null }
}

/** What one event's answer gives the caller: its reply, with a ticket for a `run.typed`. */
function answered(host: Host, answer: Exchanged | undefined): Answer {
  if (answer === undefined) return undefined
  const { reply, at, from } = answer
  // The helper asks once an event: a second question is not answered, and the hook goes on as the host would.
  if (reply?.kind === 'whoami') return { reply: null }
  if (reply?.kind !== 'run.typed') return { reply }
  let reported = false
  const report = async (error: string | null, output: string): Promise<void> => {
    if (reported) return
    reported = true
    await reportRun(host, reply.token, error, output, error === null ? (reply.then ?? null) : null, at, from)
  }
  return { reply, ticket: { resolved: output => report(null, output), threw: error => report(error, '') } }
}

/** One event's answer as the client keeps it: the reply, and which helper gave it at which version. */
type Exchanged = { reply: WireReply | null; at: number; from: Helper }

/** Sends one event and carries out the effects of its answer; never throws. */
async function exchange(host: Host, event: EventName, e: unknown, again = true): Promise<Exchanged | undefined> {
  const l = linkOf(host)
  // The helper answers a request over its limit with 413 before it read it, and the client's write then fails
  // (EPIPE): such an event is not sent, nor counted, so the helper and its running chain go on.
  if (utf8Bytes(request(l.sent + 1, event, e)) > MAX_BODY) {
    unavailable(host, `the ${event} event is over the helper's ${MAX_BODY} byte limit`)
    return undefined
  }
  const current = l.helper ?? start(host)
  l.sent += 1 // before any wait, so what the caller does next already counts this event as sent
  const seq = l.sent
  // Wants that come before reports not answered are stale: the forecast those reports carried out may have ended
  // the chain. One that waits on a turn's end or a pane's close still needs the helper, forecast or not.
  const waiting = l.helper === current && (l.unanswered === 0 ? l.wants.size > 0 : ['TurnEnded', 'PaneClosed'].some(w => l.wants.has(w)))
  let answer: WireAnswer
  try {
    answer = await send(host, current, seq, event, e)
  } catch (err) {
    if (!(err instanceof RefusedEvent)) retire(host, current)
    // A shared helper that is gone (killed, or left idle), or that no longer knows this session, costs a restart:
    // the event goes to a fresh session at once. What a forecast already carried out goes on (its reports are
    // dropped with the old session); a chain that waited on the helper went with it, which one line says, as when a
    // helper of the session's own ends.
    if (again && err instanceof Unreachable && (await current.session.catch(() => undefined)) !== undefined) {
      if (waiting) unavailable(host, messageOf(err))
      return exchange(host, event, e, false)
    }
    unavailable(host, messageOf(err))
    return undefined
  }
  took(host, current, answer)
  l.down = undefined
  await carryOut(host, answer.effects, answer.version, current)
  return { reply: answer.reply, at: answer.version, from: current }
}

/** Takes the events the helper wants from its answer, unless a newer answer came first. */
function took(host: Host, from: Helper, answer: WireAnswer): void {
  const l = linkOf(host)
  if (l.helper === from && answer.version > l.wantsAt) {
    l.wants = new Set(answer.wants)
    l.wantsAt = answer.version
  }
}

async function send(host: Host, current: Helper, seq: number, event: EventName, e: unknown): Promise<WireAnswer> {
  await current.located
  const socketPath = await within(host, current.socket, host.startTimeoutMs, 'the helper did not start')
  const path = named(EVENT_PATH, await current.session)
  const posted = host.post(socketPath, path, request(seq, event, e)).catch((err: unknown) => {
    throw new Unreachable(messageOf(err))
  })
  const response = await within(host, posted, host.answerTimeoutMs, `the helper did not answer ${event}`)
  return readAnswer(response.status, response.text)
}

/** A path of the helper's, naming the session in the shared helper. */
function named(path: string, session: string | undefined): string {
  return session === undefined ? path : `${path}?session=${session}`
}

/** The body of the request that sends an event as the `seq`-th. */
function request(seq: number, event: EventName, e: unknown): string {
  return JSON.stringify({ v: VERSION, seq, event, e })
}

/** How many bytes UTF-8 writes a text in (a lone surrogate as U+FFFD's 3, as Node and Bun write it). */
function utf8Bytes(text: string): number {
  let bytes = 0
  for (const c of text) {
    const point = c.codePointAt(0) ?? 0
    bytes += point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4
  }
  return bytes
}

/** Logs once why the helper cannot answer, until it answers again. */
function unavailable(host: Host, why: string): void {
  const l = linkOf(host)
  const reason = host.plain(why)
  if (l.down === undefined) host.log(host.unavailable.replace('{why}', reason))
  l.down = reason
}

/** The message of an error a call threw. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** The helper refused the event as malformed (HTTP 400/413): the helper is sound, the event is not. */
class RefusedEvent extends Error {}

/** The helper could not be reached, or does not know the session (HTTP 410: it started afresh since). */
class Unreachable extends Error {}

/** The helper answered with what shows it no longer shares the client's state, or with no bridge's answer. */
class Parted extends Error {}

type WireAnswer = { version: number; wants: string[]; reply: WireReply | null; effects: Effect[] }

function readAnswer(status: number, text: string): WireAnswer {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Parted(`the helper answered ${status} with something that is not JSON`)
  }
  const answer = body as Partial<WireAnswer> & { v?: unknown; error?: unknown }
  if (status === 400 || status === 413) throw new RefusedEvent(`the helper refused the event: ${String(answer.error)}`)
  if (status === 410) throw new Unreachable(`the helper answered 410: ${String(answer.error)}`)
  // The helper's own fault (500), or an event that reached it after it counted it gone and went on without it
  // (409): it may hold a state the client no longer shares, so it is retired.
  if (status === 409 || status === 500) throw new Parted(`the helper answered ${status}: ${String(answer.error)}`)
  if (status !== 200 || answer.v !== VERSION || !isSound(answer)) {
    throw new Parted(`the helper answered ${status} with an answer that is not bridge version ${VERSION}`)
  }
  return { version: answer.version, wants: answer.wants, reply: answer.reply ?? null, effects: answer.effects }
}

// What a sound answer holds (docs/bridge.md, "Answers"): the client carries out effects without a second look,
// so an answer with anything else is not taken at all, and its helper is retired like one that answered garbage.

/** The longest an `after` may wait: the most a host's timer takes (2**31 - 1 ms). */
const MAX_AFTER_MS = 2 ** 31 - 1

function isSound(answer: Partial<WireAnswer>): answer is Partial<WireAnswer> & Omit<WireAnswer, 'reply'> {
  return Number.isSafeInteger(answer.version) && isNames(answer.wants) && isEffects(answer.effects, 0) && isReply(answer.reply)
}

function isNames(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(name => typeof name === 'string')
}

function isToken(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1
}

function isForecast(value: unknown, depth: number): boolean {
  return value === undefined || value === null || (depth < MAX_FORECAST_DEPTH && isEffects(value, depth + 1))
}

function isEffects(value: unknown, depth: number): value is Effect[] {
  return Array.isArray(value) && value.every(fx => isEffect(fx, depth))
}

function isEffect(value: unknown, depth: number): value is Effect {
  if (typeof value !== 'object' || value === null) return false
  const fx = value as Record<string, unknown>
  switch (fx.kind) {
    case 'log':
    case 'toast':
      return typeof fx.text === 'string'
    case 'save.enabled':
    case 'save.builtin':
      return typeof fx.enabled === 'boolean'
    case 'invalidate':
      return true
    case 'progress':
      return fx.text === null || typeof fx.text === 'string'
    case 'after': {
      const ms = fx.ms
      const wait = typeof ms === 'number' && Number.isInteger(ms) && ms >= 0 && ms <= MAX_AFTER_MS
      return wait && isToken(fx.token) && isForecast(fx.fires, depth)
    }
    case 'run':
      return typeof fx.command === 'string' && typeof fx.args === 'string' && isToken(fx.token) && isForecast(fx.then, depth)
    case 'shell':
      return typeof fx.text === 'string' && isToken(fx.token)
  }
  return false
}

function isReply(value: unknown): value is WireReply | null | undefined {
  if (value === undefined || value === null) return true
  if (typeof value !== 'object') return false
  const reply = value as Record<string, unknown>
  switch (reply.kind) {
    case 'run.typed':
      return typeof reply.args === 'string' && isToken(reply.token) && isForecast(reply.then, 0)
    case 'whoami':
      return isToken(reply.token)
    case 'command.answer':
    case 'tool.answer':
    case 'control':
    case 'deny':
    case 'prompt':
    case 'description':
      return typeof reply.text === 'string'
    case 'skill':
      return typeof reply.command === 'string' && typeof reply.note === 'string'
    case 'saved':
      return Array.isArray(reply.chains) && reply.chains.every(isOffered) && isStrings(reply.shadowed)
  }
  return false
}

function isOffered(value: unknown): value is Offered {
  if (typeof value !== 'object' || value === null) return false
  const offered = value as Record<string, unknown>
  return [offered.name, offered.description, offered.argument_hint].every(field => typeof field === 'string')
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(item => typeof item === 'string')
}

/** Races a host call against a timer, so a helper that hangs never holds a turn past `ms`. */
async function within<T>(host: Host, work: Promise<T>, ms: number, what: string): Promise<T> {
  const abort = new AbortController()
  const timeout = host.sleep(ms, abort.signal).then(() => {
    throw new Error(`${what} within ${ms} ms`)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    abort.abort()
  }
}

/**
 * Starts a helper of this session's own, or opens the session in the person's shared helper (`Host.shared`); the
 * socket resolves once events can go there. The child lives on after the hook.
 */
function start(host: Host): Helper {
  const stop = new AbortController()
  const shared = host.shared?.() ?? Promise.resolve(null)
  let located: () => void = () => undefined
  const known = new Promise<unknown>(resolve => (located = () => resolve(undefined)))
  const id = sessionId()
  const session = shared.then(found => (found === null ? undefined : id))
  const started: Helper = { socket: Promise.resolve(''), stop, session, located: known }
  started.socket = shared.then(
    found => (found === null ? spawned(host, started, located, false) : joined(host, started, located, found, id)),
    (err: unknown) => {
      located()
      throw err
    },
  )
  for (const p of [started.socket, session]) p.catch(() => undefined)
  const l = linkOf(host)
  l.helper = started
  l.sent = 0
  l.unanswered = 0
  return started
}

/** A session's id in the shared helper: random, so no session names another's. */
function sessionId(): string {
  const part = (): string => Math.random().toString(36).slice(2, 12)
  return `${Date.now().toString(36)}-${part()}${part()}${part()}`
}

/**
 * Opens the session in the shared helper: at the socket the host knows, when a helper listens there; else starts
 * the process that finds the helper or starts it (`--shared`), and opens the session at the socket it named.
 */
async function joined(host: Host, mine: Helper, located: () => void, shared: Shared, id: string): Promise<string> {
  const body = JSON.stringify({ v: VERSION, ...shared.opening })
  if (shared.socket !== undefined && (await opened(host, shared.socket, id, body)) === null) {
    located()
    return shared.socket
  }
  // A helper found as it leaves (idle) is gone by the opening: the second start finds none, and starts one.
  for (let tries = 1; ; tries++) {
    const socketPath = await spawned(host, mine, located, true)
    const refused = await opened(host, socketPath, id, body)
    if (refused === null) {
      shared.found?.(socketPath)
      return socketPath
    }
    if (tries === 2) throw new Error(`the shared helper did not open this session: ${refused}`)
  }
}

/** Opens the session at a socket; null when it did, else why not. */
async function opened(host: Host, socketPath: string, id: string, body: string): Promise<string | null> {
  try {
    const said = await within(host, host.post(socketPath, named(OPEN_PATH, id), body), host.answerTimeoutMs, 'no answer')
    return said.status === 200 ? null : `${String(said.status)} ${said.text.slice(0, 200)}`
  } catch (err) {
    return messageOf(err)
  }
}

/**
 * Starts the helper's process; resolves on its `READY <path>` line. Shared, the process leaves once it said it (the
 * helper it started or found lives on by itself); a helper of the session's own serves until it ends.
 */
function spawned(host: Host, mine: Helper, located: () => void, shared: boolean): Promise<string> {
  let ready: (path: string) => void = () => undefined
  let fail: (err: Error) => void = () => undefined
  const socket = new Promise<string>((resolve, reject) => {
    ready = resolve
    fail = reject
  })
  const argv = host.locate?.() ?? Promise.resolve(host.argv)
  void argv.then(located, located)
  void watch(host, mine, argv.then(found => (shared ? [...found, SHARED_OPTION] : found)), ready, fail, shared)
  return socket
}

async function watch(
  host: Host,
  mine: Helper,
  argv: Promise<readonly string[]>,
  ready: (path: string) => void,
  fail: (err: Error) => void,
  shared: boolean,
): Promise<void> {
  let out = ''
  let said = false
  let why = ''
  let found: readonly string[] | undefined
  try {
    found = await argv
  } catch (err) {
    why = messageOf(err) // no interpreter found: the reason is the host's own, as it gave it
  }
  try {
    if (found !== undefined) why = await host.spawn(
      found,
      text => {
        if (said) return // the helper writes nothing after READY: whatever comes is not kept
        out += text
        const line = READY_LINE.exec(out)
        if (line?.[1] !== undefined) {
          said = true
          out = ''
          ready(line[1])
          return
        }
        // Only the line being written can still be READY; one longer than any READY line is kept as a mark.
        const partial = out.slice(out.lastIndexOf('\n') + 1)
        out = partial.length > MAX_READY_LINE ? '-' : partial
      },
      text => host.debug(text),
      mine.stop.signal,
    )
  } catch (err) {
    why = `the helper did not start: ${messageOf(err)}`
  }
  fail(new Error(why))
  // The process that found or started the shared helper is done once it said READY.
  if (shared && said) return
  // A helper that ends takes the running chain's state with it: say so once, and start afresh next time.
  const l = linkOf(host)
  if (l.helper === mine) {
    const busy = l.wants.size > 0
    l.helper = undefined
    l.wants = new Set()
    l.wantsAt = 0
    if (busy) unavailable(host, why)
  }
}

/** Asks a link's helper to exit and forgets it, when the host's session has ended. */
export function close(host: Host): void {
  const helper = linkOf(host).helper
  if (helper !== undefined) retire(host, helper)
}

/** Forgets a helper that failed and ends it (or asks it to exit), so the next event starts a fresh one. */
function retire(host: Host, failed: Helper): void {
  const l = linkOf(host)
  if (l.helper === failed) {
    l.helper = undefined
    l.wants = new Set()
    l.wantsAt = 0
  }
  failed.stop.abort()
  // The shared helper drops the session named; a helper of the session's own exits.
  void Promise.all([failed.socket, failed.session])
    .then(([socketPath, session]) => host.post(socketPath, named(EXIT_PATH, session), ''))
    .catch(() => undefined)
}

/**
 * Carries out one effect. `at` is the helper's version the effect comes from, `from` the helper: what a timer
 * or a run was foreseen to do holds only for them.
 */
async function act(host: Host, fx: Effect, at: number, from: Helper): Promise<void> {
  switch (fx.kind) {
    case 'log':
      host.log(fx.text)
      return
    case 'toast':
      host.toast(fx.text)
      return
    case 'save.enabled':
      await host.saveEnabled(fx.enabled)
      return
    case 'save.builtin':
      await host.saveBuiltin(fx.enabled)
      return
    case 'invalidate':
      host.invalidate()
      return
    case 'progress':
      host.progress?.(fx.text)
      return
    case 'after':
      host.after(fx.ms, () => {
        const work = fire(host, fx.token, fx.fires ?? null, at, from)
        detached(host, work)
        return work.catch(() => undefined)
      })
      return
    case 'run':
      detached(host, runThenReport(host, fx.command, fx.args, fx.token, fx.then ?? null, at, from))
      return
    case 'shell':
      // The helper runs the step (the person's own shell line); a host whose exit waits on what is under way
      // (`claude -p`) tracks it until the step after it is under way too.
      detached(host, (host.track ?? (p => p))(shellThenReport(host, fx.token, at, from)))
      return
  }
}

/**
 * Carries out an answer's effects in order. A host call that fails (a store that cannot be written) is written to
 * the debug log and the rest go on, so `ask` never throws.
 */
async function carryOut(host: Host, effects: Effect[], at: number, from: Helper): Promise<void> {
  for (const fx of effects) await act(host, fx, at, from).catch(debugged(host))
}

/**
 * Lets work go on after the call that started it returned, and writes its failure (a host call that threw) to
 * the debug log: a rejection nobody handles would end a Node host's process.
 */
function detached(host: Host, work: Promise<void>): void {
  work.catch(debugged(host))
}

/** Writes the failure of a host call to the host's debug log. */
function debugged(host: Host): (err: unknown) => void {
  return err => host.debug(`slashkit: ${messageOf(err)}`)
}

/**
 * Carries out what was foreseen for an event the client is about to send, when it still holds: the helper has
 * been sent nothing since the forecast (`at`). The client does it at once (forecasts hold lines, timers and
 * runs, whose calls all start before `act` first waits), then numbers the event saying `applied`, so the
 * helper skips it, and sends it without waiting for the answer: as the seed's in-process mod, it must not lose
 * the race with `claude -p`'s exit, and a step's timer set in the typed command's hook must find that hook
 * returned (measured on Claude Code 2.1.328).
 */
async function sendForeseen(host: Host, event: EventName, e: object, foreseen: Effect[] | null, at: number, from: Helper): Promise<void> {
  const l = linkOf(host)
  if (foreseen === null || l.helper !== from || l.sent !== at) {
    await ask(host, event, { ...e, applied: false })
    return
  }
  l.sent += 1
  const seq = l.sent
  for (const fx of foreseen) detached(host, act(host, fx, at + 1, from))
  detached(host, report(host, from, seq, event, { ...e, applied: true }))
}

/**
 * Sends a report that a forecast was carried out, in the background: the helper learns at once how far a chain
 * run from its forecasts got, so its journal says so. A session that ends right after a chain (a `claude -p`
 * that exits, a person who quits) leaves no finished chain that looks cut off, and a chain cut off midway
 * resumes from the step it was at, not from the last one the helper heard of. The helper takes events in `seq`
 * order, so this one comes before any sent after it. One that fails is written to the debug log.
 */
async function report(host: Host, from: Helper, seq: number, event: EventName, e: object): Promise<void> {
  const l = linkOf(host)
  l.unanswered += 1
  let answer: WireAnswer
  try {
    answer = await send(host, from, seq, event, e)
  } catch (err) {
    // One that answered out of turn (409) or failed (500) is given up, as for any event. One gone or slow is found
    // so by the next event, and a chain run from its forecasts goes on meanwhile.
    if (err instanceof Parted) retire(host, from)
    host.debug(`slashkit: the helper did not hear ${event}: ${messageOf(err)}`)
    return
  }
  if (l.helper === from) l.unanswered -= 1
  took(host, from, answer)
  // A report the helper found stale (it handled another event first) is answered with what it did instead of the
  // forecast; otherwise with nothing. Either way the client now holds every timer and run the helper waits on
  // (tests/property/test_bridge_stateful.py).
  await carryOut(host, answer.effects, answer.version, from)
}

/**
 * A timer the helper started fired. A timer of a helper that has since gone means nothing to the next, but the
 * line of the step it runs is already written: what it was foreseen to do (the step's run) is carried out, so
 * no line claims a step that never runs; nobody hears its end, and the line that the helper is unavailable
 * has said the chain is over.
 */
async function fire(host: Host, token: number, fires: Effect[] | null, at: number, from: Helper): Promise<void> {
  if (linkOf(host).helper !== from) {
    for (const fx of fires ?? []) detached(host, act(host, fx, at + 1, from))
    return
  }
  await sendForeseen(host, 'TimerFired', { token }, fires, at, from)
}

/** Runs a command the helper asked for (from a timer, never inside a command's hook) and reports its end. */
async function runThenReport(host: Host, command: string, args: string, token: number, then: Effect[] | null, at: number, from: Helper): Promise<void> {
  let error: string | null = null
  let output = ''
  try {
    output = await host.run(command, args)
  } catch (err) {
    error = messageOf(err)
  }
  await reportRun(host, token, error, output, then, at, from)
}

/**
 * Waits for the end of a shell step the helper runs (`SHELL_PATH`, answered once it ended: it bounds the step by
 * its timeout), then reports it as a run's end: `error` says why it failed, `output` is what it printed, bounded.
 */
async function shellThenReport(host: Host, token: number, at: number, from: Helper): Promise<void> {
  let error: string | null = null
  let output = ''
  try {
    const socketPath = await within(host, from.socket, host.startTimeoutMs, 'the helper did not start')
    const posted = host.post(socketPath, named(SHELL_PATH, await from.session), JSON.stringify({ token }))
    const response = await within(host, posted, SHELL_WAIT_MS, 'the shell step did not end')
    const ended = JSON.parse(response.text) as { error?: unknown; output?: unknown }
    if (response.status !== 200) throw new Error(`the helper answered ${response.status}: ${String(ended.error)}`)
    error = typeof ended.error === 'string' ? ended.error : null
    output = typeof ended.output === 'string' ? ended.output : ''
  } catch (err) {
    error = messageOf(err)
  }
  await reportRun(host, token, error, output, null, at, from)
}

/**
 * Reports how a run the helper asked for ended, with the text it returned (a `|` hands it on); what its good end
 * was foreseen to do is done at once. A `run` effect's end comes here, and a `run.typed` reply's through its ticket.
 */
async function reportRun(host: Host, token: number, error: string | null, output: string, then: Effect[] | null, at: number, from: Helper): Promise<void> {
  const l = linkOf(host)
  if (l.helper !== from) return
  // Only a step whose output is handed on needs its text; a transport bound keeps the request under the helper's.
  const text = wanted(STEP_OUTPUT, l) ? bounded(output) : ''
  await sendForeseen(host, 'RunEnded', { token, error, output: text }, error === null ? then : null, at, from)
}
