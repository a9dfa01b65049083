/**
 * The bridge's client (src/adapters/slashkit/adapters/bridge/client.ts) against a fake `Host`: a scripted helper
 * process, a scripted socket and a manual clock, so every promise of docs/bridge.md is checked as a host sees it,
 * in what it logs, runs and posts. Compiled with the client and its generated wire.ts, then run by Node's own test
 * runner (scripts/typescript.py test). tests/property/test_bridge_stateful.py holds a Python model of the same
 * rules against the real helper.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ask, bounded, boundedInput, close, identity, link, prepare, wanted, Work, type Effect, type Host, type Link } from './client.js'
import { EVENT_PATH, EXIT_PATH, MAX_BODY, MAX_FORECAST_DEPTH, MAX_TEXT, OPEN_PATH, STEP_OUTPUT, VERSION } from './wire.js'

const START_MS = 5000
const ANSWER_MS = 1000
const SOCKET = '/tmp/helper/s'

/** A request as the client wrote it. */
type Request = { v: number; seq: number; event: string; e: Record<string, unknown> }
type Response = { status: number; text: string }
type Child = { argv: readonly string[]; stop: AbortSignal; exit: (why: string) => void }
type Run = { command: string; args: string; resolve: (text: string) => void; reject: (err: Error) => void }

/** A sound answer to `seq` (the helper's version equals the events it handled). */
function answer(seq: number, fields: { wants?: string[]; reply?: unknown; effects?: unknown[] } = {}): Response {
  return { status: 200, text: JSON.stringify({ v: VERSION, version: seq, wants: [], reply: null, effects: [], ...fields }) }
}

/** Lets every promise the client chained run to its next wait on the host. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve))
}

/** The outside world of one session, scripted: what the helper prints and answers, and what the client did. */
class Fake {
  readonly link: Link = link()
  readonly lines: string[] = []
  readonly debugs: string[] = []
  readonly children: Child[] = []
  readonly requests: Request[] = []
  readonly exits: string[] = []
  readonly runs: Run[] = []
  /** What a started helper prints, chunk by chunk. */
  greeting: string[] = [`READY ${SOCKET}\n`]
  /** What `$LICH_BIN whoami --json` printed, or null when it could not answer; every call is counted. */
  whoamiOutput: string | null = null
  whoamis = 0
  /** How the helper answers each event; by default soundly, with nothing to do. */
  respond: (request: Request) => Response | Promise<Response> = request => answer(request.seq)
  log: (text: string) => void = text => this.lines.push(text)
  private now = 0
  private timers: { at: number; fire: () => void }[] = []

  readonly host: Host = {
    argv: ['/usr/bin/python3', '-m', 'slashkit.adapters.bridge.helper'],
    startTimeoutMs: START_MS,
    answerTimeoutMs: ANSWER_MS,
    unavailable: 'unavailable: {why}; commands run as typed until it is back',
    link: this.link,
    spawn: (argv, stdout, _stderr, stop) =>
      new Promise<string>(resolve => {
        this.children.push({ argv, stop, exit: resolve })
        stop.addEventListener('abort', () => resolve('the helper was ended'))
        for (const chunk of this.greeting) stdout(chunk)
      }),
    post: async (socketPath, path, body) => {
      if (path === EXIT_PATH) {
        this.exits.push(socketPath)
        return { status: 200, text: '' }
      }
      assert.equal(path, EVENT_PATH)
      assert.equal(socketPath, SOCKET)
      const request = JSON.parse(body) as Request
      this.requests.push(request)
      return this.respond(request)
    },
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        const timer = this.schedule(ms, resolve)
        signal.addEventListener('abort', () => {
          this.timers = this.timers.filter(t => t !== timer)
          reject(new Error('aborted'))
        })
      }),
    log: text => this.log(text),
    debug: text => this.debugs.push(text),
    toast: text => this.lines.push(`toast: ${text}`),
    after: (ms, fire) => void this.schedule(ms, fire),
    run: (command, args) => new Promise<string>((resolve, reject) => this.runs.push({ command, args, resolve, reject })),
    saveEnabled: async enabled => void this.lines.push(`saved: ${String(enabled)}`),
    saveBuiltin: async enabled => void this.lines.push(`saved builtin: ${String(enabled)}`),
    invalidate: () => void this.lines.push('invalidated'),
    progress: text => void this.lines.push(`status: ${text ?? '(cleared)'}`),
    whoami: async () => {
      this.whoamis += 1
      return this.whoamiOutput
    },
    plain: why => why.replace('noise: ', ''),
  }

  private schedule(ms: number, fire: () => void): { at: number; fire: () => void } {
    const timer = { at: this.now + ms, fire }
    this.timers.push(timer)
    return timer
  }

  /** Moves the clock on, firing every timer due by then in order, each with the work it starts. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms
    for (;;) {
      await settle()
      const due = this.timers.filter(t => t.at <= until).sort((a, b) => a.at - b.at)[0]
      if (due === undefined) break
      this.timers = this.timers.filter(t => t !== due)
      this.now = due.at
      due.fire()
    }
    this.now = until
    await settle()
  }

  /** The events the helper received, as `event:seq`, with `+` for a report of a forecast carried out. */
  sent(): string[] {
    return this.requests.map(r => `${r.event}:${r.seq}${r.e['applied'] === true ? '+' : ''}`)
  }
}

