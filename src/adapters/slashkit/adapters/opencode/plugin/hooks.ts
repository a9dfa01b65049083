/**
 * opencode's hooks, translated into the core's events (docs/opencode.md, "How the plugin maps opencode onto the
 * bridge") and answered with what the core says. Every rule is in Python; what is here is opencode's shape.
 */
import type { Hooks } from '@opencode-ai/plugin'
import { ask, bounded, messageOf, opensProgram, wanted } from './client.js'
import { NATIVE, chainInPlace, ledByBuiltin, slashChain, type Known } from './builtins.js'
import * as facts from './host.js'
import { enabled } from './node-host.js'
import type { Saved } from './saved.js'
import { textOf, type Part, type Session, type Sessions } from './sessions.js'
// The optional-event name that asks for a step's text with its end, generated from the core's.
import { STEP_OUTPUT } from './wire.js'

/** lich's control tool as opencode names an MCP server `lich`'s `control_session` (measured on 1.18.33). Its
 * description is not amended: `tool.definition` fires for built-in and plugin tools only, never for an MCP tool
 * (measured on 1.18.33), so there is no `ToolDescribed` to send. */
const CONTROL_TOOL = 'lich_control_session'

/**
 * How a turn that failed ended, in the core's words (slashkit.core.chain_machine: `answer` is a good end; the
 * others are the ones Claude Code gives), by the `error.name` of opencode's `session.error`: an abort is
 * `MessageAbortedError`, a model's HTTP error `APIError` (measured on 1.18.33). Every name but an abort is an `error`.
 */
const TURN_ENDS: Record<string, string> = { MessageAbortedError: 'aborted' }

type Handled = Required<Pick<Hooks, 'command.execute.before' | 'chat.message' | 'event' | 'experimental.chat.messages.transform'>>

