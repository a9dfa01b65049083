/**
 * Claude Code's side of the slashkit bridge: the `Host` the shared client (./client.ts, from
 * slashkit.adapters.bridge) reaches the outside world through, built from the hook's `$`. The engine's static
 * analysis lets `$` into a function declared at the top of a module file, and into closures there; every call
 * below is one literal `$.noun.event(...)`.
 */
import type { EngineInterface } from 'claude-code'
import { ask, boundedInput, Work, type Host, type Shared } from './client.js'
import {
  ANSWER_TIMEOUT_MS,
  BUILTIN_KEY,
  ENABLED_KEY,
  HELPER_ARGS,
  HELPER_OPTIONS,
  HELPER_SCRIPT,
  PYTHON,
  SOURCE,
  START_TIMEOUT_MS,
  UNAVAILABLE,
  VERSION,
  WHOAMI_MAX_OUTPUT,
  WHOAMI_TIMEOUT_MS,
} from './host.js'
import { SESSION_VARIABLES, SHARED_SOCKET } from './wire.js'

export type { Answer, Effect, Reply, WireReply } from './client.js'
export { ask, bounded, boundedInput, messageOf, opensProgram, prepare, wanted } from './client.js'

/** The longest wait for the private environment to be made (a venv, and slashkit built into it from its source). */
const MAKE_TIMEOUT_MS = 10 * 60 * 1000

/**
 * What a session finds, without starting Python: `slashkit-helper` on PATH (installed beside `slashkit`), or the
 * private environment's interpreter `$1` when it is there. One `sh` (~3 ms through `$.process.run`, measured on
 * Claude Code 2.1.328) rather than a spawn that fails, since a spawn's failure comes only once the helper is given
 * up on.
 */
const FIND = 'if found=$(command -v "$2"); then echo "$found"; elif [ -x "$1" ]; then echo "$1"; fi'

/**
 * Makes the private environment `$1` from slashkit's source `$2`: a venv beside it, slashkit built into it from
 * the package index's build tools, then renamed into place (a session that made it first keeps its own).
 */
const MAKE = [
  'set -e',
  'tmp="$1.$$"',
  'trap \'rm -rf "$tmp"\' EXIT', // nothing half made is left, whatever fails; once renamed, nothing is there
  'rm -rf "$tmp"',
  'python3 -m venv "$tmp"',
  '"$tmp/bin/python" -m pip install --quiet --disable-pip-version-check "$2"',
  '"$tmp/bin/python" -c "import os, sys; os.rename(sys.argv[1], sys.argv[2])" "$tmp" "$1" 2>/dev/null || rm -rf "$tmp"',
].join('\n')

/**
 * The helper's argv, in the order docs/claude-code.md gives: `SLASHKIT_PYTHON`, the interpreter a local layout
 * names (`slashkit claude-code plugin-dir`), `slashkit-helper` on PATH, else the plugin's private environment in
 * its data folder, made on first use from the source the plugin carries.
 */
async function locate($: EngineInterface): Promise<readonly string[]> {
  const ready = await found($)
  if (ready !== null) return ready
  const data = await dataFolder($)
  const python = `${data}/python-${VERSION}/bin/python`
  $.ui.log(`slashkit: making its Python environment in ${data} (first use, a minute or two)`)
  const made = await $.process.run(['sh', '-c', MAKE, 'sh', `${data}/python-${VERSION}`, `${$.plugin.root}/${SOURCE}`], {
    timeoutMs: MAKE_TIMEOUT_MS,
  })
  if (made.exitCode !== 0) {
    // pip's own reason is its last `ERROR:` line (indented when a build step of its own failed); what follows it
    // is advice about pip itself.
    const said = made.stderr.split('\n').map(line => line.trim()).filter(line => line !== '')
    const why = said.filter(line => line.startsWith('ERROR:')).pop() ?? said.pop() ?? `exit ${String(made.exitCode)}`
    throw new Error(`cannot make its Python environment in ${data} (${why}); set SLASHKIT_PYTHON to a Python with slashkit`)
  }
  return [python, ...HELPER_ARGS]
}

