/**
 * The `slash-chain` plugin: `/a x && /b y` runs `/b y` once `/a x` ended well; a saved chain (`.slashkit/chains/`)
 * is a command of the session; and the model may queue one of the session's allowlisted built-ins (/compact) through
 * its `builtin` tool or the Skill tool, inside lich or not. A shim over the bridge: it translates the engine's payloads into the core's events (docs/bridge.md) and answers
 * with what the core says.
 */
import type { Args, EngineInterface, Next, On } from 'claude-code'
import {
  ask,
  bounded,
  boundedInput,
  builtinNames,
  drain,
  enabled,
  facts,
  host,
  messageOf,
  opensProgram,
  prepare,
  serveRuns,
  sessionFolder,
  skillRefused,
  startable,
  switchedOn,
  wanted,
} from './bridge.js'
import {
  BUILTIN_DESCRIPTION,
  BUILTIN_SCHEMA,
  BUILTIN_TOOL,
  COMMAND_DESCRIPTION,
  COMMAND_HINT,
  FAIL_DESCRIPTION,
  FAIL_SCHEMA,
  PERSON_CHAINS,
  PROJECT_CHAINS,
  UNAVAILABLE,
} from './host.js'
import { SEPARATOR } from './host.js'

/**
 * The saved chains this plugin registered as commands of the session: the engine runs each through the unmatched
 * `command.run` hook below. Claude Code runs one session per process, so one set.
 */
const saved = new Set<string>()

/** Whether the engine continued this session (`--continue`, `--resume`), as its SessionStart said. */
let resumed = false

/** The self-command tool's registration, made once a process (`builtinTool`). */
let builtinRegistered: Promise<void> | undefined

/**
 * Registers the self-command tool (`mcp__slash-chain__builtin`) once, and resolves when the engine lists it. It joins
 * before the first prompt the model answers, not at the session's start: a second `$.tool.register` makes the engine
 * connect the plugin's MCP server again (~25-30 ms, measured on 2.1.328), and a `tool.list` hook that would add it
 * at the start costs every session ~11-20 ms before its first command, whether or not the model is ever asked.
 * A tool registered in `prompt.submit` is in that prompt's first request (measured on 2.1.328; registered in
 * `turn.start` it is not). A failure is logged for the debug log, and the prompt goes on without the tool.
 */
function builtinTool($: EngineInterface): Promise<void> {
  builtinRegistered ??= $.tool.register({ name: BUILTIN_TOOL, description: BUILTIN_DESCRIPTION, inputSchema: BUILTIN_SCHEMA }).then(
    () => undefined,
    (err: unknown) => $.ui.log(`slashkit: the builtin tool is not offered: ${messageOf(err)}`, { to: 'debug' }),
  )
  return builtinRegistered
}

/**
 * The engine's command list as the refusal rule reads it: every name, and the built-ins among them; less the saved
 * chains this plugin registered, which are the core's to run (a name in the list is the engine's own).
 */
async function listed($: EngineInterface): Promise<{ commands: string[]; builtins: string[] }> {
  const all = (await $.command.list()).filter(c => !saved.has(c.name))
  return { commands: all.map(c => c.name), builtins: all.filter(c => c.source === 'builtin').map(c => c.name) }
}

/**
 * Whether slashkit's Agent SDK host drives this session (it marks its Claude Code with SLASHKIT_HARNESS,
 * slashkit.adapters.bridge.bridge.HARNESS_VARIABLE, read with the others in `facts`): the host's own
 * in-process `slash-chain` server serves `fail` and `builtin` then, so the plugin registers neither (it hands their
 * calls on), and each call reaches the chain and the queue it belongs to. The host
 * runs saved chains itself too (it sends their steps), so the plugin asks for none.
 */
async function harnessed($: EngineInterface): Promise<boolean> {
  return ((await facts($)).variables.SLASHKIT_HARNESS ?? '') !== ''
}

