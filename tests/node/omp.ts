/**
 * A fake omp (oh-my-pi) beneath slashkit's omp entry, for tests/node/omp.test.ts: what omp 18.2.3 does differently
 * from pi (docs/pi.md, "omp"), driven through the handlers in the order omp calls them: `input` with omp's results
 * (`handled` ends it, `text` replaces the line), template expansion, `context` (whose messages the request sends),
 * `message_end` (whose result omp ignores), the model's answer, then `agent_end` alone, after which the prompts sent from it run as typed (omp's
 * `sendUserMessage` expands nothing). Its UI has no `getEditorComponent`, and its `getCommands` no templates. Templates
 * are omp's stand-in package's.
 */
import omp from './omp/extensions/slashkit/omp.js'

type Handler = (e: any, ctx: unknown) => unknown
type Tool = { name: string; execute: (id: string, params: unknown, signal?: unknown, update?: unknown, ctx?: unknown) => Promise<unknown> }

export class FakeOmp {
  /** What reached the model, prompt by prompt; the lines the person saw; what each `input` handler returned. */
  readonly asked: string[] = []
  readonly lines: string[] = []
  readonly results: unknown[] = []
  /** How the next run ends: its last message's `stopReason`, and whether omp goes on with it itself. */
  stopNext = 'stop'
  continueNext = false
  /** The commands the entry registered, with their descriptions; the tools it offers the model. */
  readonly menu = new Map<string, string | undefined>()
  readonly tools = new Map<string, Tool>()
  /** What the model does in the next turn before it answers (calls a tool, say). */
  duringNext: (() => Promise<void>) | undefined
  private readonly handlers = new Map<string, Handler[]>()
  private readonly sent: string[] = []
  private clock = 0
  readonly context = {
    hasUI: true,
    ui: { notify: (text: string) => this.lines.push(text), setStatus: () => undefined },
    isIdle: () => true,
    // omp's context has pi's session manager (its extension types, 18.2.3): a new session, no message yet.
    sessionManager: { getSessionId: () => 'fake-omp-session', getEntries: () => [] },
  }

  constructor() {
    omp(this.api() as never)
  }

  /** A session starts: the `session_start` handlers, which omp awaits. */
  async start(): Promise<void> {
    for (const handle of this.handlers.get('session_start') ?? []) await handle({ type: 'session_start' }, this.context)
  }

  /** The events the entry listens to. */
  events(): string[] {
    return [...this.handlers.keys()]
  }

  /** The person types a line and presses Enter: its whole run, and the prompts sent once it ended. */
  async type(line: string): Promise<void> {
    let text = line
    for (const handle of this.handlers.get('input') ?? []) {
      const result = (await handle({ type: 'input', text, source: 'interactive' }, this.context)) as { handled?: boolean; text?: string } | undefined
      this.results.push(result)
      if (result?.handled === true) return
      if (result?.text !== undefined) text = result.text
    }
    await this.turn(expand(text))
  }

  private async turn(prompt: string): Promise<void> {
    this.clock += 1
    const message = { role: 'user', content: [{ type: 'text', text: prompt }], timestamp: this.clock }
    // omp sends the request once the `context` handlers ran (with a copy), before the `message_end` ones did.
    let messages: { content: { text: string }[] }[] = [message]
    for (const handle of this.handlers.get('context') ?? []) {
      const result = (await handle({ type: 'context', messages: structuredClone(messages) }, this.context)) as { messages?: typeof messages } | undefined
      messages = result?.messages ?? messages
    }
    this.asked.push(messages.at(-1)?.content.map(p => p.text).join('') ?? '')
    const during = this.duringNext
    this.duringNext = undefined
    await during?.()
    // omp keeps no result of a `message_end` handler.
    for (const handle of this.handlers.get('message_end') ?? []) await handle({ type: 'message_end', message: structuredClone(message) }, this.context)
    const answer = { role: 'assistant', content: [{ type: 'text', text: 'answered' }], stopReason: this.stopNext }
    const willContinue = this.continueNext
    this.stopNext = 'stop'
    this.continueNext = false
    for (const handle of this.handlers.get('agent_end') ?? []) await handle({ type: 'agent_end', messages: [message, answer], willContinue }, this.context)
    // The entry expands a step's template before it sends it, which takes a moment.
    await new Promise(done => setTimeout(done, 50))
    for (const text of this.sent.splice(0)) await this.turn(text)
  }

  private api(): Record<string, unknown> {
    return {
      on: (event: string, handle: Handler) => this.handlers.set(event, [...(this.handlers.get(event) ?? []), handle]),
      registerCommand: (name: string, options: { description?: string }) => this.menu.set(name, options.description),
      registerTool: (tool: Tool) => this.tools.set(tool.name, tool),
      getCommands: () => [{ name: 'review', source: 'extension' }],
      sendUserMessage: (text: string) => this.sent.push(text),
    }
  }
}

/** omp's template expansion, as its stand-in package does it. */
function expand(text: string): string {
  return text.replace(/^\/greet (\S+)$/, 'Say hello to $1').replace(/^\/bye (\S+)$/, 'Say bye to $1')
}