/** The plugin's data folder, where its private environment lives. */
async function dataFolder($: EngineInterface): Promise<string> {
  return (await facts($)).hookEnv.CLAUDE_PLUGIN_DATA ?? `${$.plugin.root}/.data`
}

/** The helper's argv when one is there to start, the first of `locate`'s; null while the private environment is to be made. */
async function found($: EngineInterface): Promise<readonly string[] | null> {
  const person = (await facts($)).python
  if (person !== undefined && person !== '') return [person, ...HELPER_ARGS]
  if (PYTHON !== null) return [PYTHON, ...HELPER_ARGS]
  const python = `${await dataFolder($)}/python-${VERSION}/bin/python`
  const said = (await $.process.run(['sh', '-c', FIND, 'sh', python, HELPER_SCRIPT])).stdout.trim()
  if (said === python) return [python, ...HELPER_ARGS]
  return said === '' ? null : [said, ...HELPER_OPTIONS]
}

/** Whether the helper can start at once: false while its private environment is still to be made (first use). */
export async function startable($: EngineInterface): Promise<boolean> {
  return (await found($)) !== null
}

/**
 * A chain's steps, handed to the engine by the session start's hook (measured on 2.1.328): `claude -p` exits once
 * its queue of commands is empty after a command or a turn ended, so a step a timer queued after that never ran (a
 * typed chain's third step, a saved chain's every step). `$.command.run` queues a command, and is refused inside the
 * hook the queued command would wait on; called with the `$` of the settled session start, from within any hook, it
 * is not. So the steps go to `serveRuns`, the session start's loop, and the hooks where a chain goes on (a turn's
 * end, a saved chain's command, a typed chain's first step) return only once what they led to is under way
 * (`drain`): the next step is in the engine's queue before the one it follows has ended.
 */
type Run = { command: string; args: string; ended: (text: string, error: unknown) => void; handed: () => void }
/** Steps asked to run and not yet handed to the engine, oldest first. */
const toHand: Run[] = []
/** The newest session start's loop (`serveRuns`), and how to wake it. */
let loops = 0
let wake: (() => void) | undefined
/** What a chain going on led to and is still under way: the helper's answers, and timers with what they fire. */
const work = new Work()
const track = <T>(p: Promise<T>): Promise<T> => work.track(p)

/** Hands the chain's steps to the engine with the `$` of the session start that calls it, while it is the newest. */
export async function serveRuns($: EngineInterface): Promise<void> {
  const mine = ++loops
  wake?.()
  for (;;) {
    while (toHand.length === 0) {
      await new Promise<void>(woken => (wake = woken))
      if (loops !== mine) return
    }
    if (loops !== mine) return
    const run = toHand.shift() as Run
    $.command.run({ command: run.command, args: run.args }).then(
      ran => run.ended(ran.text ?? '', null),
      (err: unknown) => run.ended('', err),
    )
    run.handed()
  }
}

/** Runs `/command args` through `serveRuns`: resolves with its text once it ran, rejects with what it threw. */
function runServed(command: string, args: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const run: Run = {
      command,
      args,
      ended: (text, error) => (error === null ? resolve(text) : reject(error instanceof Error ? error : new Error(String(error)))),
      handed: () => undefined,
    }
    void track(new Promise<void>(done => (run.handed = done)))
    toHand.push(run)
    wake?.()
  })
}

/**
 * Waits until what this hook's chain event led to is under way: every answer of the helper in flight and every
 * timer with what it fires (a timer's `fire` resolves once the step it runs is handed on); each answer ends within
 * the client's timeout.
 */
export function drain(): Promise<void> {
  return work.drained()
}

