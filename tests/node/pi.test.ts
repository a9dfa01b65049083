/**
 * slashkit's pi extension (src/adapters/slashkit/adapters/pi/extension), laid out by its installer, against a fake pi
 * and a fake helper (tests/node/pi.ts): what a person sees for what the core answers. The real pi runs the same
 * extension against the real helper in tests/engine/test_pi_chain.py.
 */
import assert from 'node:assert/strict'
import { afterEach, beforeEach, test } from 'node:test'
import { chainOfTwo, FakeHelper, until, type Response, type Sent } from './opencode.js'
import { FakePi } from './pi.js'
import { BUILTIN_TOOL, FAIL_NOTHING_WAITS, FAIL_TOOL, UNAVAILABLE } from './pi/extensions/slashkit/host.js'
import { MAX_TEXT } from './pi/extensions/slashkit/wire.js'

let helper: FakeHelper
let pi: FakePi
/** What the session start sent, which the tests do not look at (the helper that got it is ended with the others). */
let starting: Sent[]
/** The names the extension hands the core as pi's commands: the fake's templates and its own. */
const COMMANDS = ['greet', 'bye', 'slash-chain']

beforeEach(async () => {
  helper = new FakeHelper()
  pi = new FakePi()
  // Every session asks the core for the saved chains at its start (none here): the tests look at what follows.
  await pi.started
  starting = helper.sent.splice(0)
})

afterEach(async () => {
  helper.sent.unshift(...starting)
  await helper.close()
})

test('a typed chain: the first template with its own args and the note, the next one from agent_settled', async () => {
  helper.answer = chainOfTwo(['TurnEnded', 'PromptSubmitted', 'PromptHanded'], 'timer')
  await pi.type('/greet Bob && /bye Alice')
  assert.deepEqual(pi.asked, ['Say hello to Bob\n\nNOTE', 'Say bye to Alice'])
  assert.deepEqual(pi.lines, ['1/2: /greet Bob', '2/2: /bye Alice', 'all 2 command(s) ran'])
  assert.deepEqual(helper.events(), ['ChainTyped', 'PromptHanded', 'RunEnded', 'TurnEnded', 'TimerFired', 'PromptHanded', 'RunEnded', 'TurnEnded'])
  assert.deepEqual(helper.sent[0]?.e, { command: 'greet', args: 'Bob && /bye Alice', origin: 'composer', enabled: true, builtins: ['compact'], commands: COMMANDS })
})

test('a failed turn and an aborted one end as the core names them', async () => {
  helper.answer = chainOfTwo(['TurnEnded', 'PromptSubmitted', 'PromptHanded'], 'timer')
  pi.failNext = true
  await pi.type('/greet Bob && /bye Alice')
  assert.deepEqual(helper.sent.filter(s => s.event === 'TurnEnded').map(s => s.e['reason']), ['error'])
  pi.abortNext = true
  await pi.type('/greet Bob && /bye Alice')
  assert.deepEqual(helper.sent.filter(s => s.event === 'TurnEnded').map(s => s.e['reason']), ['error', 'aborted'])
  assert.equal(pi.asked.length, 2)
})

test('a line with no chain asks the helper nothing and goes on as typed', async () => {
  await pi.type('/greet Bob')
  await pi.type('hello')
  assert.deepEqual(pi.asked, ['Say hello to Bob', 'hello'])
  assert.deepEqual(helper.sent, [])
})

test('without a helper the chain line goes on as typed, with one line saying why', async () => {
  process.env.SLASHKIT_PYTHON = '/nonexistent/python'
  pi = new FakePi()
  await pi.started
  await pi.type('/greet Bob && /bye Alice')
  assert.deepEqual(pi.asked, ['Say hello to Bob'])
  assert.equal(pi.lines.length, 1)
  assert.ok(pi.lines[0]?.startsWith(UNAVAILABLE.split('{why}')[0] ?? '?'), pi.lines[0])
})

