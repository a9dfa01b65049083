/**
 * Claude Code's side of the slashkit bridge: the `Host` the shared client (./client.ts, from
 * slashkit.adapters.bridge) reaches the outside world through, built from the hook's `$`. The engine's static
 * analysis lets `$` into a function declared at the top of a module file, and into closures there; every call
 * below is one literal `$.noun.event(...)`.
 */
import type { EngineInterface } from 'claude-code'
import type { Host } from './client.js'
import { ANSWER_TIMEOUT_MS, ENABLED_KEY, HELPER_ARGS, PYTHON, START_TIMEOUT_MS, UNAVAILABLE } from './host.js'

export type { Answer, Effect, Reply } from './client.js'
export { ask, bounded, messageOf, prepare, reportRun, wanted } from './client.js'

/** The bridge client's host, for this hook's `$`. */
export function host($: EngineInterface): Host {
  return {
    argv: [PYTHON, ...HELPER_ARGS],
    startTimeoutMs: START_TIMEOUT_MS,
    answerTimeoutMs: ANSWER_TIMEOUT_MS,
    unavailable: UNAVAILABLE,
    // No `stop`: a mod has no way to end what `$.process.spawn` started; the engine ends it with the session.
    async spawn(argv, stdout, stderr) {
      const child = $.process.spawn({ argv })
      for await (const { stream, text } of child) {
        if (stream === 'stderr') stderr(text)
        else stdout(text)
      }
      const end = await child.result
      return `the helper exited (${end.signal ?? `code ${String(end.code)}`})`
    },
    async post(socketPath, path, body) {
      const response = await $.http.fetch(`http://slashkit${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        socketPath,
      })
      return { status: response.status, text: response.text }
    },
    sleep: (ms, signal) => $.clock.sleep(ms, { signal }),
    log: text => $.ui.log(text),
    debug: text => $.ui.log(text, { to: 'debug' }),
    toast: text => $.ui.toast(text),
    after: (ms, fire) => $.clock.after(ms, fire),
    run: async (command, args) => (await $.command.run({ command, args })).text ?? '',
    saveEnabled: async enabled => {
      await $.store.set(ENABLED_KEY, enabled)
    },
    invalidate: () => $.ui.invalidate('tool.describe'),
    // The engine names the calling plugin in front of a `$` call's error, and again in front of the line.
    plain: why => why.replace(/(slash-chain|self-command): (?=\$\.)/g, ''),
  }
}

/** The on/off setting as stored: on unless it is `false` (slashkit.core.chain_session.enabled). */
export async function enabled($: EngineInterface): Promise<boolean> {
  return (await $.store.get(ENABLED_KEY)) !== false
}