export function hooks(sessions: Sessions, saved: Saved): Handled {
  const { client } = sessions
  let listed: Promise<Map<string, string>> | undefined

  /** opencode's commands by name, with their templates: read once, as opencode lists them once, at its start
   * (measured on 1.18.33); none when it cannot list them. */
  const commands = (): Promise<Map<string, string>> => {
    listed ??= client.command
      .list()
      .then(answer => new Map((answer.data ?? []).map(c => [c.name, String(c.template ?? '')])))
      .catch(() => new Map<string, string>())
    return listed
  }
  const template = async (name: string): Promise<string | undefined> => (await commands()).get(name)
  /** What the core reads a chain's steps against: opencode's commands as it lists them, the saved chains the plugin
   * added left out (each is the core's to run), and the built-ins the plugin runs itself. */
  const known = async (): Promise<Known> => ({
    builtins: Object.keys(NATIVE),
    commands: [...(await commands()).keys()].filter(name => !saved.has(name)),
  })

  /** The text of the session's last answer, for a `|` that hands it on. */
  const lastAnswer = async (s: Session): Promise<string> => {
    try {
      const listed = await client.session.messages({ path: { id: s.id } })
      const answers = (listed.data ?? []).filter(m => m.info.role === 'assistant')
      return textOf(answers[answers.length - 1])
    } catch {
      return ''
    }
  }

  return {
    'command.execute.before': async (input, output) => {
      await sessions.reached(input.sessionID)
      const s = sessions.open(input.sessionID)
      const parts = output.parts
      const mine = s.running
      if (mine !== undefined && mine.command === input.command && mine.args === input.arguments) {
        await handPrompt(s, parts)
        return
      }
      if (input.command === facts.CHAIN_COMMAND) await slashChain(s, input.arguments)
      // The person's text, for the `chat.message` that follows only a command that runs: a command answered by
      // throwing has none, and a text left here would be taken for the person's next prompt.
      const typed = `/${input.command}${input.arguments === '' ? '' : ` ${input.arguments}`}`
      // A saved chain is the core's to run, with or without an operator in its text.
      if (!facts.SEPARATOR.test(input.arguments) && !saved.has(input.command)) {
        s.typed = typed
        return
      }
      // A command that reaches this hook was sent by the person (the TUI's prompt, or the server's API for them).
      const answer = await s.askForCommand('ChainTyped', { command: input.command, args: input.arguments, origin: 'composer', enabled: enabled(), ...(await known()) })
      // The lines the answer wrote go out before the command's turn starts: one stored while it runs would make
      // opencode run one more turn (measured on 1.18.33).
      await s.written()
      // The core answered the command itself: it is not to run.
      if (answer?.reply?.kind === 'command.answer') throw new Error(answer.reply.text)
      s.typed = typed
      if (answer?.ticket === undefined) return
      try {
        const body = await template(input.command)
        const part = parts.find(p => p.type === 'text')
        if (body !== undefined && part !== undefined) part.text = expand(body, answer.reply.args)
        await handPrompt(s, parts)
      } catch (err) {
        await answer.ticket.threw(messageOf(err))
        return
      }
      // The typed command's text is its turn's answer, which TurnEnded carries.
      await answer.ticket.resolved('')
    },

    'chat.message': async (input, output) => {
      const parts = output.parts
      const led = ledByBuiltin(parts)
      const program = programOf(parts)
      const id = input.sessionID
      await sessions.reached(id)
      // Nothing to do for a prompt of a session the plugin does not know, unless it may start a chain or a program,
      // or lich wants to hear of the session.
      if (led === undefined && program === undefined && !sessions.inLich && sessions.get(id) === undefined) return
      // A subagent's prompt is the model's text, not the person's typing: it starts no chain and no helper, and
      // reaches the subagent as written (docs/opencode.md, "Child sessions").
      if (await sessions.isChild(id)) return
      const s = led === undefined && program === undefined ? await sessions.known(id) : sessions.open(id)
      if (s === undefined) return
      if (input.model !== undefined) s.model = input.model
      // The plugin's own lines and steps come here too (measured on 1.18.33), also inside its own hooks.
      if (s.mine(output.message.id)) return
      const typed = s.typed
      s.typed = undefined
      if (typed === undefined && led !== undefined && (await chainInPlace(s, led, parts, await known()))) return
      if (typed === undefined && program !== undefined) await programTyped(s, program, await known())
      if (!wanted('PromptSubmitted', s.link)) return
      const text = typed ?? parts.map(p => (p.type === 'text' && p.ignored !== true ? (p.text ?? '') : '')).join('')
      await ask(s.host, 'PromptSubmitted', { text: bounded(text), origin: 'composer' })
    },

    event: async ({ event }) => {
      const type: string = event.type
      if (type === 'session.created' || type === 'session.updated' || type === 'session.deleted') {
        const info = (event.properties as { info?: { id?: unknown; parentID?: unknown } }).info
        if (typeof info?.id !== 'string') return
        if (type === 'session.deleted') sessions.end(info.id)
        else sessions.seen({ id: info.id, parentID: info.parentID }, type === 'session.created')
        return
      }
      if (event.type === 'session.status') {
        sessions.status(event.properties.sessionID, event.properties.status.type !== 'idle')
        return
      }
      if (event.type === 'message.part.updated') {
        // lich's refusal of its control tool reaches no tool.execute.after: only the tool part's error shows it
        // (measured on 1.18.33). The core hears of it at once, so a queued command is queued during the turn.
        const part = event.properties.part
        if (part.type !== 'tool' || part.tool !== CONTROL_TOOL || part.state?.status !== 'error') return
        await (await sessions.known(part.sessionID))?.controlAnswered(part)
        return
      }
      if (event.type === 'session.error') {
        const s = event.properties.sessionID === undefined ? undefined : sessions.get(event.properties.sessionID)
        if (s !== undefined) s.error = TURN_ENDS[event.properties.error?.name ?? ''] ?? 'error'
        return
      }
      if (event.type !== 'session.idle') return
      const s = sessions.get(event.properties.sessionID)
      if (s === undefined) return
      // Measured on 1.18.33: session.error comes before the idle that ends the failed turn.
      const reason = s.error ?? 'answer'
      s.error = undefined
      const ran = s.inPlace
      if (ran !== undefined) {
        // The turn of a prompt that ran the chain's first command in place: that command's run ended.
        s.inPlace = undefined
        await (reason === 'answer' ? ran.resolved('') : ran.threw(reason))
        return
      }
      if (!wanted('TurnEnded', s.link)) return
      const answer = wanted(STEP_OUTPUT, s.link) ? await lastAnswer(s) : ''
      await ask(s.host, 'TurnEnded', { reason, agent: null, answer: bounded(answer) })
    },

    // Measured on 1.18.33: before each model request (and before a compaction's summary) opencode hands this hook
    // the session's messages, read afresh from its store, with input `{}`; what the hook leaves in them is what the
    // request holds, and the stored messages (the person's transcript) keep lich's text. So the model reads the
    // core's reply to a refused control call in lich's refusal's place, as in Claude Code.
    'experimental.chat.messages.transform': async (_input, output) => {
      for (const message of output.messages) {
        for (const part of message.parts) {
          if (part.type !== 'tool' || part.tool !== CONTROL_TOOL || part.state?.status !== 'error') continue
          const s = await sessions.known(message.info.sessionID)
          const reply = s === undefined ? undefined : (await s.controlAnswered(part))?.reply
          if (reply?.kind === 'deny') part.state.error = reply.text
          // A queued command answers the call (not an error); a completed state is opencode's form of a result.
          if (reply?.kind === 'control') {
            const { input, time } = part.state
            const start = time?.start ?? Date.now()
            part.state = { status: 'completed', input, output: reply.text, title: '', metadata: {}, time: { start, end: time?.end ?? start } }
          }
        }
      }
    },
  }
}

