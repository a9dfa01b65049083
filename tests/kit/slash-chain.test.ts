/**
 * The slash-chain plugin under the kit: what it sends the helper, what it does with the answers, and how it
 * behaves when the helper is unavailable. Each test gets a fresh copy of the plugin (module state included).
 */
import type { Register, ToolInfo } from 'claude-code'
import { describe, type Engine, expect, test } from 'claude-code/testing'
import {
  ANSWER_TIMEOUT_MS,
  deferred,
  type Effect,
  fakeHelper,
  HELPER_ARGS,
  never,
  type Response,
  type Sent,
  savedReply,
  type SpawnMode,
  socket,
  START,
  START_TIMEOUT_MS,
  commandAnswer,
  toolAnswer,
  typed,
  MAX_FORECAST_DEPTH,
  VERSION,
} from './fake-helper.js'

const FAIL_TOOL = 'mcp__slash-chain__fail'
/** The self-command tool the plugin registers before the first prompt the model answers, and the Agent SDK host's own. */
const BUILTIN_TOOL = 'mcp__slash-chain__builtin'
/** The built-ins of the fake engine's command list (tests/kit/fake-helper.ts). */
const BUILTINS = ['compact', 'model']
const ENGINE = { plugin: 'engine', tier: 'core' } as const
/** The Skill tool's own refusal of a built-in (2.1.328). */
const SKILL_REFUSAL = {
  isError: true,
  result: 'compact is a built-in CLI command, not a skill.',
  text: 'compact is a built-in CLI command, not a skill. Ask the user to run /compact themselves — it cannot be invoked via the Skill tool.',
} as const
const OPTIONAL = ['PromptHanded', 'PaneOpened', 'PaneClosed', 'TurnEnded', 'PromptSubmitted']
const UNAVAILABLE = /^unavailable: (.+); commands run as typed until it is back$/

/** Another plugin that opens and closes a pane, so the plugin under test hears `ui.open` and `ui.close`. */
const PANES: { name: string; register: Register } = {
  name: 'panes',
  register(on) {
    on('command.run', { command: 'open-board' }, async $ => {
      const placed = await $.ui.open({ id: 'board', focus: true })
      return { text: JSON.stringify(placed) }
    })
    on('command.run', { command: 'close-board' }, async $ => {
      await $.ui.close({ id: 'board' })
      return { text: 'closed' }
    })
  },
}

/** Another plugin whose `/tools` lists the session's tools as a mod's `$.tool.list()` reads them. */
const TOOLS: { name: string; register: Register } = {
  name: 'tools',
  register(on) {
    on('command.run', { command: 'tools' }, async $ => ({ text: JSON.stringify(await $.tool.list()) }))
  },
}

/** The session's tools, as another plugin's `$.tool.list()` reads them. */
async function tools($: Engine): Promise<ToolInfo[]> {
  const listed = await $.command.run({ command: 'tools', args: '', origin: { kind: 'composer' }, presentation: { isFullscreen: false, columns: 80 } })
  return JSON.parse(listed.text ?? '[]') as ToolInfo[]
}

/** The model's call of the plugin's builtin tool. */
function callBuiltin($: Engine, input: { command?: unknown; args?: unknown }) {
  return $.tool.call({ tool: BUILTIN_TOOL, ...input })
}

/** Requests in the order the plugin numbered them (each report carries its step's token), not the order they arrived. */
function byToken(sent: Sent[]): Sent[] {
  return [...sent].sort((a, b) => Number(a.e['token']) - Number(b.e['token']))
}

const TURN = { answer: 'done', durationMs: 12, isAborted: false, turnId: 'turn-1', reason: 'answer' } as const

describe('session start', () => {
  test('registers /slash-chain and the fail tool, then asks the helper for the saved chains', { plugins: [TOOLS] }, async ($, on) => {
    const fake = fakeHelper(on)
    expect(await $.session.start(START)).toEqual({ cwd: START.cwd })
    expect(fake.registered.map(r => r.name)).toEqual(['/slash-chain', 'fail'])
    expect(fake.registered[0]?.spec).toMatchObject({ name: 'slash-chain', immediate: true, description: expect.any(String), argumentHint: expect.any(String) })
    expect(fake.registered[1]?.spec).toMatchObject({ name: 'fail', inputSchema: { type: 'object', required: ['reason'] } })
    // The plugin changes no tool of the session's, and adds none but through its MCP server.
    expect((await tools($)).map(t => t.name)).toEqual(['Bash'])
    expect(fake.spawned).toHaveLength(1)
    expect(fake.offered.map(s => s.event)).toEqual(['SavedAsked'])
    expect(fake.sent).toEqual([])
  })

  test("in a session slashkit's SDK host drives, its tools are the host's: none registered, each call handed on", { plugins: [TOOLS] }, async ($, on) => {
    const fake = fakeHelper(on, { env: { SLASHKIT_HARNESS: 'sdk' } })
    on('tool.call', { tool: FAIL_TOOL }, () => ({ result: "the host's fail" }))
    on('tool.call', { tool: BUILTIN_TOOL }, () => ({ result: "the host's builtin" }))
    await $.session.start(START)
    await $.prompt.submit({ text: 'compact it', wait: false, origin: { kind: 'sdk' } })
    expect(fake.registered.map(r => r.name)).toEqual(['/slash-chain'])
    // The host runs saved chains itself: the session asks for none.
    expect(fake.offered).toEqual([])
    expect(await $.tool.call({ tool: FAIL_TOOL, reason: 'no Bob' })).toEqual({ result: "the host's fail" })
    expect(await $.tool.call({ tool: BUILTIN_TOOL, command: 'compact' })).toEqual({ result: "the host's builtin" })
    expect(fake.sent).toEqual([])
  })

  test('a continued session asks the helper, once it started, for the run its previous process left cut off', async ($, on) => {
    const fake = fakeHelper(on)
    on('classic.SessionStart', () => ({}))
    await $.classic.SessionStart({ source: 'resume' })
    await $.session.start(START)
    expect([...fake.offered, ...fake.sent].map(s => s.event)).toEqual(['SavedAsked', 'Continued'])
  })

  test("with neither folder of saved chains, the start asks the helper nothing and starts none; a chain opens it", async ($, on) => {
    const env = { HOME: '/home/ada', PWD: '/work/app' }
    const fake = fakeHelper(on, { env, paths: [] })
    await $.session.start(START)
    expect(fake.looked.sort()).toEqual(['/home/ada/.config/slashkit/chains', '/work/app/.slashkit/chains'])
    expect(fake.spawned).toEqual([])
    expect([...fake.offered, ...fake.sent]).toEqual([])
    await $.command.run(typed('review', 'a && /review b'))
    expect(fake.spawned).toHaveLength(1)
    expect(fake.sent.map(s => s.event)).toEqual(['ChainTyped'])
  })

  for (const [where, env, found] of [
    ["the person's", { XDG_CONFIG_HOME: '/cfg', HOME: '/home/ada', PWD: '/work/app' }, '/cfg/slashkit/chains'],
    ["the project's", { HOME: '/home/ada', PWD: '/work/app', SLASHKIT_PROJECT: '/repo' }, '/repo/.slashkit/chains'],
  ] as const) {
    test(`with ${where} folder of saved chains there, the start asks for them`, async ($, on) => {
      const fake = fakeHelper(on, { env, paths: [found] })
      await $.session.start(START)
      expect(fake.looked).toContain(found)
      expect(fake.offered.map(s => s.event)).toEqual(['SavedAsked'])
    })
  }

  test('a continued session with no folder of saved chains still asks for the run it left cut off', async ($, on) => {
    const fake = fakeHelper(on, { env: { HOME: '/home/ada', PWD: '/work/app' }, paths: [] })
    on('classic.SessionStart', () => ({}))
    await $.classic.SessionStart({ source: 'resume' })
    await $.session.start(START)
    expect([...fake.offered, ...fake.sent].map(s => s.event)).toEqual(['Continued'])
  })

  test('a session started afresh asks for no cut-off run', async ($, on) => {
    const fake = fakeHelper(on)
    on('classic.SessionStart', () => ({}))
    await $.classic.SessionStart({ source: 'startup' })
    await $.session.start(START)
    expect([...fake.offered, ...fake.sent].map(s => s.event)).toEqual(['SavedAsked'])
  })

  test('the fail tool is described as not deferred, its description kept', async ($, on) => {
    fakeHelper(on)
    await $.session.start(START)
    const provider = { plugin: 'slash-chain', tier: 'user' } as const
    const described = await $.tool.describe({ tool: FAIL_TOOL, description: 'What it does', isDeferred: true, provider })
    expect(described).toMatchObject({ description: 'What it does', isDeferred: false })
  })
})

