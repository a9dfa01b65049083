/**
 * The mod's end of the slashkit bridge: starts the resident Python helper, sends it engine events one by one
 * and carries out the effects it answers with. It decides nothing; every rule is in Python.
 * Protocol: docs/bridge.md (version 1).
 */
import type { EngineInterface } from 'claude-code'
import { ANSWER_TIMEOUT_MS, HELPER_ARGS, PYTHON, START_TIMEOUT_MS, UNAVAILABLE } from './host.js'

export type Effect =
  | { kind: 'log'; text: string }
  | { kind: 'toast'; text: string }
  | { kind: 'after'; ms: number; token: number; fires: Effect[] | null }
  | { kind: 'run'; command: string; args: string; token: number; then: string[] | null }
  | { kind: 'store.set'; key: string; value: unknown }
  | { kind: 'invalidate' }

export type Reply =
  | { kind: 'run'; args: string; token: number }
  | { kind: 'text'; text: string }
  | { kind: 'deny'; text: string }
  | { kind: 'prompt'; text: string }
  | { kind: 'description'; text: string }
  | { kind: 'skill'; commandName: string; context: string }

/** What the helper answered, or `undefined` when it could not (the line saying why is already logged). */
export type Answer = { reply: Reply | null } | undefined

type Helper = { socket: Promise<string> }

const VERSION = 1

/** The running helper, started by the first event Python wants; undefined until then and after it failed. */
let helper: Helper | undefined
/** The optional events the helper asked for in its last answer; the others never start Python. */
let wants: ReadonlySet<string> = new Set()
/** Why the helper is unavailable, once that is logged; cleared by its next answer. */
let down: string | undefined
/** How many events the helper had handled at its last answer, and how many asks are awaiting one. */
let version = 0
let inFlight = 0

/** Whether the helper asked to hear this event. */
export function wanted(event: string): boolean {
  return wants.has(event)
}

/** Sends one event and carries out the effects the answer holds; never throws. */
export async function ask($: EngineInterface, event: string, e: unknown): Promise<Answer> {
  const current = helper ?? start($)
  let answer: WireAnswer
  inFlight += 1
  try {
    answer = await send($, current, event, e)
  } catch (err) {
    if (!(err instanceof RefusedEvent)) retire($, current)
    unavailable($, messageOf(err))
    return undefined
  } finally {
    inFlight -= 1
  }
  version = answer.version
  wants = new Set(answer.wants)
  down = undefined
  for (const fx of answer.effects) await act($, fx, answer.version)
  return { reply: answer.reply }
}

async function send($: EngineInterface, current: Helper, event: string, e: unknown): Promise<WireAnswer> {
  const socketPath = await within($, current.socket, START_TIMEOUT_MS, 'the helper did not start')
  const request = $.http.fetch('http://slashkit/v1/event', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ v: VERSION, event, e }),
    socketPath,
  })
  const response = await within($, request, ANSWER_TIMEOUT_MS, `the helper did not answer ${event}`)
  return readAnswer(response.status, response.text)
}

/** Logs once why the helper cannot answer, until it answers again. */
function unavailable($: EngineInterface, why: string): void {
  // The engine names the calling plugin in front of a `$` call's error, and again in front of the line.
  const reason = why.replace(/(slash-chain|self-command): (?=\$\.)/g, '')
  if (down === undefined) $.ui.log(UNAVAILABLE.replace('{why}', reason))
  down = reason
}

/** Tells the engine-facing hooks that a hook of their own (not the helper) failed. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** The helper refused the event as malformed (HTTP 400/413): the helper is sound, the event is not. */
class RefusedEvent extends Error {}

type WireAnswer = { version: number; wants: string[]; reply: Reply | null; effects: Effect[] }

function readAnswer(status: number, text: string): WireAnswer {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`the helper answered ${status} with something that is not JSON`)
  }
  const answer = body as Partial<WireAnswer> & { v?: unknown; error?: unknown }
  if (status === 400 || status === 413) throw new RefusedEvent(`the helper refused the event: ${String(answer.error)}`)
  const sound = typeof answer.version === 'number' && Array.isArray(answer.wants) && Array.isArray(answer.effects)
  if (status !== 200 || answer.v !== VERSION || !sound) {
    throw new Error(`the helper answered ${status} with an answer that is not bridge version ${VERSION}`)
  }
  return { version: answer.version ?? 0, wants: answer.wants ?? [], reply: answer.reply ?? null, effects: answer.effects ?? [] }
}

