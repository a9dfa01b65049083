/**
 * slashkit's opencode plugin: `/a x && /b y` runs `/b y` once `/a x` ended well, a saved chain runs by its name, and
 * the model may queue one of the session's built-ins (`slash-chain_builtin`) to run once its turn ended. A shim over
 * the bridge (docs/bridge.md): it translates opencode's hooks into the core's events and carries out what the core
 * answers with; every rule is in Python. Facts it relies on are in docs/opencode.md (measured on 1.18.33).
 *
 * opencode loads every `plugins/*.ts` as a plugin, so the parts live one folder down: the sessions the plugin knows
 * (./slashkit/sessions.ts), opencode's hooks (./slashkit/hooks.ts), what the plugin adds and runs itself
 * (./slashkit/builtins.ts), the saved chains it adds as commands (./slashkit/saved.ts), and the bridge's client
 * with the Node host every Node-based host shares (./slashkit/client.ts, ./slashkit/node-host.ts). Type-only
 * imports from npm: opencode installs nothing this plugin needs at run time.
 */
import type { Plugin } from '@opencode-ai/plugin'
import { NATIVE, builtinTool, failTool } from './slashkit/builtins.js'
import { hooks } from './slashkit/hooks.js'
import { BUILTIN_TOOL, FAIL_TOOL } from './slashkit/host.js'
import { Saved } from './slashkit/saved.js'
import { Sessions } from './slashkit/sessions.js'

export const SlashkitPlugin: Plugin = async ({ client }) => {
  // Inside lich (its variable inherited from opencode's environment) every session says so to the core; outside
  // lich no helper starts for it.
  const saved = new Saved()
  const sessions = new Sessions(client, (process.env.LICH_SESSION_ID ?? '') !== '', NATIVE, () => saved.takeNotices())
  return {
    config: cfg => saved.register(cfg),
    ...hooks(sessions, saved),
    tool: { [FAIL_TOOL]: failTool(sessions), [BUILTIN_TOOL]: builtinTool(sessions) },
  }
}
