/**
 * slashkit's opencode plugin: `/a x && /b y` runs `/b y` once `/a x` ended well. A shim: it translates
 * opencode's hooks into slashkit bridge events (docs/bridge.md) and carries out the effects the Python core
 * answers with; every rule is in Python. Facts it relies on are in docs/opencode.md (measured on 1.18.33).
 * Type-only imports: opencode installs nothing this file needs at run time.
 */
import type { Plugin } from '@opencode-ai/plugin'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import * as host from './slashkit/host.js'
import { messageOf, RefusedEvent, transport, type Transport, type WireAnswer } from './slashkit/transport.js'

type Reply = Record<string, unknown> & { kind?: string }
type Effect = Record<string, unknown> & { kind?: string }
type Client = Parameters<Plugin>[0]['client']

/** One opencode session as the plugin sees it: its helper, and what it needs to tell its own calls apart. */
type Session = {
  id: string
  helper: Transport
  /** Message ids the plugin gave its own prompts and commands (measured on 1.18.33: a `messageID` in the
   * body becomes the user message's id, and `chat.message` carries it). */
  own: Set<string>
  /** The command the plugin runs right now (a step), so its `command.execute.before` is not taken as typed. */
  running: { command: string; args: string } | undefined
  /** The typed command whose `chat.message` comes next: the person's text is `/name args`. */
  typed: string | undefined
  /** The error the turn that runs ended with, from `session.error`, until its `session.idle`. */
  error: string | undefined
  /** Why the helper is unavailable, once that is logged; cleared by its next answer. */
  down: string | undefined
  /** Lines are written in order. */
  lines: Promise<unknown>
  /** Whether a turn runs (`session.status`), and the lines held until it ended: a user message stored while
   * a turn runs makes opencode run one more turn after it, even a `noReply` one (measured on 1.18.33). */
  busy: boolean
  held: string[]
  /** The model the session's last message went to: compaction needs it named. */
  model: { providerID: string; modelID: string } | undefined
}

