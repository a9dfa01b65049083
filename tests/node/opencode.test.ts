/**
 * slashkit's opencode plugin (src/adapters/slashkit/adapters/opencode/plugin), laid out by its installer and loaded
 * as opencode loads it, against a fake opencode and a fake helper (tests/node/opencode.ts): what a person sees
 * (transcript lines, what reached the model, a command's answer) for what the core answers. The real opencode runs
 * the same plugin against the real helper in tests/engine/test_opencode_*.py.
 */
import assert from 'node:assert/strict'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, test } from 'node:test'
import { FakeHelper, FakeOpencode, alive, until, type Sent } from './opencode.js'
import { BUILTIN_DESCRIPTION, ENABLED_KEY, FAIL_NOTHING_WAITS, STORE_FILE, UNAVAILABLE } from './opencode/plugins/slashkit/host.js'
import { MAX_TEXT } from './opencode/plugins/slashkit/wire.js'

let helper: FakeHelper
let opencode: FakeOpencode

beforeEach(async () => {
  delete process.env.LICH_SESSION_ID
  delete process.env.LICH_BIN
  helper = new FakeHelper()
  opencode = new FakeOpencode()
  await opencode.load()
  await helper.forgetSavedAsk()
})

afterEach(async () => {
  await helper.close()
})

const S = 'ses_person'

/**
 * The helper's script for `/greet Bob && /greet Carol`, as the core answers it: `/greet Bob` runs as typed with its
 * own args; once its turn ended, `/greet Carol` runs as a step; once that run ended, the chain is done.
 */
function chainOfTwo(): (sent: Sent) => { wants?: string[]; reply?: unknown; effects?: unknown[] } {
  let turns = 0
  return sent => {
    const wants = ['TurnEnded', 'PromptSubmitted']
    switch (sent.event) {
      case 'ChainTyped':
        return { wants, reply: { kind: 'run.typed', args: 'Bob', token: 1 }, effects: [{ kind: 'log', text: '1/2: /greet Bob' }] }
      case 'TurnEnded':
        turns += 1
        return turns === 1 ? { wants: ['TurnEnded'], effects: [{ kind: 'log', text: '2/2: /greet Carol' }, { kind: 'run', command: 'greet', args: 'Carol', token: 2 }] } : {}
      case 'RunEnded':
        return sent.e['token'] === 2 ? { effects: [{ kind: 'log', text: 'all 2 command(s) ran' }] } : { wants }
    }
    return { wants }
  }
}

test('a typed chain: the first command runs with its own args, the next once its turn ended, with the lines', async () => {
  helper.answer = chainOfTwo()
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  await until(() => opencode.lines.length === 3, 'the last line')
  assert.deepEqual(opencode.asked, ['Greet Bob warmly.', 'Greet Carol warmly.'])
  assert.deepEqual(opencode.lines, ['1/2: /greet Bob', '2/2: /greet Carol', 'all 2 command(s) ran'])
  assert.deepEqual(opencode.commands, ['/greet Carol'])
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [
    // opencode's commands as it lists them, and the built-ins the plugin runs, for the core's rule.
    ['ChainTyped', { command: 'greet', args: 'Bob && /greet Carol', origin: 'composer', enabled: true, builtins: ['compact'], commands: ['greet', 'review'] }],
    ['RunEnded', { token: 1, error: null, output: '', applied: false }],
    ['PromptSubmitted', { text: '/greet Bob && /greet Carol', origin: 'composer' }],
    ['TurnEnded', { reason: 'answer', agent: null, answer: '' }],
    ['TurnEnded', { reason: 'answer', agent: null, answer: '' }],
    ['RunEnded', { token: 2, error: null, output: '', applied: false }],
  ])
  assert.equal(helper.helpers().length, 1)
})

