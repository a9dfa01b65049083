/**
 * The `slash-chain` plugin: `/a x && /b y` runs `/b y` once `/a x` ended well; and the model may queue one of the
 * session's allowlisted built-ins (/compact) through its `builtin` tool or the Skill tool, inside lich or not. A
 * shim over the bridge: it translates the engine's payloads into the core's events (docs/bridge.md) and answers
 * with what the core says.
 */
import type { EngineInterface, Register } from 'claude-code'
import { ask, bounded, boundedInput, builtinNames, enabled, host, messageOf, prepare, skillRefused, switchedOn, wanted } from './bridge.js'
import {
  BUILTIN_DESCRIPTION,
  BUILTIN_SCHEMA,
  BUILTIN_TOOL,
  COMMAND_DESCRIPTION,
  COMMAND_HINT,
  FAIL_DESCRIPTION,
  FAIL_SCHEMA,
  UNAVAILABLE,
} from './host.js'

/** The engine's command list as the refusal rule reads it: every name, and the built-ins among them. */
async function listed($: EngineInterface): Promise<{ commands: string[]; builtins: string[] }> {
  const all = await $.command.list()
  return { commands: all.map(c => c.name), builtins: all.filter(c => c.source === 'builtin').map(c => c.name) }
}

/**
 * Whether slashkit's Agent SDK host drives this session (it marks its Claude Code with SLASHKIT_HARNESS,
 * slashkit.adapters.bridge.bridge.HARNESS_VARIABLE; the engine reads only a literal name here): the host's own
 * in-process `slash-chain` server serves `fail` and `builtin` then, so the plugin registers neither and hands their
 * calls on, and each call reaches the chain and the queue it belongs to.
 */
async function harnessed($: EngineInterface): Promise<boolean> {
  return ((await $.env.get('SLASHKIT_HARNESS')) ?? '') !== ''
}

export const register: Register = on => {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    await $.command.register({ name: 'slash-chain', description: COMMAND_DESCRIPTION, argumentHint: COMMAND_HINT, immediate: true })
    // Declared once at the start, so the tool list the prompt cache holds does not change mid-session.
    if (!(await harnessed($))) {
      await $.tool.register({ name: 'fail', description: FAIL_DESCRIPTION, inputSchema: FAIL_SCHEMA })
      await $.tool.register({ name: BUILTIN_TOOL, description: BUILTIN_DESCRIPTION, inputSchema: BUILTIN_SCHEMA })
    }
    return started
  })

  // A plugin's tool waits behind ToolSearch by default; these are listed, so the model can call them at once.
  on('tool.describe', { tool: 'mcp__slash-chain__fail' }, async (_, e, next) => ({ ...(await next(e)), isDeferred: false }))
  on('tool.describe', { tool: 'mcp__slash-chain__builtin' }, async (_, e, next) => ({ ...(await next(e)), isDeferred: false }))

  on('tool.call', { tool: 'mcp__slash-chain__fail' }, async ($, e, next) => {
    if (await harnessed($)) return next(e)
    const reply = (await ask(host($), 'FailCalled', { reason: boundedInput(e.reason ?? null), agent: e.agentId ?? null }))?.reply
    if (reply?.kind === 'tool.answer') return { result: reply.text }
    return { deny: reply?.kind === 'deny' ? reply.text : UNAVAILABLE.replace('{why}', 'no answer') }
  }).catch(() => ({ deny: UNAVAILABLE.replace('{why}', 'its hook failed') }))

  // The core queues the built-in (it runs from a timer once the turn let it) or refuses it, saying why.
  on('tool.call', { tool: 'mcp__slash-chain__builtin' }, async ($, e, next) => {
    if (await harnessed($)) return next(e)
    const [builtins, switched_on] = await Promise.all([builtinNames($), switchedOn($)])
    const event = { command: boundedInput(e.command ?? null), args: boundedInput(e.args ?? null), builtins, switched_on }
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
    const reply = (await ask(host($), 'ChainCommandTyped', { args: e.args, enabled: await enabled($) }))?.reply
    return { text: reply?.kind === 'command.answer' ? reply.text : UNAVAILABLE.replace('{why}', 'no answer') }
  })

  // Only a command whose arguments hold an operator and `/<name>` (slashkit.core.chain.SEPARATOR_JS) runs this
  // hook, whoever ran it, so a single command never starts Python. The engine reads a matcher only as a literal
  // (imported, `claude plugin validate` lists it as `?`), so laying the plugin out writes the core's pattern here in
  // the place of SEPARATOR (slashkit.adapters.claude_code.plugins.inline_separator).
  on('command.run', { args: /(?:^|\s)(&&|\|\||;|\|)\s*\/([A-Za-z0-9_:.-]+)(?=\s|$)/ }, async ($, e, next) => {
    // The helper's cold start is the whole of a first chain's wait: it starts before the setting is read.
    prepare(host($))
    const [setting, names] = await Promise.all([enabled($), listed($)])
    const answer = await ask(host($), 'ChainTyped', { command: e.command, args: e.args, origin: e.origin.kind, enabled: setting, ...names })
    // The core answered the command itself: it is not to run (a command only the person may run, run by another).
    if (answer?.reply?.kind === 'command.answer') return { text: answer.reply.text }
    if (answer?.ticket === undefined) return next(e)
    let result
    try {
      result = await next({ ...e, args: answer.reply.args })
    } catch (err) {
      await answer.ticket.threw(messageOf(err))
      throw err
    }
    await answer.ticket.resolved(result.text ?? '')
    return result
  })

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
    if (wanted('TurnEnded')) await ask(host($), 'TurnEnded', { reason: e.reason, agent: e.agentId ?? null, answer: bounded(e.answer) })
    return result
  })

  on('prompt.submit', async ($, e, next) => {
    if (wanted('PromptSubmitted')) {
      const origin = (e.origin as { kind?: string } | undefined)?.kind ?? ''
      await ask(host($), 'PromptSubmitted', { text: bounded(e.text), origin })
    }
    return next(e)
  })
}
