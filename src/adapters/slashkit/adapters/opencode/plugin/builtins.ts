/**
 * What the opencode plugin adds to opencode, and the built-ins it runs itself: the `/slash-chain` command, the
 * `slash-chain_fail` and `slash-chain_builtin` tools, and the TUI's `/compact`, run as a step, as the model's
 * self-command, or in the place of the prompt a typed line arrives in. What each of them answers is the core's.
 */
import type { ToolDefinition } from '@opencode-ai/plugin'
import { ask, bounded, type Answer } from './client.js'
import * as facts from './host.js'
import { enabled, switchedOn } from './node-host.js'
import { newId, type Client, type Model, type Natives, type Part, type Session, type Sessions } from './sessions.js'

/**
 * `/slash-chain args`: its answer is one transcript line (Session.askForCommand), and the hook throws: the only way
 * to answer a command without a model turn (measured on 1.18.33: the command's parts always become a prompt whose
 * turn runs; the caller of the server's API gets HTTP 500, opencode issue #25916, and the TUI shows nothing of it).
 */
export async function slashChain(s: Session, args: string): Promise<never> {
  const answer = await s.askForCommand('ChainCommandTyped', { args, enabled: enabled() })
  // With no answer, `ask` already wrote the line that says why.
  const reply = answer?.reply
  throw new Error(reply?.kind === 'command.answer' ? reply.text : 'slash-chain: no answer')
}

/** The fail tool, as if a server `slash-chain` served a tool `fail` (opencode's name for it: `slash-chain_fail`). */
export function failTool(sessions: Sessions): ToolDefinition {
  return {
    description: facts.FAIL_DESCRIPTION,
    args: jsonArgs(facts.FAIL_ARGS),
    async execute(args, ctx) {
      // A session whose helper does not run has no chain to stop, and a subagent's call (a child session's) is
      // refused as the core refuses one: answered here, neither starts a helper that would then stay.
      const s = sessions.get(ctx.sessionID)
      if (s === undefined || s.link.helper === undefined || (await sessions.isChild(ctx.sessionID))) {
        throw new Error(facts.FAIL_NOTHING_WAITS)
      }
      return toolAnswer(await ask(s.host, 'FailCalled', { reason: text(args['reason']), agent: null }))
    },
  }
}

/**
 * The self-command tool, as if a server `slash-chain` served a tool `builtin` (opencode's name for it:
 * `slash-chain_builtin`), in every session, inside lich or not: the model asks for one of the session's built-ins,
 * which the core queues or refuses (its allowlist); a queued one runs once the turn ended (`Session.run`, NATIVE).
 */
export function builtinTool(sessions: Sessions): ToolDefinition {
  return {
    description: facts.BUILTIN_DESCRIPTION,
    args: jsonArgs(facts.BUILTIN_ARGS),
    async execute(args, ctx) {
      // A subagent's session (a child's) runs none of the plugin's built-ins: the core refuses each name it asks
      // for, as one the session does not have.
      const builtins = (await sessions.isChild(ctx.sessionID)) ? [] : Object.keys(NATIVE)
      const s = sessions.open(ctx.sessionID)
      return toolAnswer(await ask(s.host, 'BuiltinAsked', { command: text(args['command']), args: text(args['args']), builtins, switched_on: switchedOn() }))
    },
  }
}

/**
 * A tool's arguments as plain JSON Schema properties, the core's: opencode 1.18.33 takes them as they are when they
 * are not zod schemas (measured), though its types name zod's only. The plugin's one cast, on that field alone.
 */
function jsonArgs(properties: object): ToolDefinition['args'] {
  return properties as unknown as ToolDefinition['args']
}

/** A value the model gave a tool, as the core reads it: a string cut to what the core reads of a text (the helper
 * takes no event over 1 MiB), anything else none. */
function text(value: unknown): string | null {
  return typeof value === 'string' ? bounded(value) : null
}