test('a single command starts no helper and is left as typed', async () => {
  await opencode.type(S, 'greet', 'Bob')
  await opencode.prompt(S, 'hello')
  assert.deepEqual(opencode.asked, ['Greet Bob warmly.', 'hello'])
  assert.deepEqual(helper.sent, [])
  assert.deepEqual(opencode.lines, [])
})

test('/slash-chain: the answer is one line and the command takes no model turn; a stop the lines already said is not said twice', async () => {
  helper.answer = sent =>
    sent.e['args'] === 'stop'
      ? { reply: { kind: 'command.answer', text: 'cancelled; /b did not run' }, effects: [{ kind: 'log', text: 'cancelled; /b did not run' }] }
      : { reply: { kind: 'command.answer', text: 'slash-chain: on, no chain running' } }
  const status = await opencode.type(S, 'slash-chain', '')
  const stop = await opencode.type(S, 'slash-chain', 'stop')
  assert.equal(status.error?.data?.message, 'slash-chain: on, no chain running')
  assert.equal(stop.error?.data?.message, 'cancelled; /b did not run')
  assert.deepEqual(opencode.asked, [])
  await until(() => opencode.lines.length === 2, 'both lines')
  assert.deepEqual(opencode.lines, ['slash-chain: on, no chain running', 'cancelled; /b did not run'])
  assert.deepEqual(helper.events(), ['ChainCommandTyped', 'ChainCommandTyped'])
})

test('/slash-chain off is saved in the settings file every window reads, and sent with the next chain', async () => {
  helper.answer = sent => (sent.event === 'ChainCommandTyped' ? { reply: { kind: 'command.answer', text: 'off' }, effects: [{ kind: 'save.enabled', enabled: false }] } : {})
  await opencode.type(S, 'slash-chain', 'off')
  const stored = readFileSync(join(helper.dir, 'state', 'slashkit', STORE_FILE), 'utf8')
  assert.deepEqual(JSON.parse(stored), { [ENABLED_KEY]: false })
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  assert.deepEqual((await helper.received('ChainTyped')).e['enabled'], false)
  // The chain the core did not take runs as typed.
  assert.deepEqual(opencode.asked, ['Greet Bob && /greet Carol warmly.'])
})

test('a chain the core answers itself is one line and does not run', async () => {
  helper.answer = () => ({ reply: { kind: 'command.answer', text: 'slash-chain: /model runs only when you type it' } })
  const answered = await opencode.type(S, 'greet', 'Bob && /model x')
  assert.equal(answered.error?.data?.message, 'slash-chain: /model runs only when you type it')
  assert.deepEqual(opencode.asked, [])
  assert.deepEqual(opencode.lines, ['slash-chain: /model runs only when you type it'])
})

test('a step the core hands a prompt for reaches the model with the core text (the fail note)', async () => {
  helper.answer = sent => {
    if (sent.event === 'ChainTyped') return { wants: ['PromptHanded'], reply: { kind: 'run.typed', args: 'Bob', token: 1 } }
    if (sent.event === 'PromptHanded') return { wants: ['PromptHanded'], reply: { kind: 'prompt', text: `${String(sent.e['text'])} (call slash-chain_fail if you cannot)` } }
    return { wants: ['PromptHanded'] }
  }
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  assert.deepEqual(opencode.asked, ['Greet Bob warmly. (call slash-chain_fail if you cannot)'])
})

test('a turn that failed ends the step with the core words for it', async () => {
  helper.answer = chainOfTwo()
  opencode.failNext = 'MessageAbortedError'
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  assert.deepEqual((await helper.received('TurnEnded')).e, { reason: 'aborted', agent: null, answer: '' })
})

