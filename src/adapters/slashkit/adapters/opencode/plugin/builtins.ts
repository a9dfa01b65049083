/**
 * What the opencode plugin adds to opencode, and the built-ins it runs itself: the `/slash-chain` command, the
 * `slash-chain_fail` tool, and the TUI's `/compact`, run as a step or in the place of the prompt a typed line
 * arrives in. What each of them answers is the core's.
 */
import type { Config, ToolDefinition } from '@opencode-ai/plugin'
import { ask, type Answer } from './client.js'
import * as facts from './host.js'
import { enabled } from './node-host.js'
import { newId, type Client, type Model, type Natives, type Part, type Session, type Sessions } from './sessions.js'

/** Registers `/slash-chain`: its text reaches the plugin's `command.execute.before` as the command's arguments. */
export function register(cfg: Config): void {
  cfg.command = cfg.command ?? {}
  cfg.command[facts.CHAIN_COMMAND] = { template: '$ARGUMENTS', description: facts.COMMAND_DESCRIPTION }
}

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
    // Plain JSON Schema properties, the core's (FAIL_ARGS): opencode 1.18.33 takes them as they are when they are
    // not zod schemas (measured), though its types name zod's only. The plugin's one cast, on that field alone.
    args: facts.FAIL_ARGS as unknown as ToolDefinition['args'],
    async execute(args, ctx) {
      // A session whose helper does not run has no chain to stop, and a subagent's call (a child session's) is
      // refused as the core refuses one: answered here, neither starts a helper that would then stay.
      const s = sessions.get(ctx.sessionID)
      if (s === undefined || s.link.helper === undefined || (await sessions.isChild(ctx.sessionID))) {
        throw new Error(facts.FAIL_NOTHING_WAITS)
      }
      const reply = (await ask(s.host, 'FailCalled', { reason: args['reason'] ?? null, agent: null }))?.reply
      if (reply?.kind === 'tool.answer') return reply.text
      throw new Error(reply?.kind === 'deny' ? reply.text : facts.UNAVAILABLE.replace('{why}', 'no answer'))
    },
  }
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
export async function chainInPlace(s: Session, led: { command: string; args: string }, parts: Part[]): Promise<boolean> {
  // The prompt's turn starts once this hook returns. A line stored before it would be the newest user message, which
  // the turn would then answer instead of the prompt (measured on 1.18.33): the answer's lines wait.
  s.turn(true)
  const answer: Answer = await ask(s.host, 'ChainTyped', { command: led.command, args: led.args, origin: 'composer', enabled: enabled() })
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
