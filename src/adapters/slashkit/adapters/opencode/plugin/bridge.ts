/**
 * opencode's side of the slashkit bridge: the `Host` the shared client (./client.ts, copied from
 * slashkit.adapters.bridge by slashkit.adapters.opencode.install) reaches the outside world through, built from
 * Node's own modules (opencode runs plugins in Bun, which has them): the helper's process, HTTP over its unix
 * socket, timers. What a session does with the effects (its lines, its runs) is the plugin's.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { request } from 'node:http'
import { delimiter, isAbsolute, join } from 'node:path'
import type { Host, Link } from './client.js'
import {
  ANSWER_TIMEOUT_MS,
  HELPER_ARGS,
  HELPER_OPTIONS,
  HELPER_SCRIPT,
  PYTHON,
  START_TIMEOUT_MS,
  UNAVAILABLE,
  WHOAMI_MAX_OUTPUT,
  WHOAMI_TIMEOUT_MS,
} from './host.js'

export type { Answer, Effect, Link, Reply, Ticket } from './client.js'
export { ask, bounded, close, link, messageOf, wanted } from './client.js'

/** Longest answer read; the helper's are a few KiB. */
const MAX_ANSWER = 1 << 20
/**
 * How long a helper the client gave up on has to leave after SIGTERM before it is killed (SIGKILL): a helper leaves
 * at once on SIGTERM (slashkit.adapters.bridge.helper), so one still there is stopped (SIGSTOP holds SIGTERM and
 * freezes its parent watch too) or wedged, and would otherwise outlive opencode.
 */
const KILL_AFTER_MS = 2000

/**
 * The helpers this opencode process started that still run: one set for the process, however many copies of this
 * module opencode loaded (a project's plugin and the user's), so one set of listeners below ends them all.
 */
const helpers = processWide()

function processWide(): Set<ChildProcess> {
  const shared = globalThis as typeof globalThis & { slashkitOpencodeHelpers?: Set<ChildProcess> }
  if (shared.slashkitOpencodeHelpers === undefined) {
    const made = new Set<ChildProcess>()
    shared.slashkitOpencodeHelpers = made
    endWithOpencode(made)
  }
  return shared.slashkitOpencodeHelpers
}

/**
 * Tells every helper still running to leave as opencode ends: SIGTERM, and SIGCONT so that a stopped one acts on
 * it. opencode cannot wait for a grace then, and a helper that leaves removes its socket's folder, which SIGKILL
 * would leave behind. A running helper would leave by its parent watch within a second anyway; a stopped one never
 * would (issue 16, D3).
 *
 * `opencode serve` given SIGTERM ends by the signal's default action, at once and with no 'exit' event (measured on
 * 1.18.33: status -15, a plugin's process.on('exit') never runs). So, while no one else listens for a signal that
 * would end opencode, this listens: it ends the helpers, then raises the signal again with no listener left, which
 * ends opencode as before (measured: status -15 still). A signal someone else listens for is theirs to act on.
 */
function endWithOpencode(running: Set<ChildProcess>): void {
  const endAll = (): void => {
    for (const child of running) {
      child.kill('SIGTERM')
      child.kill('SIGCONT')
    }
  }
  process.on('exit', endAll)
  for (const ending of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(ending) > 1) return
      endAll()
      process.removeListener(ending, onSignal)
      process.kill(process.pid, ending)
    }
    process.on(ending, onSignal)
  }
}

/** What a session gives its host: where its lines and runs go, its own link to its own helper, and whether opencode
 * deleted it (a deleted session starts no helper). */
export type SessionCalls = Pick<Host, 'log' | 'toast' | 'run' | 'saveEnabled'> & { link: Link; gone: () => boolean }

/**
 * The helper's argv, in the order docs/opencode.md gives: `SLASHKIT_PYTHON`, the interpreter `slashkit opencode
 * install --this-python` named, else `slashkit-helper` on PATH (installed beside `slashkit`).
 */
async function locate(): Promise<readonly string[]> {
  const person = process.env.SLASHKIT_PYTHON
  if (person !== undefined && person !== '') return [person, ...HELPER_ARGS]
  if (PYTHON !== null) return [PYTHON, ...HELPER_ARGS]
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(folder)) continue // a relative PATH entry names a folder under wherever opencode runs
    const script = join(folder, HELPER_SCRIPT)
    try {
      accessSync(script, constants.X_OK)
      return [script, ...HELPER_OPTIONS]
    } catch {
      // not here
    }
  }
  throw new Error(`no ${HELPER_SCRIPT} on PATH: install slashkit there, or set SLASHKIT_PYTHON to a Python with it`)
}

