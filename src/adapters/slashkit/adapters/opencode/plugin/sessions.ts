/**
 * The sessions the opencode plugin knows: each its own helper (events name no session, so one `Link` each), its
 * transcript lines, the steps it runs and what it needs to tell its own calls apart. The hooks (./hooks.ts) find
 * a session here by id; which sessions are children (a subagent's) is kept here too.
 */
import type { Plugin } from '@opencode-ai/plugin'
import { ask, boundedInput, close, link, wanted, type Answer, type EventName, type Host, type Link, type Ticket } from './client.js'
import { nodeHost, switchedOn } from './node-host.js'

export type Client = Parameters<Plugin>[0]['client']
export type Part = { type: string; text?: string; ignored?: boolean; id?: string; messageID?: string; sessionID?: string; auto?: boolean }
export type ToolPart = {
  id?: string
  callID?: string
  type?: string
  tool?: string
  state?: { status?: string; input?: Record<string, unknown>; error?: string; time?: { start?: number; end?: number } }
}
export type Model = { providerID: string; modelID: string }
/** The built-ins the plugin runs itself as a step, by name (./builtins.ts, NATIVE). */
export type Natives = Readonly<Record<string, (client: Client, s: Session) => Promise<{ data?: unknown; error?: unknown }>>>

/** One opencode session as the plugin sees it. */
export class Session {
  readonly link: Link = link()
  readonly host: Host
  /** The command the plugin runs right now (a step), so its `command.execute.before` is not taken as typed. */
  running: { command: string; args: string } | undefined
  /** The typed command whose `chat.message` comes next: the person's text is `/name args`. */
  typed: string | undefined
  /** How the turn that runs failed, in the core's words (TURN_ENDS), from `session.error`, until its `session.idle`. */
  error: string | undefined
  /** The chain's first command run in the place of the person's prompt (a typed line led by a built-in), reported
   * once that prompt's turn ended. */
  inPlace: Ticket | undefined
  /** The model the session's last message went to: compaction needs it named. */
  model: Model | undefined
  /** Set once opencode deleted the session: its helper was asked to exit, and nothing starts another. */
  gone = false

  /** Message ids the plugin gave its own prompts and commands (measured on 1.18.33: a `messageID` in the body
   * becomes the user message's id, and `chat.message` carries it). */
  private readonly own = new Set<string>()
  /** Lines are written in order. */
  private lines: Promise<unknown> = Promise.resolve()
  /** Toasts are shown in order (`toast`). */
  private toasts: Promise<unknown> = Promise.resolve()
  /** Whether a turn runs (`session.status`), and the lines held until it ended: a user message stored while a turn
   * runs makes opencode run one more turn after it, even a `noReply` one (measured on 1.18.33). */
  private busy = false
  private held: string[] = []
  /** Runs asked for while a turn runs, each waiting for that turn to end (`run`). */
  private waiting: (() => void)[] = []
  /** The lines the answer being asked for wrote, while a command's hook asks: its own answer is one more line. */
  private logged: string[] | undefined
  /** The core's reply to each refused control tool call, by its call id: asked once (a part is updated more than
   * once), and placed in every later request's copy of the call's result. */
  private readonly answered = new Map<string, Promise<Answer>>()

  constructor(
    readonly id: string,
    private readonly client: Client,
    private readonly natives: Natives,
  ) {
    const host = nodeHost({
      link: this.link,
      gone: () => this.gone,
      log: text => {
        if (this.gone) return
        this.logged?.push(text)
        void this.line(text)
      },
      toast: text => this.toast({ message: text, variant: 'info' }),
      run: (command, args) => this.run(command, args),
      // The helper keys this session's journal by opencode's id for it, which a later server keeps (docs/opencode.md).
      own: () => ({ OPENCODE_SESSION_ID: id }),
    })
    this.host = { ...host, progress: text => this.toast(progressToast(text)) }
  }

  /** Shows a toast once the ones before it were taken: the TUI shows the last it got, so a toast that overtook
   * the one before it (a progress cleared just after it was shown) would leave the wrong one on screen. */
  private toast(body: Toast): void {
    this.toasts = this.toasts.then(() => this.client.tui.showToast({ body }).catch(() => undefined))
  }

  /** Writes a line the person sees and the model never does (measured on 1.18.33: noReply + ignored). */
  line(text: string): Promise<unknown> {
    if (this.busy) {
      this.held.push(text)
      return this.lines
    }
    // The id is taken when the line goes out, after the lines before it: ids ascend in the order messages are stored.
    this.lines = this.lines.then(() =>
      this.client.session
        .prompt({ path: { id: this.id }, body: { noReply: true, messageID: this.ownId(), parts: [{ type: 'text', text, ignored: true }] } })
        .catch(() => undefined),
    )
    return this.lines
  }

  /** Resolves once every line written so far is stored. */
  written(): Promise<unknown> {
    return this.lines
  }

  /** A turn started (lines are held from now) or the session went idle (the held lines go out). */
  turn(running: boolean): void {
    this.busy = running
    if (running) return
    for (const text of this.held.splice(0)) void this.line(text)
    for (const resume of this.waiting.splice(0)) resume()
  }

