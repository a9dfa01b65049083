/**
 * The self-command plugin under the kit: the helper starts only inside lich, the native tools answer first,
 * and the helper's reply to a refusal replaces it; with the helper unavailable the native answer stands.
 */
import { describe, expect, test } from 'claude-code/testing'
import { ANSWER_TIMEOUT_MS, fakeHelper, type Response, START } from './fake-helper.js'

const LICH = { LICH_SESSION_ID: 'lich-7f3a' }
const UNAVAILABLE = /^unavailable: (.+); tool answers reach the model as the engine gave them$/
const ENGINE = { plugin: 'engine', tier: 'core' } as const
const NATIVE_SKILL = 'Execute a skill within the main conversation'
const NATIVE_CONTROL = 'Control a lich session'
const REFUSAL = {
  isError: true,
  result: 'compact is a built-in CLI command, not a skill.',
  text: 'compact is a built-in CLI command, not a skill. Ask the user to run /compact themselves — it cannot be invoked via the Skill tool.',
} as const
/** The built-ins of the fake engine's command list (tests/kit/fake-helper.ts): /slash-chain is a plugin's. */
const BUILTINS = ['compact', 'model']
const WANTS = ['ToolDescribed', 'SkillAnswered', 'ControlAnswered']

describe('session start', () => {
  test('outside lich (no LICH_SESSION_ID) session.start starts nothing', async ($, on) => {
    const fake = fakeHelper(on)
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    expect(await $.session.start(START)).toEqual({ cwd: START.cwd })
    await $.tool.describe({ tool: 'Skill', description: NATIVE_SKILL, provider: ENGINE })
    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(REFUSAL)
    expect(fake.spawned).toEqual([])
    expect(fake.sent).toEqual([])
  })

  test('an empty LICH_SESSION_ID counts as unset', async ($, on) => {
    const fake = fakeHelper(on, { env: { LICH_SESSION_ID: '' } })
    await $.session.start(START)
    expect(fake.spawned).toEqual([])
  })

  test('inside lich session.start sends SessionStarted with interactive', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    expect(await $.session.start(START)).toEqual({ cwd: START.cwd })
    expect(fake.spawned).toHaveLength(1)
    expect(fake.sent).toEqual([{ event: 'SessionStarted', e: { interactive: true } }])
  })

  test('a headless session says so', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    await $.session.start({ surface: null, isInteractive: false, cwd: '/tmp/p' })
    expect(fake.sent).toEqual([{ event: 'SessionStarted', e: { interactive: false } }])
  })

  test('the invalidate effect of session.start reaches ui.invalidate', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    fake.answer = () => ({ wants: WANTS, effects: [{ kind: 'invalidate' }] })
    await $.session.start(START)
    expect(fake.invalidated).toEqual(['tool.describe'])
  })
})

describe('tool descriptions', () => {
  test('tool.describe of Skill gets the description reply when wanted', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    fake.answer = sent => (sent.event === 'ToolDescribed' ? { wants: WANTS, reply: { kind: 'description', text: `${NATIVE_SKILL}. Also runs /compact.` } } : { wants: WANTS })
    await $.session.start(START)
    const described = await $.tool.describe({ tool: 'Skill', description: NATIVE_SKILL, provider: ENGINE })
    expect(described).toMatchObject({ description: `${NATIVE_SKILL}. Also runs /compact.` })
    expect(fake.sent[1]).toEqual({ event: 'ToolDescribed', e: { tool: 'Skill', description: NATIVE_SKILL } })
  })

  test('tool.describe of control_session gets the description reply when wanted', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    fake.answer = sent => (sent.event === 'ToolDescribed' ? { wants: WANTS, reply: { kind: 'description', text: 'Control it; built-ins too' } } : { wants: WANTS })
    await $.session.start(START)
    const described = await $.tool.describe({ tool: 'mcp__lich__control_session', description: NATIVE_CONTROL, provider: ENGINE })
    expect(described).toMatchObject({ description: 'Control it; built-ins too' })
    expect(fake.sent[1]).toEqual({ event: 'ToolDescribed', e: { tool: 'mcp__lich__control_session', description: NATIVE_CONTROL } })
  })

  test('tool.describe is left alone when not wanted, or when the reply is null', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    const responses: Response[] = [{ wants: [] }]
    fake.answer = () => responses.shift() ?? { wants: WANTS, reply: null }
    await $.session.start(START)
    expect(await $.tool.describe({ tool: 'Skill', description: NATIVE_SKILL, provider: ENGINE })).toMatchObject({ description: NATIVE_SKILL })
    expect(fake.events()).toEqual(['SessionStarted'])
    // Another tool is none of the plugin's business, wanted or not.
    expect(await $.tool.describe({ tool: 'Read', description: 'Reads a file', provider: ENGINE })).toMatchObject({ description: 'Reads a file' })
    expect(fake.events()).toEqual(['SessionStarted'])
  })
})

