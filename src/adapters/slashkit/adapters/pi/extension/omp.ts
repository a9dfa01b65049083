/**
 * slashkit's extension in omp (oh-my-pi): pi's extension (index.ts) over omp's API, which keeps pi's but for what
 * this entry bridges (docs/pi.md, "omp (oh-my-pi)"; measured on omp 18.2.3). omp loads it through the `omp` field of the
 * package.json beside it, so pi's `index.ts` is not loaded a second time.
 */
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'
import { expandPromptTemplate, loadPromptTemplates, type ExtensionAPI as OmpAPI } from '@oh-my-pi/pi-coding-agent'
import slashkit from './index.js'

type Handler = (event: never, ctx: never) => unknown
type Ended = { messages: { role?: string; stopReason?: string }[]; willContinue?: boolean }
type Input = { action?: string; text?: string } | undefined
type Said = { role?: string; timestamp?: unknown }

export default function omp(api: OmpAPI): void {
  const add = api.on.bind(api) as (event: string, handler: Handler) => void
  const on = (event: string, handler: Handler): void => {
    // omp's UI has no `getEditorComponent`, and its `input` sees a line led by a built-in: no editor to swap, so the
    // handler (which also registers the saved chains) gets a UI whose editor calls do nothing. It asks for omp's
    // commands once the templates are loaded. It is not awaited: omp's TUI drops the Enter typed while a
    // `session_start` handler runs (measured on 18.2.3), and its print and RPC modes run no chain anyway.
    if (event === 'session_start') {
      return add('session_start', (e: never, c: { ui: object }) => {
        const ui = new Proxy(c.ui, { get: (target, key) => (key in noEditor ? noEditor[key as keyof typeof noEditor] : bound(target, key)) })
        void templates.then(() => handler(e, new Proxy(c, { get: (target, key) => (key === 'ui' ? ui : bound(target, key)) }) as never))
      })
    }
    // omp ends a run with `agent_end` alone (no `agent_settled`); `willContinue` says it is not over yet. The
    // extension's own `agent_end` handler was added first, so it has read the run's last message by then.
    if (event === 'agent_settled') {
      return add('agent_end', (e: Ended, c: never) => {
        if (e.willContinue === true) return undefined
        const end = e.messages.filter(m => m.role === 'assistant').at(-1)
        return handler({ aborted: end?.stopReason === 'aborted' } as never, c)
      })
    }
    // pi's `{action, text}` result is omp's `{handled, text}`.
    if (event === 'input') {
      return add('input', async (e: never, c: never) => {
        const result = (await handler(e, c)) as Input
        if (result?.action === 'handled') return { handled: true }
        return result?.action === 'transform' ? { text: result.text } : undefined
      })
    }
    // omp keeps no `message_end` result, and may send the request before its handlers ran; it awaits `context`,
    // which gets a copy of what the request sends. So a user message is handed to the extension's handler once,
    // by whichever of the two comes first, and the prompt the core gave a step (its note added) replaces it there.
    if (event === 'message_end') {
      const hand = async (message: Said, c: never): Promise<Said | undefined> => {
        const given = handed.get(message.timestamp) ?? Promise.resolve(handler({ type: 'message_end', message } as never, c))
        handed.set(message.timestamp, given)
        return ((await given) as { message?: Said } | undefined)?.message
      }
      add('context', async (e: { messages: Said[] }, c: never) => {
        const last = e.messages.filter(m => m.role === 'user').at(-1)
        if (last !== undefined) void hand(last, c)
        const mine = async (m: Said): Promise<Said> => (m.role === 'user' && handed.has(m.timestamp) ? await hand(m, c) : undefined) ?? m
        return { messages: await Promise.all(e.messages.map(mine)) }
      })
      return add('message_end', (e: { message: Said }, c: never) => (e.message.role === 'user' ? hand(e.message, c).then(() => undefined) : handler(e as never, c)))
    }
    add(event, handler)
  }
  const handed = new Map<unknown, Promise<unknown>>()
  // omp's `getCommands` leaves out the prompt templates of `.omp/prompts/` (get-commands-handler.ts): their names are
  // added, so that a saved chain of a template's name is shadowed as in pi.
  let names: string[] = []
  const templates = loadPromptTemplates().then(
    loaded => void (names = loaded.map(t => t.name)),
    () => undefined,
  )
  const commands = (): { name: string; source: string }[] => [...api.getCommands(), ...names.map(name => ({ name, source: 'prompt' }))]
  // omp's `sendUserMessage` expands no prompt template (`AgentSession.sendUserMessage`): its own expansion is used.
  const send = (text: string): void => {
    void loadPromptTemplates().then(templates => api.sendUserMessage(expandPromptTemplate(text, templates)))
  }
  const wrapped = new Proxy(api, {
    get: (target, key) => {
      if (key === 'on') return on
      if (key === 'sendUserMessage') return send
      if (key === 'getCommands') return commands
      return bound(target, key)
    },
  })
  slashkit(wrapped as unknown as ExtensionAPI)
}

/** omp's UI lacks the editor calls pi's has. */
const noEditor = { getEditorComponent: () => undefined, setEditorComponent: () => undefined }

/** A property of `target`, a method bound to it. */
function bound(target: object, key: string | symbol): unknown {
  const value: unknown = Reflect.get(target, key)
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
}
