/**
 * slashkit's pi extension: `/a x && /b y` runs `/b y` once `/a x` ended well. A shim over the bridge
 * (docs/bridge.md): it translates pi's events into the core's events and carries out what the core answers with;
 * every rule is in Python. The facts it relies on are in docs/pi.md (measured on pi 1.6.0). pi runs one session
 * per process, so the extension keeps one link to one helper. pi resolves its own package for an extension (its
 * `CustomEditor`); nothing else comes from npm.
 */
import { CustomEditor, type ExtensionAPI, type ExtensionCommandContext, type ExtensionContext, type InputEventResult } from '@earendil-works/pi-coding-agent'
import { ask, bounded, boundedInput, close, link, opensProgram, wanted, Work, type Answer, type Host, type Ticket } from './client.js'
import * as facts from './host.js'
import { enabled, nodeHost, switchedOn, type Own } from './node-host.js'
import { STEP_OUTPUT } from './wire.js'

/** The built-ins the extension API runs (`ctx.compact()`); the core hears them as `builtins`. */
const BUILTINS = ['compact']

type Said = { role?: string; content?: string | { type: string; text?: string }[]; stopReason?: string }

export default function slashkit(pi: ExtensionAPI): void {
  let ctx: ExtensionContext | undefined
  /** The run of the step whose prompt pi sends next: it ends once that prompt was handed (`message_end`). */
  let stepping: { resolve: (output: string) => void; reject: (error: Error) => void } | Ticket | undefined
  /** The run of the last prompt the extension sent (see `stepping`), which a saved chain's command waits for. */
  let sending: Promise<string> | undefined
  /** The saved chains this extension registered as pi commands: no names of pi's own (`SavedAsked`). */
  const saved = new Set<string>()
  /**
   * The saved chains' exchange at session start. omp does not await the start (omp.ts), so a line typed meanwhile
   * waits for it: otherwise a saved chain's name typed then is no command yet (seen failing in omp's TUI test).
   */
  let offered: Promise<void> = Promise.resolve()
  /** How the last low-level run ended (`agent_end`), for the `agent_settled` that follows. */
  let last: { reason: string; answer: string } = { reason: 'answer', answer: '' }
  /** What `agent_settled` waits for before it returns: fired timers and built-ins running (see `settled`). */
  const work = new Work()
  const track = <T>(p: Promise<T>): Promise<T> => work.track(p)
  let idle: (() => void)[] = []
  /** Whether a chain runs, as the core's status line says (its `progress`, null once the chain ended); who waits. */
  let running = false
  const ends: (() => void)[] = []
  const over = (): void => {
    running = false
    for (const done of ends.splice(0)) done()
  }

  /** A transcript line: the person sees it (a notice, or stderr without a UI); it never enters the model's context. */
  const line = (text: string): void => {
    shown.push(text)
    if (ctx?.hasUI === true) ctx.ui.notify(text, 'info')
    else process.stderr.write(`${text}\n`)
  }
  /** The lines shown during the exchange under way, if one keeps them (`slashChain`). */
  let shown: string[] = []

  const compact = async (): Promise<string> => {
    // A self-command queued during a turn runs once the turn is over.
    if (ctx !== undefined && !ctx.isIdle()) await new Promise<void>(done => idle.push(done))
    return new Promise<string>((resolve, reject) => {
      if (ctx === undefined) return reject(new Error('pi gave no context yet'))
      ctx.compact({ onComplete: () => resolve(''), onError: err => reject(err) })
    })
  }

  /**
   * Sends a line as the person's prompt; its run ends once pi handed it to the model (`message_end`). While pi works
   * (a saved chain typed mid-turn, below) pi takes a prompt only queued: it runs once the turn is over.
   */
  const prompt = (text: string, expand: boolean): Promise<string> => {
    const ran = new Promise<string>((resolve, reject) => (stepping = { resolve, reject }))
    sending = ran
    pi.sendUserMessage(text, { expandPromptTemplates: expand, ...(ctx?.isIdle() === false && { deliverAs: 'followUp' }) })
    return ran
  }

  /** A step: a built-in through the API, anything else as the person's typed line (templates expanded). */
  const run = (command: string, args: string): Promise<string> => {
    if (command === 'compact') return track(compact())
    // slashkit's own command is no pi command (see `input`): a step of it goes to the core, which knows its chain.
    if (command === facts.CHAIN_COMMAND) return slashChain(args, 'extension').then(() => '')
    const line = `/${command}${args === '' ? '' : ` ${args}`}`
    // An extension command sends no user message of its own: its run ends once pi has taken it.
    if (!pi.getCommands().some(c => c.name === command && c.source === 'extension')) return prompt(line, true)
    pi.sendUserMessage(line, { expandPromptTemplates: true })
    return Promise.resolve('')
  }

  // The helper keys this session's journal by pi's session id (PI_SESSION_ID, as pi names it for its `bash` tool),
  // which pi keeps on `--continue`, `--session` and `/resume` (docs/pi.md, measured on 1.6.0). Asked as the helper
  // starts, after `session_start` gave the context; with none yet, the session journals nothing.
  const own = (): Own => ({ PI_SESSION_ID: ctx?.sessionManager.getSessionId() })
  const node = nodeHost({ link: link(), gone: () => false, log: line, toast: line, run, own })
  const host: Host = {
    ...node,
    // The running chain's step and the next one on pi's status line (the TUI's, RPC's `setStatus`); null clears it.
    // Print mode has no UI, and its lines on stderr say as much.
    progress: text => {
      if (ctx?.hasUI === true) ctx.ui.setStatus(facts.CHAIN_COMMAND, text ?? undefined)
      if (text === null) over()
      else running = true
    },
    // The next step must be sent before `agent_settled` returns, or `pi -p` exits first (docs/pi.md): what it
    // waits for is every timer and every exchange with the helper under way.
    after: (ms, fire) => track(new Promise(done => setTimeout(done, ms)).then(fire)),
    post: (socketPath, path, body) => track(node.post(socketPath, path, body)),
  }

  /** The typed command (or step) was handed to the model: its run ended, with no text (its turn's answer is). */
  const handed = async (): Promise<void> => {
    const ran = stepping
    stepping = undefined
    if (ran !== undefined) await ('resolved' in ran ? ran.resolved('') : ran.resolve(''))
  }

  /** A typed `/name args` whose args hold a chain: the core's answer carried out, as pi's `input` result. */
  const chain = async (command: string, args: string): Promise<InputEventResult> => {
    const answer: Answer = await ask(host, 'ChainTyped', { command, args, origin: 'composer', enabled: enabled(), builtins: BUILTINS, commands: names() })
    if (answer?.reply?.kind === 'command.answer') {
      line(answer.reply.text)
      return { action: 'handled' }
    }
    if (answer?.ticket === undefined) return { action: 'continue' }
    if (BUILTINS.includes(command)) {
      // A line led by a built-in (from the TUI's editor, or print and RPC mode's input) runs it in place.
      const ticket = answer.ticket
      await compact().then(output => ticket.resolved(output), (err: unknown) => ticket.threw(String(err)))
      return { action: 'handled' }
    }
    stepping = answer.ticket
    return { action: 'transform', text: `/${command}${answer.reply.args === '' ? '' : ` ${answer.reply.args}`}` }
  }

  /** Every timer and every exchange with the helper under way, and what each led to, done. */
  // What one piece of work leads to starts within the microtasks after it: setImmediate runs once they are done.
  const drain = (): Promise<void> => work.drained(() => new Promise(done => setImmediate(done)))

  /**
   * A saved chain typed by name (`/ship Bob`, `/ship Bob && /deploy`): pi runs its registered command before any
   * event, with the rest of the line as its args, so the command hands the core the line (`ChainTyped`, whatever
   * the args hold); the core answers with a line and runs the steps. The command returns once they ran: `pi -p`
   * ends when it returns (docs/pi.md, measured on 1.6.0). With no answer (no helper) the line goes on as typed, which
   * pi hands the model as text.
   */
  const typedSaved = async (command: string, args: string, c: ExtensionCommandContext): Promise<void> => {
    ctx = c
    const before = sending
    const reply = (await ask(host, 'ChainTyped', { command, args, origin: 'composer', enabled: enabled(), builtins: BUILTINS, commands: names() }))?.reply
    if (reply?.kind === 'command.answer') line(reply.text)
    else void prompt(`/${command}${args === '' ? '' : ` ${args}`}`, false)
    await drain()
    // The first step's prompt was sent by now, but pi starts its run a tick later (measured on 1.6.0).
    if (sending !== before) await sending?.catch(() => undefined)
    await c.waitForIdle()
  }

  /**
   * A prompt that opens a loop or a group (`for w in a b; do /x $w; done`) goes to the core (`LineTyped`): a program
   * runs as a saved chain's steps do, and the prompt is handled with the core's line (true); anything else (a prompt
   * that only starts with `while`) is the person's, and goes on as typed (false). `pi -p` disposes the session once
   * the handled input returned (print-mode.js, measured on 1.6.0), and pi hands an `input` handler no `waitForIdle`:
   * without a UI this waits until the chain ended (the core clears its status line) or the helper is gone.
   */
  const typedProgram = async (text: string, origin: string): Promise<boolean> => {
    const reply = (await ask(host, 'LineTyped', { text, origin, enabled: enabled(), builtins: BUILTINS, commands: names() }))?.reply
    if (reply?.kind !== 'command.answer') return false
    line(reply.text)
    await ran()
    return true
  }

  /** Without a UI, the program the core started: ended (the core cleared its status line), or its helper gone. */
  const ran = async (): Promise<void> => {
    if (ctx?.hasUI === true) return
    await drain()
    if (running) await new Promise<void>(done => ends.push(done))
    await drain()
  }

  /**
   * pi's command names as the core hears them: what `pi.getCommands()` lists (templates, skills, extensions'; not the
   * built-ins, which the core knows) but the saved chains this extension registered, and `/slash-chain`, which `input`
   * reads.
   */
  const names = (): string[] => [
    ...pi.getCommands().flatMap(c => (c.source === 'extension' && saved.has(c.name) ? [] : [bounded(c.name)])),
    facts.CHAIN_COMMAND,
  ]

  /**
   * Asks the core for the saved chains (`SavedAsked`, with pi's command names but those this extension registered)
   * and registers each in pi's command menu; a name pi has is shadowed, and left to pi.
   */
  const offerSaved = async (): Promise<void> => {
    const reply = (await ask(host, 'SavedAsked', { commands: names() }))?.reply
    if (reply?.kind !== 'saved') return
    for (const chain of reply.chains) {
      saved.add(chain.name)
      // pi's menu shows no argument hint for an extension's command (measured on 1.6.0): it leads the description,
      // as pi's own built-ins show theirs.
      const description = chain.argument_hint === '' ? chain.description : `${chain.argument_hint} — ${chain.description}`
      pi.registerCommand(chain.name, { description, handler: (args, c) => typedSaved(chain.name, args, c) })
    }
  }

  /** `/slash-chain args` from this origin: the core answers, and decides whether that origin may switch chaining. */
  const slashChain = async (args: string, origin: string): Promise<void> => {
    shown = []
    const reply = (await ask(host, 'ChainCommandTyped', { args, enabled: enabled(), origin, commands: names() }))?.reply
    const answer = reply?.kind === 'command.answer' ? reply.text : facts.UNAVAILABLE.replace('{why}', 'no answer')
    // The core both logs and answers `resumed: …`, for a host that shows a command's answer apart from its lines
    // (Claude Code); pi shows both as the same notices, so a line already shown is not shown twice.
    if (!shown.includes(answer)) line(answer)
  }

  // `/slash-chain` is read here, not registered as a pi command: pi runs an extension's command before any event
  // and tells its handler nothing of who sent it, so another extension's `sendUserMessage('/slash-chain off',
  // {expandPromptTemplates: true})` would pass for the person (agent-session.js `prompt`, pi 1.6.0). This event
  // names its `source`: the person's (`interactive`, `rpc`) or an extension's.
  pi.on('input', async (e, c) => {
    ctx = c
    await offered
    const own = new RegExp(`^/${facts.CHAIN_COMMAND}(?:\\s+([\\s\\S]*))?$`).exec(e.text)
    if (own !== null) {
      await slashChain(own[1] ?? '', originOf(e.source))
      // `/slash-chain resume` starts the cut-off program from a timer, and `pi -p` ends once this input returned.
      await ran()
      return { action: 'handled' }
    }
    if (e.source === 'extension') return { action: 'continue' }
    if (opensProgram(e.text) && (await typedProgram(e.text, originOf(e.source)))) return { action: 'handled' }
    const typed = chained(e.text)
    if (typed !== undefined) return chain(...typed)
    if (wanted('PromptSubmitted', host.link)) await ask(host, 'PromptSubmitted', { text: bounded(e.text), origin: originOf(e.source) })
    return { action: 'continue' }
  })

  // pi's TUI editor runs a built-in itself, the rest of the line as its arguments, and no event sees the line
  // (`setupEditorSubmitHandler`, interactive-mode.js, measured on 1.6.0). So the editor (pi's, or another extension's)
  // offers a chain led by a built-in the extension runs to the core first: handled, the line goes in the history as a
  // prompt does; not taken, to pi's own handler, which pi sets as `onSubmit` after the factory returned.
  pi.on('session_start', async (_e, c) => {
    ctx = c
    const previous = c.ui.getEditorComponent()
    c.ui.setEditorComponent((tui, theme, keys) => {
      const editor = previous?.(tui, theme, keys) ?? new CustomEditor(tui, theme, keys, { embedWorkingStatus: true })
      let submit = editor.onSubmit
      const offer = (text: string): void => {
        const typed = chained(text.trim())
        if (typed === undefined || !BUILTINS.includes(typed[0])) return submit?.(text)
        void chain(...typed).then(done => (done.action === 'continue' ? submit?.(text) : editor.addToHistory?.(text)))
      }
      return Object.defineProperty(editor, 'onSubmit', { get: () => offer, set: (to?: (text: string) => void) => (submit = to) })
    })
    // pi awaits this handler before it takes the first prompt (`pi -p`, RPC), and lists what it registered in the
    // TUI's menu (measured on 1.6.0). A continued session is told what its previous process left cut off before
    // the person's first line, which `input` holds until then.
    offered = offerSaved().then(() => (continued(c) ? ask(host, 'Continued', {}).then(() => undefined) : undefined))
    await offered
  })

  // The prompt a step hands the model, template expanded: the core may add its fail note (PromptHanded).
  pi.on('message_end', async (e, c) => {
    ctx = c
    const said = e.message as Said
    if (said.role !== 'user' || stepping === undefined) return undefined
    const text = textOf(said)
    const reply = wanted('PromptHanded', host.link) ? (await ask(host, 'PromptHanded', { text }))?.reply : undefined
    await handed()
    if (reply?.kind !== 'prompt') return undefined
    return { message: { ...e.message, content: [{ type: 'text' as const, text: reply.text }] } as typeof e.message }
  })

  pi.on('agent_end', (e, c) => {
    ctx = c
    const end = (e.messages as Said[]).filter(m => m.role === 'assistant').at(-1)
    // A failed turn (an HTTP error) sets no `aborted`: only its last message's stopReason tells (measured on 1.6.0).
    last = { reason: end?.stopReason === 'error' ? 'error' : 'answer', answer: end === undefined ? '' : textOf(end) }
  })

  pi.on('agent_settled', async (e, c) => {
    ctx = c
    for (const done of idle.splice(0)) done()
    const ended = { reason: e.aborted ? 'aborted' : last.reason, agent: null, answer: wanted(STEP_OUTPUT, host.link) ? bounded(last.answer) : '' }
    if (wanted('TurnEnded', host.link)) await ask(host, 'TurnEnded', ended)
    // pi runs what this handler sends once it returned, and `pi -p` exits when nothing was sent (measured on 1.6.0).
    await drain()
    // A helper gone mid-chain never says the chain ended: a program waiting for its end (`typedProgram`) stops.
    if (host.link?.helper === undefined) over()
  })

  // The helper's pipes would keep `pi -p` alive after its prompt: it is asked to leave with the session.
  pi.on('session_shutdown', () => close(host))

  pi.registerTool({
    name: facts.FAIL_TOOL,
    label: facts.FAIL_TOOL,
    description: facts.FAIL_DESCRIPTION,
    parameters: facts.FAIL_SCHEMA as never,
    execute: async (_id, params: { reason?: unknown }) => {
      // A session whose helper does not run has no chain to stop: answered here, starting none.
      if (host.link?.helper === undefined) throw new Error(facts.FAIL_NOTHING_WAITS)
      return toolAnswer(await ask(host, 'FailCalled', { reason: boundedInput(params.reason ?? null), agent: null }))
    },
  })

  pi.registerTool({
    name: facts.BUILTIN_TOOL,
    label: facts.BUILTIN_TOOL,
    description: facts.BUILTIN_DESCRIPTION,
    parameters: facts.BUILTIN_SCHEMA as never,
    execute: async (_id, params: { command?: unknown; args?: unknown }, _signal, _update, c) => {
      ctx = c
      const [command, args] = [boundedInput(params.command ?? null), boundedInput(params.args ?? null)]
      return toolAnswer(await ask(host, 'BuiltinAsked', { command, args, builtins: BUILTINS, switched_on: switchedOn() }))
    },
  })
}