/**
 * Whether this session can have a saved chain: the person's folder of them or the project's is there, where the
 * helper looks (slashkit.adapters.saved_chains: `$XDG_CONFIG_HOME` or `~/.config`, and `$SLASHKIT_PROJECT` or the
 * `sessionFolder` the helper is told). Without either, the session's start asks the helper nothing: ~15 ms of every
 * start (measured on 2.1.328). A folder made later counts from the next session, as a chain saved mid-session does.
 * A person's folder that cannot be told (no HOME), or a check that fails, counts as there.
 */
async function mayHaveSaved($: EngineInterface): Promise<boolean> {
  const { variables, hookEnv, pwd } = await facts($)
  const person = variables.XDG_CONFIG_HOME || (variables.HOME ? `${variables.HOME}/.config` : undefined)
  if (person === undefined) return true
  const root = variables.SLASHKIT_PROJECT || sessionFolder(hookEnv, pwd)
  const there = [$.fs.exists(`${person}/${PERSON_CHAINS}`), $.fs.exists(`${root}/${PROJECT_CHAINS}`)]
  return (await Promise.all(there).catch(() => [true])).includes(true)
}

/**
 * Registers the session's saved chains as its commands, as the core names them (`SavedAsked`) from the engine's
 * command list, less the names registered here before (a `session.start` again is the same session's). The core
 * offers no name the engine has already; one the engine refuses all the same (a command that came since the list
 * was read) is written to the debug log and stays the engine's.
 */
async function offerSaved($: EngineInterface): Promise<void> {
  const reply = (await ask(host($), 'SavedAsked', { commands: (await listed($)).commands }))?.reply
  if (reply?.kind !== 'saved') return
  for (const chain of reply.chains) {
    const hint = chain.argument_hint === '' ? {} : { argumentHint: chain.argument_hint }
    try {
      await $.command.register({ name: chain.name, description: chain.description, ...hint })
      saved.add(chain.name)
    } catch (err) {
      $.ui.log(`slashkit: /${chain.name} stays the engine's: ${messageOf(err)}`, { to: 'debug' })
    }
  }
}

/**
 * A chain run as a command (typed with an operator, or a saved chain by its name) goes to the core (`ChainTyped`):
 * it answers the command itself, or has it run with the args it gives and hears how that ended; without an answer,
 * the command runs as typed.
 */
async function chainTyped($: EngineInterface, e: Args<'command.run'>, next: Next<'command.run'>) {
  // The helper's cold start is the whole of a first chain's wait: it starts before the setting is read.
  prepare(host($))
  const [setting, names] = await Promise.all([enabled($), listed($)])
  const answer = await ask(host($), 'ChainTyped', { command: e.command, args: e.args, origin: e.origin.kind, enabled: setting, ...names })
  // The core answered the command itself: a saved chain (whose first step is handed on before this returns), or a
  // command not to run (one only the person may run).
  if (answer?.reply?.kind === 'command.answer') {
    await drain()
    return { text: answer.reply.text }
  }
  if (answer?.ticket === undefined) return next(e)
  let result
  try {
    result = await next({ ...e, args: answer.reply.args })
  } catch (err) {
    await answer.ticket.threw(messageOf(err))
    await drain()
    throw err
  }
  await answer.ticket.resolved(result.text ?? '')
  await drain()
  return result
}

/**
 * A prompt that opens a loop or a group (`until /check; do /fix; done`) goes to the core (`LineTyped`): a program
 * runs from timers, as a saved chain's steps do, and the prompt is dropped with the core's line; anything else (a
 * prompt that only starts with `while`) is the person's prompt, and goes on as typed (undefined).
 */
async function lineTyped($: EngineInterface, e: Args<'prompt.submit'>): Promise<{ drop: string } | undefined> {
  prepare(host($))
  const [setting, names] = await Promise.all([enabled($), listed($)])
  const origin = (e.origin as { kind?: string } | undefined)?.kind ?? ''
  const reply = (await ask(host($), 'LineTyped', { text: e.text, origin, enabled: setting, ...names }))?.reply
  if (reply?.kind !== 'command.answer') return undefined
  // `claude -p` ends once its queue is empty: the program's first step is queued before the prompt is dropped.
  await drain()
  // A dropped prompt comes back into the prompt box (measured on 2.1.328), where Enter would start the program
  // again: the box is emptied once the hook has returned.
  $.clock.after(0, () => void $.prompt.fill({ text: '', mode: 'replace' }).catch(() => undefined))
  return { drop: reply.text }
}