test('/slash-chain shows the core answer as a line and never reaches the model', async () => {
  helper.answer = () => ({ reply: { kind: 'command.answer', text: 'on · no chain runs' } })
  await pi.type('/slash-chain')
  assert.deepEqual(pi.lines, ['on · no chain runs'])
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [['ChainCommandTyped', { args: '', enabled: true, origin: 'composer', commands: COMMANDS }]])
  assert.deepEqual(pi.asked, [])
})

test("another extension's /slash-chain off reaches the core as that extension's, which the core refuses", async () => {
  // Attack (issue 27): `sendUserMessage('/slash-chain off', {expandPromptTemplates: true})` from another extension
  // ran a registered command's handler, which pi tells nothing of who sent it.
  helper.answer = () => ({ reply: { kind: 'command.answer', text: 'refused' } })
  await pi.type('/slash-chain off', 'extension')
  await pi.type('/slash-chain  on', 'rpc')
  assert.deepEqual(helper.sent.map(s => s.e), [
    { args: 'off', enabled: true, origin: 'extension', commands: COMMANDS },
    { args: 'on', enabled: true, origin: 'composer', commands: COMMANDS },
  ])
  assert.deepEqual(pi.lines, ['refused', 'refused'])
  assert.deepEqual(pi.asked, [])
})

test('the fail tool: nothing waits with no helper; else the core answers or refuses it', async () => {
  process.env.SLASHKIT_PYTHON = '/nonexistent/python'
  const alone = new FakePi()
  await alone.started
  const none = alone.tools.get(FAIL_TOOL)?.execute('1', { reason: 'x' })
  await assert.rejects(none ?? Promise.reject(new Error('no tool')), { message: FAIL_NOTHING_WAITS })
  const fail = pi.tools.get(FAIL_TOOL)
  helper.answer = chainOfTwo(['TurnEnded', 'PromptSubmitted', 'PromptHanded'], 'timer')
  await pi.type('/greet Bob && /bye Alice')
  helper.answer = sent => (sent.event === 'FailCalled' ? { reply: { kind: 'tool.answer', text: 'stopped' } } : {})
  assert.deepEqual((await fail?.execute('2', { reason: 'no Bob' }))?.content, [{ type: 'text', text: 'stopped' }])
  assert.deepEqual(helper.sent.at(-1)?.e, { reason: 'no Bob', agent: null })
})

test('the self-command tool asks the core, which queues /compact to run once the turn is over', async () => {
  helper.answer = sent => {
    if (sent.event === 'BuiltinAsked') return { reply: { kind: 'tool.answer', text: 'queued' }, effects: [{ kind: 'after', ms: 0, token: 1 }] }
    if (sent.event === 'TimerFired') return { effects: [{ kind: 'run', command: 'compact', args: '', token: 2 }] }
    return {}
  }
  const result = await pi.tools.get(BUILTIN_TOOL)?.execute('1', { command: 'compact' }, undefined, undefined, pi.context)
  assert.deepEqual(result?.content, [{ type: 'text', text: 'queued' }])
  assert.deepEqual(helper.sent[0]?.e, { command: 'compact', args: null, builtins: ['compact'], switched_on: true })
  await new Promise(resolve => setTimeout(resolve, 200))
  assert.equal(pi.compactions, 1)
  assert.deepEqual(helper.events(), ['BuiltinAsked', 'TimerFired', 'RunEnded'])
})

test("the person's /slash-chain builtin off is stored for every pi and sent with the model's next call", async () => {
  helper.answer = sent => {
    if (sent.event === 'ChainCommandTyped') return { reply: { kind: 'command.answer', text: 'off' }, effects: [{ kind: 'save.builtin', enabled: false }] }
    return sent.event === 'BuiltinAsked' ? { reply: { kind: 'deny', text: 'switched off' } } : {}
  }
  await pi.type('/slash-chain builtin off')
  const call = pi.tools.get(BUILTIN_TOOL)?.execute('1', { command: 'compact' }, undefined, undefined, pi.context)
  await assert.rejects(call ?? Promise.reject(new Error('no tool')), { message: 'switched off' })
  assert.deepEqual((await helper.received('BuiltinAsked')).e['switched_on'], false)
})