/**
 * The store's key of the shared helper's socket as a session found it: where a mod cannot read its uid from
 * `/proc/self/status` (not Linux) it learns it from a process (`id -u`, ~3-4 ms through `$.process.run`, measured on
 * 2.1.328), so without `XDG_RUNTIME_DIR` the next session finds the socket through the store and starts none.
 */
const SHARED_KEY = 'sharedHelper'

/**
 * What this process's environment tells slashkit: the variables its plugins read and those the helper is given for
 * the session (wire.ts, SESSION_VARIABLES), and the ones the engine gives a command hook (`$.process.hookEnv`).
 * Read once per process, at once: each `$` call is a hop from the hooks' worker to the engine's main thread, which
 * a session's start waits on (measured on 2.1.328: 20 reads in parallel cost ~7 ms, one after another ~15), and a
 * chain's first hook found them read at the session's start. The process's environment is the session's for its
 * life; a plugin that changes it later with `$.env.set` changes nothing slashkit reads.
 */
type Facts = {
  readonly hookEnv: Readonly<Record<string, string | undefined>>
  readonly variables: Readonly<Record<(typeof SESSION_VARIABLES)[number], string | undefined>>
  readonly python: string | undefined
  readonly mode: string | undefined
  readonly runtime: string | undefined
  readonly tmp: string | undefined
  readonly pwd: string | undefined
}
let factsRead: Promise<Facts> | undefined

/** This process's `Facts`, read by the first hook that needs them. */
export function facts($: EngineInterface): Promise<Facts> {
  factsRead ??= readFacts($)
  return factsRead
}

async function readFacts($: EngineInterface): Promise<Facts> {
  const [hookEnv, python, mode, runtime, tmp, pwd, home, lang, lich, allow, harness, project, config, state, timeout, resume] = await Promise.all([
    // A data folder the engine cannot make rejects (`CLAUDE_PLUGIN_DATA`): the rest is still read.
    $.process.hookEnv().catch((): Record<string, string> => ({})),
    $.env.get('SLASHKIT_PYTHON'),
    $.env.get('SLASHKIT_HELPER'),
    $.env.get('XDG_RUNTIME_DIR'),
    $.env.get('TMPDIR'),
    $.env.get('PWD'),
    $.env.get('HOME'),
    $.env.get('LICH_PROMPT_LANG'),
    $.env.get('LICH_SESSION_ID'),
    $.env.get('SLASHKIT_ALLOW'),
    $.env.get('SLASHKIT_HARNESS'),
    $.env.get('SLASHKIT_PROJECT'),
    $.env.get('XDG_CONFIG_HOME'),
    $.env.get('XDG_STATE_HOME'),
    $.env.get('SLASHKIT_SHELL_TIMEOUT'),
    $.env.get('SLASHKIT_RESUME_HOURS'),
  ])
  // Every variable a session brings (wire.ts, from slashkit.adapters.bridge.sessions), and no other: tsc says so.
  const variables: Facts['variables'] = {
    HOME: home,
    LICH_PROMPT_LANG: lang,
    LICH_SESSION_ID: lich,
    SLASHKIT_ALLOW: allow,
    SLASHKIT_HARNESS: harness,
    SLASHKIT_PROJECT: project,
    XDG_CONFIG_HOME: config,
    XDG_STATE_HOME: state,
    SLASHKIT_SHELL_TIMEOUT: timeout,
    SLASHKIT_RESUME_HOURS: resume,
    // The same id on `--continue` and `--resume` (measured on 2.1.328): the journal's key to this session's runs.
    CLAUDE_CODE_SESSION_ID: hookEnv.CLAUDE_CODE_SESSION_ID,
    // pi's session id, which the journal reads for pi alone: a session of Claude Code brings none.
    PI_SESSION_ID: undefined,
    // Gemini CLI's session id, which the journal reads for Gemini alone.
    GEMINI_SESSION_ID: undefined,
    // The id opencode's plugin gives its session, which the journal reads for opencode alone.
    OPENCODE_SESSION_ID: undefined,
  }
  return { hookEnv, variables, python, mode, runtime, tmp, pwd }
}