/** The fake engine's command list as ChainTyped carries it (tests/kit/fake-helper.ts). */
const LISTED = { commands: ['compact', 'model', 'slash-chain'], builtins: ['compact', 'model'] }

describe('event forwarding', () => {
  test('a chain sends ChainTyped with the command, args, origin kind, stored setting and command list', async ($, on) => {
    const fake = fakeHelper(on, { store: { enabled: false } })
    await $.session.start(START)

    const first = await $.command.run(typed('context', 'all && /cost'))
    const second = await $.command.run(typed('cost', '&& /usage now', { kind: 'plugin', name: 'other' }))

    expect(fake.spawned).toEqual([[expect.stringMatching(/^\//), ...HELPER_ARGS]])
    expect(fake.sent).toEqual([
      { event: 'ChainTyped', e: { command: 'context', args: 'all && /cost', origin: 'composer', enabled: false, ...LISTED } },
      { event: 'ChainTyped', e: { command: 'cost', args: '&& /usage now', origin: 'plugin', enabled: false, ...LISTED } },
    ])
    expect(fake.sockets).toEqual([socket(1), socket(1)])
    // A null reply: the command runs exactly as typed.
    expect(fake.ran.map(r => r.args)).toEqual(['all && /cost', '&& /usage now'])
    expect(first).toEqual({ text: 'ran /context all && /cost' })
    expect(second).toEqual({ text: 'ran /cost && /usage now' })
    expect(fake.logs).toEqual([])
  })

  test('a store that holds no setting, or one that is not false, reads as on', async ($, on) => {
    const fake = fakeHelper(on, { store: { enabled: 'no' } })
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    expect(fake.sent).toHaveLength(1)
    expect(fake.sent[0]?.e).toMatchObject({ enabled: true })
  })

  test('a single command sends nothing and runs as typed', async ($, on) => {
    const fake = fakeHelper(on, { store: { enabled: true } })
    await $.session.start(START)
    const single = ['', 'x', 'a && b', 'x&& /b', 'x &&', 'x && /', 'x && /b/c', 'x &&& /b', 'x && ./b']
    for (const args of single) {
      expect(await $.command.run(typed('cost', args))).toEqual({ text: `ran /cost ${args}` })
    }
    expect(fake.spawned).toHaveLength(1)
    expect(fake.sent).toEqual([])
    expect(fake.ran.map(r => r.args)).toEqual(single)
  })

  test('/slash-chain sends command.chain and answers with the reply text', async ($, on) => {
    const fake = fakeHelper(on, { store: { enabled: true } })
    fake.answer = () => ({ reply: commandAnswer('slash-chain: on, no chain running') })
    await $.session.start(START)
    const answer = await $.command.run(typed('slash-chain', 'off'))
    expect(answer).toEqual({ text: 'slash-chain: on, no chain running' })
    expect(fake.sent).toEqual([{ event: 'ChainCommandTyped', e: { args: 'off', enabled: true, commands: LISTED.commands } }])
    expect(fake.ran).toEqual([])
  })

  test('optional events are not sent until an answer wants them', { plugins: [PANES] }, async ($, on) => {
    const fake = fakeHelper(on)
    await $.session.start(START)
    expect(await $.skill.prompt({ skill: 'review', text: 'Review the diff' })).toEqual({ text: 'Review the diff' })
    await $.command.run(typed('open-board', ''))
    await $.command.run(typed('close-board', ''))
    await $.turn.complete(TURN)
    await $.prompt.submit({ text: 'hello', wait: false, origin: { kind: 'composer' } })
    expect(fake.sent).toEqual([])
    expect(fake.panes).toEqual(['open board', 'close board'])
  })

  test('optional events are sent while the last answer wants them', { plugins: [PANES] }, async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'PromptHanded' ? { wants: OPTIONAL, reply: { kind: 'prompt', text: 'Review the diff, then stop' } } : { wants: OPTIONAL })
    await $.session.start(START)
    await $.command.run(typed('review', 'x && /cost'))

    expect(await $.skill.prompt({ skill: 'review', text: 'Review the diff' })).toEqual({ text: 'Review the diff, then stop' })
    expect(await $.command.run(typed('open-board', ''))).toEqual({ text: '{"isPlaced":true}' })
    fake.placed = false
    await $.command.run(typed('open-board', ''))
    await $.command.run(typed('close-board', ''))
    await $.turn.complete(TURN)
    await $.turn.complete({ ...TURN, reason: 'error', agentId: 'agent-7' })
    await $.prompt.submit({ text: 'next', wait: false, origin: { kind: 'sdk' } })

    expect(fake.sent.slice(1)).toEqual([
      { event: 'PromptHanded', e: { text: 'Review the diff' } },
      { event: 'PaneOpened', e: { pane: 'board', focus: true, placed: true } },
      { event: 'PaneOpened', e: { pane: 'board', focus: true, placed: false } },
      { event: 'PaneClosed', e: { pane: 'board' } },
      { event: 'TurnEnded', e: { reason: 'answer', agent: null, answer: 'done' } },
      { event: 'TurnEnded', e: { reason: 'error', agent: 'agent-7', answer: 'done' } },
      { event: 'PromptSubmitted', e: { text: 'next', origin: 'sdk' } },
    ])
    expect(fake.spawned).toHaveLength(1)
  })

  test('a prompt that opens a loop goes to the helper, and is dropped with its line when it is a program', async ($, on) => {
    const fake = fakeHelper(on)
    const started = 'a program of 2 command(s) runs'
    fake.answer = sent => (sent.event === 'LineTyped' && String((sent.e as { text: unknown }).text).startsWith('until') ? { reply: commandAnswer(started) } : {})
    await $.session.start(START)

    const program = await $.prompt.submit({ text: 'until /check; do /fix; done', wait: false, origin: { kind: 'composer' } })
    const prose = await $.prompt.submit({ text: 'while you are at it, fix the typo', wait: false, origin: { kind: 'composer' } })
    await $.prompt.submit({ text: 'hello', wait: false, origin: { kind: 'composer' } })

    expect(program).toEqual({ drop: started })
    expect('drop' in prose).toBe(false)
    expect(fake.sent.map(sent => [sent.event, (sent.e as { text?: unknown }).text])).toEqual([
      ['LineTyped', 'until /check; do /fix; done'],
      ['LineTyped', 'while you are at it, fix the typo'],
    ])
  })

  test('a prompt or an answer of megabytes goes to the helper cut to its first 64 Ki characters', async ($, on) => {
    // Whole, the event would pass the helper's 1 MiB and be refused: the person's prompt would not cancel.
    const fake = fakeHelper(on)
    fake.answer = () => ({ wants: OPTIONAL })
    await $.session.start(START)
    await $.command.run(typed('review', 'x && /cost'))
    const huge = 'p'.repeat(2_000_000)
    await $.turn.complete({ ...TURN, answer: huge })
    await $.prompt.submit({ text: huge, wait: false, origin: { kind: 'composer' } })
    const [ended, prompted] = fake.sent.slice(1)
    expect([ended?.event, String(ended?.e.answer).length]).toEqual(['TurnEnded', 65536])
    expect([prompted?.event, String(prompted?.e.text).length]).toEqual(['PromptSubmitted', 65536])
  })

  test('each answer replaces the wants: an event no longer wanted is not sent', async ($, on) => {
    const fake = fakeHelper(on)
    const wants: Record<string, string[]> = { 'ChainTyped': ['TurnEnded', 'PromptSubmitted'], 'TurnEnded': ['PromptSubmitted'], 'PromptSubmitted': [] }
    fake.answer = sent => ({ wants: wants[sent.event] ?? [] })
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    await $.skill.prompt({ skill: 's', text: 'not wanted' })
    await $.turn.complete(TURN)
    await $.turn.complete(TURN)
    await $.prompt.submit({ text: 'one', wait: false, origin: { kind: 'composer' } })
    await $.prompt.submit({ text: 'two', wait: false, origin: { kind: 'composer' } })
    await $.turn.complete(TURN)
    expect(fake.events()).toEqual(['ChainTyped', 'TurnEnded', 'PromptSubmitted'])
  })

  test('the fail tool sends tool.fail and maps a text reply to its result, a deny to a deny', async ($, on) => {
    const fake = fakeHelper(on)
    const replies: Response[] = [
      { reply: toolAnswer('Stopped the chain: /b did not run.') },
      { reply: { kind: 'deny', text: 'No slash-chain step is waiting on you.' } },
      { reply: null },
    ]
    fake.answer = () => replies.shift() ?? {}
    await $.session.start(START)

    const stopped = await $.tool.call({ tool: FAIL_TOOL, reason: 'the tests failed' })
    const denied = await $.tool.call({ tool: FAIL_TOOL, reason: 'no reason', agentId: 'agent-2' })
    const unanswered = await $.tool.call({ tool: FAIL_TOOL, reason: 'x' })

    expect(fake.sent).toEqual([
      { event: 'FailCalled', e: { reason: 'the tests failed', agent: null } },
      { event: 'FailCalled', e: { reason: 'no reason', agent: 'agent-2' } },
      { event: 'FailCalled', e: { reason: 'x', agent: null } },
    ])
    expect(stopped).toEqual({ result: 'Stopped the chain: /b did not run.' })
    expect(denied).toEqual({ deny: 'No slash-chain step is waiting on you.' })
    expect(unanswered).toEqual({ deny: 'unavailable: no answer; commands run as typed until it is back' })
  })
})

describe('self-commands', () => {
  test('the builtin tool is registered once, before the first prompt the model answers; a command registers none', async ($, on) => {
    const fake = fakeHelper(on)
    await $.session.start(START)
    await $.command.run(typed('review', 'a && /review b'))
    await $.prompt.submit({ text: '/review the diff', command: { name: 'review', args: 'the diff' }, wait: false, origin: { kind: 'composer' } })
    expect(fake.registered.map(r => r.name)).toEqual(['/slash-chain', 'fail'])
    await $.prompt.submit({ text: 'compact the session, please', wait: false, origin: { kind: 'composer' } })
    await $.prompt.submit({ text: 'and again', wait: false, origin: { kind: 'composer' } })
    expect(fake.registered.map(r => r.name)).toEqual(['/slash-chain', 'fail', 'builtin'])
    expect(fake.registered[2]?.spec).toEqual({
      name: 'builtin',
      description: expect.stringContaining('/compact'),
      inputSchema: { type: 'object', properties: expect.any(Object), required: ['command'] },
    })
  })

  test('a prompt goes on when the engine refuses the builtin tool; no later prompt asks again', async ($, on) => {
    let asked = 0
    // Registered before the fake engine's, so it answers first.
    on('tool.register', { name: 'builtin' }, () => {
      asked++
      return { deny: 'no room for it' }
    })
    const fake = fakeHelper(on)
    await $.session.start(START)
    expect('drop' in (await $.prompt.submit({ text: 'hello', wait: false, origin: { kind: 'composer' } }))).toBe(false)
    expect('drop' in (await $.prompt.submit({ text: 'again', wait: false, origin: { kind: 'composer' } }))).toBe(false)
    expect(asked).toBe(1)
    expect(fake.registered.map(r => r.name)).toEqual(['/slash-chain', 'fail'])
  })

  test('the builtin tool sends BuiltinAsked with the built-ins listed; a text reply is its result, a deny a deny', async ($, on) => {
    const fake = fakeHelper(on)
    const replies: Response[] = [
      { reply: toolAnswer('/compact is queued and runs once this turn ends. End the turn now.') },
      { reply: { kind: 'deny', text: '/config was not run: only the user may run it.' } },
      { reply: null },
    ]
    fake.answer = () => replies.shift() ?? {}
    await $.session.start(START)

    const queued = await callBuiltin($, { command: 'compact', args: 'keep the plan' })
    const denied = await callBuiltin($, { command: 'config' })
    const unanswered = await callBuiltin($, { command: 42 })

    expect(fake.sent).toEqual([
      { event: 'BuiltinAsked', e: { command: 'compact', args: 'keep the plan', builtins: BUILTINS, switched_on: true } },
      { event: 'BuiltinAsked', e: { command: 'config', args: null, builtins: BUILTINS, switched_on: true } },
      { event: 'BuiltinAsked', e: { command: 42, args: null, builtins: BUILTINS, switched_on: true } },
    ])
    expect(queued).toEqual({ result: '/compact is queued and runs once this turn ends. End the turn now.' })
    expect(denied).toEqual({ deny: '/config was not run: only the user may run it.' })
    expect(unanswered).toEqual({ deny: 'unavailable: no answer; commands run as typed until it is back' })
  })

  test("the person's stored switch of self-commands goes with the tool's call and the Skill refusal", async ($, on) => {
    const fake = fakeHelper(on, { store: { builtin: false } })
    on('tool.call', { tool: 'Skill' }, () => SKILL_REFUSAL)
    fake.answer = () => ({ reply: { kind: 'deny', text: 'switched off' } })
    await $.session.start(START)
    await callBuiltin($, { command: 'compact' })
    await $.tool.call({ tool: 'Skill', skill: 'compact' })
    expect(fake.sent.map(s => [s.event, s.e['switched_on']])).toEqual([
      ['BuiltinAsked', false],
      ['SkillAnswered', false],
    ])
  })

  test('a Skill call the tool refused goes to the helper; a skill reply loads it', async ($, on) => {
    const fake = fakeHelper(on)
    on('tool.call', { tool: 'Skill' }, () => SKILL_REFUSAL)
    fake.answer = sent =>
      sent.event === 'SkillAnswered' ? { reply: { kind: 'skill', command: 'compact', note: '/compact is queued.' } } : {}
    await $.session.start(START)
    await $.tool.describe({ tool: 'Skill', description: 'Execute a skill', provider: ENGINE })
    expect(fake.sent).toEqual([])

    const answer = await $.tool.call({ tool: 'Skill', skill: 'compact', args: 'keep the plan' })

    expect(fake.sent).toEqual([{ event: 'SkillAnswered', e: { skill: 'compact', args: 'keep the plan', is_error: true, builtins: BUILTINS, switched_on: true } }])
    expect(answer).toMatchObject({ result: { success: true, commandName: 'compact' }, context: ['/compact is queued.'] })
    expect('isError' in answer).toBe(false)
  })

  test('a Skill call the helper leaves alone keeps the refusal; one the tool served sends nothing', async ($, on) => {
    const fake = fakeHelper(on)
    let served = false
    on('tool.call', { tool: 'Skill' }, () => (served ? { result: { success: true, commandName: 'review' } } : SKILL_REFUSAL))
    fake.answer = () => ({ reply: null })
    await $.session.start(START)

    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(SKILL_REFUSAL)
    served = true
    expect(await $.tool.call({ tool: 'Skill', skill: 'review' })).toMatchObject({ result: { success: true, commandName: 'review' } })
    expect(fake.events()).toEqual(['SkillAnswered'])
  })
})

describe('effects', () => {
  test('log, toast, save.enabled and invalidate are carried out in order', async ($, on) => {
    const fake = fakeHelper(on, { store: { enabled: true } })
    const effects: Effect[] = [
      { kind: 'log', text: 'slash-chain: off for every window' },
      { kind: 'toast', text: 'slash-chain off' },
      { kind: 'save.enabled', enabled: false },
      { kind: 'invalidate' },
      { kind: 'log', text: 'second line' },
    ]
    fake.answer = sent => (sent.event === 'ChainCommandTyped' ? { reply: commandAnswer('off'), effects } : {})
    await $.session.start(START)
    expect(await $.command.run(typed('slash-chain', 'off'))).toEqual({ text: 'off' })
    expect(fake.logs).toEqual(['slash-chain: off for every window', 'second line'])
    expect(fake.toasts).toEqual(['slash-chain off'])
    expect(fake.invalidated).toEqual(['tool.describe'])
    // The store now holds what the effect set: the next event reads it back.
    await $.command.run(typed('a', 'x && /b'))
    expect(fake.sent[1]).toEqual({ event: 'ChainTyped', e: { command: 'a', args: 'x && /b', origin: 'composer', enabled: false, ...LISTED } })
  })

  test('save.enabled stores the setting, which the next event reads back', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'ChainCommandTyped' ? { effects: [{ kind: 'save.enabled', enabled: false }] } : {})
    await $.session.start(START)
    await $.command.run(typed('slash-chain', 'off'))
    await $.command.run(typed('slash-chain', ''))
    expect(fake.sent.map(s => s.e)).toEqual([
      { args: 'off', enabled: true, commands: LISTED.commands },
      { args: '', enabled: false, commands: LISTED.commands },
    ])
  })

  test('after sends timer with its token once the clock reaches it', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'ChainTyped' ? { effects: [{ kind: 'after', ms: 1500, token: 41 }] } : {})
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    await fake.clock.advance(1499)
    expect(fake.events()).toEqual(['ChainTyped'])
    await fake.clock.advance(1)
    expect(await fake.received('TimerFired')).toEqual({ event: 'TimerFired', e: { token: 41, applied: false } })
    expect(fake.events()).toEqual(['ChainTyped', 'TimerFired'])
  })

  test('a timer carries out what it was foreseen to do at once, then sends timer applied', async ($, on) => {
    const fake = fakeHelper(on)
    const run: Effect = { kind: 'run', command: 'b', args: 'y', token: 6, then: [{ kind: 'log', text: 'all 2 command(s) ran' }] }
    fake.answer = sent => (sent.event === 'ChainTyped' ? { effects: [{ kind: 'after', ms: 0, token: 5, fires: [run] }] } : {})
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b y'))
    await fake.clock.settle()
    await fake.until(() => fake.logs.length > 0)
    // A timer of no delay fires at once: the step is handed to the engine while the typed command runs (the fake runs
    // it then; the engine queues it until the typed command ended), so `claude -p` finds it queued (bridge.ts).
    expect(fake.ran.map(r => `${r.command} ${r.args}`)).toEqual(['b y', 'a x && /b y'])
    // The helper has been sent nothing but the timer since: the run's good end is foreseen too.
    expect(fake.logs).toEqual(['all 2 command(s) ran'])
    // The reports go out at once, so the helper (and its journal) knows the chain ended. They may arrive in either
    // order (the helper takes them by their numbers).
    await fake.until(() => fake.sent.length === 3)
    expect(byToken(fake.sent.slice(1))).toEqual([
      { event: 'TimerFired', e: { token: 5, applied: true } },
      { event: 'RunEnded', e: { token: 6, error: null, output: '', applied: true } },
    ])
  })

  test('a run reply carries what the typed command does when it ends well, done at once', async ($, on) => {
    const fake = fakeHelper(on)
    const after: Effect = { kind: 'after', ms: 0, token: 21, fires: [{ kind: 'run', command: 'b', args: '', token: 22, then: [{ kind: 'log', text: 'all 2 command(s) ran' }] }] }
    const then: Effect[] = [{ kind: 'log', text: '2/2: /b' }, after]
    fake.answer = sent => (sent.event === 'ChainTyped' ? { reply: { kind: 'run.typed', args: 'x', token: 20, then } } : {})
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    expect(fake.logs).toEqual(['2/2: /b'])
    await fake.clock.settle()
    await fake.until(() => fake.logs.length > 1)
    expect(fake.ran.map(r => `${r.command}|${r.args}`)).toEqual(['a|x', 'b|'])
    expect(fake.logs).toEqual(['2/2: /b', 'all 2 command(s) ran'])
    await fake.until(() => fake.sent.length === 4)
    expect(byToken(fake.sent.slice(1)).map(s => s.e)).toEqual([
      { token: 20, error: null, output: '', applied: true },
      { token: 21, applied: true },
      { token: 22, error: null, output: '', applied: true },
    ])
  })

  test('a timer whose forecast went stale asks the helper first', async ($, on) => {
    const fake = fakeHelper(on)
    const run: Effect = { kind: 'run', command: 'b', args: '', token: 8, then: null }
    fake.answer = sent => {
      if (sent.event === 'ChainTyped') return { wants: ['PromptSubmitted'], effects: [{ kind: 'after', ms: 10, token: 7, fires: [run] }] }
      return { wants: ['PromptSubmitted'] }
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    await $.prompt.submit({ text: 'hello', wait: false, origin: { kind: 'composer' } })
    await fake.clock.advance(10)
    expect(await fake.received('TimerFired')).toEqual({ event: 'TimerFired', e: { token: 7, applied: false } })
    expect(fake.ran.map(r => r.command)).toEqual(['a'])
  })

  test('run runs the command, writes the promised lines at once and sends run.done applied', async ($, on) => {
    const fake = fakeHelper(on)
    let logsAtDone: string[] = []
    let turns = 0
    fake.answer = sent => {
      if (sent.event === 'ChainTyped') return { wants: ['TurnEnded'], reply: { kind: 'run.typed', args: 'x', token: 1 } }
      if (sent.event === 'TurnEnded' && ++turns === 1) return { wants: ['TurnEnded'], effects: [{ kind: 'run', command: 'cost', args: 'today', token: 2, then: [{ kind: 'log', text: '✓ /a x' }, { kind: 'log', text: '✓ /cost today' }] }] }
      if (sent.event === 'RunEnded') logsAtDone = [...fake.logs]
      return { wants: ['TurnEnded'] }
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /cost today'))
    await $.turn.complete(TURN)
    await fake.until(() => fake.logs.length === 2)

    expect(await fake.received('RunEnded', 2)).toEqual({ event: 'RunEnded', e: { token: 2, error: null, output: '', applied: true } })
    expect(fake.ran).toEqual([
      { command: 'a', args: 'x', origin: { kind: 'composer' } },
      { command: 'cost', args: 'today', origin: { kind: 'plugin', name: 'slash-chain' } },
    ])
    // Written before run.done went out, so a `claude -p` that exits at once has them.
    expect(logsAtDone).toEqual(['✓ /a x', '✓ /cost today'])
    expect(fake.logs).toEqual(['✓ /a x', '✓ /cost today'])
  })

  test('run from a timer: after, then timer, then the run and run.done', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => {
      if (sent.event === 'ChainTyped') return { effects: [{ kind: 'after', ms: 0, token: 3 }] }
      if (sent.event === 'TimerFired') return { effects: [{ kind: 'run', command: 'b', args: '', token: 4, then: null }] }
      return {}
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    await fake.clock.settle()
    expect(await fake.received('RunEnded')).toEqual({ event: 'RunEnded', e: { token: 4, error: null, output: '', applied: false } })
    expect(fake.events()).toEqual(['ChainTyped', 'TimerFired', 'RunEnded'])
    expect(fake.ran.map(r => `${r.command} ${r.args}`)).toEqual(['a x && /b', 'b '])
    expect(fake.logs).toEqual([])
  })

  test('a run that throws sends run.done with the error and writes no promised line', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'TurnEnded' ? { effects: [{ kind: 'run', command: 'broken', args: '', token: 9, then: [{ kind: 'log', text: '✓ /broken' }] }] } : { wants: ['TurnEnded'] })
    fake.command = e => {
      if (e.command === 'broken') throw new Error('broken failed')
      return { text: 'ok' }
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /broken'))
    await $.turn.complete(TURN)
    const done = await fake.received('RunEnded')
    expect(done.e).toEqual({ token: 9, error: expect.any(String), output: '', applied: false })
    expect(String(done.e.error).length).toBeGreaterThan(0)
    expect(fake.logs).toEqual([])
  })

  test('promised lines are not written when the helper handled another event meanwhile', async ($, on) => {
    const fake = fakeHelper(on)
    const held = deferred<{ text: string }>()
    fake.command = e => (e.command === 'slow' ? held.promise : { text: 'ok' })
    fake.answer = sent => {
      if (sent.event === 'TurnEnded') return { wants: ['PromptSubmitted'], effects: [{ kind: 'run', command: 'slow', args: '', token: 5, then: [{ kind: 'log', text: '✓ /slow' }] }] }
      return { wants: ['TurnEnded', 'PromptSubmitted'] }
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /slow'))
    await $.turn.complete(TURN)
    await fake.until(() => fake.ran.some(r => r.command === 'slow'))
    // The person types while /slow runs: the helper answers it, so its version moves on.
    await $.prompt.submit({ text: 'meanwhile', wait: false, origin: { kind: 'composer' } })
    held.resolve({ text: 'slow done' })
    expect((await fake.received('RunEnded')).e).toEqual({ token: 5, error: null, output: '', applied: false })
    expect(fake.logs).toEqual([])
  })

  test('promised lines are not written while another event awaits its answer', async ($, on) => {
    const fake = fakeHelper(on)
    const held = deferred<{ text: string }>()
    const answerLater = deferred<Response>()
    fake.command = e => (e.command === 'slow' ? held.promise : { text: 'ok' })
    fake.answer = sent => {
      if (sent.event === 'TurnEnded') return { wants: ['PromptSubmitted'], effects: [{ kind: 'run', command: 'slow', args: '', token: 6, then: [{ kind: 'log', text: '✓ /slow' }] }] }
      if (sent.event === 'PromptSubmitted') return answerLater.promise
      return { wants: ['TurnEnded'] }
    }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /slow'))
    await $.turn.complete(TURN)
    await fake.until(() => fake.ran.some(r => r.command === 'slow'))
    const submitted = $.prompt.submit({ text: 'meanwhile', wait: false, origin: { kind: 'composer' } })
    await fake.received('PromptSubmitted')
    held.resolve({ text: 'slow done' })
    expect((await fake.received('RunEnded')).e).toEqual({ token: 6, error: null, output: '', applied: false })
    answerLater.resolve({})
    await submitted
    expect(fake.logs).toEqual([])
  })

  test('a run reply to command.typed runs the typed command with the head, then sends run.done', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'ChainTyped' ? { reply: { kind: 'run.typed', args: 'all', token: 12 } } : {})
    await $.session.start(START)
    const answer = await $.command.run(typed('context', 'all && /cost && /usage'))
    expect(answer).toEqual({ text: 'ran /context all' })
    expect(fake.ran.map(r => `${r.command}|${r.args}`)).toEqual(['context|all'])
    expect(fake.sent).toEqual([
      { event: 'ChainTyped', e: { command: 'context', args: 'all && /cost && /usage', origin: 'composer', enabled: true, ...LISTED } },
      { event: 'RunEnded', e: { token: 12, error: null, output: '', applied: false } },
    ])
  })

  test('a run reply whose command throws sends run.done with the error and runs nothing else', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = sent => (sent.event === 'ChainTyped' ? { reply: { kind: 'run.typed', args: '', token: 13 } } : {})
    fake.command = () => {
      throw new Error('compact failed')
    }
    await $.session.start(START)
    await expect($.command.run(typed('compact', '&& /cost'))).rejects.toThrow()
    const done = await fake.received('RunEnded')
    expect(done.e).toEqual({ token: 13, error: expect.any(String), output: '', applied: false })
    // The typed command ran once, with its head: it is not run again with the chain's text.
    expect(fake.ran.map(r => `${r.command}|${r.args}`)).toEqual(['compact|'])
  })
})

