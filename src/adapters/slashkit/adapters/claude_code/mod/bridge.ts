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
  | { kind: 'after'; ms: number; token: number; fires?: Effect[] | null }
  | { kind: 'run'; command: string; args: string; token: number; then?: Effect[] | null }
  | { kind: 'store.set'; key: string; value: unknown }
  | { kind: 'invalidate' }

export type Reply =
  | { kind: 'run'; args: string; token: number; then?: Effect[] | null }
  | { kind: 'text'; text: string }
  | { kind: 'deny'; text: string }
  | { kind: 'prompt'; text: string }
  | { kind: 'description'; text: string }
  | { kind: 'skill'; commandName: string; context: string }

/**
 * What the helper answered, or `undefined` when it could not (the line saying why is already logged):
 * the reply, and which helper gave it at which version, for the forecasts it carries.
 */
export type Answer = { reply: Reply | null; at: number; from: Helper } | undefined

type Helper = { socket: Promise<string> }

const VERSION = 1
/** The most of a command's text sent on: the core hands on less (slashkit.core.texts.MAX_HANDED). */
const MAX_OUTPUT_CHARS = 65536

/** The running helper, started by the first event Python wants; undefined until then and after it failed. */
let helper: Helper | undefined
/** The optional events the helper asked for in its last answer; the others never start Python. */
let wants: ReadonlySet<string> = new Set()
/** Why the helper is unavailable, once that is logged; cleared by its next answer. */
let down: string | undefined
/**
 * How many events this mod has sent the current helper: each request carries its number (`seq`), and the
 * helper handles them in that order. A forecast made at version `at` holds while `sent === at`: the helper
 * has been sent nothing since.
 */
let sent = 0
/**
 * Events the mod numbered but has not sent yet: reports that it carried out a forecast (`applied`). They
 * go out, in order, ahead of the next event, so nothing else competes with the engine's next step when a
 * forecast is carried out; until then the helper lags, and the events it wants are a superset.
 */
let held: { seq: number; event: string; e: unknown }[] = []

/** Whether the helper asked to hear this event. */
export function wanted(event: string): boolean {
  return wants.has(event)
}

/** Sends one event and carries out the effects the answer holds; never throws. */
export async function ask($: EngineInterface, event: string, e: unknown): Promise<Answer> {
  const current = helper ?? start($)
  sent += 1 // before any wait, so what the caller does next already counts this event as sent
  const seq = sent
  const earlier = held.map(h => send($, current, h.seq, h.event, h.e))
  held = []
  let answer: WireAnswer
  try {
    await Promise.all(earlier)
    answer = await send($, current, seq, event, e)
  } catch (err) {
    if (!(err instanceof RefusedEvent)) retire($, current)
    unavailable($, messageOf(err))
    return undefined
  }
  if (helper === current) wants = new Set(answer.wants)
  down = undefined
  for (const fx of answer.effects) await act($, fx, answer.version, current)
  return { reply: answer.reply, at: answer.version, from: current }
}

async function send($: EngineInterface, current: Helper, seq: number, event: string, e: unknown): Promise<WireAnswer> {
  const socketPath = await within($, current.socket, START_TIMEOUT_MS, 'the helper did not start')
  const request = $.http.fetch('http://slashkit/v1/event', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ v: VERSION, seq, event, e }),
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
  sent = 0
  held = []
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

/**
 * Carries out one effect: each kind is one literal `$` call, as the engine's static analysis requires.
 * `at` is the helper's version the effect comes from, `from` the helper: what a timer or a run was foreseen
 * to do holds only for them.
 */
async function act($: EngineInterface, fx: Effect, at: number, from: Helper): Promise<void> {
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
      $.clock.after(fx.ms, () => void fire($, fx.token, fx.fires ?? null, at, from))
      return
    case 'run':
      void runThenReport($, fx.command, fx.args, fx.token, fx.then ?? null, at, from)
      return
  }
}

/**
 * Carries out what was foreseen for an event the mod is about to send, when it still holds: the helper has
 * been sent nothing since the forecast (`at`). The mod does it at once (forecasts hold lines, timers and
 * runs, whose calls all start before `act` first waits), then sends the event saying `applied`, so the
 * helper skips it, and does not wait for the answer: as the seed's in-process mod, it must not lose the race
 * with `claude -p`'s exit, and a step's timer set in the typed command's hook must find that hook returned
 * (measured on 2.1.328).
 */
async function sendForeseen($: EngineInterface, event: string, e: object, foreseen: Effect[] | null, at: number, from: Helper): Promise<void> {
  if (foreseen === null || helper !== from || sent !== at) {
    await ask($, event, { ...e, applied: false })
    return
  }
  sent += 1
  held.push({ seq: sent, event, e: { ...e, applied: true } })
  for (const fx of foreseen) void act($, fx, at + 1, from)
}

/**
 * A timer the helper started fired. A timer of a helper that has since gone means nothing to the next, but the
 * line of the step it runs is already written: what it was foreseen to do (the step's run) is carried out, so
 * no line claims a step that never runs; nobody hears its end, and the line that the helper is unavailable
 * has said the chain is over.
 */
async function fire($: EngineInterface, token: number, fires: Effect[] | null, at: number, from: Helper): Promise<void> {
  if (helper !== from) {
    for (const fx of fires ?? []) void act($, fx, at + 1, from)
    return
  }
  await sendForeseen($, 'timer', { token }, fires, at, from)
}

/** Runs a command the helper asked for (from a timer, never inside a command's hook) and reports its end. */
async function runThenReport($: EngineInterface, command: string, args: string, token: number, then: Effect[] | null, at: number, from: Helper): Promise<void> {
  let error: string | null = null
  let output = ''
  try {
    output = (await $.command.run({ command, args })).text ?? ''
  } catch (err) {
    error = messageOf(err)
  }
  await reportRun($, token, error, output, then, at, from)
}

/**
 * Reports how a run the helper asked for ended, with the text it returned (a `|` hands it on); what its good end
 * was foreseen to do is done at once.
 */
export async function reportRun($: EngineInterface, token: number, error: string | null, output: string, then: Effect[] | null, at: number, from: Helper): Promise<void> {
  if (helper !== from) return
  // Only a step whose output is handed on needs its text; a transport bound keeps the request under the helper's.
  const text = wanted('run.output') ? output.slice(0, MAX_OUTPUT_CHARS) : ''
  await sendForeseen($, 'run.done', { token, error, output: text }, error === null ? then : null, at, from)
}