test('the fail tool: refused with no helper (it starts none), the core answer with one, its deny as the error', async () => {
  const chain = chainOfTwo()
  assert.deepEqual(await opencode.fail(S, 'stuck'), { error: FAIL_NOTHING_WAITS })
  // A session the plugin knows, whose helper never started (a single command ran), is refused alike.
  await opencode.type(S, 'greet', 'Bob')
  assert.deepEqual(await opencode.fail(S, 'stuck'), { error: FAIL_NOTHING_WAITS })
  assert.deepEqual(helper.sent, [])
  helper.answer = sent =>
    sent.event === 'FailCalled'
      ? { reply: sent.e['reason'] === 'stuck' ? { kind: 'tool.answer', text: 'Stopped the chain.' } : { kind: 'deny', text: 'No step waits.' } }
      : chain(sent)
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  assert.deepEqual(await opencode.fail(S, 'stuck'), { result: 'Stopped the chain.' })
  assert.deepEqual(await opencode.fail(S, 'again'), { error: 'No step waits.' })
  assert.deepEqual((await helper.received('FailCalled')).e, { reason: 'stuck', agent: null })
  // A reason the helper could not take whole (its events are at most 1 MiB) reaches it cut to what the core reads.
  await opencode.fail(S, 'r'.repeat(1024 * 1024))
  assert.deepEqual((await helper.received('FailCalled', 3)).e, { reason: 'r'.repeat(MAX_TEXT), agent: null })
})

/** The core's answers to the self-command tool: `compact` queued (its run once the timer fired), the rest refused. */
function selfCommands(sent: Sent): { reply?: unknown; effects?: unknown[] } {
  if (sent.event === 'BuiltinAsked') {
    return sent.e['command'] === 'compact' && (sent.e['builtins'] as string[]).includes('compact')
      ? { reply: { kind: 'tool.answer', text: '/compact is queued and runs once this turn ends.' }, effects: [{ kind: 'after', ms: 0, token: 1 }] }
      : { reply: { kind: 'deny', text: `/${String(sent.e['command'])} was not run.` } }
  }
  if (sent.event === 'TimerFired') return { effects: [{ kind: 'run', command: 'compact', args: '', token: 2 }] }
  return {}
}

test('the self-command tool, outside lich: the core queues /compact, which then compacts the session', async () => {
  assert.equal(opencode.hooks.tool?.['slash-chain_builtin']?.description, BUILTIN_DESCRIPTION)
  helper.answer = selfCommands
  await opencode.prompt(S, 'please compact')
  assert.deepEqual(await opencode.builtin(S, { command: 'compact' }), { result: '/compact is queued and runs once this turn ends.' })
  await helper.received('RunEnded')
  assert.deepEqual(opencode.compacted, [S])
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [
    ['BuiltinAsked', { command: 'compact', args: null, builtins: ['compact'], switched_on: true }],
    ['TimerFired', { token: 1, applied: false }],
    ['RunEnded', { token: 2, error: null, output: '', applied: false }],
  ])
})

test('a self-command queued while its turn runs compacts once the turn ended, after the lines the turn held', async () => {
  // A line stored while a turn runs, a summary's too, makes opencode run one more turn after it: a model request the
  // person never asked for.
  helper.answer = sent => {
    if (sent.event === 'BuiltinAsked') return { reply: { kind: 'tool.answer', text: 'queued' }, effects: [{ kind: 'log', text: 'the model queued /compact' }, { kind: 'after', ms: 0, token: 1 }] }
    if (sent.event === 'TimerFired') return { effects: [{ kind: 'log', text: '/compact runs now' }, { kind: 'run', command: 'compact', args: '', token: 2 }] }
    return {}
  }
  await opencode.prompt(S, 'please compact')
  const summarize = opencode.client.session.summarize
  let linesBefore = -1
  opencode.client.session.summarize = async args => {
    linesBefore = opencode.lines.length
    return summarize(args)
  }
  await opencode.event('session.status', { sessionID: S, status: { type: 'busy' } })
  assert.deepEqual(await opencode.builtin(S, { command: 'compact' }), { result: 'queued' })
  await helper.received('TimerFired')
  await new Promise(resolve => setTimeout(resolve, 100))
  assert.deepEqual(opencode.compacted, [])
  await opencode.event('session.status', { sessionID: S, status: { type: 'idle' } })
  await helper.received('RunEnded')
  assert.deepEqual(opencode.compacted, [S])
  assert.deepEqual(opencode.lines.slice(-2), ['the model queued /compact', '/compact runs now'])
  assert.equal(linesBefore, opencode.lines.length)
})