/**
 * The hooks module's entry. A function declaration: bundled (plugins.MODULE), an arrow would be a `var` exported
 * by name, which the engine refuses as an entry (measured on Claude Code 2.1.328).
 */
export function register(on: On): void {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    // The session's chain steps are run with this hook's `$` once it settled (bridge.ts, serveRuns).
    void serveRuns($)
    // The environment is read (`facts`, once a process) while the command is registered.
    const harness = harnessed($)
    await $.command.register({ name: 'slash-chain', description: COMMAND_DESCRIPTION, argumentHint: COMMAND_HINT, immediate: true })
    // Declared once at the start, so the tool list the prompt cache holds does not change mid-session.
    if (await harness) return started
    // The folders are looked for while the engine connects the tool's server.
    const saving = mayHaveSaved($)
    await $.tool.register({ name: 'fail', description: FAIL_DESCRIPTION, inputSchema: FAIL_SCHEMA })
    // Before the session's first prompt: `claude -p "/ship Bob"` finds /ship only once it is registered. A private
    // environment still to be made (the first session after an install) is left to the first chain to make, as
    // before: making it here would hold every start without the package index, and a chain typed meanwhile would
    // wait on it outside a `$` call, past its hook's 10 s (measured on 2.1.328: `next() after it settled`).
    const offer = await saving
    if ((offer || resumed) && (await startable($))) {
      if (offer) await offerSaved($)
      // The program this session's previous process left cut off: a line says what, and only the person's
      // `/slash-chain resume` runs it. Asked here, not in SessionStart, whose `$` knows no session id yet.
      if (resumed) await ask(host($), 'Continued', {})
    }
    return started
  })

  // A continued session (`--continue`, `--resume`): the engine's SessionStart says `resume`, before `session.start`
  // and with the same session id (measured on 2.1.328), which `session.start` then tells the helper.
  on('classic.SessionStart', async (_, e, next) => {
    resumed = e.source === 'resume'
    return next(e)
  })

  // A plugin's tool waits behind ToolSearch by default; these are listed, so the model can call them at once.
  on('tool.describe', { tool: ['mcp__slash-chain__fail', 'mcp__slash-chain__builtin'] }, async (_, e, next) => ({
    ...(await next(e)),
    isDeferred: false,
  }))

  on('tool.call', { tool: 'mcp__slash-chain__fail' }, async ($, e, next) => {
    if (await harnessed($)) return next(e)
    const reply = (await ask(host($), 'FailCalled', { reason: boundedInput(e.reason ?? null), agent: e.agentId ?? null }))?.reply
    if (reply?.kind === 'tool.answer') return { result: reply.text }
    return { deny: reply?.kind === 'deny' ? reply.text : UNAVAILABLE.replace('{why}', 'no answer') }
  }).catch(() => ({ deny: UNAVAILABLE.replace('{why}', 'its hook failed') }))

  // The core queues the built-in (it runs from a timer once the turn let it) or refuses it, saying why.
  on('tool.call', { tool: 'mcp__slash-chain__builtin' }, async ($, e, next) => {
    if (await harnessed($)) return next(e)
    const input = e as { command?: unknown; args?: unknown }
    const [builtins, switched_on] = await Promise.all([builtinNames($), switchedOn($)])
    const event = { command: boundedInput(input.command ?? null), args: boundedInput(input.args ?? null), builtins, switched_on }
    const reply = (await ask(host($), 'BuiltinAsked', event))?.reply
    if (reply?.kind === 'tool.answer') return { result: reply.text }
    return { deny: reply?.kind === 'deny' ? reply.text : UNAVAILABLE.replace('{why}', 'no answer') }
  }).catch(() => ({ deny: UNAVAILABLE.replace('{why}', 'its hook failed') }))

  // The Skill tool answers first; the core may take its refusal of a built-in (outside lich: inside, the
  // self-command plugin's session does). Sent whether or not a helper runs yet: a refusal is rare, and what it
  // becomes is the core's to say.
  on('tool.call', { tool: 'Skill' }, async ($, e, next) => {
    const result = await next(e)
    return result.isError === true ? skillRefused($, e as { skill?: unknown; args?: unknown }, result) : result
  })

  on('command.run', { command: 'slash-chain' }, async ($, e) => {
    const [setting, { commands }] = await Promise.all([enabled($), listed($)])
    // The commands let `/slash-chain list` tell which saved chains the engine's own commands shadow.
    const reply = (await ask(host($), 'ChainCommandTyped', { args: e.args, enabled: setting, commands }))?.reply
    // `resume` starts a program from a timer: under way before the command ends, or `claude -p` exits first.
    await drain()
    return { text: reply?.kind === 'command.answer' ? reply.text : UNAVAILABLE.replace('{why}', 'no answer') }
  })

  // Only a command whose arguments hold an operator and `/<name>` (slashkit.core.chain.SEPARATOR_JS) runs this
  // hook, whoever ran it, so a single command never starts Python. The engine reads a matcher only as a literal
  // (imported, `claude plugin validate` lists it as `?`), so laying the plugin out writes the core's pattern here in
  // the place of SEPARATOR (slashkit.adapters.claude_code.plugins.inline_separator).
  on('command.run', { args: SEPARATOR }, async ($, e, next) => {
    // A saved chain is the hook's beneath (measured on 2.1.328: the hook registered first runs first), whatever
    // its args hold, so one run sends one ChainTyped.
    if (saved.has(e.command)) return next(e)
    return chainTyped($, e, next)
  })

  // A saved chain by its name (`/ship Bob`, `/ship Bob && /deploy`): its names are read at run time, and a matcher
  // is a literal, so this hook hears every command and passes on all but those.
  on('command.run', async ($, e, next) => (saved.has(e.command) ? chainTyped($, e, next) : next(e)))

  on('skill.prompt', async ($, e, next) => {
    const result = await next(e)
    if (!wanted('PromptHanded')) return result
    const reply = (await ask(host($), 'PromptHanded', { text: result.text }))?.reply
    return reply?.kind === 'prompt' ? { ...result, text: reply.text } : result
  })

  on('ui.open', async ($, e, next) => {
    const result = await next(e)
    if (wanted('PaneOpened')) {
      const placed = 'value' in result && result.value?.isPlaced === true
      await ask(host($), 'PaneOpened', { pane: e.id, focus: e.focus === true, placed })
    }
    return result
  })

  on('ui.close', async ($, e, next) => {
    if (wanted('PaneClosed')) await ask(host($), 'PaneClosed', { pane: e.id })
    return next(e)
  })

  on('turn.complete', async ($, e, next) => {
    const result = await next(e)
    if (wanted('TurnEnded')) {
      await ask(host($), 'TurnEnded', { reason: e.reason, agent: e.agentId ?? null, answer: bounded(e.answer) })
      await drain()
    }
    return result
  })

  on('prompt.submit', async ($, e, next) => {
    if (e.command === undefined && e.isMeta !== true && opensProgram(e.text)) {
      const dropped = await lineTyped($, e)
      if (dropped !== undefined) return dropped
    }
    // A prompt the model answers: the self-command tool is in its first request. A command registers none (a
    // session that only runs commands never offers it); a turn a command started has the Skill tool's way.
    if (e.command === undefined && !(await harnessed($))) await builtinTool($)
    if (wanted('PromptSubmitted')) {
      const origin = (e.origin as { kind?: string } | undefined)?.kind ?? ''
      await ask(host($), 'PromptSubmitted', { text: bounded(e.text), origin })
    }
    return next(e)
  })
}