const typed = { command: 'a', args: '&& /b', origin: 'composer', enabled: true }

/** A `run` reply whose forecast nests `levels` deep: a timer that fires a run, that ends into a timer, ... */
function nested(levels: number): unknown {
  let inner: Effect[] = [{ kind: 'log', text: 'end' }]
  for (let level = levels - 1; level > 0; level--) {
    inner = level % 2 === 1 ? [{ kind: 'after', ms: 0, token: level + 1, fires: inner }] : [{ kind: 'run', command: 'b', args: '', token: level + 1, then: inner }]
  }
  return { kind: 'run.typed', args: '', token: 1, then: inner }
}

test('the first event starts the helper and goes to the socket its READY line names, at the start of a line', async () => {
  const f = new Fake()
  f.greeting = ['warming up\nREA', `DY ${SOCKET}\n`, 'READY /tmp/elsewhere/s\n']
  const got = await ask(f.host, 'ChainTyped', typed)
  assert.deepEqual(got?.reply, null)
  assert.equal(f.children.length, 1)
  assert.deepEqual(f.children[0]?.argv, f.host.argv)
  assert.deepEqual(f.requests, [{ v: VERSION, seq: 1, event: 'ChainTyped', e: typed }])
  assert.deepEqual(f.lines, [])
})

for (const [why, greeting] of [
  ['inside a line', ['started: READY /tmp/helper/s\n']],
  ['with a relative path', ['READY helper/s\n']],
  ['longer than any READY line can be', [`READY /${'p'.repeat(5000)}`, '\n']],
] as const) {
  test(`a READY ${why} is not taken: the helper is given up once the start timeout passed`, async () => {
    const f = new Fake()
    f.greeting = [...greeting]
    const asked = ask(f.host, 'ChainTyped', typed)
    await f.advance(START_MS)
    assert.equal(await asked, undefined)
    assert.deepEqual(f.lines, [`unavailable: the helper did not start within ${START_MS} ms; commands run as typed until it is back`])
    assert.equal(f.children[0]?.stop.aborted, true)
    assert.deepEqual(f.requests, [])
  })
}

test('events are numbered in the order they are sent, and a fresh helper numbers from 1 again', async () => {
  const f = new Fake()
  await ask(f.host, 'ChainTyped', typed)
  await Promise.all([ask(f.host, 'PromptSubmitted', { text: 'x', origin: 'composer' }), ask(f.host, 'ChainCommandTyped', { args: '', enabled: true })])
  f.respond = () => ({ status: 500, text: JSON.stringify({ v: VERSION, error: 'boom' }) })
  await ask(f.host, 'ChainCommandTyped', { args: '', enabled: true })
  f.respond = request => answer(request.seq)
  await ask(f.host, 'ChainCommandTyped', { args: '', enabled: true })
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'PromptSubmitted:2', 'ChainCommandTyped:3', 'ChainCommandTyped:4', 'ChainCommandTyped:1'])
  assert.equal(f.children.length, 2)
})

test('the optional events the last answer named are wanted, and none once the helper is given up', async () => {
  const f = new Fake()
  assert.equal(wanted('PromptSubmitted', f.link), false)
  f.respond = request => answer(request.seq, { wants: ['PromptSubmitted', STEP_OUTPUT] })
  await ask(f.host, 'ChainTyped', typed)
  assert.equal(wanted('PromptSubmitted', f.link), true)
  assert.equal(wanted('TurnEnded', f.link), false)
  f.respond = () => ({ status: 200, text: 'garbage' })
  await ask(f.host, 'PromptSubmitted', { text: 'x', origin: 'composer' })
  assert.equal(wanted('PromptSubmitted', f.link), false)
})

test('an older answer that arrives after a newer one does not undo the events the newer one asked for', async () => {
  const f = new Fake()
  let answerFirst: (response: Response) => void = () => undefined
  f.respond = request =>
    request.seq === 1
      ? new Promise<Response>(resolve => (answerFirst = resolve))
      : answer(request.seq, { wants: ['TurnEnded'] })
  const first = ask(f.host, 'ChainTyped', typed)
  await settle()
  await ask(f.host, 'PromptHanded', { text: 'do a' })
  answerFirst(answer(1, { wants: ['PromptSubmitted'] }))
  await first
  assert.equal(wanted('TurnEnded', f.link), true)
  assert.equal(wanted('PromptSubmitted', f.link), false)
})

