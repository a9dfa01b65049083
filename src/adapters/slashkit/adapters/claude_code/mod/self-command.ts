/**
 * The `self-command` plugin: inside a lich session, the model can run one of the session's built-in slash
 * commands (/compact) through the Skill tool or lich's control_session. A shim over the bridge: the native
 * tool answers first, and slashkit's Python core decides what becomes of its refusal.
 */
import type { EngineInterface, Register } from 'claude-code'
import { ask, wanted } from './bridge.js'

type Described = { description: string }

/** The description the engine gave, with the core's note when it has one for this tool. */
async function described<R extends Described>($: EngineInterface, tool: string, result: R): Promise<R> {
  if (!wanted('tool.describe')) return result
  const reply = (await ask($, 'tool.describe', { tool, description: result.description }))?.reply
  return reply?.kind === 'description' ? { ...result, description: reply.text } : result
}

export const register: Register = on => {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    // Outside lich no helper starts: the core's gate needs LICH_SESSION_ID, so only then is it asked.
    const id = await $.env.get('LICH_SESSION_ID')
    if (id !== undefined && id !== '') await ask($, 'session.start', { isInteractive: e.isInteractive })
    return started
  })

  // One hook per tool: a matcher names one tool.
  on('tool.describe', { tool: 'Skill' }, async ($, e, next) => described($, e.tool, await next(e)))
  on('tool.describe', { tool: 'mcp__lich__control_session' }, async ($, e, next) => described($, e.tool, await next(e)))

  on('tool.call', { tool: 'Skill' }, async ($, e, next) => {
    const result = await next(e)
    if (!wanted('skill.refused') || result.isError !== true) return result
    const commands = (await $.command.list()).map(c => ({ name: c.name, source: c.source }))
    const input = e as { skill?: unknown; args?: unknown }
    const reply = (await ask($, 'skill.refused', { skill: input.skill ?? null, args: input.args ?? null, isError: true, commands }))?.reply
    if (reply?.kind === 'skill') return { result: { success: true, commandName: reply.commandName }, context: [reply.context] }
    if (reply?.kind === 'deny') return { deny: reply.text }
    return result
  })

  on('tool.call', { tool: 'mcp__lich__control_session' }, async ($, e, next) => {
    const result = await next(e)
    if (!wanted('control.refused') || result.isError !== true) return result
    const commands = (await $.command.list()).map(c => ({ name: c.name, source: c.source }))
    const input = e as { session?: unknown; action?: unknown; value?: unknown; args?: unknown }
    const reply = (
      await ask($, 'control.refused', {
        session: input.session ?? null,
        action: input.action ?? null,
        value: input.value ?? null,
        args: input.args ?? null,
        isError: true,
        commands,
      })
    )?.reply
    if (reply?.kind === 'text') return { result: reply.text }
    if (reply?.kind === 'deny') return { deny: reply.text }
    return result
  })
}
