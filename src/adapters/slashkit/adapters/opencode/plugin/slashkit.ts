/**
 * slashkit's opencode plugin: `/a x && /b y` runs `/b y` once `/a x` ended well. A shim over the bridge: it
 * translates opencode's hooks into the core's events (docs/bridge.md, version 2) and carries out what the core
 * answers with; every rule is in Python. Facts it relies on are in docs/opencode.md (measured on 1.18.33).
 * Type-only imports from npm: opencode installs nothing this file needs at run time.
 */
import type { Plugin, ToolDefinition } from '@opencode-ai/plugin'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { ask, bounded, close, link, messageOf, nodeHost, wanted, type Answer, type Link, type Ticket } from './slashkit/bridge.js'
import type { Host } from './slashkit/client.js'
import * as facts from './slashkit/host.js'
// The optional-event name that asks for a step's text with its end, generated from the core's.
import { STEP_OUTPUT } from './slashkit/wire.js'

type Client = Parameters<Plugin>[0]['client']
type Part = { type: string; text?: string; ignored?: boolean; id?: string; messageID?: string; sessionID?: string; auto?: boolean }

/** lich's control tool as opencode names an MCP server `lich`'s `control_session` (measured on 1.18.33). Its
 * description is not amended: `tool.definition` fires for built-in and plugin tools only, never for an MCP tool
 * (measured on 1.18.33), so there is no `ToolDescribed` to send. */
const CONTROL_TOOL = 'lich_control_session'
/** Inside lich, every session says so to the core, which decides whether self-commands are on (the core's gate
 * reads the helper's own environment, inherited from opencode's); outside lich no helper starts for it. */
const IN_LICH = (process.env.LICH_SESSION_ID ?? '') !== ''

/** One opencode session as the plugin sees it: its own helper, and what it needs to tell its own calls apart. */
type Session = {
  id: string
  link: Link
  host: Host
  /** Message ids the plugin gave its own prompts and commands (measured on 1.18.33: a `messageID` in the
   * body becomes the user message's id, and `chat.message` carries it). */
  own: Set<string>
  /** The command the plugin runs right now (a step), so its `command.execute.before` is not taken as typed. */
  running: { command: string; args: string } | undefined
  /** The typed command whose `chat.message` comes next: the person's text is `/name args`. */
  typed: string | undefined
  /** How the turn that runs failed, in the core's words (TURN_ENDS), from `session.error`, until its `session.idle`. */
  error: string | undefined
  /** Lines are written in order. */
  lines: Promise<unknown>
  /** Whether a turn runs (`session.status`), and the lines held until it ended: a user message stored while
   * a turn runs makes opencode run one more turn after it, even a `noReply` one (measured on 1.18.33). */
  busy: boolean
  held: string[]
  /** The chain's first command run in the place of the person's prompt (a typed line led by a built-in), reported
   * once that prompt's turn ended. */
  inPlace: Ticket | undefined
  /** The lines the answer being asked for wrote, while a command's hook asks: its own answer is one more line. */
  logged: string[] | undefined
  /** The model the session's last message went to: compaction needs it named. */
  model: { providerID: string; modelID: string } | undefined
  /** The core's reply to each refused control tool call, by its call id: asked once (a part is updated more than
   * once), and placed in every later request's copy of the call's result. */
  answered: Map<string, Promise<Answer>>
  /** Set once opencode deleted the session: its helper was asked to exit, and nothing starts another. */
  gone: boolean
}

type ToolPart = {
  id?: string
  callID?: string
  type?: string
  tool?: string
  state?: { status?: string; input?: Record<string, unknown>; error?: string; time?: { start?: number; end?: number } }
}