describe("the person's shared helper", () => {
  const SHARED = { SLASHKIT_HELPER: '', TMPDIR: '/tmp/t' }
  const OPENED_IN_TMP = /^\/tmp\/t\/slashkit-1000\/helper-[^/]+\.sock \/v1\/open\?session=[\w-]+$/

  test('without XDG_RUNTIME_DIR a chain opens its session under TMPDIR by the uid /proc/self/status gives, running no process', async ($, on) => {
    const procStatus = 'Name:\tclaude\nUmask:\t0022\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\n'
    const fake = fakeHelper(on, { env: SHARED, procStatus })
    await $.session.start(START)
    await $.command.run(typed('review', 'a && /review b'))
    expect(fake.posted[0]).toMatch(OPENED_IN_TMP)
    expect(fake.processRuns).toEqual([])
  })

  test('where /proc/self/status cannot be read, `id -u` tells the uid', async ($, on) => {
    const fake = fakeHelper(on, { env: SHARED })
    fake.processRun = argv => (argv.join(' ') === 'id -u' ? { exitCode: 0, stdout: '1000\n' } : { exitCode: 127, stdout: '' })
    await $.session.start(START)
    await $.command.run(typed('review', 'a && /review b'))
    expect(fake.posted[0]).toMatch(OPENED_IN_TMP)
    expect(fake.processRuns).toEqual([['id', '-u']])
  })

  test('a /proc/self/status whose Uid line holds no number is no uid: `id -u` tells it', async ($, on) => {
    const fake = fakeHelper(on, { env: SHARED, procStatus: `Name:\tclaude\nUid:\t../../x\t0\n${'Uid:\t'.repeat(10_000)}\n` })
    fake.processRun = argv => (argv.join(' ') === 'id -u' ? { exitCode: 0, stdout: '1000\n' } : { exitCode: 127, stdout: '' })
    await $.session.start(START)
    await $.command.run(typed('review', 'a && /review b'))
    expect(fake.posted[0]).toMatch(OPENED_IN_TMP)
    expect(fake.processRuns).toEqual([['id', '-u']])
  })
})

