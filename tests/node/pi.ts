/**
 * A fake pi beneath slashkit's pi extension, for tests/node/pi.test.ts: the extension API the extension uses, and
 * what a person does driven through its handlers in the order pi 1.6.0 calls them (docs/pi.md): `input`, template
 * expansion, the user message's `message_end`, the model's answer, `agent_end`, then `agent_settled`, after whose
 * handlers the prompts they sent run. An extension's command runs before any event; a prompt it sends runs at once,
 * and its `waitForIdle` waits for that run and what it led to. The helper is tests/node/opencode.ts's fake, behind the real Node host.
 */
import slashkit from './pi/extensions/slashkit/index.js'
import type { CustomEditor } from './pi-editor.js'

type Handler = (e: any, ctx: unknown) => unknown
type Tool = { name: string; execute: (id: string, params: unknown, signal?: unknown, update?: unknown, ctx?: unknown) => Promise<{ content: { text: string }[] }> }

export class FakePi {
  /** What reached the model, prompt by prompt; the lines the person saw; the compactions. */
  readonly asked: string[] = []
  readonly lines: string[] = []
  compactions = 0
  templates: Record<string, string> = { greet: 'Say hello to $1', bye: 'Say bye to $1' }
  /** How the next turn ends (`stopReason`), and whether the person aborts it. */
  failNext = false
  abortNext = false
  readonly tools = new Map<string, Tool>()
  /** The TUI's editor, and the lines its submit handed pi's own handler (which runs a built-in itself). */
  editor: CustomEditor | undefined
  readonly submitted: string[] = []
  /** The commands extensions registered, with the description pi's menu shows; the status line's texts, in order. */
  readonly menu = new Map<string, string | undefined>()
  readonly statuses: (string | undefined)[] = []
  /** The session's entries: none in a new session; a continued one holds its earlier messages (docs/pi.md). */
  readonly entries: { type: string }[] = []
  /** Resolves once the `session_start` handlers returned (pi awaits them before the first prompt). */
  readonly started: Promise<void>
  private readonly handlers = new Map<string, Handler[]>()
  private readonly commands = new Map<string, (args: string, ctx: unknown) => Promise<void>>()
  private deferred: string[] = []
  private settling = false
  private idle = true
  /** The run a command's prompt started, which its `waitForIdle` waits for. */
  private running: Promise<void> = Promise.resolve()
  /** The context pi hands every handler and tool. */
  readonly context = {
    hasUI: true,
    ui: {
      notify: (text: string) => this.lines.push(text),
      setStatus: (key: string, text: string | undefined) => this.statuses.push(`${key}: ${String(text)}`),
      getEditorComponent: () => undefined,
      setEditorComponent: (make: (tui: unknown, theme: unknown, keys: unknown) => CustomEditor) => {
        this.editor = make({}, {}, {})
        this.editor.onSubmit = text => this.submitted.push(text)
      },
    },
    isIdle: () => this.idle,
    waitForIdle: () => this.running,
    sessionManager: { getSessionId: () => 'fake-pi-session', getEntries: () => this.entries },
    compact: (options: { onComplete?: () => void }) => {
      this.compactions += 1
      setTimeout(() => options.onComplete?.(), 1)
    },
  }

  constructor() {
    slashkit(this.api() as never)
    this.started = this.start()
  }

  /** A session starts (pi's start, or a new session): the `session_start` handlers, which pi awaits. */
  async start(): Promise<void> {
    for (const handle of this.handlers.get('session_start') ?? []) await handle({ type: 'session_start' }, this.context)
  }

  /** The person types a line into the TUI's editor and presses Enter. */
  enter(line: string): void {
    if (this.editor === undefined) throw new Error('the extension set no editor')
    this.editor.text = line
    this.editor.submit()
  }

  /** The person types a line and presses Enter: its whole run, and the prompts sent while it settled. */
  async type(line: string, source = 'interactive', expand = true): Promise<void> {
    const command = /^\/(\S+)(?: ([\s\S]*))?$/.exec(line)
    const own = command?.[1] === undefined || !expand ? undefined : this.commands.get(command[1])
    if (own !== undefined) return own(command?.[2] ?? '', this.context)
    let text = line
    for (const handle of this.handlers.get('input') ?? []) {
      const result = (await handle({ type: 'input', text, source }, this.context)) as { action: string; text?: string } | undefined
      if (result?.action === 'handled') return
      if (result?.action === 'transform') text = result.text ?? text
    }
    await this.turn(expand ? this.expand(text) : text)
  }

  private async turn(prompt: string): Promise<void> {
    this.idle = false
    let message = { role: 'user', content: [{ type: 'text', text: prompt }] }
    for (const handle of this.handlers.get('message_end') ?? []) {
      const result = (await handle({ type: 'message_end', message }, this.context)) as { message?: typeof message } | undefined
      if (result?.message !== undefined) message = result.message
    }
    const asked = message.content.map(p => p.text).join('')
    this.asked.push(asked)
    const stopReason = this.failNext ? 'error' : this.abortNext ? 'aborted' : 'stop'
    const aborted = this.abortNext
    this.failNext = false
    this.abortNext = false
    const answer = { role: 'assistant', content: [{ type: 'text', text: `answered: ${asked.split('\n')[0]}` }], stopReason }
    for (const handle of this.handlers.get('agent_end') ?? []) await handle({ type: 'agent_end', messages: [message, answer] }, this.context)
    this.idle = true
    this.settling = true
    for (const handle of this.handlers.get('agent_settled') ?? []) await handle({ type: 'agent_settled', aborted }, this.context)
    this.settling = false
    for (const text of this.deferred.splice(0)) await this.type(text, 'extension')
  }

  private expand(text: string): string {
    const called = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text)
    const template = called?.[1] === undefined ? undefined : this.templates[called[1]]
    if (template === undefined) return text
    const args = called?.[2] ?? ''
    return template.replaceAll('$1', args.split(' ')[0] ?? '').replaceAll('$ARGUMENTS', args)
  }

  private api(): Record<string, unknown> {
    return {
      on: (event: string, handle: Handler) => this.handlers.set(event, [...(this.handlers.get(event) ?? []), handle]),
      registerCommand: (name: string, options: { description?: string; handler: (args: string, ctx: unknown) => Promise<void> }) => {
        this.commands.set(name, options.handler)
        this.menu.set(name, options.description)
      },
      registerTool: (tool: Tool) => this.tools.set(tool.name, tool),
      getCommands: () => [
        ...Object.keys(this.templates).map(name => ({ name, source: 'prompt' })),
        ...[...this.commands.keys()].map(name => ({ name, source: 'extension' })),
      ],
      sendUserMessage: (text: string, options?: { expandPromptTemplates?: boolean }) => {
        if (!this.settling && !this.idle) throw new Error('the fake pi takes a prompt from an extension only while it settles or is idle')
        if (this.settling) this.deferred.push(text)
        else this.running = this.type(text, 'extension', options?.expandPromptTemplates === true)
      },
    }
  }
}