test("the tools hand the core their texts bounded, and the person's chain goes on after a 1 MiB call", async () => {
  // Attack (issue 27): one call with 1 MiB of args ended in `unavailable: write EPIPE`, and the chain with it.
  const wants = ['TurnEnded', 'PromptSubmitted', 'PromptHanded']
  const chain = chainOfTwo(wants, 'timer')
  // The helper names the events it wants in every answer, the tools' too: an answer without them, newer than the
  // chain's, would say the turn's end is not wanted, and the chain would stop when the tools' answers came first.
  const denied = { wants, reply: { kind: 'deny', text: 'no' } }
  helper.answer = sent => (sent.event === 'BuiltinAsked' || sent.event === 'FailCalled' ? denied : chain(sent))
  const huge = 'z'.repeat(1 << 20)
  const typed = pi.type('/greet Bob && /bye Alice')
  await helper.received('PromptHanded')
  await assert.rejects(pi.tools.get(BUILTIN_TOOL)?.execute('1', { command: huge, args: huge }, undefined, undefined, pi.context) ?? Promise.reject(new Error('no tool')), { message: 'no' })
  await assert.rejects(pi.tools.get(FAIL_TOOL)?.execute('2', { reason: huge }) ?? Promise.reject(new Error('no tool')), { message: 'no' })
  await typed
  const asked = helper.sent.find(s => s.event === 'BuiltinAsked')?.e
  assert.deepEqual([asked?.['command'], asked?.['args']], ['z'.repeat(MAX_TEXT), 'z'.repeat(MAX_TEXT)])
  assert.equal(helper.sent.find(s => s.event === 'FailCalled')?.e['reason'], 'z'.repeat(MAX_TEXT))
  assert.deepEqual(pi.lines, ['1/2: /greet Bob', '2/2: /bye Alice', 'all 2 command(s) ran'])
})

test("a chain led by /compact in the TUI's editor goes to the core, not to pi's own /compact", async () => {
  helper.answer = sent =>
    sent.event === 'ChainTyped' ? { reply: { kind: 'run.typed', args: '', token: 1 }, effects: [{ kind: 'log', text: '1/2: /compact' }] } : {}
  pi.enter('/compact && /greet Bob')
  // The editor keeps the line in its history once the core's answer was carried out, the run's end reported.
  await until(() => pi.editor?.history.length === 1, 'the line in the history')
  assert.deepEqual(helper.sent[0]?.e, { command: 'compact', args: '&& /greet Bob', origin: 'composer', enabled: true, builtins: ['compact'], commands: COMMANDS })
  assert.equal(pi.compactions, 1)
  assert.deepEqual(helper.events(), ['ChainTyped', 'RunEnded'])
  assert.deepEqual(pi.lines, ['1/2: /compact'])
  assert.deepEqual(pi.submitted, [])
  assert.deepEqual(pi.editor?.history, ['/compact && /greet Bob'])
})

test("a line the core does not take, and any other line, goes to pi's own editor handler as typed", async () => {
  pi.enter('/compact && /greet Bob')
  await until(() => pi.submitted.length === 1, "pi's own handler")
  pi.enter('/compact keep the plan')
  pi.enter('/greet Bob && /bye Alice')
  assert.deepEqual(pi.submitted, ['/compact && /greet Bob', '/compact keep the plan', '/greet Bob && /bye Alice'])
  assert.deepEqual(helper.events(), ['ChainTyped'])
  assert.equal(pi.compactions, 0)
})

