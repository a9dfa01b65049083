/**
 * slashkit's omp entry (src/adapters/slashkit/adapters/pi/extension/omp.ts), laid out by `slashkit pi install --omp`,
 * over pi's extension, against a fake omp and a fake helper (tests/node/omp.ts): the chain runs on omp's end of a
 * run and omp's `input` results. The real omp runs it in tests/engine/test_omp_tui.py.
 */
import assert from 'node:assert/strict'
import { afterEach, beforeEach, test } from 'node:test'
import { chainOfTwo, FakeHelper, until } from './opencode.js'
import { FakeOmp } from './omp.js'
import { BUILTIN_TOOL } from './omp/extensions/slashkit/host.js'
import { MAX_TEXT } from './omp/extensions/slashkit/wire.js'

let helper: FakeHelper
let omp: FakeOmp

beforeEach(() => {
  helper = new FakeHelper()
  omp = new FakeOmp()
})

afterEach(async () => {
  await helper.close()
})

test("a typed chain runs on omp's agent_end, each template filled by omp with its own step's args, the note in", async () => {
  helper.answer = chainOfTwo(['TurnEnded', 'PromptHanded'], 'run')
  await omp.type('/greet Bob && /bye Alice')
  assert.deepEqual(omp.results[0], { text: '/greet Bob' })
  // The step note reaches the request through `context`, since omp ignores what `message_end` returns.
  assert.deepEqual(omp.asked, ['Say hello to Bob\n\nNOTE', 'Say bye to Alice'])
  assert.deepEqual(helper.events().filter(e => e === 'PromptHanded').length, 2)
  assert.deepEqual(omp.lines, ['1/2: /greet Bob', '2/2: /bye Alice', 'all 2 command(s) ran'])
})

test('a run omp goes on with is not the end of the step; an aborted one ends as aborted', async () => {
  helper.answer = chainOfTwo(['TurnEnded', 'PromptHanded'], 'run')
  omp.continueNext = true
  omp.stopNext = 'aborted'
  await omp.type('/greet Bob && /bye Alice')
  assert.deepEqual(helper.sent.filter(s => s.event === 'TurnEnded'), [])
  omp.stopNext = 'aborted'
  await omp.type('/greet Bob && /bye Alice')
  assert.deepEqual(helper.sent.filter(s => s.event === 'TurnEnded').map(s => s.e['reason']), ['aborted'])
  assert.deepEqual(omp.lines.at(-1), 'stopped: aborted')
})

test("a chain line the core answers with a line is handled in omp's words, and reaches no model", async () => {
  helper.answer = () => ({ reply: { kind: 'command.answer', text: 'chaining is off' } })
  await omp.type('/greet Bob && /bye Alice')
  assert.deepEqual(omp.results, [{ handled: true }])
  assert.deepEqual(omp.lines, ['chaining is off'])
  assert.deepEqual(omp.asked, [])
})

test('a line with no chain goes on untouched', async () => {
  await omp.type('hello')
  assert.deepEqual(omp.results, [undefined])
  assert.deepEqual(omp.asked, ['hello'])
  assert.ok(!omp.events().includes('agent_settled'))
})

test("omp's session start asks for the saved chains with its templates' names too, and no editor is asked for", async () => {
  helper.answer = sent =>
    sent.event === 'SavedAsked' ? { reply: { kind: 'saved', chains: [{ name: 'ship', description: 'Ship it', argument_hint: '' }], shadowed: [] } } : {}
  // omp's UI has no `getEditorComponent`: a handler that called it would throw here. The entry does not hold omp's
  // start for the exchange (omp's TUI drops an Enter typed meanwhile), so the test waits for what it registers.
  await omp.start()
  await until(() => omp.menu.size === 1, 'the saved chain registered')
  assert.deepEqual(helper.sent.map(s => [s.event, s.e]), [['SavedAsked', { commands: ['review', 'greet', 'bye', 'slash-chain'] }]])
  assert.deepEqual([...omp.menu], [['ship', 'Ship it']])
})

test("a 1 MiB self-command call in a chain's turn reaches the core over its bound, is refused, and the chain goes on", async () => {
  // Attack (issue 34): such a call left omp's chain at its first step and omp spinning once its TUI closed: the core
  // queued the args the entry had cut to MAX_TEXT as /compact's instructions. The core refuses args over 4,000
  // characters now (slashkit.core.texts.MAX_TOOL_TEXT), so the entry must hand it a text over that bound, never a
  // cut that fits, and carry out the refusal as the tool's error while the chain runs on.
  const wants = ['TurnEnded', 'PromptHanded']
  const chain = chainOfTwo(wants, 'run')
  helper.answer = sent => (sent.event === 'BuiltinAsked' ? { wants, reply: { kind: 'deny', text: 'over the bound' } } : chain(sent))
  let refused: unknown
  omp.duringNext = async () => {
    const call = omp.tools.get(BUILTIN_TOOL)?.execute('1', { command: 'compact', args: 'z'.repeat(1 << 20) }, undefined, undefined, omp.context)
    refused = await call?.catch((error: Error) => error.message)
  }
  await omp.type('/greet Bob && /bye Alice')
  assert.equal(refused, 'over the bound')
  const args = helper.sent.find(s => s.event === 'BuiltinAsked')?.e['args']
  assert.ok(typeof args === 'string' && args.length === MAX_TEXT && MAX_TEXT > 4_000)
  assert.deepEqual(omp.lines, ['1/2: /greet Bob', '2/2: /bye Alice', 'all 2 command(s) ran'])
})