for (const status of [400, 413]) {
  test(`an event the helper refuses (${status}) is logged once, goes on as the host would, and keeps the helper`, async () => {
    const f = new Fake()
    f.respond = () => ({ status, text: JSON.stringify({ v: VERSION, error: 'bad TimerFired event' }) })
    assert.equal(await ask(f.host, 'TimerFired', { token: 'one', applied: false }), undefined)
    assert.equal(await ask(f.host, 'TimerFired', { token: 'two', applied: false }), undefined)
    assert.deepEqual(f.lines, ['unavailable: the helper refused the event: bad TimerFired event; commands run as typed until it is back'])
    f.respond = request => answer(request.seq)
    assert.notEqual(await ask(f.host, 'ChainTyped', typed), undefined)
    assert.deepEqual(f.sent(), ['TimerFired:1', 'TimerFired:2', 'ChainTyped:3'])
    assert.equal(f.children.length, 1)
    assert.equal(f.children[0]?.stop.aborted, false)
    assert.deepEqual(f.exits, [])
  })
}

const unsound: [string, Response, string][] = [
  ['a 500', { status: 500, text: JSON.stringify({ v: VERSION, error: 'ChainTyped: KeyError' }) }, 'the helper answered 500: ChainTyped: KeyError'],
  ['a 503', { status: 503, text: JSON.stringify({ v: VERSION, error: 'busy' }) }, `the helper answered 503 with an answer that is not bridge version ${VERSION}`],
  ['garbage', { status: 200, text: '<html>' }, 'the helper answered 200 with something that is not JSON'],
]
const outOfStep: [string, Record<string, unknown>][] = [
  ['another version', { v: VERSION - 1 }],
  ['a version that is no whole number', { version: 1.5 }],
  ['wants that are not names', { wants: [1] }],
  ['an unknown effect', { effects: [{ kind: 'shell', text: 'rm -rf' }] }],
  ['a line that is no text', { effects: [{ kind: 'log', text: 1 }] }],
  ['a token below 1', { effects: [{ kind: 'after', ms: 0, token: 0 }] }],
  ['a timer before now', { effects: [{ kind: 'after', ms: -1, token: 1 }] }],
  ['a timer past what a host timer takes', { effects: [{ kind: 'after', ms: 2 ** 31, token: 1 }] }],
  ['an unknown reply', { reply: { kind: 'eval', text: 'x' } }],
  ['a run reply with no token', { reply: { kind: 'run.typed', args: '' } }],
  ['a whoami reply with no token', { reply: { kind: 'whoami' } }],
  ['a reply of a kind version 2 had', { reply: { kind: 'text', text: 'x' } }],
  ['a forecast deeper than the helper looks ahead', { reply: nested(MAX_FORECAST_DEPTH + 1) }],
  ['a status text that is no text', { effects: [{ kind: 'progress', text: 1 }] }],
  ['saved chains that are not a list', { reply: { kind: 'saved', chains: {}, shadowed: [] } }],
  ['a saved chain with no description', { reply: { kind: 'saved', chains: [{ name: 'ship', argument_hint: '' }], shadowed: [] } }],
  ['shadowed names that are not text', { reply: { kind: 'saved', chains: [], shadowed: [1] } }],
]
for (const [what, fields] of outOfStep) {
  unsound.push([what, { status: 200, text: JSON.stringify({ ...JSON.parse(answer(1).text), ...fields }) }, `the helper answered 200 with an answer that is not bridge version ${VERSION}`])
}

for (const [what, response, why] of unsound) {
  test(`an answer with ${what} gives the helper up: one line, the exit asked, its process ended, a fresh one next`, async () => {
    const f = new Fake()
    f.respond = () => response
    assert.equal(await ask(f.host, 'ChainTyped', typed), undefined)
    assert.equal(await ask(f.host, 'ChainTyped', typed), undefined)
    assert.deepEqual(f.lines, [`unavailable: ${why}; commands run as typed until it is back`])
    assert.equal(f.children.length, 2)
    assert.equal(f.children[0]?.stop.aborted, true)
    await settle()
    assert.deepEqual(f.exits, [SOCKET, SOCKET])
    f.respond = request => answer(request.seq)
    assert.notEqual(await ask(f.host, 'ChainTyped', typed), undefined)
    // Answered again, a later failure is said again.
    f.respond = () => response
    await ask(f.host, 'ChainTyped', typed)
    assert.equal(f.lines.length, 2)
  })
}

test('a forecast as deep as the helper looks ahead is taken', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { reply: nested(MAX_FORECAST_DEPTH) })
  assert.equal((await ask(f.host, 'ChainTyped', typed))?.reply?.kind, 'run.typed')
  assert.deepEqual(f.lines, [])
})

test('no answer within the answer timeout gives the helper up', async () => {
  const f = new Fake()
  f.respond = () => new Promise<Response>(() => undefined)
  const asked = ask(f.host, 'PromptHanded', { text: 'x' })
  await f.advance(ANSWER_MS)
  assert.equal(await asked, undefined)
  assert.deepEqual(f.lines, [`unavailable: the helper did not answer PromptHanded within ${ANSWER_MS} ms; commands run as typed until it is back`])
  assert.equal(f.children[0]?.stop.aborted, true)
})

test('a helper that cannot start is said once, in the host plain words', async () => {
  const f = new Fake()
  f.host.spawn = () => Promise.reject(new Error('noise: ENOENT /usr/bin/python3'))
  assert.equal(await ask(f.host, 'ChainTyped', typed), undefined)
  assert.equal(await ask(f.host, 'ChainTyped', typed), undefined)
  assert.deepEqual(f.lines, ['unavailable: the helper did not start: ENOENT /usr/bin/python3; commands run as typed until it is back'])
})

