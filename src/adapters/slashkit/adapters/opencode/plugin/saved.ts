/**
 * The saved chains the opencode plugin adds to opencode's commands (`.slashkit/chains/*.md`, which the helper reads:
 * the plugin never does). opencode takes a plugin's commands only from its `config` hook, once, before it lists
 * them (measured on 1.18.33, docs/opencode.md): so the plugin asks the core which saved chains there are at that
 * call, through a helper of its own that it ends once it answered, and each session's helper runs them later.
 */
import type { Config } from '@opencode-ai/plugin'
import { ask, close, link } from './client.js'
import * as facts from './host.js'
import { nodeHost } from './node-host.js'

/**
 * The names opencode has beside the `config` hook's `cfg.command` (its command files and `opencode.json`'s), read
 * in the 1.18.33 binary: the server's built-in commands, and the TUI's slash commands with their aliases. A command
 * a plugin adds under one of them replaces it (measured on 1.18.33: `review`, and `/timeline x` typed in the TUI),
 * so the core hears them as opencode's and leaves them shadowed.
 */
const OPENCODE_NAMES = [
  'init', 'review', 'customize-opencode',
  'agents', 'connect', 'debug', 'diff', 'editor', 'exit', 'quit', 'q', 'help', 'mcps', 'models', 'move', 'new',
  'clear', 'org', 'orgs', 'switch-org', 'sessions', 'resume', 'continue', 'skills', 'status', 'themes', 'variants',
  'workspaces', 'compact', 'summarize', 'copy', 'export', 'fork', 'redo', 'rename', 'share', 'thinking',
  'toggle-thinking', 'timeline', 'timestamps', 'toggle-timestamps', 'undo', 'unshare',
]

/** The saved chains the plugin registered, and the core's lines about the files it could not read as chains. */
export class Saved {
  private readonly names = new Set<string>()
  private notices: string[] = []

  /** Whether `name` is a saved chain the plugin registered: its runs are the core's, whatever its args hold. */
  has(name: string): boolean {
    return this.names.has(name)
  }

  /** The core's lines from reading the files, once: the first session the plugin writes to shows them. */
  takeNotices(): string[] {
    return this.notices.splice(0)
  }

  /**
   * Registers `/slash-chain` and each saved chain the core names in opencode's commands, leaving every name opencode
   * has to opencode. A chain's text reaches `command.execute.before` as its arguments, as `/slash-chain`'s does.
   */
  async register(cfg: Config): Promise<void> {
    const commands = (cfg.command = cfg.command ?? {})
    // The names opencode has; a copy of this plugin loaded before this one (a project's and the user's) counts too.
    const theirs = [...Object.keys(commands), facts.CHAIN_COMMAND, ...OPENCODE_NAMES]
    commands[facts.CHAIN_COMMAND] = { template: '$ARGUMENTS', description: facts.COMMAND_DESCRIPTION }
    // The lines the core writes about the files; a helper that cannot answer says so on the first chain instead.
    const said: string[] = []
    const host = nodeHost({
      link: link(),
      gone: () => false,
      log: text => said.push(text),
      toast: text => said.push(text),
      run: () => Promise.reject(new Error('no session')),
    })
    try {
      const answer = await ask(host, 'SavedAsked', { commands: theirs })
      if (answer === undefined) return
      this.notices = said
      const reply = answer.reply
      if (reply?.kind !== 'saved') return
      // The core offers no chain whose name opencode has (it lists those as `shadowed`).
      for (const chain of reply.chains) {
        const hint = chain.argument_hint === '' ? '' : ` (${chain.argument_hint})`
        commands[chain.name] = { template: '$ARGUMENTS', description: `${chain.description}${hint}` }
        this.names.add(chain.name)
      }
    } finally {
      close(host)
    }
  }
}