test('the self-command tool: a command the core refuses is the call error, and nothing runs', async () => {
  helper.answer = selfCommands
  assert.deepEqual(await opencode.builtin(S, { command: 'config' }), { error: '/config was not run.' })
  assert.deepEqual(await opencode.builtin(S, { command: 'model', args: 'x' }), { error: '/model was not run.' })
  assert.deepEqual(helper.events(), ['BuiltinAsked', 'BuiltinAsked'])
  assert.deepEqual(opencode.compacted, [])
  assert.deepEqual(opencode.commands, [])
})

test('the self-command tool: the texts the model gave are cut to what the core reads, any other value is none', async () => {
  helper.answer = selfCommands
  await opencode.builtin(S, { command: 'c'.repeat(1024 * 1024), args: 'a'.repeat(1024 * 1024) })
  await opencode.builtin(S, { command: { name: 'compact' }, args: 7 })
  const [long, odd] = helper.sent.map(s => s.e)
  assert.deepEqual(long, { command: 'c'.repeat(MAX_TEXT), args: 'a'.repeat(MAX_TEXT), builtins: ['compact'], switched_on: true })
  assert.deepEqual(odd, { command: null, args: null, builtins: ['compact'], switched_on: true })
})

test('the self-command tool in a subagent session (a child), inside lich: the core hears it has no built-ins, and no lich start', async () => {
  process.env.LICH_SESSION_ID = 'lich-7f3a'
  opencode = new FakeOpencode()
  await opencode.load()
  await helper.forgetSavedAsk()
  helper.answer = selfCommands
  await opencode.event('session.created', { info: { id: 'ses_child', parentID: S } })
  assert.deepEqual(await opencode.builtin('ses_child', { command: 'compact' }), { error: '/compact was not run.' })
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [['BuiltinAsked', { command: 'compact', args: null, builtins: [], switched_on: true }]])
})

test('a line led by /compact compacts in the prompt place, and the chain goes on once that turn ended', async () => {
  helper.answer = sent => {
    if (sent.event === 'ChainTyped') return { reply: { kind: 'run.typed', args: '', token: 1 }, effects: [{ kind: 'log', text: '1/2: /compact' }] }
    if (sent.event === 'RunEnded' && sent.e['token'] === 1) return { effects: [{ kind: 'log', text: '2/2: /greet Carol' }, { kind: 'run', command: 'greet', args: 'Carol', token: 2 }] }
    return {}
  }
  await opencode.prompt(S, '/compact && /greet Carol')
  await until(() => opencode.asked.length === 1, 'the second step')
  assert.deepEqual(opencode.compacted, [S])
  assert.deepEqual(opencode.asked, ['Greet Carol warmly.'])
  // The line held while the compaction ran is written after it.
  assert.deepEqual(opencode.lines, ['1/2: /compact', '2/2: /greet Carol'])
  assert.deepEqual((await helper.received('ChainTyped')).e, { command: 'compact', args: '&& /greet Carol', origin: 'composer', enabled: true, builtins: ['compact'], commands: ['greet', 'review'] })
  assert.deepEqual((await helper.received('RunEnded')).e, { token: 1, error: null, output: '', applied: false })
})

test('a line led by /compact the core does not take as a chain reaches the model as typed', async () => {
  await opencode.prompt(S, '/compact && /greet Carol')
  assert.deepEqual(opencode.compacted, [])
  assert.deepEqual(opencode.asked, ['/compact && /greet Carol'])
})