test('a helper that exits while a chain runs is said once; one that exits with nothing running is not', async () => {
  const f = new Fake()
  await ask(f.host, 'ChainCommandTyped', { args: '', enabled: true })
  f.children[0]?.exit('the helper exited (code 0)')
  await settle()
  assert.deepEqual(f.lines, [])
  f.respond = request => answer(request.seq, { wants: ['PromptSubmitted'] })
  await ask(f.host, 'ChainTyped', typed)
  f.children[1]?.exit('the helper exited (SIGKILL)')
  await settle()
  assert.deepEqual(f.lines, ['unavailable: the helper exited (SIGKILL); commands run as typed until it is back'])
  assert.equal(wanted('PromptSubmitted', f.link), false)
})

test('effects are carried out in order through the host', async () => {
  const f = new Fake()
  const effects = [
    { kind: 'log', text: '1/2: /a' },
    { kind: 'toast', text: '/compact did not run' },
    { kind: 'save.enabled', enabled: false },
    { kind: 'invalidate' },
  ]
  f.respond = request => answer(request.seq, { effects, reply: { kind: 'command.answer', text: 'off' } })
  assert.deepEqual((await ask(f.host, 'ChainCommandTyped', { args: 'off', enabled: true }))?.reply, { kind: 'command.answer', text: 'off' })
  assert.deepEqual(f.lines, ['1/2: /a', 'toast: /compact did not run', 'saved: false', 'invalidated'])
})

test("the status area's text is shown, and cleared, through the host; a host with no status area is left alone", async () => {
  const f = new Fake()
  const effects = [
    { kind: 'progress', text: 'chain 1/2: /a · next /b' },
    { kind: 'progress', text: null },
  ]
  f.respond = request => answer(request.seq, { effects })
  await ask(f.host, 'ChainTyped', typed)
  assert.deepEqual(f.lines, ['status: chain 1/2: /a · next /b', 'status: (cleared)'])

  const bare = new Fake()
  const { progress: _, ...without } = bare.host
  bare.respond = request => answer(request.seq, { effects })
  assert.notEqual(await ask(without, 'ChainTyped', typed), undefined)
  assert.deepEqual(bare.lines, [])
})

test('the saved chains to offer come back as the reply to SavedAsked', async () => {
  const f = new Fake()
  const reply = { kind: 'saved', chains: [{ name: 'ship', description: 'Ships', argument_hint: '<who>' }], shadowed: ['loop'] }
  f.respond = request => answer(request.seq, { reply })
  assert.deepEqual((await ask(f.host, 'SavedAsked', { commands: ['loop'] }))?.reply, reply)
})

test('ask never throws: a host call that fails while the effects are carried out goes to the debug log', async () => {
  const f = new Fake()
  f.host.saveEnabled = () => Promise.reject(new Error('the store is read-only'))
  f.respond = request => answer(request.seq, { effects: [{ kind: 'save.enabled', enabled: true }, { kind: 'log', text: 'on' }] })
  const got = await ask(f.host, 'ChainCommandTyped', { args: 'on', enabled: false })
  assert.deepEqual(got?.reply, null)
  assert.deepEqual(f.lines, ['on'])
  assert.deepEqual(f.debugs, ['slashkit: the store is read-only'])
})

/** A chain's first answer: `/b`'s timer, foreseen to log its line and run it, and its run foreseen to end it. */
const foreseen = [
  { kind: 'log', text: '1/2: /a' },
  {
    kind: 'after',
    ms: 0,
    token: 2,
    fires: [
      { kind: 'log', text: '2/2: /b' },
      { kind: 'run', command: 'b', args: 'x', token: 3, then: [{ kind: 'log', text: 'all 2 command(s) ran' }] },
    ],
  },
]

/** A chain typed and `/b`'s timer fired: its line written and its run started from the forecast, nothing sent. */
async function atTheSecondStep(f: Fake): Promise<void> {
  f.respond = request => answer(request.seq, { effects: foreseen })
  await ask(f.host, 'ChainTyped', typed)
  f.respond = request => answer(request.seq)
  await f.advance(0)
}

test('a forecast is carried out at once, and its reports go out numbered, without waiting for their answers', async () => {
  const f = new Fake()
  await atTheSecondStep(f)
  assert.deepEqual(f.lines, ['1/2: /a', '2/2: /b'])
  assert.deepEqual(f.runs.map(r => `${r.command} ${r.args}`), ['b x'])
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+'])
  // The helper is slow to answer the run's report: the chain's last line does not wait for it.
  let answerReport: (response: Response) => void = () => undefined
  f.respond = () => new Promise<Response>(resolve => (answerReport = resolve))
  f.runs[0]?.resolve('done')
  await settle()
  assert.deepEqual(f.lines, ['1/2: /a', '2/2: /b', 'all 2 command(s) ran'])
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+', 'RunEnded:3+'])
  assert.deepEqual(f.requests[2]?.e, { token: 3, error: null, output: '', applied: true })
  answerReport(answer(3, { wants: ['PromptSubmitted'] }))
  await settle()
  assert.equal(wanted('PromptSubmitted', f.link), true)
  f.respond = request => answer(request.seq)
  await ask(f.host, 'PromptSubmitted', { text: 'next', origin: 'composer' })
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+', 'RunEnded:3+', 'PromptSubmitted:4'])
})