/**
 * Who lich says this session is: `$LICH_BIN whoami --json`'s stdout when it exited 0 within WHOAMI_TIMEOUT_MS with
 * no more than WHOAMI_MAX_OUTPUT bytes, else null. LICH_BIN counts only as the absolute path lich exports: PATH is
 * never searched (a dev build and an installed lich may both be there). A child that outlives the timeout is
 * killed, and the answer is null then whatever it still does.
 */
function whoami(): Promise<string | null> {
  const bin = process.env.LICH_BIN ?? ''
  if (!isAbsolute(bin)) return Promise.resolve(null)
  return new Promise(resolve => {
    let child: ChildProcess | undefined
    const timer = setTimeout(() => {
      child?.kill('SIGKILL')
      resolve(null)
    }, WHOAMI_TIMEOUT_MS)
    const done = (output: string | null): void => {
      clearTimeout(timer)
      resolve(output)
    }
    try {
      child = execFile(bin, ['whoami', '--json'], { encoding: 'utf8', maxBuffer: WHOAMI_MAX_OUTPUT, killSignal: 'SIGKILL' }, (err, stdout) =>
        done(err === null ? stdout : null),
      )
    } catch {
      done(null)
    }
  })
}

/** The bridge client's host for one opencode session. */
export function nodeHost(calls: SessionCalls): Host {
  return {
    argv: [],
    locate,
    startTimeoutMs: START_TIMEOUT_MS,
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    unavailable: UNAVAILABLE,
    link: calls.link,
    spawn: (argv, stdout, stderr, stop) =>
      new Promise<string>((resolve, reject) => {
        const [file, ...args] = argv
        if (file === undefined) {
          reject(new Error('no interpreter'))
          return
        }
        // A timer or a run the core asked for before the session was deleted would start a helper no one ends.
        if (calls.gone()) {
          reject(new Error('its session was deleted'))
          return
        }
        const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] })
        helpers.add(child)
        child.on('error', err => {
          helpers.delete(child)
          reject(err)
        })
        child.stdout.setEncoding('utf8')
        child.stderr.setEncoding('utf8')
        child.stdout.on('data', (text: string) => stdout(text))
        child.stderr.on('data', (text: string) => stderr(text))
        child.on('exit', (code, signal) => {
          helpers.delete(child)
          resolve(`the helper exited (${signal ?? `code ${String(code)}`})`)
        })
        // Once the client gives it up: SIGTERM (the helper then leaves at once, its folder removed), and SIGKILL
        // after a grace if it is still there. The timer does not keep opencode alive.
        const giveUp = (): void => {
          child.kill('SIGTERM')
          setTimeout(() => {
            if (helpers.has(child)) child.kill('SIGKILL')
          }, KILL_AFTER_MS).unref()
        }
        if (stop.aborted) giveUp()
        else stop.addEventListener('abort', giveUp, { once: true })
      }),
    post: (socketPath, path, body) =>
      new Promise((resolve, reject) => {
        const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
        const req = request({ socketPath, path, method: 'POST', headers }, res => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => {
            text += chunk
            if (text.length > MAX_ANSWER) req.destroy(new Error('the helper answered more than 1 MiB'))
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
          res.on('error', reject)
        })
        req.on('error', reject)
        req.end(body)
      }),
    // Rejects when aborted, as a timer that never fired: the client reads a resolved sleep as a timeout.
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms)
        signal.addEventListener('abort', () => {
          clearTimeout(timer)
          reject(new Error('aborted'))
        })
      }),
    log: calls.log,
    // opencode has no debug log a plugin writes to; the helper's stderr is dropped.
    debug: () => undefined,
    toast: calls.toast,
    after: (ms, fire) => void setTimeout(fire, ms),
    run: calls.run,
    saveEnabled: calls.saveEnabled,
    // opencode reads a plugin tool's description once; nothing to ask again.
    invalidate: () => undefined,
    whoami,
    // Bun's HTTP client adds a hint for developers to a closed connection (measured on opencode 1.18.33: "The
    // socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument
    // to fetch()"); the person's line keeps the reason.
    plain: why => why.replace(/\. For more information, pass `verbose: true`[^]*$/, ''),
  }
}