test('a prompt that opens a program goes to the core: answered with no model turn, its steps run from timers', async () => {
  helper.answer = sent => {
    if (sent.event === 'LineTyped') {
      const run = { kind: 'run', command: 'greet', args: 'Bob', token: 2 }
      return { reply: { kind: 'command.answer', text: 'a program of 1 command(s) runs' }, effects: [{ kind: 'log', text: 'for 1/1: Bob' }, { kind: 'after', ms: 0, token: 1, fires: [run] }] }
    }
    return sent.event === 'RunEnded' ? { effects: [{ kind: 'log', text: 'all 1 command(s) ran' }] } : {}
  }
  const answered = await opencode.prompt(S, 'for w in Bob; do /greet $w; done')
  assert.equal(answered.error?.data?.message, 'a program of 1 command(s) runs')
  assert.deepEqual((await helper.received('LineTyped')).e, { text: 'for w in Bob; do /greet $w; done', origin: 'composer', enabled: true, builtins: ['compact'], commands: ['greet', 'review'] })
  await until(() => opencode.lines.includes('all 1 command(s) ran'), 'the end of the program')
  assert.deepEqual(opencode.asked, ['Greet Bob warmly.'])
  assert.deepEqual(opencode.lines, ['for 1/1: Bob', 'a program of 1 command(s) runs', 'all 1 command(s) ran'])
})

test('a prompt that only starts with while, which the core takes for no program, reaches the model as typed', async () => {
  const prompt = 'while you are at it, fix the typo'
  await opencode.prompt(S, prompt)
  assert.deepEqual(opencode.asked, [prompt])
  assert.deepEqual((await helper.received('LineTyped')).e['text'], prompt)
  assert.deepEqual(opencode.lines, [])
})

test('a subagent prompt (a child session) starts no chain and no helper', async () => {
  await opencode.event('session.created', { info: { id: 'ses_child', parentID: S } })
  await opencode.prompt('ses_child', '/compact && /greet Mallory')
  assert.deepEqual(opencode.asked, ['/compact && /greet Mallory'])
  assert.deepEqual(helper.sent, [])
})

/** A script of its own for each helper, as each session's helper holds its own chain. */
function eachHelper(script: () => (sent: Sent) => ReturnType<ReturnType<typeof chainOfTwo>>): (sent: Sent) => ReturnType<ReturnType<typeof chainOfTwo>> {
  const scripts = new Map<number, (sent: Sent) => ReturnType<ReturnType<typeof chainOfTwo>>>()
  return sent => {
    const own = scripts.get(sent.helper) ?? script()
    scripts.set(sent.helper, own)
    return own(sent)
  }
}

test('two sessions run their chains side by side, one helper each', async () => {
  helper.answer = eachHelper(chainOfTwo)
  await opencode.type('ses_a', 'greet', 'Bob && /greet Carol')
  await opencode.type('ses_b', 'greet', 'Bob && /greet Carol')
  await until(() => opencode.lines.length === 6, 'both chains')
  const [a, b] = helper.helpers()
  assert.ok(a !== undefined && b !== undefined && a !== b)
  for (const pid of [a, b]) {
    assert.deepEqual(helper.sent.filter(s => s.helper === pid).map(s => s.seq), [1, 2, 3, 4, 5, 6])
  }
})

test('a deleted session ends its helper and leaves the other one running', async () => {
  helper.answer = eachHelper(chainOfTwo)
  await opencode.type('ses_a', 'greet', 'Bob && /greet Carol')
  await opencode.type('ses_b', 'greet', 'Bob && /greet Carol')
  const [a, b] = helper.helpers()
  assert.ok(a !== undefined && b !== undefined)
  await opencode.event('session.deleted', { info: { id: 'ses_a' } })
  await until(() => !alive(a), 'the helper of the deleted session to end')
  assert.equal(alive(b), true)
})