test('a report the helper found stale is answered with what it did instead, and the client does that', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { effects: foreseen })
  await ask(f.host, 'ChainTyped', typed)
  f.respond = request => answer(request.seq, request.event === 'TimerFired' ? { effects: [{ kind: 'log', text: 'cancelled' }] } : {})
  await f.advance(0)
  assert.deepEqual(f.lines, ['1/2: /a', '2/2: /b', 'cancelled'])
})

test('a report that does not reach the helper is written to the debug log, and the chain goes on from its forecast', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { effects: foreseen })
  await ask(f.host, 'ChainTyped', typed)
  f.respond = () => {
    throw new Error('ECONNREFUSED')
  }
  await f.advance(0)
  f.runs[0]?.resolve('done')
  await settle()
  assert.deepEqual(f.lines, ['1/2: /a', '2/2: /b', 'all 2 command(s) ran'])
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+', 'RunEnded:3+'])
  assert.equal(f.debugs.filter(line => line.startsWith('slashkit: the helper did not hear ')).length, 2)
  assert.equal(f.children[0]?.stop.aborted, false)
})

test('a report the helper answers out of turn (409) gives that helper up, and the next event starts a fresh one', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { effects: foreseen })
  await ask(f.host, 'ChainTyped', typed)
  f.respond = () => ({ status: 409, text: JSON.stringify({ v: VERSION, error: 'seq 2 came after the helper counted it gone' }) })
  await f.advance(0)
  assert.equal(f.children[0]?.stop.aborted, true)
  f.respond = request => answer(request.seq)
  await ask(f.host, 'PromptSubmitted', { text: 'next', origin: 'composer' })
  assert.equal(f.children.length, 2)
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+', 'PromptSubmitted:1'])
})

test('a forecast made before another event was sent is not trusted: its report goes at once and its answer is done', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { effects: request.seq === 1 ? foreseen : [] })
  await ask(f.host, 'ChainTyped', typed)
  await ask(f.host, 'PromptHanded', { text: 'x' })
  f.respond = request => answer(request.seq, { effects: [{ kind: 'log', text: 'from the helper' }] })
  await f.advance(0)
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'PromptHanded:2', 'TimerFired:3'])
  assert.equal(f.requests[2]?.e['applied'], false)
  assert.deepEqual(f.lines, ['1/2: /a', 'from the helper'])
  assert.deepEqual(f.runs, [])
})

test('a run that threw is reported at once with its message, and its foreseen end is not carried out', async () => {
  const f = new Fake()
  await atTheSecondStep(f)
  f.runs[0]?.reject(new Error('no such command'))
  await settle()
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'TimerFired:2+', 'RunEnded:3'])
  assert.deepEqual(f.requests[2]?.e, { token: 3, error: 'no such command', output: '', applied: false })
  assert.deepEqual(f.lines, ['1/2: /a', '2/2: /b'])
})

test('a run text goes to the helper only when it wants StepOutput, cut to MAX_TEXT', async () => {
  for (const wants of [[], [STEP_OUTPUT]]) {
    const f = new Fake()
    f.respond = request => answer(request.seq, { wants, reply: { kind: 'run.typed', args: 'x', token: 1, then: null } })
    const got = await ask(f.host, 'ChainTyped', typed)
    assert.ok(got?.ticket !== undefined)
    await got.ticket.resolved('y'.repeat(MAX_TEXT + 10))
    assert.equal(f.requests[1]?.e['output'], wants.length === 0 ? '' : 'y'.repeat(MAX_TEXT))
  }
})

test('a report of a helper since replaced is dropped, and its timer runs what it foresaw without a report', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { effects: foreseen, reply: { kind: 'run.typed', args: '', token: 1, then: null }, wants: ['PromptSubmitted'] })
  const got = await ask(f.host, 'ChainTyped', typed)
  assert.ok(got?.ticket !== undefined)
  close(f.host)
  await got.ticket.resolved('')
  await f.advance(0)
  assert.deepEqual(f.runs.map(r => r.command), ['b'])
  f.runs[0]?.resolve('')
  await settle()
  assert.deepEqual(f.sent(), ['ChainTyped:1'])
  assert.equal(f.children.length, 1)
})

test('close() asks the helper to exit and ends its process; the next event starts a fresh one', async () => {
  const f = new Fake()
  close(f.host)
  assert.equal(f.children.length, 0)
  f.respond = request => answer(request.seq, { wants: ['PromptSubmitted'] })
  await ask(f.host, 'ChainTyped', typed)
  close(f.host)
  await settle()
  assert.deepEqual(f.exits, [SOCKET])
  assert.equal(f.children[0]?.stop.aborted, true)
  assert.equal(wanted('PromptSubmitted', f.link), false)
  assert.deepEqual(f.lines, [])
  await ask(f.host, 'ChainTyped', typed)
  assert.equal(f.children.length, 2)
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'ChainTyped:1'])
})