describe('refused tool calls', () => {
  test('a refused Skill call sends skill.refused with the command list; a skill reply loads it', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    const native: unknown[] = []
    on('tool.call', { tool: 'Skill' }, (_, e) => {
      native.push(e)
      return REFUSAL
    })
    fake.answer = sent =>
      sent.event === 'SkillAnswered'
        ? { wants: WANTS, reply: { kind: 'skill', command: 'compact', note: '/compact runs once this turn ends.' } }
        : { wants: WANTS }
    await $.session.start(START)
    const answer = await $.tool.call({ tool: 'Skill', skill: 'compact', args: 'keep the plan' })
    expect(native).toHaveLength(1)
    expect(fake.sent[1]).toEqual({
      event: 'SkillAnswered',
      e: { skill: 'compact', args: 'keep the plan', is_error: true, builtins: BUILTINS, switched_on: true },
    })
    expect(answer).toMatchObject({ result: { success: true, commandName: 'compact' }, context: ['/compact runs once this turn ends.'] })
    expect('isError' in answer).toBe(false)
  })

  test('the queued command runs from a timer and its end is reported', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = sent => {
      if (sent.event === 'SkillAnswered') return { wants: WANTS, reply: { kind: 'skill', command: 'compact', note: 'queued' }, effects: [{ kind: 'after', ms: 0, token: 1 }] }
      if (sent.event === 'TimerFired') return { wants: WANTS, effects: [{ kind: 'run', command: 'compact', args: 'keep the plan', token: 2, then: null }] }
      return { wants: WANTS }
    }
    await $.session.start(START)
    await $.tool.call({ tool: 'Skill', skill: 'compact', args: 'keep the plan' })
    expect(fake.ran).toEqual([])
    await fake.clock.advance(0)
    expect((await fake.received('RunEnded')).e).toEqual({ token: 2, error: null, output: '', applied: false })
    expect(fake.ran).toEqual([{ command: 'compact', args: 'keep the plan', origin: { kind: 'plugin', name: 'self-command' } }])
    expect(fake.events()).toEqual(['SessionStarted', 'SkillAnswered', 'TimerFired', 'RunEnded'])
  })

  test('a Skill call with no args sends args null', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = () => ({ wants: WANTS })
    await $.session.start(START)
    await $.tool.call({ tool: 'Skill', skill: 'compact' })
    expect(fake.sent[1]?.e).toEqual({ skill: 'compact', args: null, is_error: true, builtins: BUILTINS, switched_on: true })
  })

  test('a deny reply denies the call', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = sent =>
      sent.event === 'SkillAnswered' ? { wants: WANTS, reply: { kind: 'deny', text: '/model changes every new session: set it from lich.' } } : { wants: WANTS }
    await $.session.start(START)
    expect(await $.tool.call({ tool: 'Skill', skill: 'model', args: 'opus' })).toEqual({ deny: '/model changes every new session: set it from lich.' })
  })

  test('a null reply leaves the native refusal untouched', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = () => ({ wants: WANTS, reply: null })
    await $.session.start(START)
    expect(await $.tool.call({ tool: 'Skill', skill: 'no-such-skill' })).toMatchObject(REFUSAL)
    expect(fake.events()).toEqual(['SessionStarted', 'SkillAnswered'])
  })

  test('a Skill call the native tool answers well sends nothing', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => ({ result: { success: true, commandName: 'review' } }))
    fake.answer = () => ({ wants: WANTS })
    await $.session.start(START)
    expect(await $.tool.call({ tool: 'Skill', skill: 'review' })).toMatchObject({ result: { success: true, commandName: 'review' } })
    expect(fake.events()).toEqual(['SessionStarted'])
  })

  test('a refusal is not sent while the helper does not want it', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = () => ({ wants: ['ToolDescribed'] })
    await $.session.start(START)
    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(REFUSAL)
    expect(fake.events()).toEqual(['SessionStarted'])
  })

  test('a refused control_session call sends control.refused; a text reply answers it', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'mcp__lich__control_session' }, () => ({ isError: true, result: 'unknown action', text: 'unknown action' }))
    fake.answer = sent => (sent.event === 'ControlAnswered' ? { wants: WANTS, reply: { kind: 'control', text: 'Queued /compact.' } } : { wants: WANTS })
    await $.session.start(START)
    const answer = await $.tool.call({ tool: 'mcp__lich__control_session', session: 'lich-7f3a', action: 'command', value: '/compact' })
    expect(answer).toMatchObject({ result: 'Queued /compact.' })
    expect(fake.sent[1]).toEqual({
      event: 'ControlAnswered',
      e: { target: 'lich-7f3a', action: 'command', value: '/compact', args: null, is_error: true, builtins: BUILTINS, switched_on: true },
    })
  })
})

