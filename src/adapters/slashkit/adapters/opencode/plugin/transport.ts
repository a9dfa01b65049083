/**
 * The plugin's way to the resident Python helper (slashkit.adapters.claude_code.helper, protocol version 1 in
 * docs/bridge.md): starts it on the first event, numbers the events, POSTs each over the helper's unix socket
 * and gives back the answer. Nothing else: it knows no event and no effect. Kept this narrow so the shared
 * TypeScript client of the host-neutral bridge can take its place.
 */
import { spawn } from 'node:child_process'
import { request } from 'node:http'

export type WireAnswer = { version: number; wants: string[]; reply: Record<string, unknown> | null; effects: Record<string, unknown>[] }

export type Transport = {
  /** Sends one event; resolves with the answer, or rejects with a one-line reason (the helper is then retired). */
  send(event: string, e: unknown): Promise<WireAnswer>
  /** The optional events the helper asked for in its last answer. */
  wants(): ReadonlySet<string>
}

export type HelperCommand = { python: string; args: string[]; startMs: number; answerMs: number }

const VERSION = 1
/** Longest answer read; the helper's are a few KiB. */
const MAX_ANSWER = 1 << 20

/** The helper refused the event as malformed (HTTP 400/413): the helper is sound, the event is not. */
export class RefusedEvent extends Error {}

/** A transport that starts its helper on the first `send` and starts a new one after a failure. */
export function transport(command: HelperCommand, debug: (line: string) => void): Transport {
  let socket: Promise<string> | undefined
  let sent = 0
  let wants: ReadonlySet<string> = new Set()
  let queue: Promise<unknown> = Promise.resolve()

  const retire = (): void => {
    socket = undefined
    wants = new Set()
  }

  const sendOne = async (event: string, e: unknown): Promise<WireAnswer> => {
    if (socket === undefined) {
      socket = start(command, debug, () => retire())
      sent = 0
    }
    const mine = socket
    sent += 1
    try {
      const path = await within(mine, command.startMs, 'the helper did not start')
      const body = JSON.stringify({ v: VERSION, seq: sent, event, e })
      const answer = await within(post(path, '/v1/event', body), command.answerMs, `the helper did not answer ${event}`)
      const read = readAnswer(answer.status, answer.text)
      if (socket === mine) wants = new Set(read.wants)
      return read
    } catch (err) {
      if (!(err instanceof RefusedEvent) && socket === mine) {
        retire()
        void mine.then(path => post(path, '/v1/exit', '{}')).catch(() => undefined)
      }
      throw err
    }
  }

  return {
    // One at a time, in the order the plugin sent them: the helper's state moves event by event.
    send(event, e) {
      const next = queue.then(() => sendOne(event, e))
      queue = next.catch(() => undefined)
      return next
    },
    wants: () => wants,
  }
}

function start(command: HelperCommand, debug: (line: string) => void, exited: () => void): Promise<string> {
  const socket = new Promise<string>((resolve, reject) => {
    let out = ''
    let child
    try {
      child = spawn(command.python, command.args, { stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      reject(new Error(`the helper did not start: ${messageOf(err)}`))
      return
    }
    child.on('error', err => {
      exited()
      reject(new Error(`the helper did not start: ${err.message}`))
    })
    child.stdout.on('data', (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-4096)
      const line = /READY (\S+)\n/.exec(out)
      if (line?.[1] !== undefined) resolve(line[1])
    })
    child.stderr.on('data', (chunk: Buffer) => debug(chunk.toString()))
    child.on('exit', (code, signal) => {
      exited()
      reject(new Error(`the helper exited (${signal ?? `code ${String(code)}`})`))
    })
  })
  socket.catch(() => undefined)
  return socket
}

function post(socketPath: string, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      res => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
          if (text.length > MAX_ANSWER) req.destroy(new Error('the helper answered more than 1 MiB'))
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function readAnswer(status: number, text: string): WireAnswer {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`the helper answered ${status} with something that is not JSON`)
  }
  const answer = (body ?? {}) as Partial<WireAnswer> & { v?: unknown; error?: unknown }
  if (status === 400 || status === 413) throw new RefusedEvent(`the helper refused the event: ${String(answer.error)}`)
  const sound = typeof answer.version === 'number' && Array.isArray(answer.wants) && Array.isArray(answer.effects)
  if (status !== 200 || answer.v !== VERSION || !sound) {
    throw new Error(`the helper answered ${status} with an answer that is not bridge version ${VERSION}`)
  }
  return { version: answer.version ?? 0, wants: answer.wants ?? [], reply: answer.reply ?? null, effects: answer.effects ?? [] }
}

/** Races a promise against a timer, so a helper that hangs never holds a turn past `ms`. */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