test('a helper that cannot start: one line, and the command runs as typed', async () => {
  process.env.SLASHKIT_PYTHON = `${helper.dir}/no-such-python`
  await opencode.type(S, 'greet', 'Bob && /greet Carol')
  await opencode.type(S, 'greet', 'Dan && /greet Eve')
  assert.deepEqual(opencode.asked, ['Greet Bob && /greet Carol warmly.', 'Greet Dan && /greet Eve warmly.'])
  assert.equal(opencode.lines.length, 1)
  const [line] = opencode.lines
  assert.ok(line?.startsWith(UNAVAILABLE.split('{why}')[0] ?? '') && line.includes('ENOENT') && line.endsWith(UNAVAILABLE.split('{why}')[1] ?? ''), line)
})

/**
 * The helper's script for a project with one saved chain, `ship` (`/greet $1 && /greet done`), as the core answers
 * it: the start's question names it (and one bad file); `/ship Bob` is answered at once and its steps run from a
 * timer, one after the other, each shown as the chain's progress, which the end takes away.
 */
function savedShip(): (sent: Sent) => { wants?: string[]; reply?: unknown; effects?: unknown[] } {
  return sent => {
    switch (sent.event) {
      case 'SavedAsked':
        return {
          reply: { kind: 'saved', chains: [{ name: 'ship', description: 'Ship it', argument_hint: '<who>' }], shadowed: ['greet'] },
          effects: [{ kind: 'log', text: 'saved chain bad.md: its body is empty' }],
        }
      case 'ChainTyped':
        return {
          reply: { kind: 'command.answer', text: '/ship Bob: /greet Bob && /greet done' },
          effects: [{ kind: 'log', text: '1/2: /greet Bob' }, { kind: 'progress', text: 'chain 1/2: /greet Bob · next /greet done' }, { kind: 'after', ms: 0, token: 2 }],
        }
      case 'TimerFired':
        return { effects: [{ kind: 'run', command: 'greet', args: 'Bob', token: 3 }] }
      case 'RunEnded':
        if (sent.e['token'] === 3) return { effects: [{ kind: 'log', text: '2/2: /greet done' }, { kind: 'progress', text: 'chain 2/2: /greet done' }, { kind: 'run', command: 'greet', args: 'done', token: 4 }] }
        return { effects: [{ kind: 'log', text: 'all 2 command(s) ran' }, { kind: 'progress', text: null }] }
    }
    return {}
  }
}

test('the saved chains the core names become opencode commands with their description; a name opencode has stays opencode', async () => {
  opencode = new FakeOpencode()
  helper.answer = savedShip()
  await opencode.load({ deploy: 'Deploy $ARGUMENTS' })
  const commands = (await helper.received('SavedAsked')).e['commands'] as string[]
  // Every name opencode has: its command files, the plugin's own command, its built-ins and the TUI's.
  for (const name of ['deploy', 'slash-chain', 'init', 'review', 'compact', 'new', 'undo']) assert.ok(commands.includes(name), name)
  assert.ok(!commands.includes('ship'))
  assert.deepEqual(opencode.added['ship'], { template: '$ARGUMENTS', description: 'Ship it (<who>)' })
  assert.deepEqual(Object.keys(opencode.added).sort(), ['ship', 'slash-chain'])
  // The helper that answered at the start is ended: each session has its own.
  await helper.forgetSavedAsk()
})

