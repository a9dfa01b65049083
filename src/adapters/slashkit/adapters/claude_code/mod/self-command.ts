/**
 * The `self-command` plugin: inside a lich session, the model can run one of the session's built-in slash
 * commands (/compact) through the Skill tool or lich's control_session. A shim over the bridge: the native
 * tool answers first, the shim translates the engine's payloads into the core's events (docs/bridge.md), and
 * slashkit's Python core decides what becomes of the refusal.
 */
import type { EngineInterface, On } from 'claude-code'
import { ask, boundedInput, builtinNames, host, skillRefused, switchedOn, wanted } from './bridge.js'

type Described = { description: string }

/** The description the engine gave, with the core's note when it has one for this tool. */
async function described<R extends Described>($: EngineInterface, tool: string, result: R): Promise<R> {
  if (!wanted('ToolDescribed')) return result
  const reply = (await ask(host($), 'ToolDescribed', { tool, description: result.description }))?.reply
  return reply?.kind === 'description' ? { ...result, description: reply.text } : result
}

/**
 * The hooks module's entry. A function declaration: bundled (plugins.MODULE), an arrow would be a `var` exported
 * by name, which the engine refuses as an entry (measured on Claude Code 2.1.328).
 */
export function register(on: On): void {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    // Outside lich no helper starts: the core's gate needs LICH_SESSION_ID, so only then is it asked.
    const id = await $.env.get('LICH_SESSION_ID')
    if (id !== undefined && id !== '') await ask(host($), 'SessionStarted', { interactive: e.isInteractive })
    return started
  })

  // One hook per tool: a matcher names one tool.
  on('tool.describe', { tool: 'Skill' }, async ($, e, next) => described($, e.tool, await next(e)))
  on('tool.describe', { tool: 'mcp__lich__control_session' }, async ($, e, next) => described($, e.tool, await next(e)))

  on('tool.call', { tool: 'Skill' }, async ($, e, next) => {
    const result = await next(e)
    if (!wanted('SkillAnswered') || result.isError !== true) return result
    return skillRefused($, e as { skill?: unknown; args?: unknown }, result)
  })

  on('tool.call', { tool: 'mcp__lich__control_session' }, async ($, e, next) => {
    const result = await next(e)
    if (!wanted('ControlAnswered') || result.isError !== true) return result
    const [builtins, switched_on] = await Promise.all([builtinNames($), switchedOn($)])
    const input = e as { session?: unknown; action?: unknown; value?: unknown; args?: unknown }
    const reply = (
      await ask(host($), 'ControlAnswered', {
        target: boundedInput(input.session ?? null),
        action: boundedInput(input.action ?? null),
        value: boundedInput(input.value ?? null),
        args: boundedInput(input.args ?? null),
        is_error: true,
        builtins,
        switched_on,
      })
    )?.reply
    if (reply?.kind === 'control') return { result: reply.text }
    if (reply?.kind === 'deny') return { deny: reply.text }
    return result
  })
}