test('a prompt that opens a loop goes to the core; a program is handled with its line and its steps run, any other goes on', async () => {
  helper.answer = programOfTwo()
  const prose = 'while you are at it, fix the typo; done means green'
  await pi.type(prose)
  await pi.type(PROGRAM)
  await until(() => pi.lines.includes('all 2 command(s) ran'), 'the program to end')
  const typed = { text: PROGRAM, origin: 'composer', enabled: true, builtins: ['compact'], commands: COMMANDS }
  assert.deepEqual(helper.sent.find(s => s.event === 'LineTyped' && s.e['text'] === PROGRAM)?.e, typed)
  assert.deepEqual(helper.sent.filter(s => s.event === 'LineTyped').map(s => s.e['text']), [prose, PROGRAM])
  // The prompt the core did not take reaches the model as typed; the program never does, its steps do.
  assert.deepEqual(pi.asked, [prose, 'Say hello to Bob', 'Say bye to Bob'])
  assert.deepEqual(pi.lines, [PROGRAM_RUNS, '1/2: /greet Bob', '2/2: /bye Bob', 'all 2 command(s) ran'])
})

test('in print mode (no UI) a typed program returns once its steps ran: pi -p ends when the input returns', async () => {
  helper.answer = programOfTwo()
  const printed = await printing(() => pi.type(PROGRAM))
  assert.deepEqual(pi.asked, ['Say hello to Bob', 'Say bye to Bob'])
  assert.deepEqual(printed, [PROGRAM_RUNS, '1/2: /greet Bob', '2/2: /bye Bob', 'all 2 command(s) ran'])
})

test('in print mode a typed program whose helper is gone mid-way returns, with one line saying why', async () => {
  const steps = programOfTwo()
  helper.answer = sent => (sent.event === 'TurnEnded' ? { raw: { status: 500, text: 'down' } } : steps(sent))
  const printed = await printing(() => pi.type(PROGRAM))
  assert.deepEqual(pi.asked, ['Say hello to Bob'])
  assert.deepEqual(printed.slice(0, 2), [PROGRAM_RUNS, '1/2: /greet Bob'])
  assert.equal(printed.length, 3)
  assert.ok(printed[2]?.startsWith(UNAVAILABLE.split('{why}')[0] ?? '?'), printed[2])
})

/** The lines `run` printed with no UI (as `pi -p`, where they go to stderr). */
async function printing(run: () => Promise<void>): Promise<string[]> {
  pi.context.hasUI = false
  const printed: string[] = []
  const write = process.stderr.write
  process.stderr.write = (text: string | Uint8Array) => printed.push(String(text)) > 0
  try {
    await run()
  } finally {
    process.stderr.write = write
  }
  return printed.join('').split('\n').slice(0, -1)
}

const PROGRAM = 'for w in Bob; do /greet $w && /bye $w; done'
const PROGRAM_RUNS = 'a program of 2 command(s) runs'

/** The core's answers for PROGRAM: its steps as a saved chain's (`savedShip`); no reply for any other prompt. */
function programOfTwo(): (sent: Sent) => Response {
  const steps = savedShip()
  return sent => {
    if (sent.event !== 'LineTyped') return steps(sent)
    if (sent.e['text'] !== PROGRAM) return {}
    return { ...steps({ ...sent, event: 'ChainTyped' }), reply: { kind: 'command.answer', text: PROGRAM_RUNS } }
  }
}

/** The core's answers for a saved chain `ship` (`/greet $1 && /bye $1`) and a shadowed `greet`, each report asked. */
function savedShip(): (sent: Sent) => Response {
  const wants = ['TurnEnded', 'PromptHanded']
  let turns = 0
  let timers = 0
  return sent => {
    switch (sent.event) {
      case 'SavedAsked':
        // As the core answers: a name pi has (`greet`) is shadowed, and not among the chains offered.
        return { reply: { kind: 'saved', chains: [{ name: 'ship', description: 'Ship it', argument_hint: '<who>' }], shadowed: ['greet'] } }
      case 'ChainTyped':
        return { wants, reply: { kind: 'command.answer', text: '/ship Bob runs 2 command(s)' }, effects: [{ kind: 'after', ms: 0, token: 1 }] }
      case 'TimerFired': {
        timers += 1
        const [now, progress] = timers === 1 ? ['1/2: /greet Bob', 'chain 1/2: /greet Bob · next /bye'] : ['2/2: /bye Bob', 'chain 2/2: /bye Bob']
        const run = { kind: 'run', command: timers === 1 ? 'greet' : 'bye', args: 'Bob', token: 10 + timers }
        return { wants, effects: [{ kind: 'progress', text: progress }, { kind: 'log', text: now }, run] }
      }
      case 'TurnEnded':
        turns += 1
        if (turns === 2) return { effects: [{ kind: 'log', text: 'all 2 command(s) ran' }, { kind: 'progress', text: null }] }
        return { wants, effects: [{ kind: 'after', ms: 0, token: 2 }] }
      default:
        return { wants }
    }
  }
}