test('a saved chain typed with no operator goes to the core: answered with no model turn, its steps run, its progress shown then taken away', async () => {
  opencode = new FakeOpencode()
  helper.answer = savedShip()
  await opencode.load()
  await helper.forgetSavedAsk()
  const answered = await opencode.type(S, 'ship', 'Bob')
  assert.equal(answered.error?.data?.message, '/ship Bob: /greet Bob && /greet done')
  // The saved chain the plugin added is not opencode's: the core runs it.
  assert.deepEqual((await helper.received('ChainTyped')).e, { command: 'ship', args: 'Bob', origin: 'composer', enabled: true, builtins: ['compact'], commands: ['greet', 'review'] })
  await until(() => opencode.lines.includes('all 2 command(s) ran'), 'the end of the chain')
  assert.deepEqual(opencode.commands, ['/greet Bob', '/greet done'])
  assert.deepEqual(opencode.asked, ['Greet Bob warmly.', 'Greet done warmly.'])
  // The bad file's line goes to the first session the plugin writes to, before the chain's.
  assert.deepEqual(opencode.lines, ['saved chain bad.md: its body is empty', '1/2: /greet Bob', '/ship Bob: /greet Bob && /greet done', '2/2: /greet done', 'all 2 command(s) ran'])
  assert.deepEqual(opencode.toasts, ['chain 1/2: /greet Bob · next /greet done', 'chain 2/2: /greet done', ''])
  // Each progress stays until the next replaces it; the end's empty toast leaves at once.
  assert.deepEqual(opencode.toastDurations, [600000, 600000, 1])
})

test('a session an earlier opencode made: the first thing the person sends there tells the core it was continued, first, and only once', async () => {
  opencode.earlier(S, 'hello from before the crash')
  const cut = 'the chain stopped at 2/3 /greet b when the session ended'
  helper.answer = sent =>
    sent.event === 'Continued' ? { effects: [{ kind: 'log', text: cut }] } : { reply: { kind: 'command.answer', text: `answer to ${String(sent.e['args'])}` } }
  const resumed = await opencode.type(S, 'slash-chain', 'resume')
  assert.equal(resumed.error?.data?.message, 'answer to resume')
  await opencode.type(S, 'slash-chain', '')
  await until(() => opencode.lines.length === 3, 'three lines')
  assert.deepEqual(opencode.lines, [cut, 'answer to resume', 'answer to '])
  assert.deepEqual(helper.events(), ['Continued', 'ChainCommandTyped', 'ChainCommandTyped'])
  // The helper keys the session's journal by opencode's id for it, which the reopened session keeps.
  assert.deepEqual(new Set(helper.sent.map(sent => sent.session)), new Set([S]))
})

test('a prompt to a reopened session tells the core too; a session this opencode made never does, whatever it holds', async () => {
  opencode.earlier(S, 'hello from before the crash')
  await opencode.event('session.created', { info: { id: 'ses_new' } })
  opencode.earlier('ses_new', 'stored already')
  await opencode.type('ses_new', 'slash-chain', '')
  await opencode.prompt(S, 'hello again')
  await until(() => helper.sent.length === 2, 'both events')
  assert.deepEqual(helper.events(), ['ChainCommandTyped', 'Continued'])
  assert.deepEqual(helper.sent.map(sent => sent.session), ['ses_new', S])
  assert.deepEqual(opencode.asked, ['hello again'])
})

test('toasts reach the TUI one at a time and in order: a progress slow to arrive is not overtaken by the next', async () => {
  opencode = new FakeOpencode()
  helper.answer = savedShip()
  await opencode.load()
  await helper.forgetSavedAsk()
  const show = opencode.client.tui.showToast
  let inFlight = 0
  let most = 0
  opencode.client.tui.showToast = async request => {
    inFlight += 1
    most = Math.max(most, inFlight)
    if (request.body.message.startsWith('chain 1/2')) await new Promise(resolve => setTimeout(resolve, 200))
    try {
      return await show(request)
    } finally {
      inFlight -= 1
    }
  }
  await opencode.type(S, 'ship', 'Bob')
  await until(() => opencode.toasts.length === 3, 'the three toasts')
  assert.deepEqual(opencode.toasts, ['chain 1/2: /greet Bob · next /greet done', 'chain 2/2: /greet done', ''])
  assert.equal(most, 1)
})

describe_inside_lich()