test('prepare() starts the helper before the event is sent, once', async () => {
  const f = new Fake()
  prepare(f.host)
  prepare(f.host)
  // The spawn waits for the helper's argv (`Host.locate`, or `argv` at once), so it comes a turn later.
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(f.children.length, 1)
  assert.deepEqual(f.requests, [])
  await ask(f.host, 'ChainTyped', typed)
  assert.equal(f.children.length, 1)
})

test('bounded() cuts a text from outside to MAX_TEXT', () => {
  assert.equal(bounded('short'), 'short')
  assert.equal(bounded('z'.repeat(MAX_TEXT + 1)).length, MAX_TEXT)
})

test("boundedInput() cuts a tool's text to MAX_TEXT, and sends any other value too long to write as null", () => {
  assert.equal(boundedInput('z'.repeat(MAX_TEXT + 1)), 'z'.repeat(MAX_TEXT))
  assert.deepEqual(boundedInput({ why: 'short' }), { why: 'short' })
  assert.equal(boundedInput(['z'.repeat(MAX_TEXT)]), null)
  assert.equal(boundedInput(1n), null)
})

test('an event over the helper\'s limit is not sent nor counted: one line, and the same helper answers the next', async () => {
  // Attack (issue 27): the helper answered 413 before reading such a request, the write failed with EPIPE, and
  // the client gave up the helper and the person's running chain with it.
  const f = new Fake()
  await ask(f.host, 'TurnEnded', { reason: 'answer', agent: null, answer: '' })
  const none = await ask(f.host, 'FailCalled', { reason: 'é'.repeat(MAX_BODY / 2), agent: null })
  await ask(f.host, 'TurnEnded', { reason: 'answer', agent: null, answer: '' })
  assert.equal(none, undefined)
  assert.deepEqual(f.requests.map(r => [r.seq, r.event]), [[1, 'TurnEnded'], [2, 'TurnEnded']])
  assert.equal(f.children.length, 1)
  assert.deepEqual(f.exits, [])
  assert.deepEqual(f.lines, [`unavailable: the FailCalled event is over the helper's ${MAX_BODY} byte limit; commands run as typed until it is back`])
})

/** A self-command's refusal the helper can answer only once it knows who this session is. */
const control = { target: 'main', action: 'run', value: '/compact', args: null, is_error: true, builtins: ['compact'] }
const queued = { kind: 'control', text: 'Queued /compact.' }

test('a whoami reply: the client asks the host, sends WhoamiAnswered, and returns that answer instead', async () => {
  const f = new Fake()
  f.whoamiOutput = '{"id": "7f3a", "label": "main", "name": "ann", "project": "p"}\n'
  f.respond = request => answer(request.seq, request.event === 'ControlAnswered' ? { reply: { kind: 'whoami', token: 4 } } : { reply: queued, effects: [{ kind: 'log', text: 'queued' }] })
  const got = await ask(f.host, 'ControlAnswered', control)
  assert.deepEqual(got, { reply: queued })
  assert.equal(f.whoamis, 1)
  assert.deepEqual(f.sent(), ['ControlAnswered:1', 'WhoamiAnswered:2'])
  assert.deepEqual(f.requests[1]?.e, { token: 4, label: 'main', name: 'ann' })
  assert.deepEqual(f.lines, ['queued'])
})

test('a whoami that could not answer, or printed no label and name, is sent as neither', async () => {
  for (const printed of [null, '', 'lich 0.63', '[1, 2]', 'null', '{"label": "main"}', '{"label": "main", "name": 7}', '{"label": "main", "name": "ann"']) {
    const f = new Fake()
    f.whoamiOutput = printed
    f.respond = request => answer(request.seq, { reply: request.event === 'WhoamiAnswered' ? { kind: 'deny', text: 'not yours' } : { kind: 'whoami', token: 1 } })
    assert.deepEqual(await ask(f.host, 'ControlAnswered', control), { reply: { kind: 'deny', text: 'not yours' } })
    assert.deepEqual(f.requests[1]?.e, { token: 1, label: null, name: null }, String(printed))
  }
})

test('identity() cuts a label or name from outside to MAX_TEXT', () => {
  const long = 'l'.repeat(MAX_TEXT + 3)
  assert.deepEqual(identity(JSON.stringify({ label: long, name: 'ann' })), { label: 'l'.repeat(MAX_TEXT), name: 'ann' })
})

test('a host whoami that rejects counts as no answer: ask still never throws', async () => {
  const f = new Fake()
  f.host.whoami = () => Promise.reject(new Error('spawn EACCES'))
  f.respond = request => answer(request.seq, { reply: request.event === 'WhoamiAnswered' ? queued : { kind: 'whoami', token: 2 } })
  assert.deepEqual(await ask(f.host, 'ControlAnswered', control), { reply: queued })
  assert.deepEqual(f.requests[1]?.e, { token: 2, label: null, name: null })
})