export const SlashkitPlugin: Plugin = async ({ client }) => {
  const sessions = new Map<string, Session>()
  /**
   * Whether each session the plugin looked at is a child session (it has a `parentID`): a subagent's, which
   * opencode's task tool prompts with the text the model wrote, through the same path as the person's prompt
   * (`chat.message`, measured on 1.18.33). Filled from `session.created` / `session.updated` events and, for a
   * session no event told of yet, from the stored session.
   */
  const parents = new Map<string, boolean>()
  /** Whether a session as opencode describes it (an event's `info`, a stored session) has a parent. */
  const hasParent = (info: { parentID?: unknown }): boolean => typeof info.parentID === 'string' && info.parentID !== ''
  let templates: Map<string, string> | undefined
  let counter = 0

  const session = (id: string): Session => {
    let found = sessions.get(id)
    if (found === undefined) {
      const own = link()
      const s: Session = {
        id,
        link: own,
        // Its calls reach `s` only once they run, after it is made.
        host: nodeHost({
          link: own,
          gone: () => s.gone,
          log: text => {
            if (s.gone) return
            s.logged?.push(text)
            void line(s, text)
          },
          toast: text => void client.tui.showToast({ body: { message: text, variant: 'info' } }).catch(() => undefined),
          run: (command, args) => run(s, command, args),
          saveEnabled: async enabled => store.set(facts.ENABLED_KEY, enabled),
        }),
        own: new Set(),
        running: undefined,
        typed: undefined,
        error: undefined,
        lines: Promise.resolve(),
        busy: false,
        held: [],
        inPlace: undefined,
        logged: undefined,
        model: undefined,
        answered: new Map(),
        gone: false,
      }
      sessions.set(id, s)
      // opencode runs no session headless that a queued command could follow (`opencode run` exits at its
      // first idle, measured on 1.18.33): every session is interactive to the core.
      if (IN_LICH) void ask(s.host, 'SessionStarted', { interactive: true })
      found = s
    }
    return found
  }

  /**
   * Whether a session is a child session, whose prompts the model wrote (a subagent's): none of them is the
   * person's typing, so the plugin does nothing for them. The stored session says so when no event did yet; if it
   * cannot be read, the session is taken for a child (the plugin then leaves its prompts to opencode, as typed).
   */
  const isChild = async (id: string): Promise<boolean> => {
    const seen = parents.get(id)
    if (seen !== undefined) return seen
    try {
      const stored = (await client.session.get({ path: { id } })).data
      if (stored === undefined) return true
      const child = hasParent(stored)
      parents.set(id, child)
      return child
    } catch {
      return true
    }
  }

  /** The session as the plugin knows it; inside lich every session but a child is known, so the core hears its start. */
  const known = async (id: string): Promise<Session | undefined> =>
    IN_LICH && !sessions.has(id) && !(await isChild(id)) ? session(id) : sessions.get(id)

  /**
   * Forgets a session opencode deleted and ends its helper (`close`, as the client retires a helper that
   * failed): each session's helper would otherwise live as long as opencode (measured on 1.18.33: nothing else
   * ends it). A timer or run still pending for it finds the session gone and starts no helper.
   */
  const end = (id: string): void => {
    parents.delete(id)
    const s = sessions.get(id)
    if (s === undefined) return
    sessions.delete(id)
    s.gone = true
    s.held = []
    close(s.host)
  }

  /** An id of the form opencode gives messages (`msg_` + 12 hex of time + 14 characters), ascending. */
  const ownId = (s: Session): string => {
    counter += 1
    const time = (BigInt(Date.now()) * 4096n + BigInt(counter % 4096)) & 0xffffffffffffn
    const id = `msg_${time.toString(16).padStart(12, '0')}slashkit${String(counter % 1000000).padStart(6, '0')}`
    s.own.add(id)
    return id
  }

  /** Writes a line the person sees and the model never does (measured on 1.18.33: noReply + ignored). */
  const line = (s: Session, text: string): Promise<unknown> => {
    if (s.busy) {
      s.held.push(text)
      return s.lines
    }
    s.lines = s.lines.then(() =>
      client.session
        .prompt({ path: { id: s.id }, body: { noReply: true, messageID: ownId(s), parts: [{ type: 'text', text, ignored: true }] } })
        .catch(() => undefined),
    )
    return s.lines
  }

  /** Runs a step as the person's typed command would run; resolves with its text, rejects with its error. */
  const run = async (s: Session, command: string, args: string): Promise<string> => {
    if (s.gone) throw new Error('its session was deleted')
    // A queued self-command is asked for while its turn runs: opencode holds a summarize called then until that
    // turn ended (measured on 1.18.33, tests/engine/test_opencode_self_command.py).
    await s.lines
    s.running = { command, args }
    try {
      const result = NATIVE[command] !== undefined
        ? await NATIVE[command](client, s)
        : await client.session.command({ path: { id: s.id }, body: { command, arguments: args, messageID: ownId(s) } })
      if (result.error !== undefined) throw new Error(errorText(result.error))
      return textOf(result.data)
    } finally {
      if (s.running?.command === command) s.running = undefined
    }
  }

  const template = async (name: string): Promise<string | undefined> => {
    if (templates === undefined) {
      const listed = await client.command.list()
      templates = new Map((listed.data ?? []).map(c => [c.name, String(c.template ?? '')]))
    }
    return templates.get(name)
  }

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

  /** Hands the model the prompt text the core asks for (the fail note), when it asks. */
  const handPrompt = async (s: Session, parts: Part[]): Promise<void> => {
    const part = parts.find(p => p.type === 'text')
    if (part === undefined || !wanted('PromptHanded', s.link)) return
    const reply = (await ask(s.host, 'PromptHanded', { text: part.text ?? '' }))?.reply
    if (reply?.kind === 'prompt') part.text = reply.text
  }

  const enabled = (): boolean => store.get(facts.ENABLED_KEY) !== false

  /**
   * A typed line whose first command is a TUI built-in (`/compact && /greet X`) reaches the server as a plain
   * prompt (measured on 1.18.33). The core says whether it is a chain; if it is, the prompt becomes the first
   * command's run in place (the model never gets its text) and the chain goes on once that turn ended. Answers
   * whether it did.
   */
  const chainInPlace = async (s: Session, led: { command: string; args: string }, parts: Part[]): Promise<boolean> => {
    // The prompt's turn starts once this hook returns. A line stored before it would be the newest user message,
    // which the turn would then answer instead of the prompt (measured on 1.18.33): the answer's lines wait.
    s.busy = true
    const answer = await ask(s.host, 'ChainTyped', { command: led.command, args: led.args, origin: 'composer', enabled: enabled() })
    // Not a chain (or no answer): the prompt goes on as typed, and its turn's end lets any line out.
    if (answer?.ticket === undefined) return false
    IN_PLACE[led.command]?.(parts, partId)
    s.inPlace = answer.ticket
    return true
  }

  /**
   * Asks the core about a command the person typed; a `text` reply answers it. In opencode the command's answer
   * has no place of its own: it is one more transcript line, unless the answer's lines already said it (the
   * core's `/slash-chain stop` logs `cancelled; …` and answers with it, as Claude Code shows both).
   */
  const askForCommand = async (s: Session, event: string, e: unknown): Promise<Answer> => {
    s.logged = []
    const answer = await ask(s.host, event, e)
    const logged = s.logged
    s.logged = undefined
    const reply = answer?.reply
    if (reply?.kind === 'command.answer' && !logged.includes(reply.text)) await line(s, reply.text)
    return answer
  }

  /**
   * The core's answer to lich's refusal of a control tool call, asked once per call: the refusal shows only as the
   * tool part's error (measured on 1.18.33), which both the event stream and the next request's messages carry.
   * Undefined when the core does not hear of such calls (outside lich, or self-commands off).
   */
  const controlAnswered = (s: Session, part: ToolPart): Promise<Answer> | undefined => {
    const key = part.callID ?? part.id ?? ''
    const asked = s.answered.get(key)
    if (asked !== undefined || !wanted('ControlAnswered', s.link)) return asked
    const call = part.state?.input ?? {}
    const answer = ask(s.host, 'ControlAnswered', {
      target: call.session ?? null,
      action: call.action ?? null,
      value: call.value ?? null,
      args: call.args ?? null,
      is_error: true,
      builtins: Object.keys(NATIVE),
    })
    s.answered.set(key, answer)
    return answer
  }

  /** A part id of the form opencode gives parts (`prt_` + 12 hex of time + 14 characters). */
  const partId = (): string => {
    counter += 1
    const time = (BigInt(Date.now()) * 4096n + BigInt(counter % 4096)) & 0xffffffffffffn
    return `prt_${time.toString(16).padStart(12, '0')}slashkit${String(counter % 1000000).padStart(6, '0')}`
  }

  return {
    config: async cfg => {
      cfg.command = cfg.command ?? {}
      cfg.command[facts.CHAIN_COMMAND] = { template: '$ARGUMENTS', description: facts.COMMAND_DESCRIPTION }
    },

    'command.execute.before': async (input, output) => {
      const s = session(input.sessionID)
      const parts = output.parts
      const mine = s.running
      if (mine !== undefined && mine.command === input.command && mine.args === input.arguments) {
        await handPrompt(s, parts)
        return
      }
      // The person's text, for the `chat.message` that follows only a command that runs: a command answered by
      // throwing has none, and a text left here would be taken for the person's next prompt.
      const typed = `/${input.command}${input.arguments === '' ? '' : ` ${input.arguments}`}`
      if (input.command === facts.CHAIN_COMMAND) {
        const answer = await askForCommand(s, 'ChainCommandTyped', { args: input.arguments, enabled: enabled() })
        // With no answer, `ask` already wrote the line that says why.
        const reply = answer?.reply
        // The only way to answer a command without a model turn (measured on 1.18.33: the command's parts always
        // become a prompt whose turn runs; the caller of the server's API gets HTTP 500, opencode issue #25916,
        // and the TUI shows nothing of it).
        throw new Error(reply?.kind === 'command.answer' ? reply.text : 'slash-chain: no answer')
      }
      if (!facts.SEPARATOR.test(input.arguments)) {
        s.typed = typed
        return
      }
      // A command that reaches this hook was sent by the person (the TUI's prompt, or the server's API for them).
      const answer = await askForCommand(s, 'ChainTyped', { command: input.command, args: input.arguments, origin: 'composer', enabled: enabled() })
      // The lines the answer wrote go out before the command's turn starts: one stored while it runs would
      // make opencode run one more turn (measured on 1.18.33).
      await s.lines
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
      const id = input.sessionID
      // Nothing to do for a prompt of a session the plugin does not know, unless it may start a chain or lich
      // wants to hear of the session.
      if (led === undefined && !IN_LICH && !sessions.has(id)) return
      // A subagent's prompt is the model's text, not the person's typing: it starts no chain and no helper, and
      // reaches the subagent as written (docs/opencode.md, "Child sessions").
      if (await isChild(id)) return
      const s = led === undefined ? await known(id) : session(id)
      if (s === undefined) return
      if (input.model !== undefined) s.model = input.model
      // The plugin's own lines and steps come here too (measured on 1.18.33), also inside its own hooks.
      if (s.own.delete(output.message.id)) return
      const typed = s.typed
      s.typed = undefined
      if (typed === undefined && led !== undefined && (await chainInPlace(s, led, parts))) return
      if (!wanted('PromptSubmitted', s.link)) return
      const text = typed ?? output.parts.map(p => (p.type === 'text' && p.ignored !== true ? (p.text ?? '') : '')).join('')
      await ask(s.host, 'PromptSubmitted', { text: bounded(text), origin: 'composer' })
    },

    event: async ({ event }) => {
      const type: string = event.type
      if (type === 'session.created' || type === 'session.updated' || type === 'session.deleted') {
        const info = (event.properties as { info?: { id?: unknown; parentID?: unknown } }).info
        if (typeof info?.id !== 'string') return
        if (type === 'session.deleted') end(info.id)
        else parents.set(info.id, hasParent(info))
        return
      }
      if (event.type === 'session.status') {
        const s = sessions.get(event.properties.sessionID)
        if (s === undefined) return
        s.busy = event.properties.status.type !== 'idle'
        if (!s.busy) for (const text of s.held.splice(0)) void line(s, text)
        return
      }
      if (event.type === 'message.part.updated') {
        // lich's refusal of its control tool reaches no tool.execute.after: only the tool part's error shows it
        // (measured on 1.18.33). The core hears of it at once, so a queued command is queued during the turn.
        const part = event.properties.part
        if (part.type !== 'tool' || part.tool !== CONTROL_TOOL || part.state?.status !== 'error') return
        const s = await known(part.sessionID)
        if (s !== undefined) await controlAnswered(s, part)
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
    // the session's messages, read afresh from its store, with input `{}`; what the hook leaves in them is what
    // the request holds, and the stored messages (the person's transcript) keep lich's text. So the model reads
    // the core's reply to a refused control call in lich's refusal's place, as in Claude Code.
    'experimental.chat.messages.transform': async (_input, output) => {
      for (const message of output.messages) {
        for (const part of message.parts) {
          if (part.type !== 'tool' || part.tool !== CONTROL_TOOL || part.state?.status !== 'error') continue
          const s = await known(message.info.sessionID)
          const reply = s === undefined ? undefined : (await controlAnswered(s, part))?.reply
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

    tool: {
      [facts.FAIL_TOOL]: {
        description: facts.FAIL_DESCRIPTION,
        // Plain JSON Schema properties, the core's (FAIL_ARGS): opencode 1.18.33 takes them as they are when they are
        // not zod schemas (measured), though its types name zod's only. The plugin's one cast, on that field alone.
        args: facts.FAIL_ARGS as unknown as ToolDefinition['args'],
        async execute(args, ctx) {
          // A session whose helper does not run has no chain to stop, and a subagent's call (a child session's) is
          // refused as the core refuses one: answered here, neither starts a helper that would then stay.
          const s = sessions.get(ctx.sessionID)
          if (s === undefined || s.link.helper === undefined || (await isChild(ctx.sessionID))) {
            throw new Error(facts.FAIL_NOTHING_WAITS)
          }
          const reply = (await ask(s.host, 'FailCalled', { reason: args['reason'] ?? null, agent: null }))?.reply
          if (reply?.kind === 'tool.answer') return reply.text
          throw new Error(reply?.kind === 'deny' ? reply.text : facts.UNAVAILABLE.replace('{why}', 'no answer'))
        },
      },
    },
  }
}

/**
 * How a turn that failed ended, in the core's words (slashkit.core.chain_machine: `answer` is a good end; the
 * others are the ones Claude Code gives, as slashkit.adapters.sdk.mapping names them), by the `error.name` of
 * opencode's `session.error`: an abort is `MessageAbortedError`, a model's HTTP error `APIError` (measured on
 * 1.18.33). Every name but an abort is an `error`.
 */
const TURN_ENDS: Record<string, string> = { MessageAbortedError: 'aborted' }

/** The text parts of an assistant message (or of what a command call resolved with), joined. */
function textOf(message: unknown): string {
  const parts = (message as { parts?: Part[] } | undefined)?.parts ?? []
  return parts.map(p => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('')
}

/**
 * The TUI's built-ins a step may name, run the way the server runs them: they are not server commands
 * (measured on 1.18.33: `client.session.command` answers 500 for `compact`, and the command list holds none).
 */
const NATIVE: Record<string, (client: Client, s: Session) => Promise<{ data?: unknown; error?: unknown }>> = {
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
 * parts become what the TUI's own command sends (measured on 1.18.33: `/compact` stores a user message holding
 * a `compaction` part, and the turn that follows summarizes the session instead of answering). The typed text
 * stays in the transcript for the person, `ignored`, so the model never gets it.
 */
const IN_PLACE: Record<string, (parts: Part[], partId: () => string) => void> = {
  compact: (parts, partId) => {
    const first = parts[0] ?? { type: 'text' }
    for (const part of parts) part.ignored = true
    parts.push({ id: partId(), messageID: first.messageID, sessionID: first.sessionID, type: 'compaction', auto: false })
  },
}

/** `/name args` when a prompt is one typed line whose first command is a built-in the plugin runs in place and
 * whose args hold the separator; whether it is a chain is the core's answer. */
function ledByBuiltin(parts: Part[]): { command: string; args: string } | undefined {
  if (parts.length === 0 || parts.some(p => p.type !== 'text' || p.ignored === true)) return undefined
  const typed = /^\/(\S+)\s+([\s\S]*)$/.exec(parts.map(p => p.text ?? '').join(''))
  if (typed?.[1] === undefined || typed[2] === undefined || IN_PLACE[typed[1]] === undefined) return undefined
  return facts.SEPARATOR.test(typed[2]) ? { command: typed[1], args: typed[2] } : undefined
}

/** The model the session's last answer came from, if any. */
async function answeredBy(client: Client, id: string): Promise<{ providerID: string; modelID: string } | undefined> {
  try {
    const listed = await client.session.messages({ path: { id } })
    const answers = (listed.data ?? []).map(m => m.info).filter(info => info.role === 'assistant')
    const last = answers[answers.length - 1] as { providerID?: string; modelID?: string } | undefined
    return last?.providerID !== undefined && last.modelID !== undefined ? { providerID: last.providerID, modelID: last.modelID } : undefined
  } catch {
    return undefined
  }
}

/** Expands a command's template for these arguments as opencode does (measured on 1.18.33): `$ARGUMENTS` is
 * all of them, `$1`… each word, and the highest placeholder also takes the words after it. */
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

function errorText(error: unknown): string {
  const data = (error as { data?: { message?: unknown }; name?: unknown } | undefined) ?? {}
  return String(data.data?.message ?? data.name ?? JSON.stringify(error))
}

/** The on/off setting, in a file every opencode window shares. */
const store = {
  path(): string {
    const state = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state')
    return join(state, 'slashkit', 'opencode-store.json')
  },
  read(): Record<string, unknown> {
    try {
      const value: unknown = JSON.parse(readFileSync(store.path(), 'utf8'))
      return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
    } catch {
      return {}
    }
  },
  get(key: string): unknown {
    return store.read()[key] ?? null
  },
  set(key: string, value: unknown): void {
    try {
      mkdirSync(dirname(store.path()), { recursive: true })
      writeFileSync(store.path(), JSON.stringify({ ...store.read(), [key]: value }))
    } catch {
      // A setting that cannot be saved lasts for this session only.
    }
  },
}