export const SlashkitPlugin: Plugin = async ({ client }) => {
  const sessions = new Map<string, Session>()
  let templates: Map<string, string> | undefined
  let counter = 0

  const session = (id: string): Session => {
    let found = sessions.get(id)
    if (found === undefined) {
      const helper = transport(
        { python: host.PYTHON, args: host.HELPER_ARGS, startMs: host.START_TIMEOUT_MS, answerMs: host.ANSWER_TIMEOUT_MS },
        () => undefined,
      )
      found = {
        id,
        helper,
        own: new Set(),
        running: undefined,
        typed: undefined,
        error: undefined,
        down: undefined,
        lines: Promise.resolve(),
        busy: false,
        held: [],
        model: undefined,
      }
      sessions.set(id, found)
    }
    return found
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

  const unavailable = async (s: Session, why: string): Promise<void> => {
    if (s.down === undefined) await line(s, host.UNAVAILABLE.replace('{why}', why))
    s.down = why
  }

  /** Sends one event and carries out the effects of the answer; undefined when the helper could not answer. */
  const ask = async (s: Session, event: string, e: unknown): Promise<WireAnswer | undefined> => {
    let answer: WireAnswer
    try {
      answer = await s.helper.send(event, e)
    } catch (err) {
      if (!(err instanceof RefusedEvent)) await unavailable(s, messageOf(err))
      return undefined
    }
    s.down = undefined
    for (const fx of answer.effects) await act(s, fx)
    return answer
  }

  const act = async (s: Session, fx: Effect): Promise<void> => {
    switch (fx.kind) {
      case 'log':
        await line(s, String(fx.text))
        return
      case 'toast':
        void client.tui.showToast({ body: { message: String(fx.text), variant: 'info' } }).catch(() => undefined)
        return
      case 'store.set':
        store.set(String(fx.key), fx.value)
        return
      case 'after':
        // A step runs from a timer, never inside the hook of the event that asked for it.
        setTimeout(() => void ask(s, 'timer', { token: fx.token, applied: false }), Number(fx.ms))
        return
      case 'run':
        void run(s, String(fx.command), String(fx.args), Number(fx.token))
        return
    }
  }

  /** Runs a step as the person's typed command would run, and reports its end. */
  const run = async (s: Session, command: string, args: string, token: number): Promise<void> => {
    await s.lines
    s.running = { command, args }
    let error: string | null = null
    try {
      const result = NATIVE[command] !== undefined
        ? await NATIVE[command](client, s)
        : await client.session.command({ path: { id: s.id }, body: { command, arguments: args, messageID: ownId(s) } })
      if (result.error !== undefined) error = errorText(result.error)
    } catch (err) {
      error = messageOf(err)
    }
    if (s.running?.command === command) s.running = undefined
    await ask(s, 'run.done', { token, error, applied: false })
  }

  const template = async (name: string): Promise<string | undefined> => {
    if (templates === undefined) {
      const listed = await client.command.list()
      templates = new Map((listed.data ?? []).map(c => [c.name, String(c.template ?? '')]))
    }
    return templates.get(name)
  }

  /** Hands the model the prompt text the core asks for (the fail note), when it asks. */
  const handPrompt = async (s: Session, parts: { type: string; text?: string }[]): Promise<void> => {
    const part = parts.find(p => p.type === 'text')
    if (part === undefined || !s.helper.wants().has('skill.prompt')) return
    const reply = (await ask(s, 'skill.prompt', { text: part.text ?? '' }))?.reply as Reply | null | undefined
    if (reply?.kind === 'prompt') part.text = String(reply.text)
  }

  return {
    config: async cfg => {
      cfg.command = cfg.command ?? {}
      cfg.command[host.CHAIN_COMMAND] = { template: '$ARGUMENTS', description: host.COMMAND_DESCRIPTION }
    },

    'command.execute.before': async (input, output) => {
      const s = session(input.sessionID)
      const mine = s.running
      if (mine !== undefined && mine.command === input.command && mine.args === input.arguments) {
        await handPrompt(s, output.parts)
        return
      }
      s.typed = `/${input.command}${input.arguments === '' ? '' : ` ${input.arguments}`}`
      if (input.command === host.CHAIN_COMMAND) {
        const reply = (await ask(s, 'command.chain', { args: input.arguments, stored: store.get('enabled') }))?.reply as Reply | null
        // With no answer, `ask` already wrote the line that says why.
        if (reply?.kind === 'text') await line(s, String(reply.text))
        // The only way to answer a command without a model turn (measured on 1.18.33; the caller gets an
        // error: opencode issue #25916).
        throw new Error(reply?.kind === 'text' ? String(reply.text) : 'slash-chain: no answer')
      }
      if (!host.SEPARATOR.test(input.arguments)) return
      const origin = 'composer'
      const answer = await ask(s, 'command.typed', { command: input.command, args: input.arguments, origin, stored: store.get('enabled') })
      const reply = answer?.reply as Reply | null | undefined
      if (reply?.kind !== 'run') return
      let error: string | null = null
      try {
        const body = await template(input.command)
        const part = output.parts.find(p => p.type === 'text') as { text?: string } | undefined
        if (body !== undefined && part !== undefined) part.text = expand(body, String(reply.args))
        await handPrompt(s, output.parts as { type: string; text?: string }[])
      } catch (err) {
        error = messageOf(err)
      }
      await ask(s, 'run.done', { token: reply.token, error, applied: false })
    },

    'chat.message': async (input, output) => {
      const s = sessions.get(input.sessionID)
      if (s === undefined) return
      if (input.model !== undefined) s.model = input.model
      // The plugin's own lines and steps come here too (measured on 1.18.33), also inside its own hooks.
      if (s.own.delete(output.message.id)) return
      const typed = s.typed
      s.typed = undefined
      if (!s.helper.wants().has('prompt.submit')) return
      const text = typed ?? output.parts.map(p => (p.type === 'text' && p.ignored !== true ? p.text : '')).join('')
      await ask(s, 'prompt.submit', { text, origin: 'composer' })
    },

    event: async ({ event }) => {
      if (event.type === 'session.status') {
        const s = sessions.get(event.properties.sessionID)
        if (s === undefined) return
        s.busy = event.properties.status.type !== 'idle'
        if (!s.busy) for (const text of s.held.splice(0)) void line(s, text)
        return
      }
      if (event.type === 'session.error') {
        const s = event.properties.sessionID === undefined ? undefined : sessions.get(event.properties.sessionID)
        if (s !== undefined) s.error = event.properties.error?.name ?? 'UnknownError'
        return
      }
      if (event.type !== 'session.idle') return
      const s = sessions.get(event.properties.sessionID)
      if (s === undefined) return
      // Measured on 1.18.33: session.error comes before the idle that ends the failed turn.
      const reason = s.error ?? 'answer'
      s.error = undefined
      if (s.helper.wants().has('turn.complete')) await ask(s, 'turn.complete', { reason, agentId: null })
    },

    tool: {
      [host.FAIL_TOOL]: {
        description: host.FAIL_DESCRIPTION,
        // Plain JSON Schema properties: opencode 1.18.33 takes them as they are when they are not zod schemas.
        args: host.FAIL_ARGS,
        async execute(args: { reason?: unknown }, ctx: { sessionID: string }) {
          const reply = (await ask(session(ctx.sessionID), 'tool.fail', { reason: args.reason ?? null, agentId: null }))?.reply as Reply | null
          if (reply?.kind === 'text') return String(reply.text)
          throw new Error(reply?.kind === 'deny' ? String(reply.text) : host.UNAVAILABLE.replace('{why}', 'no answer'))
        },
      },
    } as never,
  }
}

/**
 * The TUI's built-ins a step may name, run the way the server runs them: they are not server commands
 * (measured on 1.18.33: `client.session.command` answers 500 for `compact`, and the command list holds none).
 */
const NATIVE: Record<string, (client: Client, s: Session) => Promise<{ error?: unknown }>> = {
  compact: async (client, s) => {
    if (s.model === undefined) return { error: { name: 'compact needs a model: the session has sent no message yet' } }
    return client.session.summarize({ path: { id: s.id }, body: s.model })
  },
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