describe('fail-safe', () => {
  const unstarted: Array<[string, SpawnMode, string]> = [
    ['fails to start (ENOENT)', 'deny', 'the helper did not start: $.process.spawn: failed to start: ENOENT'],
    ['cannot be spawned (the spawn hook throws)', 'throw', 'the helper did not start: '],
    ['exits before READY', 'exit', 'the helper exited (code 1)'],
  ]
  for (const [what, mode, why] of unstarted) {
    test(`a helper that ${what}: the session starts, chains run as typed and one line says why, once`, async ($, on) => {
      const fake = fakeHelper(on)
      fake.spawnModes = [mode, mode, mode, mode]
      await $.session.start(START)
      expect(await $.command.run(typed('a', 'x && /b y'))).toEqual({ text: 'ran /a x && /b y' })
      expect(await $.command.run(typed('c', '&& /d'))).toEqual({ text: 'ran /c && /d' })
      expect(await $.command.run(typed('slash-chain', ''))).toEqual({ text: 'unavailable: no answer; commands run as typed until it is back' })
      expect(fake.ran.map(r => r.args)).toEqual(['x && /b y', '&& /d'])
      expect(fake.sent).toEqual([])
      expect(fake.logs).toHaveLength(1)
      expect(fake.logs[0]).toMatch(UNAVAILABLE)
      expect(fake.logs[0]).toContain(why)
      // Every event tries again (the session's start tried first): a helper that comes back is used at once.
      expect(fake.spawned).toHaveLength(4)
    })
  }

  test('the stderr of a helper goes to the debug log, not the transcript', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['exit']
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    expect(fake.logs).toEqual(['unavailable: the helper exited (code 1); commands run as typed until it is back'])
    expect(fake.debug.join('')).toContain('ModuleNotFoundError')
  })

  test('a helper that never says READY: the session starts, and the chain runs as typed, after the start timeout', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['silent', 'silent']
    const started = $.session.start(START)
    await fake.until(() => fake.spawned.length === 1)
    await fake.clock.advance(START_TIMEOUT_MS)
    await started
    let finished = false
    const answer = $.command.run(typed('a', 'x && /b')).then(result => {
      finished = true
      return result
    })
    await fake.until(() => fake.spawned.length === 2)
    await fake.clock.advance(START_TIMEOUT_MS - 1)
    expect(finished).toBe(false)
    await fake.clock.advance(1)
    expect(await answer).toEqual({ text: 'ran /a x && /b' })
    expect(fake.logs).toEqual([`unavailable: the helper did not start within ${START_TIMEOUT_MS} ms; commands run as typed until it is back`])
  })

  test('READY is read at the start of a line only, with an absolute path, and nothing the helper writes after it', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['noisy']
    fake.answer = () => ({ reply: { kind: 'run.typed', args: 'x', token: 1 } })
    await $.session.start(START)
    expect(await $.command.run(typed('a', 'x && /b'))).toEqual({ text: 'ran /a x' })
    await $.command.run(typed('a', 'y && /b'))
    expect(fake.sockets.length).toBeGreaterThan(1)
    expect(new Set(fake.sockets)).toEqual(new Set([socket(1)]))
    expect(fake.logs).toEqual([])
  })

  test('a READY naming a relative path is no READY: the chain runs as typed after the start timeout', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['relative', 'relative']
    const started = $.session.start(START)
    await fake.until(() => fake.spawned.length === 1)
    await fake.clock.advance(START_TIMEOUT_MS)
    await started
    const answer = $.command.run(typed('a', 'x && /b'))
    await fake.until(() => fake.spawned.length === 2)
    await fake.clock.advance(START_TIMEOUT_MS)
    expect(await answer).toEqual({ text: 'ran /a x && /b' })
    expect(fake.sent).toEqual([])
    expect(fake.logs).toEqual([`unavailable: the helper did not start within ${START_TIMEOUT_MS} ms; commands run as typed until it is back`])
  })

  test('a request that fails (ECONNRESET): falls back, retires the helper, the next chain starts a new one', async ($, on) => {
    const fake = fakeHelper(on)
    const responses: Response[] = [{ deny: 'failed: ECONNRESET' }, { reply: null }, { reply: null }]
    fake.answer = () => responses.shift() ?? {}
    await $.session.start(START)
    expect(await $.command.run(typed('a', 'x && /b'))).toEqual({ text: 'ran /a x && /b' })
    expect(fake.logs).toHaveLength(1)
    expect(fake.logs[0]).toMatch(UNAVAILABLE)
    expect(fake.logs[0]).toContain('ECONNRESET')
    await fake.until(() => fake.exits.length === 1)
    expect(fake.exits).toEqual([socket(1)])
    await $.command.run(typed('a', 'y && /b'))
    await $.command.run(typed('a', 'z && /b'))
    expect(fake.spawned).toHaveLength(2)
    expect(fake.sockets).toEqual([socket(1), socket(2), socket(2)])
    expect(fake.events()).toEqual(['ChainTyped', 'ChainTyped', 'ChainTyped'])
    expect(fake.logs).toHaveLength(1)
  })

  test('a helper that never answers: the hook still finishes at the answer timeout', async ($, on) => {
    const fake = fakeHelper(on)
    const responses: Response[] = [{ hang: true }]
    fake.answer = () => responses.shift() ?? {}
    await $.session.start(START)
    let finished = false
    const answer = $.command.run(typed('a', 'x && /b')).then(result => {
      finished = true
      return result
    })
    await fake.received('ChainTyped')
    await fake.clock.advance(ANSWER_TIMEOUT_MS - 1)
    expect(finished).toBe(false)
    await fake.clock.advance(1)
    expect(await answer).toEqual({ text: 'ran /a x && /b' })
    expect(fake.logs).toEqual([`unavailable: the helper did not answer ChainTyped within ${ANSWER_TIMEOUT_MS} ms; commands run as typed until it is back`])
    await $.command.run(typed('a', 'y && /b'))
    expect(fake.spawned).toHaveLength(2)
  })

  test('a tool.fail the helper never answers still ends, with a deny', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = () => ({ hang: true })
    await $.session.start(START)
    const call = $.tool.call({ tool: FAIL_TOOL, reason: 'r' })
    await fake.received('FailCalled')
    await fake.clock.advance(ANSWER_TIMEOUT_MS)
    expect(await call).toEqual({ deny: 'unavailable: no answer; commands run as typed until it is back' })
  })

  /** A run whose forecast nests `depth` timers and runs, each inside the one before. */
  function deeplyForeseen(depth: number): unknown {
    let fx: unknown = { kind: 'log', text: 'end' }
    for (let i = 0; i < depth; i++) fx = { kind: 'run', command: 'a', args: '', token: i + 1, then: [fx] }
    return fx
  }
  const garbage: Array<[string, { status: number; text: string }, string]> = [
    ['not JSON', { status: 200, text: 'Traceback (most recent call last)' }, 'not JSON'],
    ['a wrong version', { status: 200, text: JSON.stringify({ v: 1, version: 1, wants: [], reply: null, effects: [] }) }, `not bridge version ${VERSION}`],
    ['no version', { status: 200, text: JSON.stringify({ version: 1, wants: [], reply: null, effects: [] }) }, `not bridge version ${VERSION}`],
    ['no wants', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, reply: null, effects: [] }) }, `not bridge version ${VERSION}`],
    ['effects that are not a list', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: {} }) }, `not bridge version ${VERSION}`],
    ['HTTP 500', { status: 500, text: JSON.stringify({ v: VERSION, error: 'internal error' }) }, 'answered 500: internal error'],
    ['HTTP 409', { status: 409, text: JSON.stringify({ v: VERSION, error: 'event 3 came after the helper counted it gone' }) }, 'answered 409: event 3 came after'],
    ['HTTP 404 with HTML', { status: 404, text: '<html>not found</html>' }, 'not JSON'],
    ['an effect that is null', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [null] }) }, `not bridge version ${VERSION}`],
    ['an effect of an unknown kind', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'explode' }] }) }, `not bridge version ${VERSION}`],
    ['a log without text', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'log', text: 5 }] }) }, `not bridge version ${VERSION}`],
    ['a timer of a negative time', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'after', ms: -5, token: 1 }] }) }, `not bridge version ${VERSION}`],
    ['a timer past what a host timer takes', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'after', ms: 1e12, token: 1 }] }) }, `not bridge version ${VERSION}`],
    ['a timer whose forecast is not a list', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'after', ms: 0, token: 1, fires: 5 }] }) }, `not bridge version ${VERSION}`],
    ['a run whose token is not a number', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'run', command: 'a', args: '', token: 'x' }] }) }, `not bridge version ${VERSION}`],
    ['a run whose forecast holds null', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [{ kind: 'run', command: 'a', args: '', token: 1, then: [null] }] }) }, `not bridge version ${VERSION}`],
    ['forecasts nested deeper than the helper makes them', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: null, effects: [deeplyForeseen(MAX_FORECAST_DEPTH + 8)] }) }, `not bridge version ${VERSION}`],
    ['a run reply without args', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [], reply: { kind: 'run.typed', args: 12, token: null }, effects: [] }) }, `not bridge version ${VERSION}`],
    ['wants that are not names', { status: 200, text: JSON.stringify({ v: VERSION, version: 1, wants: [{}], reply: null, effects: [] }) }, `not bridge version ${VERSION}`],
  ]
  for (const [what, raw, why] of garbage) {
    test(`an answer with ${what} falls back and restarts the helper`, async ($, on) => {
      const fake = fakeHelper(on)
      const responses: Response[] = [{ raw }]
      fake.answer = () => responses.shift() ?? {}
      await $.session.start(START)
      expect(await $.command.run(typed('a', 'x && /b'))).toEqual({ text: 'ran /a x && /b' })
      expect(fake.logs).toHaveLength(1)
      expect(fake.logs[0]).toMatch(UNAVAILABLE)
      expect(fake.logs[0]).toContain(why)
      await $.command.run(typed('a', 'y && /b'))
      expect(fake.spawned).toHaveLength(2)
      expect(fake.logs).toHaveLength(1)
    })
  }

  test('HTTP 400 falls back for that event but keeps the helper', async ($, on) => {
    const fake = fakeHelper(on)
    const refused = { status: 400, text: JSON.stringify({ v: VERSION, error: 'bad ChainTyped event: stored' }) }
    const responses: Response[] = [{ raw: refused }, { reply: { kind: 'run.typed', args: 'y', token: 1 } }]
    fake.answer = () => responses.shift() ?? {}
    await $.session.start(START)
    expect(await $.command.run(typed('a', 'x && /b'))).toEqual({ text: 'ran /a x && /b' })
    expect(fake.logs).toEqual(['unavailable: the helper refused the event: bad ChainTyped event: stored; commands run as typed until it is back'])
    expect(await $.command.run(typed('a', 'y && /b'))).toEqual({ text: 'ran /a y' })
    expect(fake.spawned).toHaveLength(1)
    expect(fake.exits).toEqual([])
    expect(fake.events()).toEqual(['ChainTyped', 'ChainTyped', 'RunEnded'])
  })

  test('the line comes again only after the helper answered in between', async ($, on) => {
    const fake = fakeHelper(on)
    const responses: Response[] = [{ deny: 'failed: ECONNRESET' }, { deny: 'failed: ECONNRESET' }, {}, { deny: 'failed: EPIPE' }]
    fake.answer = () => responses.shift() ?? {}
    await $.session.start(START)
    for (const args of ['1 && /b', '2 && /b', '3 && /b', '4 && /b']) await $.command.run(typed('a', args))
    expect(fake.logs).toHaveLength(2)
    expect(fake.logs[0]).toContain('ECONNRESET')
    expect(fake.logs[1]).toContain('EPIPE')
    expect(fake.ran.map(r => r.args)).toEqual(['1 && /b', '2 && /b', '3 && /b', '4 && /b'])
  })

  test('a helper that exits while a chain runs says so once; the next chain starts a new one', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = () => ({ wants: ['TurnEnded'] })
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    fake.exit(0)
    await fake.until(() => fake.logs.length === 1)
    expect(fake.logs).toEqual(['unavailable: the helper exited (code 0); commands run as typed until it is back'])
    // Its wants went with it: the turn's end starts nothing.
    await $.turn.complete(TURN)
    expect(fake.events()).toEqual(['ChainTyped'])
    expect(fake.spawned).toHaveLength(1)
    await $.command.run(typed('a', 'y && /b'))
    expect(fake.spawned).toHaveLength(2)
    expect(fake.events()).toEqual(['ChainTyped', 'ChainTyped'])
  })

  test('a helper that exits after a step line was written still runs that step, and says once it is gone', async ($, on) => {
    const fake = fakeHelper(on)
    // A timer with a delay, so the helper exits before it fires (one of no delay fires within the typed command).
    const after: Effect = { kind: 'after', ms: 10, token: 31, fires: [{ kind: 'run', command: 'b', args: 'y', token: 32, then: [{ kind: 'log', text: 'all 2 command(s) ran' }] }] }
    // The chain goes on after the typed step's report, so the helper still wants the person's next prompt.
    fake.answer = sent =>
      sent.event === 'ChainTyped' ? { wants: ['PromptSubmitted'], reply: { kind: 'run.typed', args: 'x', token: 30, then: [{ kind: 'log', text: '2/2: /b y' }, after] } } : { wants: ['PromptSubmitted'] }
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b y'))
    expect(fake.logs).toEqual(['2/2: /b y'])
    fake.exit(0)
    await fake.until(() => fake.logs.length === 2)
    await fake.clock.advance(10)
    await fake.until(() => fake.ran.length === 2)
    expect(fake.ran.map(r => `${r.command}|${r.args}`)).toEqual(['a|x', 'b|y'])
    // The step the line claimed ran; its end is heard by nobody, and the chain's end was said once. The typed step's
    // report went out at once, before the helper exited.
    expect(fake.logs).toEqual(['2/2: /b y', 'unavailable: the helper exited (code 0); commands run as typed until it is back'])
    expect(fake.events()).toEqual(['ChainTyped', 'RunEnded'])
  })

  test('a helper that exits while idle goes quietly', async ($, on) => {
    const fake = fakeHelper(on)
    fake.answer = () => ({ wants: [] })
    await $.session.start(START)
    await $.command.run(typed('a', 'x && /b'))
    fake.exit(0)
    // Let the plugin see the child end (nothing it shows tells when it has).
    await fake.clock.settle()
    await $.command.run(typed('a', 'y && /b'))
    expect(fake.logs).toEqual([])
    expect(fake.spawned).toHaveLength(2)
    expect(fake.sockets).toEqual([socket(1), socket(2)])
  })

  test('the fail tool with the helper down answers with a deny', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['deny']
    await $.session.start(START)
    const answer = await $.tool.call({ tool: FAIL_TOOL, reason: 'r' })
    expect(answer).toEqual({ deny: 'unavailable: no answer; commands run as typed until it is back' })
    expect(fake.logs).toHaveLength(1)
  })

  test('an optional event the helper fails on leaves the engine answer untouched', async ($, on) => {
    const fake = fakeHelper(on)
    const responses: Response[] = [{ wants: ['PromptHanded'] }, { deny: 'failed: ECONNRESET' }]
    fake.answer = () => responses.shift() ?? never<Response>()
    await $.session.start(START)
    await $.command.run(typed('review', 'x && /cost'))
    expect(await $.skill.prompt({ skill: 'review', text: 'Review it' })).toEqual({ text: 'Review it' })
    expect(fake.logs).toHaveLength(1)
  })
})