  /** An id of the form opencode gives messages (`msg_` + 12 hex of time + 14 characters), ascending; the plugin's own. */
  ownId(): string {
    const id = newId('msg')
    this.own.add(id)
    return id
  }

  /** Whether a message is one the plugin sent (its lines and steps come back through `chat.message` too). */
  mine(messageId: string): boolean {
    return this.own.delete(messageId)
  }

  /** Runs a step as the person's typed command would run; resolves with its text, rejects with its error. */
  async run(command: string, args: string): Promise<string> {
    if (this.gone) throw new Error('its session was deleted')
    // A queued self-command is asked for while its turn runs: it runs once that turn ended and the lines the turn
    // held (the model queued it, it runs now) are stored, for a line stored while a turn runs, a summary's too,
    // makes opencode run one more turn after it (seen on 1.18.33 on a loaded machine: a model request after the summary).
    if (this.busy) await new Promise<void>(resume => this.waiting.push(resume))
    await this.lines
    if (this.gone) throw new Error('its session was deleted')
    this.running = { command, args }
    try {
      const native = this.natives[command]
      const result =
        native !== undefined
          ? await native(this.client, this)
          : await this.client.session.command({ path: { id: this.id }, body: { command, arguments: args, messageID: this.ownId() } })
      if (result.error !== undefined) throw new Error(errorText(result.error))
      return textOf(result.data)
    } finally {
      if (this.running?.command === command) this.running = undefined
    }
  }

  /**
   * Asks the core about a command the person typed. In opencode a command's answer has no place of its own: it is
   * one more transcript line, unless the answer's lines already said it (the core's `/slash-chain stop` logs
   * `cancelled; …` and answers with it, as Claude Code shows both).
   */
  async askForCommand(event: EventName, e: unknown): Promise<Answer> {
    this.logged = []
    const answer = await ask(this.host, event, e)
    const logged = this.logged
    this.logged = undefined
    const reply = answer?.reply
    if (reply?.kind === 'command.answer' && !logged.includes(reply.text)) await this.line(reply.text)
    return answer
  }

  /**
   * The core's answer to lich's refusal of a control tool call, asked once per call: the refusal shows only as the
   * tool part's error (measured on 1.18.33), which both the event stream and the next request's messages carry.
   * Undefined when the core does not hear of such calls (outside lich, or self-commands off).
   */
  controlAnswered(part: ToolPart): Promise<Answer> | undefined {
    const key = part.callID ?? part.id ?? ''
    const asked = this.answered.get(key)
    if (asked !== undefined || !wanted('ControlAnswered', this.link)) return asked
    const call = part.state?.input ?? {}
    const answer = ask(this.host, 'ControlAnswered', {
      target: boundedInput(call.session ?? null),
      action: boundedInput(call.action ?? null),
      value: boundedInput(call.value ?? null),
      args: boundedInput(call.args ?? null),
      is_error: true,
      builtins: Object.keys(this.natives),
      switched_on: switchedOn(),
    })
    this.answered.set(key, answer)
    return answer
  }

  /** Forgets what the session holds and ends its helper (`close`, as the client retires a helper that failed). */
  end(): void {
    this.gone = true
    this.held = []
    for (const resume of this.waiting.splice(0)) resume()
    close(this.host)
  }
}

/**
 * Every session the plugin knows, and whether each session it looked at is a child session (it has a `parentID`):
 * a subagent's, which opencode's task tool prompts with the text the model wrote, through the same path as the
 * person's prompt (`chat.message`, measured on 1.18.33). Filled from `session.created` / `session.updated` events
 * and, for a session no event told of yet, from the stored session.
 */
export class Sessions {
  private readonly all = new Map<string, Session>()
  private readonly parents = new Map<string, boolean>()
  /** The sessions whose turn runs now (`session.status`), those the plugin has no Session for yet included: the
   * model's self-command tool may open one mid-turn. */
  private readonly busy = new Set<string>()
  /** The sessions this server made (`session.created`): none of them is one the person reopened. */
  private readonly made = new Set<string>()
  /** Each session's check of whether the person reopened it, made at the first thing sent to it (`reached`). */
  private readonly checked = new Map<string, Promise<void>>()

  constructor(
    readonly client: Client,
    /** Inside lich, every session but a child says it started to the core, which decides whether self-commands
     * are on (the core's gate reads the helper's own environment, inherited from opencode's). */
    readonly inLich: boolean,
    private readonly natives: Natives,
    /** The lines the plugin has for the first session it writes to (the saved chains' files that were bad). */
    private readonly notices: () => string[],
  ) {}

  get(id: string): Session | undefined {
    return this.all.get(id)
  }

  /** A session's turn started (`running`) or it went idle, as `session.status` says. */
  status(id: string, running: boolean): void {
    if (running) this.busy.add(id)
    else this.busy.delete(id)
    this.all.get(id)?.turn(running)
  }