test('whoami is asked once an event: a second whoami reply is no reply, and nothing more is sent', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { reply: { kind: 'whoami', token: request.seq } })
  assert.deepEqual(await ask(f.host, 'ControlAnswered', control), { reply: null })
  assert.deepEqual(f.sent(), ['ControlAnswered:1', 'WhoamiAnswered:2'])
  assert.equal(f.whoamis, 1)
})

test('a helper given up while whoami ran hears nothing of it, and no fresh helper is started for it', async () => {
  const f = new Fake()
  f.host.whoami = async () => {
    close(f.host)
    return '{}'
  }
  f.respond = request => answer(request.seq, { reply: { kind: 'whoami', token: 1 }, wants: ['ControlAnswered'] })
  assert.deepEqual(await ask(f.host, 'ControlAnswered', control), { reply: null })
  assert.deepEqual(f.sent(), ['ControlAnswered:1'])
  assert.equal(f.children.length, 1)
})

test('a run.typed reply comes with a ticket: resolved reports the text and carries out the foreseen end', async () => {
  const f = new Fake()
  const then = [{ kind: 'log', text: '2/2: /b' }]
  f.respond = request => answer(request.seq, { reply: { kind: 'run.typed', args: 'x', token: 7, then } })
  const got = await ask(f.host, 'ChainTyped', typed)
  assert.ok(got?.ticket !== undefined)
  assert.equal(got.reply.args, 'x')
  await got.ticket.resolved('done')
  assert.deepEqual(f.lines, ['2/2: /b'])
  // Carried out from the forecast: the report is held for the next event, and a second report is not made.
  await got.ticket.threw('too late')
  await ask(f.host, 'PromptSubmitted', { text: 'next', origin: 'composer' })
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'RunEnded:2+', 'PromptSubmitted:3'])
  assert.deepEqual(f.requests[1]?.e, { token: 7, error: null, output: '', applied: true })
})

test('a ticket that threw reports the error at once and carries out nothing foreseen', async () => {
  const f = new Fake()
  f.respond = request =>
    answer(request.seq, request.event === 'ChainTyped' ? { reply: { kind: 'run.typed', args: 'x', token: 7, then: [{ kind: 'log', text: '2/2: /b' }] } } : { effects: [{ kind: 'log', text: 'stopped' }] })
  const got = await ask(f.host, 'ChainTyped', typed)
  assert.ok(got?.ticket !== undefined)
  await got.ticket.threw('no such command')
  await got.ticket.resolved('ignored')
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'RunEnded:2'])
  assert.deepEqual(f.requests[1]?.e, { token: 7, error: 'no such command', output: '', applied: false })
  assert.deepEqual(f.lines, ['stopped'])
})

test('only a run.typed reply carries a ticket', async () => {
  const f = new Fake()
  f.respond = request => answer(request.seq, { reply: { kind: 'command.answer', text: 'off' } })
  const got = await ask(f.host, 'ChainCommandTyped', { args: 'off', enabled: true })
  assert.deepEqual(got, { reply: { kind: 'command.answer', text: 'off' } })
  assert.equal(got?.ticket, undefined)
})

test('Work is drained only once what each tracked piece led to is done, and a piece that fails drains too', async () => {
  const work = new Work()
  let releaseFirst = (): void => undefined
  let failSecond = (_err: Error): void => undefined
  // The first piece, as it settles, tracks the next (a timer that fires a step), which fails later.
  void work.track(
    new Promise<void>(done => (releaseFirst = done)).then(() => {
      void work.track(new Promise<void>((_, fail) => (failSecond = fail)))
    }),
  )
  let drained = false
  const waited = work.drained().then(() => (drained = true))
  await settle()
  assert.equal(drained, false)
  releaseFirst()
  await settle()
  assert.equal(drained, false, 'drained while the piece the first led to was still under way')
  failSecond(new Error('the step threw'))
  await waited
  await new Work().drained()
})

/** A session of the person's shared helper: the fake's host, with `shared` and a socket that answers openings. */
function sharing(f: Fake, known: string | undefined, listening: boolean): { host: Host; opened: string[]; paths: string[]; found: string[] } {
  const opened: string[] = []
  const paths: string[] = []
  const found: string[] = []
  const host: Host = {
    ...f.host,
    shared: async () => ({
      socket: known,
      opening: { options: ['--host', 'pi'], cwd: '/work/p', env: { HOME: '/home/ann' }, owner: null },
      found: socketPath => void found.push(socketPath),
    }),
    post: async (socketPath, path, body) => {
      paths.push(`${socketPath} ${path}`)
      if (socketPath === known && !listening) throw new Error('connect ECONNREFUSED')
      if (path.startsWith(`${OPEN_PATH}?session=`)) {
        assert.deepEqual(JSON.parse(body), { v: VERSION, options: ['--host', 'pi'], cwd: '/work/p', env: { HOME: '/home/ann' }, owner: null })
        opened.push(path.slice(path.indexOf('=') + 1))
        return { status: 200, text: '{}' }
      }
      if (path.startsWith(EXIT_PATH)) return { status: 200, text: '{}' }
      const request = JSON.parse(body) as Request
      f.requests.push(request)
      return f.respond(request)
    },
  }
  return { host, opened, paths, found }
}