/** Races a `$` call against a timer, so a helper that hangs never holds a turn past `ms`. */
async function within<T>($: EngineInterface, work: Promise<T>, ms: number, what: string): Promise<T> {
  const abort = new AbortController()
  const timeout = $.clock.sleep(ms, { signal: abort.signal }).then(() => {
    throw new Error(`${what} within ${ms} ms`)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    abort.abort()
  }
}

/** Starts the helper; its socket resolves on the `READY <path>` line. The child lives on after the hook. */
function start($: EngineInterface): Helper {
  let ready: (path: string) => void = () => undefined
  let fail: (err: Error) => void = () => undefined
  const socket = new Promise<string>((resolve, reject) => {
    ready = resolve
    fail = reject
  })
  socket.catch(() => undefined)
  const started: Helper = { socket }
  helper = started
  void watch($, started, ready, fail)
  return started
}

async function watch($: EngineInterface, mine: Helper, ready: (path: string) => void, fail: (err: Error) => void): Promise<void> {
  let out = ''
  let why = 'the helper exited'
  try {
    const child = $.process.spawn({ argv: [PYTHON, ...HELPER_ARGS] })
    for await (const { stream, text } of child) {
      if (stream === 'stderr') {
        $.ui.log(text, { to: 'debug' })
        continue
      }
      out += text
      const line = /READY (\S+)\n/.exec(out)
      if (line?.[1] !== undefined) {
        ready(line[1])
        out = ''
      }
    }
    const end = await child.result
    why = `the helper exited (${end.signal ?? `code ${String(end.code)}`})`
  } catch (err) {
    why = `the helper did not start: ${messageOf(err)}`
  }
  fail(new Error(why))
  // A helper that ends takes the running chain's state with it: say so once, and start afresh next time.
  if (helper === mine) {
    const busy = wants.size > 0
    helper = undefined
    wants = new Set()
    if (busy) unavailable($, why)
  }
}

/** Forgets a helper that failed and asks it to exit, so the next event starts a fresh one. */
function retire($: EngineInterface, failed: Helper): void {
  if (helper === failed) {
    helper = undefined
    wants = new Set()
  }
  void failed.socket.then(socketPath => $.http.fetch('http://slashkit/v1/exit', { method: 'POST', socketPath })).catch(() => undefined)
}

/** Carries out one effect: each kind is one literal `$` call, as the engine's static analysis requires. */
async function act($: EngineInterface, fx: Effect, at: number): Promise<void> {
  switch (fx.kind) {
    case 'log':
      $.ui.log(fx.text)
      return
    case 'toast':
      $.ui.toast(fx.text)
      return
    case 'store.set':
      await $.store.set(fx.key, fx.value)
      return
    case 'invalidate':
      $.ui.invalidate('tool.describe')
      return
    case 'after':
      $.clock.after(fx.ms, () => void fire($, fx.token, fx.fires ?? null, at, helper))
      return
    case 'run':
      void runThenReport($, fx.command, fx.args, fx.token, fx.then ?? null, at, helper)
      return
  }
}

/**
 * A timer the helper started fired. What the helper foresaw it doing (`fires`) is carried out at once when
 * the helper has moved on by no other event since (`at`), as the seed's in-process timer would: a round
 * trip first can lose the race with `claude -p`'s exit (measured on 2.1.328). The helper then skips it.
 */
async function fire($: EngineInterface, token: number, fires: Effect[] | null, at: number, issuer: Helper | undefined): Promise<void> {
  // A timer a helper that has since gone started means nothing to the next one: nothing to send.
  if (helper !== issuer) return
  const applied = fires !== null && version === at && inFlight === 0
  if (applied) for (const fx of fires) await act($, fx, at + 1)
  await ask($, 'timer', { token, applied })
}

/**
 * Runs a command the helper asked for (from a timer, never inside a command's hook) and reports how it ended.
 * The lines promised for a run that resolves are written at once when the helper has moved on by no other
 * event since (`at`), because `claude -p` exits as soon as its last command resolved.
 */
async function runThenReport(
  $: EngineInterface,
  command: string,
  args: string,
  token: number,
  then: string[] | null,
  at: number,
  issuer: Helper | undefined,
): Promise<void> {
  let error: string | null = null
  try {
    await $.command.run({ command, args })
  } catch (err) {
    error = messageOf(err)
  }
  if (helper !== issuer) return
  const applied = error === null && then !== null && version === at && inFlight === 0
  if (applied) for (const line of then) $.ui.log(line)
  await ask($, 'run.done', { token, error, applied })
}