/**
 * The person's shared helper, unless `SLASHKIT_HELPER=session` keeps one per session: its socket in
 * `$XDG_RUNTIME_DIR/slashkit`, else in `slashkit-<uid>` under `$TMPDIR` (slashkit.adapters.bridge.helper
 * .shared_directory), the uid read once and the socket kept in the store; and what this session brings: the
 * project (where the session started), the variables the core reads. The engine's process connects, so its end
 * ends the session.
 */
async function shared($: EngineInterface): Promise<Shared | null> {
  const { hookEnv, variables, mode, runtime, tmp, pwd } = await facts($)
  if (mode === 'session') return null
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(variables)) if (value !== undefined) env[name] = value
  return {
    socket: runtime?.startsWith('/') === true ? `${runtime}/slashkit/${SHARED_SOCKET}` : await sharedInTmp($, tmp),
    opening: { options: HELPER_OPTIONS, cwd: sessionFolder(hookEnv, pwd), env, owner: null },
    found: socketPath => void $.store.set(SHARED_KEY, socketPath),
  }
}

/** The shared helper's socket under `$TMPDIR` (no XDG_RUNTIME_DIR): as the store keeps it, else from the uid. */
async function sharedInTmp($: EngineInterface, tmp: string | undefined): Promise<string | undefined> {
  const folder = `${tmp !== undefined && tmp !== '' ? tmp : '/tmp'}/slashkit-`
  const kept = await $.store.get(SHARED_KEY)
  if (typeof kept === 'string' && kept.startsWith(folder) && kept.endsWith(`/${SHARED_SOCKET}`)) return kept
  const uid = (await uidInProc($)) ?? (await $.process.run(['id', '-u']).catch(() => ({ stdout: '' }))).stdout.trim()
  if (!/^\d+$/.test(uid)) return undefined
  const socket = `${folder}${uid}/${SHARED_SOCKET}`
  void $.store.set(SHARED_KEY, socket)
  return socket
}

/**
 * The engine's real uid as Linux tells a process its own (the first number of `/proc/self/status`'s `Uid:` line, the
 * one the helper names its folder by: `os.getuid()`), read without starting a process; undefined where there is no
 * such file or it says no uid.
 */
async function uidInProc($: EngineInterface): Promise<string | undefined> {
  const status = await $.fs.read('/proc/self/status').catch(() => '')
  return /^Uid:\s+(\d+)\s/m.exec(typeof status === 'string' ? status : '')?.[1]
}

/**
 * The folder the helper is told a session runs in (its shell steps' folder, and its project's saved chains unless
 * SLASHKIT_PROJECT names another): Claude Code's project, else the working directory.
 */
export function sessionFolder(hookEnv: Readonly<Record<string, string | undefined>>, pwd: string | undefined): string {
  return hookEnv.CLAUDE_PROJECT_DIR ?? pwd ?? '/'
}