/** A tool's result from the core's reply: `tool.answer` answers; `deny` (or no answer) is the tool's error. */
function toolAnswer(answer: Answer): string {
  const reply = answer?.reply
  if (reply?.kind === 'tool.answer') return reply.text
  throw new Error(reply?.kind === 'deny' ? reply.text : facts.UNAVAILABLE.replace('{why}', 'no answer'))
}

/**
 * The TUI's built-ins a step may name, run the way the server runs them: they are not server commands (measured on
 * 1.18.33: `client.session.command` answers 500 for `compact`, and the command list holds none). Their names are
 * the `builtins` the core hears with a refused control call.
 */
export const NATIVE: Natives = {
  compact: async (client, s) => {
    // A prompt sent with no model names none in `chat.message` (measured on 1.18.33): the session's last answer
    // says which model it used.
    const model = s.model ?? (await answeredBy(client, s.id))
    if (model === undefined) return { error: { name: 'compact needs a model: the session has sent no message yet' } }
    return client.session.summarize({ path: { id: s.id }, body: model })
  },
}

/**
 * The built-ins a typed line may start with, run in the place of the prompt that carries the line: the prompt's
 * parts become what the TUI's own command sends (measured on 1.18.33: `/compact` stores a user message holding a
 * `compaction` part, and the turn that follows summarizes the session instead of answering). The typed text stays
 * in the transcript for the person, `ignored`, so the model never gets it.
 */
const IN_PLACE: Record<string, (parts: Part[]) => void> = {
  compact: parts => {
    const first = parts[0] ?? { type: 'text' }
    for (const part of parts) part.ignored = true
    parts.push({ id: newId('prt'), messageID: first.messageID, sessionID: first.sessionID, type: 'compaction', auto: false })
  },
}

/** What a chain's `ChainTyped` tells the core of opencode's names: its commands and the built-ins among them. */
export type Known = { builtins: string[]; commands: string[] }

/** `/name args` when a prompt is one typed line whose first command is a built-in the plugin runs in place and
 * whose args hold the separator; whether it is a chain is the core's answer. */
export function ledByBuiltin(parts: Part[]): { command: string; args: string } | undefined {
  if (parts.length === 0 || parts.some(p => p.type !== 'text' || p.ignored === true)) return undefined
  const typed = /^\/(\S+)\s+([\s\S]*)$/.exec(parts.map(p => p.text ?? '').join(''))
  if (typed?.[1] === undefined || typed[2] === undefined || IN_PLACE[typed[1]] === undefined) return undefined
  return facts.SEPARATOR.test(typed[2]) ? { command: typed[1], args: typed[2] } : undefined
}

/**
 * A typed line whose first command is a TUI built-in (`/compact && /greet X`) reaches the server as a plain prompt
 * (measured on 1.18.33). The core says whether it is a chain; if it is, the prompt becomes the first command's run
 * in place (the model never gets its text) and the chain goes on once that turn ended (`Session.inPlace`). Answers
 * whether it did.
 */
export async function chainInPlace(s: Session, led: { command: string; args: string }, parts: Part[], known: Known): Promise<boolean> {
  // The prompt's turn starts once this hook returns. A line stored before it would be the newest user message, which
  // the turn would then answer instead of the prompt (measured on 1.18.33): the answer's lines wait.
  s.turn(true)
  const answer: Answer = await ask(s.host, 'ChainTyped', { command: led.command, args: led.args, origin: 'composer', enabled: enabled(), ...known })
  // Not a chain (or no answer): the prompt goes on as typed, and its turn's end lets any line out.
  if (answer?.ticket === undefined) return false
  IN_PLACE[led.command]?.(parts)
  s.inPlace = answer.ticket
  return true
}

/** The model the session's last answer came from, if any. */
async function answeredBy(client: Client, id: string): Promise<Model | undefined> {
  try {
    const listed = await client.session.messages({ path: { id } })
    const answers = (listed.data ?? []).map(m => m.info).filter(info => info.role === 'assistant')
    const last = answers[answers.length - 1] as { providerID?: string; modelID?: string } | undefined
    return last?.providerID !== undefined && last.modelID !== undefined ? { providerID: last.providerID, modelID: last.modelID } : undefined
  } catch {
    return undefined
  }
}