/** A tool's result from the core's reply: `tool.answer` answers, `deny` (or no answer) is the tool's error. */
function toolAnswer(answer: Answer): { content: { type: 'text'; text: string }[]; details: undefined } {
  const reply = answer?.reply
  if (reply?.kind === 'tool.answer') return { content: [{ type: 'text', text: reply.text }], details: undefined }
  throw new Error(reply?.kind === 'deny' ? reply.text : facts.UNAVAILABLE.replace('{why}', 'no answer'))
}

/**
 * pi's input `source` as the core names origins: the person's keyboard or RPC client is the core's `composer`; any
 * other (an extension's `sendUserMessage`) keeps pi's name, which is no person's.
 */
function originOf(source: string): string {
  return source === 'interactive' || source === 'rpc' ? 'composer' : source
}

/**
 * Whether pi opened a session that already holds a message: one it continues (`--continue`, `--resume`, `--session`,
 * the TUI's `/resume`), which keeps its id. pi names no such start at startup (`reason` is `startup` for `--continue`
 * as for a new session, measured on 1.6.0), and a new session holds no message at its start, nor does its file
 * exist. A fork holds messages under a new id, whose journal holds nothing: asking costs one read.
 */
function continued(c: ExtensionContext): boolean {
  return c.sessionManager.getEntries().some(entry => entry.type === 'message')
}

/** The command and its args of a typed `/name args` whose args hold a chain (the core's separator), else undefined. */
function chained(text: string): [string, string] | undefined {
  const [, command, args] = /^\/(\S+)\s+([\s\S]*)$/.exec(text) ?? []
  return command !== undefined && args !== undefined && facts.SEPARATOR.test(args) ? [command, args] : undefined
}

/** The text parts of a message, joined. */
function textOf(message: Said): string {
  const content = message.content ?? ''
  return typeof content === 'string' ? content : content.map(p => (p.type === 'text' ? (p.text ?? '') : '')).join('')
}