describe('who this session is', () => {
  const LICH_BIN = '/opt/lich/bin/lich'
  const CONTROL = { tool: 'mcp__lich__control_session', session: 'main', action: 'command', value: '/compact' } as const
  /** The helper needs whoami to answer the refusal, then answers WhoamiAnswered with the queued note. */
  const asks: (sent: { event: string }) => Response = sent =>
    sent.event === 'ControlAnswered'
      ? { wants: WANTS, reply: { kind: 'whoami', token: 3 } }
      : { wants: WANTS, reply: sent.event === 'WhoamiAnswered' ? { kind: 'control', text: 'Queued /compact.' } : null }

  test('a whoami reply: the plugin runs $LICH_BIN whoami --json, sends its label and name, and answers with the reply to that', async ($, on) => {
    const fake = fakeHelper(on, { env: { ...LICH, LICH_BIN } })
    on('tool.call', { tool: 'mcp__lich__control_session' }, () => ({ isError: true, result: 'cannot control itself', text: 'cannot control itself' }))
    fake.processRun = () => ({ exitCode: 0, stdout: '{"id": "lich-7f3a", "label": "main", "name": "ann"}\n' })
    fake.answer = asks
    await $.session.start(START)
    expect(await $.tool.call(CONTROL)).toMatchObject({ result: 'Queued /compact.' })
    expect(fake.processRuns).toEqual([[LICH_BIN, 'whoami', '--json']])
    expect(fake.sent.slice(1)).toEqual([
      { event: 'ControlAnswered', e: { target: 'main', action: 'command', value: '/compact', args: null, is_error: true, builtins: BUILTINS, switched_on: true } },
      { event: 'WhoamiAnswered', e: { token: 3, label: 'main', name: 'ann' } },
    ])
  })

  for (const [why, env, run] of [
    ['no LICH_BIN', {}, undefined],
    ['a LICH_BIN that is not an absolute path (PATH is never searched)', { LICH_BIN: 'lich' }, undefined],
    ['a whoami that exits 1', { LICH_BIN }, { exitCode: 1, stdout: '{"label": "main", "name": "ann"}' }],
    ['a whoami the engine gave up on', { LICH_BIN }, { reject: 'timed out after 2000 ms' }],
  ] as const) {
    test(`${why}: WhoamiAnswered says neither label nor name`, async ($, on) => {
      const fake = fakeHelper(on, { env: { ...LICH, ...env } })
      on('tool.call', { tool: 'mcp__lich__control_session' }, () => ({ isError: true, result: 'no', text: 'no' }))
      if (run !== undefined) fake.processRun = () => run
      fake.answer = asks
      await $.session.start(START)
      expect(await $.tool.call(CONTROL)).toMatchObject({ result: 'Queued /compact.' })
      expect(fake.processRuns).toEqual(run === undefined ? [] : [[LICH_BIN, 'whoami', '--json']])
      expect(fake.sent[2]).toEqual({ event: 'WhoamiAnswered', e: { token: 3, label: null, name: null } })
    })
  }
})

describe('fail-safe', () => {
  test('with the helper down the native refusal reaches the caller untouched', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    const responses: Response[] = [{ wants: WANTS }]
    fake.answer = () => responses.shift() ?? { deny: 'failed: ECONNRESET' }
    await $.session.start(START)
    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(REFUSAL)
    expect(fake.logs).toHaveLength(1)
    expect(fake.logs[0]).toMatch(UNAVAILABLE)
    expect(fake.logs[0]).toContain('ECONNRESET')
    // The helper is gone and so are its wants: the next refusal goes straight through.
    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(REFUSAL)
    expect(fake.events()).toEqual(['SessionStarted', 'SkillAnswered'])
  })

  test('a helper that cannot start: one line at session start, the tools answer natively', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.spawnModes = ['deny']
    expect(await $.session.start(START)).toEqual({ cwd: START.cwd })
    expect(await $.tool.describe({ tool: 'Skill', description: NATIVE_SKILL, provider: ENGINE })).toMatchObject({ description: NATIVE_SKILL })
    expect(await $.tool.call({ tool: 'Skill', skill: 'compact' })).toMatchObject(REFUSAL)
    expect(fake.logs).toHaveLength(1)
    expect(fake.logs[0]).toMatch(UNAVAILABLE)
    expect(fake.spawned).toHaveLength(1)
  })

  test('a helper that never answers a refusal: the call still ends with the native answer', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    on('tool.call', { tool: 'Skill' }, () => REFUSAL)
    fake.answer = sent => (sent.event === 'SkillAnswered' ? { hang: true } : { wants: WANTS })
    await $.session.start(START)
    const call = $.tool.call({ tool: 'Skill', skill: 'compact' })
    await fake.received('SkillAnswered')
    await fake.clock.advance(ANSWER_TIMEOUT_MS)
    expect(await call).toMatchObject(REFUSAL)
    expect(fake.logs).toEqual([`unavailable: the helper did not answer SkillAnswered within ${ANSWER_TIMEOUT_MS} ms; tool answers reach the model as the engine gave them`])
  })

  test('a garbage answer to tool.describe leaves the native description', async ($, on) => {
    const fake = fakeHelper(on, { env: LICH })
    fake.answer = sent => (sent.event === 'ToolDescribed' ? { raw: { status: 200, text: 'nonsense' } } : { wants: WANTS })
    await $.session.start(START)
    expect(await $.tool.describe({ tool: 'Skill', description: NATIVE_SKILL, provider: ENGINE })).toMatchObject({ description: NATIVE_SKILL })
    expect(fake.logs).toHaveLength(1)
  })
})