test("saved chains are asked for at session start with pi's command names, and each is in pi's menu but the shadowed", async () => {
  helper.answer = savedShip()
  pi = new FakePi()
  await pi.started
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [['SavedAsked', { commands: COMMANDS }]])
  // pi's menu shows no argument hint for an extension's command: it leads the description.
  assert.deepEqual([...pi.menu], [['ship', '<who> — Ship it']])
  // Asked again (a new session), the names it registered are not pi's own.
  await pi.start()
  assert.deepEqual(helper.sent.at(-1)?.e, { commands: COMMANDS })
})

test('a saved chain typed by name is a typed chain for the core, with no operator too; its steps run before it returns', async () => {
  helper.answer = savedShip()
  pi = new FakePi()
  await pi.started
  await pi.type('/ship Bob')
  const typed = { command: 'ship', args: 'Bob', origin: 'composer', enabled: true, builtins: ['compact'], commands: COMMANDS }
  assert.deepEqual(helper.sent.find(s => s.event === 'ChainTyped')?.e, typed)
  assert.deepEqual(pi.asked, ['Say hello to Bob', 'Say bye to Bob'])
  assert.deepEqual(pi.lines, ['/ship Bob runs 2 command(s)', '1/2: /greet Bob', '2/2: /bye Bob', 'all 2 command(s) ran'])
  // The status line shows the running step and clears once the chain ended.
  assert.deepEqual(pi.statuses, ['slash-chain: chain 1/2: /greet Bob · next /bye', 'slash-chain: chain 2/2: /bye Bob', 'slash-chain: undefined'])
})

test('a saved chain typed with more of a chain hands the core the whole rest of the line', async () => {
  helper.answer = savedShip()
  pi = new FakePi()
  await pi.started
  await pi.type('/ship Bob && /bye Alice')
  assert.equal(helper.sent.find(s => s.event === 'ChainTyped')?.e['args'], 'Bob && /bye Alice')
})

test("a saved chain's command with the helper gone goes on as typed, text to the model, with one line saying why", async () => {
  const ship = savedShip()
  helper.answer = ship
  pi = new FakePi()
  await pi.started
  helper.answer = sent => (sent.event === 'ChainTyped' ? { raw: { status: 500, text: 'down' } } : ship(sent))
  await pi.type('/ship Bob')
  assert.deepEqual(pi.asked, ['/ship Bob'])
  assert.equal(pi.lines.length, 1)
  assert.ok(pi.lines[0]?.startsWith(UNAVAILABLE.split('{why}')[0] ?? '?'), pi.lines[0])
})

test('a session that already holds a message asks the core what was cut off and shows its line; a new one does not', async () => {
  assert.deepEqual(starting.map(s => s.event), ['SavedAsked'])
  pi.entries.push({ type: 'message' })
  helper.answer = sent => (sent.event === 'Continued' ? { effects: [{ kind: 'log', text: 'the chain stopped at 2/3' }] } : {})
  await pi.start()
  assert.deepEqual(helper.events(), ['SavedAsked', 'Continued'])
  assert.deepEqual(helper.sent[1]?.e, {})
  assert.deepEqual(pi.lines, ['the chain stopped at 2/3'])
})