/** The bridge client's host, for this hook's `$`. */
export function host($: EngineInterface): Host {
  return {
    argv: [],
    locate: () => locate($),
    startTimeoutMs: START_TIMEOUT_MS,
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    unavailable: UNAVAILABLE,
    shared: () => shared($),
    // No `stop`: a mod has no way to end what `$.process.spawn` started; the engine ends it with the session.
    async spawn(argv, stdout, stderr) {
      const child = $.process.spawn({ argv })
      for await (const { stream, text } of child) {
        if (stream === 'stderr') stderr(text)
        else stdout(text)
      }
      const end = await child.result
      return `the helper exited (${end.signal ?? `code ${String(end.code)}`})`
    },
    post: (socketPath, path, body) => {
      const sent = $.http.fetch(`http://localhost${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, socketPath })
      return track(sent.then(response => ({ status: response.status, text: response.text })))
    },
    sleep: (ms, signal) => $.clock.sleep(ms, { signal }),
    track,
    log: text => $.ui.log(text),
    debug: text => $.ui.log(text, { to: 'debug' }),
    toast: text => $.ui.toast(text),
    // The footer under the prompt box (`⚠ slash-chain: <text>`), cleared by undefined (measured on 2.1.328).
    progress: text => $.ui.status(text ?? undefined),
    // A step is handed to the engine's queue, never run inside a hook, so once `serveRuns` serves them a timer of no
    // delay (the core's between two steps) fires at once: the next step is queued before the hook returns.
    after: (ms, fire) => {
      if (ms === 0 && loops > 0) void track(fire())
      else $.clock.after(ms, () => void fire())
    },
    // A plugin whose session start serves no runs (self-command's) runs a command from the timer's hook, settled.
    run: async (command, args) => (loops > 0 ? runServed(command, args) : ((await $.command.run({ command, args })).text ?? '')),
    saveEnabled: async enabled => {
      await $.store.set(ENABLED_KEY, enabled)
    },
    saveBuiltin: async enabled => {
      await $.store.set(BUILTIN_KEY, enabled)
    },
    invalidate: () => $.ui.invalidate('tool.describe'),
    whoami: () => whoami($),
    // The engine names the calling plugin in front of a `$` call's error, and again in front of the line.
    plain: why => why.replace(/(slash-chain|self-command): (?=\$\.)/g, ''),
  }
}

/**
 * Who lich says this session is: `$LICH_BIN whoami --json`'s stdout when it exited 0 within WHOAMI_TIMEOUT_MS, else
 * null. LICH_BIN counts only as the absolute path lich exports: PATH is never searched (a dev build and an installed
 * lich may both be there). A stdout longer than WHOAMI_MAX_OUTPUT is no answer either: lich's is a few hundred bytes.
 */
async function whoami($: EngineInterface): Promise<string | null> {
  const bin = (await $.env.get('LICH_BIN')) ?? ''
  if (!bin.startsWith('/')) return null
  try {
    const ran = await $.process.run([bin, 'whoami', '--json'], { timeoutMs: WHOAMI_TIMEOUT_MS })
    return ran.exitCode === 0 && ran.stdout.length <= WHOAMI_MAX_OUTPUT ? ran.stdout : null
  } catch {
    return null
  }
}

/** The on/off setting as stored: on unless it is `false` (slashkit.core.chain_session.enabled). */
export async function enabled($: EngineInterface): Promise<boolean> {
  return (await $.store.get(ENABLED_KEY)) !== false
}

/** The person's switch of the model's self-commands as this plugin stored it (`/slash-chain builtin off`). */
export async function switchedOn($: EngineInterface): Promise<boolean> {
  return (await $.store.get(BUILTIN_KEY)) !== false
}

/**
 * What a Skill call whose tool refused it (`refusal`) becomes once the core heard the refusal (`SkillAnswered`): a
 * loaded skill named as the core says, with its note as context; the core's denial; or the refusal as it was.
 */
export async function skillRefused<R>($: EngineInterface, call: { skill?: unknown; args?: unknown }, refusal: R) {
  const [builtins, switched_on] = await Promise.all([builtinNames($), switchedOn($)])
  const event = { skill: boundedInput(call.skill ?? null), args: boundedInput(call.args ?? null), is_error: true, builtins, switched_on }
  const reply = (await ask(host($), 'SkillAnswered', event))?.reply
  if (reply?.kind === 'skill') return { result: { success: true as const, commandName: reply.command }, context: [reply.note] }
  if (reply?.kind === 'deny') return { deny: reply.text }
  return refusal
}

/** The engine's built-in commands, as its command list names them now. */
export async function builtinNames($: EngineInterface): Promise<string[]> {
  return (await $.command.list()).filter(c => c.source === 'builtin').map(c => c.name)
}