/** The text of a prompt that is typed text alone and opens a loop or a group (`until /check; do /fix; done`): the
 * core says whether it is a program. */
function programOf(parts: Part[]): string | undefined {
  if (parts.length === 0 || parts.some(p => p.type !== 'text' || p.ignored === true)) return undefined
  const text = parts.map(p => p.text ?? '').join('')
  return opensProgram(text) ? text : undefined
}

/**
 * A prompt that opens a loop or a group goes to the core (`LineTyped`). A program runs from timers, as a saved
 * chain's steps do, after the core's line; the prompt is answered by throwing, as a saved chain's name is, since
 * `chat.message` runs before the prompt is stored and a prompt stored runs a turn (measured on 1.18.33: HTTP 500 to
 * an API caller, nothing stored, no model request). Anything else (a prompt that only starts with `while`) returns,
 * and goes on as typed.
 */
async function programTyped(s: Session, text: string, known: Known): Promise<void> {
  const answer = await s.askForCommand('LineTyped', { text, origin: 'composer', enabled: enabled(), ...known })
  if (answer?.reply?.kind !== 'command.answer') return
  await s.written()
  throw new Error(answer.reply.text)
}

/** Hands the model the prompt text the core asks for (the fail note), when it asks. */
async function handPrompt(s: Session, parts: Part[]): Promise<void> {
  const part = parts.find(p => p.type === 'text')
  if (part === undefined || !wanted('PromptHanded', s.link)) return
  const reply = (await ask(s.host, 'PromptHanded', { text: part.text ?? '' }))?.reply
  if (reply?.kind === 'prompt') part.text = reply.text
}

/** Expands a command's template for these arguments as opencode does (measured on 1.18.33): `$ARGUMENTS` is all of
 * them, `$1`… each word, and the highest placeholder also takes the words after it. */
function expand(template: string, args: string): string {
  const words = args.match(/"[^"]*"|'[^']*'|\S+/g)?.map(w => w.replace(/^(["'])(.*)\1$/, '$2')) ?? []
  const used = [...template.matchAll(/\$(\d+)/g)].map(m => Number(m[1]))
  const last = used.length === 0 ? 0 : Math.max(...used)
  return template
    .replace(/\$(\d+)/g, (_, n: string) => {
      const i = Number(n) - 1
      return Number(n) === last ? words.slice(i).join(' ') : (words[i] ?? '')
    })
    .replaceAll('$ARGUMENTS', args)
}