test('a shared helper that listens is joined without starting a process; every event names the session opened', async () => {
  const f = new Fake()
  const known = '/run/user/7/slashkit/helper.sock'
  const s = sharing(f, known, true)
  await ask(s.host, 'ChainTyped', typed)
  await ask(s.host, 'SavedAsked', { commands: [] })
  assert.equal(f.children.length, 0)
  assert.equal(s.opened.length, 1)
  const session = s.opened[0] ?? ''
  assert.match(session, /^[A-Za-z0-9_-]{1,64}$/)
  assert.deepEqual(s.paths.slice(1), [`${known} ${EVENT_PATH}?session=${session}`, `${known} ${EVENT_PATH}?session=${session}`])
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'SavedAsked:2'])
})

test('with no shared helper listening, the process started with --shared names its socket, the session opens there, and the host keeps it', async () => {
  const f = new Fake()
  const s = sharing(f, '/run/user/7/slashkit/helper.sock', false)
  await ask(s.host, 'ChainTyped', typed)
  assert.deepEqual(f.children.map(c => c.argv.at(-1)), ['--shared'])
  assert.equal(s.opened.length, 1)
  assert.deepEqual(s.found, [SOCKET])
  assert.deepEqual(f.sent(), ['ChainTyped:1'])
  // The process that found or started the helper leaves once it said READY; the session goes on with the helper.
  f.children[0]?.exit('the helper exited (code 0)')
  await settle()
  await ask(s.host, 'SavedAsked', { commands: [] })
  assert.equal(f.children.length, 1)
  assert.deepEqual(f.sent(), ['ChainTyped:1', 'SavedAsked:2'])
  assert.deepEqual(f.lines, [])
})

test('a shared helper that no longer knows the session (it started afresh) gets the session opened again and the event at once', async () => {
  const f = new Fake()
  const s = sharing(f, '/run/user/7/slashkit/helper.sock', true)
  await ask(s.host, 'SavedAsked', { commands: [] })
  f.respond = request =>
    f.requests.length === 2 ? { status: 410, text: JSON.stringify({ v: VERSION, error: 'no session' }) } : answer(request.seq)
  const said = await ask(s.host, 'ChainTyped', typed)
  assert.notEqual(said, undefined)
  assert.equal(s.opened.length, 2)
  assert.notEqual(s.opened[0], s.opened[1])
  assert.deepEqual(f.sent(), ['SavedAsked:1', 'ChainTyped:2', 'ChainTyped:1'])
  assert.deepEqual(f.lines, [])
})

test('a session that ends leaves the shared helper running: only its own session is dropped', async () => {
  const f = new Fake()
  const known = '/run/user/7/slashkit/helper.sock'
  const s = sharing(f, known, true)
  await ask(s.host, 'SavedAsked', { commands: [] })
  close(s.host)
  await settle()
  assert.equal(s.paths.at(-1), `${known} ${EXIT_PATH}?session=${s.opened[0] ?? ''}`)
})

test('a shared helper gone while a chain waited on it: one line says the chain went with it; gone after a forecast ran the chain: none', async () => {
  const gone = (f: Fake) => (request: Request) =>
    f.requests.length === 2 ? { status: 410, text: JSON.stringify({ v: VERSION, error: 'no session' }) } : answer(request.seq, { wants: ['PromptSubmitted'] })
  const waiting = new Fake()
  waiting.respond = gone(waiting)
  const s = sharing(waiting, '/run/user/7/slashkit/helper.sock', true)
  await ask(s.host, 'ChainTyped', typed)
  await ask(s.host, 'PromptSubmitted', { text: 'hi', origin: 'composer' })
  assert.equal(waiting.lines.length, 1)
  assert.match(waiting.lines[0] ?? '', /^unavailable: the helper answered 410/)
  // A chain of local commands, run whole from its forecast: its report is lost with the helper, and the wants it
  // would have changed are stale. The helper gone, the next chain goes to a fresh session without a word.
  const ran = new Fake()
  const forecast = { kind: 'run.typed', args: '', token: 1, then: [{ kind: 'log', text: 'all 1 command(s) ran' }] }
  ran.respond = request =>
    [2, 3].includes(ran.requests.length)
      ? { status: 410, text: JSON.stringify({ v: VERSION, error: 'no session' }) }
      : answer(request.seq, { wants: ['PaneOpened', 'PromptHanded', 'PromptSubmitted'], reply: forecast })
  const t = sharing(ran, '/run/user/7/slashkit/helper.sock', true)
  const said = await ask(t.host, 'ChainTyped', typed)
  await said?.ticket?.resolved('')
  await settle()
  await ask(t.host, 'ChainTyped', typed)
  assert.deepEqual(ran.sent(), ['ChainTyped:1', 'RunEnded:2+', 'ChainTyped:3', 'ChainTyped:1'])
  assert.equal(t.opened.length, 2)
  assert.deepEqual(ran.lines, ['all 1 command(s) ran'])
})