/** Inside lich: every session says it started, and lich's refusal of its control tool is answered by the core. */
function describe_inside_lich(): void {
  const refused = { type: 'tool', tool: 'lich_control_session', callID: 'call_1', sessionID: S, state: { status: 'error', input: { session: 'main', action: 'command', value: '/compact' }, error: 'a session cannot control itself' } }

  test('inside lich, a refused /compact: the core learns who the session is, queues it, and the model reads its note', async () => {
    process.env.LICH_SESSION_ID = 'lich-7f3a'
    process.env.LICH_BIN = `${helper.dir}/lich`
    writeFileSync(process.env.LICH_BIN, '#!/bin/sh\necho \'{"id": "lich-7f3a", "label": "main", "name": "ann"}\'\n')
    chmodSync(process.env.LICH_BIN, 0o755)
    opencode = new FakeOpencode()
    await opencode.load()
    await helper.forgetSavedAsk()
    helper.answer = sent => {
      const wants = ['ControlAnswered']
      if (sent.event === 'ControlAnswered') return { wants, reply: { kind: 'whoami', token: 5 } }
      if (sent.event === 'WhoamiAnswered') return { wants, reply: { kind: 'control', text: 'Queued /compact.' }, effects: [{ kind: 'after', ms: 0, token: 6 }] }
      if (sent.event === 'TimerFired') return { wants, effects: [{ kind: 'run', command: 'compact', args: '', token: 7 }] }
      return { wants, effects: [{ kind: 'toast', text: 'self-commands on' }] }
    }
    await opencode.prompt(S, 'compact yourself')
    // The core heard the session start (the plugin does not wait for its answer) before lich refuses a call.
    await until(() => opencode.toasts.length === 1, 'the answer to SessionStarted')
    await opencode.event('message.part.updated', { part: refused })
    await until(() => opencode.compacted.length === 1, 'the compaction')
    assert.deepEqual(helper.events().slice(0, 3), ['SessionStarted', 'ControlAnswered', 'WhoamiAnswered'])
    assert.deepEqual((await helper.received('SessionStarted')).e, { interactive: true })
    assert.deepEqual((await helper.received('ControlAnswered')).e, { target: 'main', action: 'command', value: '/compact', args: null, is_error: true, builtins: ['compact'], switched_on: true })
    assert.deepEqual((await helper.received('WhoamiAnswered')).e, { token: 5, label: 'main', name: 'ann' })
    const [part] = await opencode.transform(S, [structuredClone(refused)])
    assert.deepEqual((part as { state?: { status?: string; output?: string } }).state?.status, 'completed')
    assert.deepEqual((part as { state?: { output?: string } }).state?.output, 'Queued /compact.')
    // Asked once per call, however often opencode shows the part.
    assert.equal(helper.events().filter(e => e === 'ControlAnswered').length, 1)
  })

  test('inside lich, a refusal the core denies becomes the call error the model reads', async () => {
    process.env.LICH_SESSION_ID = 'lich-7f3a'
    opencode = new FakeOpencode()
    await opencode.load()
    await helper.forgetSavedAsk()
    helper.answer = sent =>
      sent.event === 'ControlAnswered'
        ? { wants: ['ControlAnswered'], reply: { kind: 'deny', text: 'slash-chain: /model runs only when you type it' } }
        : { wants: ['ControlAnswered'], effects: [{ kind: 'toast', text: 'self-commands on' }] }
    await opencode.prompt(S, 'switch model')
    await until(() => opencode.toasts.length === 1, 'the answer to SessionStarted')
    const [part] = await opencode.transform(S, [{ ...structuredClone(refused), state: { ...refused.state, input: { session: 'main', action: 'command', value: '/model x' } } }])
    assert.deepEqual((part as { state?: { status?: string; error?: string } }).state, {
      status: 'error',
      input: { session: 'main', action: 'command', value: '/model x' },
      error: 'slash-chain: /model runs only when you type it',
    })
  })
}