  /** The session, made when it is new (its helper starts with its first event). */
  open(id: string): Session {
    let found = this.all.get(id)
    if (found === undefined) {
      found = new Session(id, this.client, this.natives)
      this.all.set(id, found)
      if (this.busy.has(id)) found.turn(true)
      for (const text of this.notices()) void found.line(text)
      // opencode runs no session headless that a queued command could follow (`opencode run` exits at its first
      // idle, measured on 1.18.33): every session is interactive to the core. A child session (a subagent's, made
      // here only when its model calls the self-command tool) says nothing to lich.
      if (this.inLich && this.parents.get(id) !== true) void ask(found.host, 'SessionStarted', { interactive: true })
    }
    return found
  }

  /**
   * What the person sent a session (a prompt, a command) reached the plugin: the first time, if the person reopened
   * the session, the core hears it (`Continued`) before anything else of it, so it offers the run a crash or a closed
   * opencode cut off there. A server hears nothing of a session an earlier one made until something is sent to it;
   * that first hook comes before any event, and the session already holds messages, which one this server made never
   * does at its first hook (docs/opencode.md, "Reopening a session", measured on 1.18.33). Unreadable, it is taken
   * for a new one.
   */
  reached(id: string): Promise<void> {
    let checked = this.checked.get(id)
    if (checked === undefined) {
      checked = this.made.has(id) ? Promise.resolve() : this.reopened(id)
      this.checked.set(id, checked)
    }
    return checked
  }

  private async reopened(id: string): Promise<void> {
    const stored = await this.client.session.messages({ path: { id } }).then(
      listed => listed.data ?? [],
      () => [],
    )
    if (stored.length > 0 && !(await this.isChild(id))) await ask(this.open(id).host, 'Continued', {})
  }

  /** The session as the plugin knows it; inside lich every session but a child is known, so the core hears its start. */
  async known(id: string): Promise<Session | undefined> {
    return this.inLich && !this.all.has(id) && !(await this.isChild(id)) ? this.open(id) : this.all.get(id)
  }

  /**
   * Whether a session is a child session, whose prompts the model wrote (a subagent's): none of them is the
   * person's typing, so the plugin does nothing for them. The stored session says so when no event did yet; if it
   * cannot be read, the session is taken for a child (the plugin then leaves its prompts to opencode, as typed).
   */
  async isChild(id: string): Promise<boolean> {
    const seen = this.parents.get(id)
    if (seen !== undefined) return seen
    try {
      const stored = (await this.client.session.get({ path: { id } })).data
      if (stored === undefined) return true
      const child = hasParent(stored)
      this.parents.set(id, child)
      return child
    } catch {
      return true
    }
  }

  /** opencode described a session (an event's `info`): whether it is a child, and whether this server made it. */
  seen(info: { id: string; parentID?: unknown }, made: boolean): void {
    this.parents.set(info.id, hasParent(info))
    if (made) this.made.add(info.id)
  }

  /**
   * Forgets a session opencode deleted and ends its helper: each session's helper would otherwise live as long as
   * opencode (measured on 1.18.33: nothing else ends it). A timer or run still pending for it finds the session
   * gone and starts no helper.
   */
  end(id: string): void {
    this.parents.delete(id)
    this.made.delete(id)
    this.checked.delete(id)
    this.busy.delete(id)
    this.all.get(id)?.end()
    this.all.delete(id)
  }
}

/**
 * How long the TUI shows a chain's progress: the next step's text replaces it, and the chain's end takes it away
 * (opencode 1.18.33 shows one toast at a time, each replacing the one shown and its timer; docs/opencode.md). A
 * chain whose helper went silent leaves it no longer than this.
 */
const PROGRESS_MS = 10 * 60 * 1000

/** A toast's body as the TUI takes it. */
type Toast = { message: string; variant: 'info'; duration?: number }

/** The toast that shows a running chain's progress in every TUI attached to the server, or (null) takes it away: a
 * toast with no text for a millisecond replaces the one shown (measured on 1.18.33; the server API has no status
 * line). */
function progressToast(text: string | null): Toast {
  return text === null ? { message: '', variant: 'info', duration: 1 } : { message: text, variant: 'info', duration: PROGRESS_MS }
}

/** Whether a session as opencode describes it (an event's `info`, a stored session) has a parent. */
function hasParent(info: { parentID?: unknown }): boolean {
  return typeof info.parentID === 'string' && info.parentID !== ''
}

let counter = 0

/** An id of the form opencode gives messages and parts (`msg_`/`prt_` + 12 hex of time + 14 characters), ascending. */
export function newId(prefix: 'msg' | 'prt'): string {
  counter += 1
  const time = (BigInt(Date.now()) * 4096n + BigInt(counter % 4096)) & 0xffffffffffffn
  return `${prefix}_${time.toString(16).padStart(12, '0')}slashkit${String(counter % 1000000).padStart(6, '0')}`
}

/** The text parts of an assistant message (or of what a command call resolved with), joined. */
export function textOf(message: unknown): string {
  const parts = (message as { parts?: Part[] } | undefined)?.parts ?? []
  return parts.map(p => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('')
}

function errorText(error: unknown): string {
  const data = (error as { data?: { message?: unknown }; name?: unknown } | undefined) ?? {}
  return String(data.data?.message ?? data.name ?? JSON.stringify(error))
}