describe('saved chains', () => {
  const SHIP = { name: 'ship', description: 'Reviews a name, then says done', argument_hint: '<name>' }
  const CHECK = { name: 'check', description: '/review $1 || /review fixed', argument_hint: '' }
  /** What the plugin registers of its own, before the saved chains. */
  const OWN = ['/slash-chain', 'fail']
  const chains = (fake: { registered: Array<{ name: string; spec: unknown }> }) => fake.registered.filter(r => !OWN.includes(r.name))

  test("session start asks for the saved chains with the engine's commands, and registers each with its description", async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP, CHECK]) })
    await $.session.start(START)
    expect(fake.offered).toEqual([{ event: 'SavedAsked', e: { commands: LISTED.commands } }])
    expect(chains(fake)).toEqual([
      { name: '/ship', spec: { name: 'ship', description: 'Reviews a name, then says done', argumentHint: '<name>' } },
      { name: '/check', spec: { name: 'check', description: '/review $1 || /review fixed' } },
    ])
    expect(fake.sent).toEqual([])
    expect(fake.logs).toEqual([])
  })

  test('a name the core leaves to the engine is not registered, and its run is the engine’s', async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP], ['compact']) })
    await $.session.start(START)
    expect(chains(fake).map(r => r.name)).toEqual(['/ship'])
    expect(await $.command.run(typed('compact', 'keep it'))).toEqual({ text: 'ran /compact keep it' })
    expect(fake.sent).toEqual([])
  })

  test('a name the engine refuses all the same stays the engine’s: a debug line, and its run is the engine’s', async ($, on) => {
    const fake = fakeHelper(on)
    fake.taken.add('ship')
    fake.saved = () => ({ reply: savedReply([SHIP, CHECK]) })
    await $.session.start(START)
    expect(chains(fake).map(r => r.name)).toEqual(['/check'])
    expect(fake.debug.join('\n')).toContain('/ship')
    expect(await $.command.run(typed('ship', 'Bob'))).toEqual({ text: 'ran /ship Bob' })
    expect(fake.sent).toEqual([])
    expect(fake.logs).toEqual([])
  })

  test('a saved chain typed by its name alone goes to the core as a typed chain, and is answered with its reply', async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP]) })
    fake.answer = () => ({ reply: commandAnswer('/ship Bob runs 2 command(s)') })
    await $.session.start(START)
    expect(await $.command.run(typed('ship', 'Bob'))).toEqual({ text: '/ship Bob runs 2 command(s)' })
    // The engine lists /ship as the plugin's command: the core hears the engine's own names only.
    expect(fake.sent).toEqual([{ event: 'ChainTyped', e: { command: 'ship', args: 'Bob', origin: 'composer', enabled: true, ...LISTED } }])
    expect(fake.ran).toEqual([])
  })

  test('a saved chain typed with an operator after it goes to the core once, whatever it answers', async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP]) })
    const replies: Response[] = [{ reply: commandAnswer('/ship Bob runs 3 command(s)') }, { reply: null }]
    fake.answer = () => replies.shift() ?? {}
    await $.session.start(START)
    expect(await $.command.run(typed('ship', 'Bob && /review x'))).toEqual({ text: '/ship Bob runs 3 command(s)' })
    // No reply: the engine's run of it, after one ChainTyped (the separator's hook left it to the saved chains' hook).
    expect(await $.command.run(typed('ship', 'Al && /review y'))).toEqual({ text: 'ran /ship Al && /review y' })
    expect(fake.sent.map(s => [s.event, s.e['command'], s.e['args']])).toEqual([
      ['ChainTyped', 'ship', 'Bob && /review x'],
      ['ChainTyped', 'ship', 'Al && /review y'],
    ])
  })

  test('a command that is no saved chain, typed alone, is not sent', async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP]) })
    await $.session.start(START)
    expect(await $.command.run(typed('deploy', 'Bob'))).toEqual({ text: 'ran /deploy Bob' })
    expect(fake.sent).toEqual([])
  })

  test('a session start again asks without the names the plugin registered, and registers them again', async ($, on) => {
    const fake = fakeHelper(on)
    fake.saved = () => ({ reply: savedReply([SHIP]) })
    await $.session.start(START)
    await $.session.start(START)
    expect(fake.offered.map(s => s.e)).toEqual([{ commands: LISTED.commands }, { commands: LISTED.commands }])
    expect(chains(fake).map(r => r.name)).toEqual(['/ship', '/ship'])
  })

  test('with the helper down the session starts: nothing registered, one line says why', async ($, on) => {
    const fake = fakeHelper(on)
    fake.spawnModes = ['deny']
    await $.session.start(START)
    expect(fake.registered.map(r => r.name)).toEqual(OWN)
    expect(fake.logs).toHaveLength(1)
    expect(fake.logs[0]).toMatch(UNAVAILABLE)
  })

  test('the progress effect sets the status line; null clears it', async ($, on) => {
    const fake = fakeHelper(on)
    const progress: Record<string, Effect[]> = {
      ChainTyped: [{ kind: 'progress', text: 'chain 1/2: /review Bob · next /context' }],
      TurnEnded: [{ kind: 'progress', text: null }],
    }
    fake.answer = sent => ({ wants: ['TurnEnded'], effects: progress[sent.event] ?? [] })
    await $.session.start(START)
    await $.command.run(typed('review', 'Bob && /context'))
    expect(fake.statuses).toEqual(['chain 1/2: /review Bob · next /context'])
    await $.turn.complete(TURN)
    expect(fake.statuses).toEqual(['chain 1/2: /review Bob · next /context', undefined])
  })
})
