"""A stateful test of slash chains: Hypothesis drives the in-memory host through every order of events a host
can deliver (typed chains and commands, turn ends, pane closes, late resolves, prompts, `/slash-chain`, the fail
tool, another window, restarts) and checks, after every step:

- that the host does exactly what seed 003's `register.ts` would: a small model, a port of the seed written
  here, predicts every transcript line, run, prompt and answer, in order;
- the chain rules on the transcript itself, whatever the model says: at most one chain runs; each chain ends
  in exactly one of `all N command(s) ran`, `stopped after ...` or `cancelled ...`, or still runs; a step runs
  only after its predecessor ended well; nothing runs for a chain after its stop or cancel; every line is one
  `slashkit.core.texts` makes;
- that an event the state does not name in `wants` (so a host may skip it) would change nothing.

Beyond the seed, the model's self-command tool (issue 27) takes part: the model queues /compact (once or twice in a
turn), and the small model predicts its two lines, its one run, `/slash-chain`'s status and `stop` naming it, and the
person's `builtin on|off` switch, beside the chains.
"""

import re
from collections.abc import Callable
from typing import Final, TypeVar

import attrs
from hypothesis import assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from slashkit.adapters.memory import Command, Local, MemoryHost, Pane, Prompt, Throws
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_machine import (
    Event,
    FailCalled,
    PaneClosed,
    PaneOpened,
    PromptHanded,
    PromptSubmitted,
    Reply,
    ToolAnswered,
    Transition,
    TurnEnded,
    on_event,
)
from slashkit.core.policy import PERSON_TYPING, Denied
from slashkit.core.texts import Key

# The commands the person can type: local, prompt and pane commands, held or not, panes that do not hold the
# chain, throwing ones, and (below) one the host does not know. `pr` is a prefix of `prh` on purpose: the
# seed takes a prompt that starts with `/<step>` as the step's own.
POOL: Final = {
    "loc": Command(does=Local()),
    "loch": Command(does=Local(), held=True),
    "pr": Command(does=Prompt("do pr")),
    "prh": Command(does=Prompt("do prh \n"), held=True),
    "pane": Command(does=Pane("p1")),
    "panh": Command(does=Pane("p2"), held=True),
    "blur": Command(does=Pane("p3", focus=False)),
    "float": Command(does=Pane("p4", placed=False)),
    "boom": Command(does=Throws("it broke")),
    "sboom": Command(does=Throws("slash-chain: inner broke")),
}
UNKNOWN: Final = "nope"
NAMES: Final = [*POOL, UNKNOWN]
#: The built-in the model queues (issue 27), held so a status or a stop can come while it runs; no chain names it.
SELF: Final = "compact"
HOST_COMMANDS: Final = {**POOL, SELF: Command(does=Local(), builtin=True, held=True)}
ARGS: Final = ["", "x", "two words", "  padded  "]
PERSON: Final = ("composer", "bridge")
JS_SPACE: Final = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    return text.strip(JS_SPACE)


# The timeline: what the person sees, in the order it happened, with a mark for each rule the test applied.


@attrs.frozen
class Line:
    text: str


@attrs.frozen
class Ran:
    command: str
    args: str


@attrs.frozen
class Handed:
    text: str


@attrs.frozen
class TypedChain:
    steps: tuple[Step, ...]
    args: str
    origin: str
    enabled: bool


@attrs.frozen
class TypedSingle:
    command: str
    args: str


@attrs.frozen
class TurnMark:
    reason: str
    agent: str | None


@attrs.frozen
class CloseMark:
    pane: str


@attrs.frozen
class ResolveMark:
    command: str
    error: str | None


@attrs.frozen
class Submitted:
    text: str
    origin: str


@attrs.frozen
class FailMark:
    reason: object
    agent: str | None


@attrs.frozen
class Slash:
    args: str


@attrs.frozen
class Other:
    what: str


Mark = TypedChain | TypedSingle | TurnMark | CloseMark | ResolveMark | Submitted | FailMark | Slash | Other
Entry = Line | Ran | Handed | Mark

T = TypeVar("T")


class Recorded(list[T]):
    """A list that also writes each item it gets onto the shared timeline."""

    def __init__(self, timeline: list[Entry], wrap: Callable[[T], Entry]) -> None:
        super().__init__()
        self._timeline = timeline
        self._wrap = wrap

    def append(self, item: T) -> None:
        super().append(item)
        self._timeline.append(self._wrap(item))


# The model: seed 003's `register.ts` and `chain.ts`, ported as written, over the in-memory host's scripts.


def _not_run(left: tuple[Step, ...]) -> str:
    return "" if not left else "; not run: " + ", ".join(f"/{s.command}" for s in left)


def _step_line(index: int, total: int, step: Step) -> str:
    return f"{index}/{total}: /{step.command}" + (f" {step.args}" if step.args else "")


def _note(index: int, total: int, left: tuple[Step, ...]) -> str:
    after = ", ".join(f"/{s.command}" for s in left) or "none"
    return (
        f"[slash-chain] This is step {index}/{total} of a chain; after it: {after}. If you could not do what this "
        "step asks, call the mcp__slash-chain__fail tool with the reason before you end your turn, and the steps "
        "after it do not run."
    )


WAITING: Final = {"run": "running", "turn": "waiting for its turn", "pane": "waiting for its pane to close"}

Done = Callable[[str | None], None]


@attrs.define(eq=False)
class SeedRunning:
    step: Step
    left: tuple[Step, ...]
    index: int
    total: int
    wait: str = "run"
    saw_prompt: bool = False
    turn_ended: str | None = None
    pane: str | None = None
    pane_closed: bool = False


@attrs.define
class SeedModel:
    """What the seed's mod would make the host show, fed the same actions."""

    enabled: object = None
    running: SeedRunning | None = None
    timers: list[Callable[[], None]] = attrs.field(factory=list)
    held: dict[str, Done] = attrs.field(factory=dict)
    out: list[Entry] = attrs.field(factory=list)
    answers: list[str] = attrs.field(factory=list)
    #: The model's self-command beyond the seed: the switch as stored, and the one held (its label, its number,
    #: whether its run started).
    builtin: object = None
    held_self: tuple[str, int, bool] | None = None
    queued: int = 0

    # register.ts

    def log(self, text: str) -> None:
        self.out.append(Line(text))

    def stop(self, why: str) -> None:
        r = self.running
        if r is None:
            return
        self.running = None
        self.log(f"stopped after /{r.step.command}: {why}{_not_run(r.left)}")

    def cancel(self) -> str:
        r = self.running
        if r is None:
            return "no chain runs"
        self.running = None
        text = f"cancelled{_not_run(r.left)}"
        self.log(text)
        return text

    def advance(self, r: SeedRunning) -> None:
        if not r.left:
            self.running = None
            self.log(f"all {r.total} command(s) ran")
            return
        nxt = SeedRunning(step=r.left[0], left=r.left[1:], index=r.index + 1, total=r.total)
        self.running = nxt
        self.log(_step_line(nxt.index, nxt.total, nxt.step))
        self.timers.append(lambda: self.run_step(nxt))

    def end_turn(self, r: SeedRunning, reason: str) -> None:
        if reason == "answer":
            self.advance(r)
        else:
            self.stop(f"its turn ended with {reason}")

    def after_run(self, r: SeedRunning) -> None:
        if self.running is not r:
            return
        if r.saw_prompt:
            if r.turn_ended is None:
                r.wait = "turn"
            else:
                self.end_turn(r, r.turn_ended)
            return
        if r.pane is not None and not r.pane_closed:
            r.wait = "pane"
            return
        self.advance(r)

    def finished(self, r: SeedRunning) -> Done:
        def done(error: str | None) -> None:
            if error is None:
                self.after_run(r)
            elif self.running is r:
                self.stop(f"it failed: {error.removeprefix('slash-chain: ')}")

        return done

    def run_step(self, r: SeedRunning) -> None:
        if self.running is not r:
            return
        self.host_run(r.step.command, r.step.args, "plugin", self.finished(r))

    def chain_typed(self, command: str, args: str, origin: str, steps: tuple[Step, ...]) -> None:
        if self.running is not None and origin in PERSON:
            self.cancel()
        if self.enabled is False:
            self.host_run(command, args, origin, lambda _: None)
            return
        r = SeedRunning(step=steps[0], left=steps[1:], index=1, total=len(steps))
        self.running = r
        self.log(_step_line(1, r.total, r.step))
        self.host_run(command, r.step.args, origin, self.finished(r))
        self.settle()

    def chain_command(self, args: str) -> str:
        words = tuple(re.split(f"[{re.escape(JS_SPACE)}]+", js_trim(args))) if js_trim(args) else ()
        if words in (("builtin", "on"), ("builtin", "off")):
            self.builtin = words[1] == "on"
            said = [texts.BUILTIN_ON_TEXT if self.builtin else texts.BUILTIN_OFF_TEXT]
            if not self.builtin:
                said += self.cancel_self()
            return " · ".join(said)
        word = js_trim(args)
        if word == "stop" and self.held_self is not None:
            chain = [] if self.running is None else [self.cancel()]
            return " · ".join(chain + self.cancel_self())
        if word == "" and self.held_self is not None:
            label, _, runs = self.held_self
            return self.seed_status() + texts.queued_status_text(label, runs)
        if word in ("on", "off"):
            self.enabled = word == "on"
            if word == "off" and self.running is not None:
                self.cancel()
            if word == "on":
                return "on: /a && /b runs /b once /a ended well"
            return "off: the engine runs the first command alone, as it does without the mod"
        if word == "stop":
            return self.cancel()
        if word != "":
            return (
                "expects nothing (the status), stop, on, off, list, steps, add /CMD, drop N, allow NAME, resume, "
                "forget, builtin on or builtin off"
            )
        return self.seed_status()

    def seed_status(self) -> str:
        head = "off" if self.enabled is False else "on"
        r = self.running
        if r is None:
            return f"{head} · no chain runs"
        return (
            f"{head} · {r.index}/{r.total} {_step_line(r.index, r.total, r.step).split(': ', 1)[1]}, {WAITING[r.wait]}"
        )

    # Beyond the seed: the model's self-command

    def builtin_asked(self, args: str) -> None:
        if self.builtin is False or self.held_self is not None:
            return
        self.queued += 1
        label, number = "/compact" + (f" {args}" if args else ""), self.queued
        self.held_self = (label, number, False)
        self.log(texts.text("en", Key.LOG_QUEUED, queued=label))
        self.timers.append(lambda: self.run_self(number, args))

    def run_self(self, number: int, args: str) -> None:
        if self.held_self is None or self.held_self[1] != number:
            return  # cancelled
        label = self.held_self[0]
        self.held_self = (label, number, True)
        self.log(texts.text("en", Key.LOG_RUNS, queued=label))
        self.host_run(SELF, args, "plugin", self.self_ran)

    def self_ran(self, error: str | None) -> None:
        self.held_self = None

    def cancel_self(self) -> list[str]:
        if self.held_self is None:
            return []
        label, _, runs = self.held_self
        if not runs:
            self.held_self = None
        return [texts.queued_stop_text(label, runs)]

    def fail(self, reason: object, agent: str | None) -> Reply:
        r = self.running
        if r is None or not r.saw_prompt or agent is not None:
            return Denied("no slash-chain step waits on this turn, so there is nothing to stop")
        why = js_trim(reason) if isinstance(reason, str) else ""
        if why == "":
            return Denied("reason is required: say in one sentence why the step failed")
        self.stop(f"the model reported it failed: {why}")
        return ToolAnswered("The chain stopped; the steps after this one do not run.")

    def skill_prompt(self, text: str) -> str:
        r = self.running
        if r is None or r.wait != "run":
            return text
        r.saw_prompt = True
        return text if not r.left else f"{text.rstrip(JS_SPACE)}\n\n{_note(r.index, r.total, r.left)}"

    def ui_open(self, pane: str, focus: bool, placed: bool) -> None:
        r = self.running
        if r is not None and r.wait == "run" and focus and placed:
            r.pane = pane

    def ui_close(self, pane: str) -> None:
        r = self.running
        if r is not None and r.pane == pane:
            if r.wait == "pane":
                self.advance(r)
            else:
                r.pane_closed = True

    def turn_complete(self, reason: str, agent: str | None) -> None:
        r = self.running
        if r is None or not r.saw_prompt or agent is not None:
            return
        if r.wait == "turn":
            self.end_turn(r, reason)
        elif r.wait == "run":
            r.turn_ended = reason

    def prompt_submit(self, text: str, origin: str) -> None:
        r = self.running
        if r is None or origin not in PERSON:
            return
        if text.startswith(f"/{r.step.command}") or text.startswith("/slash-chain"):
            return
        self.cancel()

    # The in-memory host around the mod

    def host_run(self, command: str, args: str, origin: str, done: Done) -> None:
        self.out.append(Ran(command, args))
        script = HOST_COMMANDS.get(command)
        if script is None:
            done(f"Unknown command: /{command}")
            return
        match script.does:
            case Throws(message):
                done(message)
                return
            case Prompt(text):
                self.out.append(Handed(self.skill_prompt(text)))
                self.prompt_submit(f"/{command} {args}".rstrip(), origin)
            case Pane(pane, focus, placed):
                self.ui_open(pane, focus, placed)
        if script.held:
            self.held[command] = done
        else:
            done(None)

    def settle(self) -> None:
        while self.timers:
            self.timers.pop(0)()


# The chain rules, read off the timeline alone.


@attrs.define
class OpenChain:
    steps: tuple[Step, ...]
    k: int = 1
    ran: bool = False
    resolved_ok: bool = False
    answered: bool = False
    closed: bool = False

    @property
    def step(self) -> Step:
        return self.steps[self.k - 1]

    @property
    def left(self) -> tuple[Step, ...]:
        return self.steps[self.k :]


STEP_LINE: Final = r"(\d+)/(\d+): /([A-Za-z0-9_:.-]+)(?: (.+))?"


@attrs.define
class TranscriptRules:
    """Reads the timeline as it grows and fails on the first entry that breaks a chain rule."""

    seen: int = 0
    open: OpenChain | None = None
    mark: Mark | None = None
    previous: Entry | None = None
    foreign: list[tuple[str, str]] = attrs.field(factory=list)
    started_for_mark: bool = False
    started: int = 0
    ended: int = 0

    def catch_up(self, timeline: list[Entry]) -> None:
        while self.seen < len(timeline):
            entry = timeline[self.seen]
            self.seen += 1
            match entry:
                case Line(text):
                    self.line(text)
                case Ran(command, args):
                    self.ran(command, args)
                case Handed():
                    pass
                case _:
                    self.marked(entry)
            self.previous = entry

    def marked(self, mark: Mark) -> None:
        assert self.foreign == [], f"a run the last rule should have made did not happen: {self.foreign}"
        self.mark, self.started_for_mark = mark, False
        match mark:
            case TypedChain(steps, args, _, enabled) if not enabled:
                self.foreign = [(steps[0].command, args)]
            case TypedSingle(command, args):
                self.foreign = [(command, args)]
            case Slash(args):
                self.foreign = [("slash-chain", args)]
        o = self.open
        if o is None or not o.ran:
            return
        match mark:
            case TurnMark("answer", None):
                o.answered = True
            case CloseMark():
                o.closed = True
            case ResolveMark(command, None) if command == o.step.command:
                o.resolved_ok = True

    def ran(self, command: str, args: str) -> None:
        o = self.open
        if o is not None and not o.ran and self.previous == Line(texts.step_text(o.k, len(o.steps), o.step)):
            assert (command, args) == (o.step.command, o.step.args), "a step ran with other args than its line"
            o.ran = True
            return
        # Not the open chain's step right after its line: only what the last rule typed may run.
        assert self.foreign[:1] == [(command, args)], f"a run nothing explains (after a stop or cancel?): {command}"
        self.foreign.pop(0)

    def line(self, text: str) -> None:
        if found := re.fullmatch(STEP_LINE, text, re.DOTALL):
            k, n, step = int(found[1]), int(found[2]), Step(found[3], found[4] or "")
            assert texts.step_text(k, n, step) == text
            self.step_line(k, n, step)
        elif found := re.fullmatch(r"all (\d+) command\(s\) ran", text):
            o = self.open
            assert o is not None, "a chain ended twice, or one that never started"
            assert texts.done_text(int(found[1])) == text
            assert int(found[1]) == len(o.steps) == o.k, "the chain ended before its last step"
            self.ended_well(o)
            self.close()
        elif text.startswith("the model queued /compact"):
            assert text.endswith("; it runs once this turn ends (/slash-chain stop cancels it)"), text
        elif found := re.fullmatch(r"/compact ?(.*) runs now: the model queued it", text, re.DOTALL):
            # The run the line announces comes next, whatever the last rule typed.
            self.foreign.insert(0, (SELF, found[1]))
        elif text.startswith("stopped after /"):
            self.stopped(text)
        elif text.startswith("cancelled"):
            self.cancelled(text)
        else:
            raise AssertionError(f"not a line the texts module makes: {text!r}")

    def step_line(self, k: int, n: int, step: Step) -> None:
        o = self.open
        if k == 1:
            assert isinstance(self.mark, TypedChain) and self.mark.enabled and not self.started_for_mark
            # Only a chain someone else typed replaces a running one without a line (the seed's rule).
            assert o is None or self.mark.origin not in PERSON, "a chain started while another runs"
            if o is not None:
                self.close()
            assert (step, n) == (self.mark.steps[0], len(self.mark.steps))
            self.open, self.started_for_mark = OpenChain(self.mark.steps), True
            self.started += 1
            return
        assert o is not None, "a step line for a chain that is not running"
        assert (k, n, step) == (o.k + 1, len(o.steps), o.steps[k - 1]), "a step line out of order"
        self.ended_well(o)
        self.open = OpenChain(o.steps, k)

    def ended_well(self, o: OpenChain) -> None:
        """A step's successor starts only after it ran, resolved, got its answer or its pane closed."""
        assert o.ran, f"the step after /{o.step.command} started before it ran"
        script = POOL.get(o.step.command)
        assert script is not None and not isinstance(script.does, Throws), "a step that failed was followed"
        if script.held:
            assert o.resolved_ok, f"/{o.step.command} was followed before its run resolved"
        if isinstance(script.does, Prompt):
            assert o.answered, f"/{o.step.command} was followed before its turn ended with an answer"
        if isinstance(script.does, Pane) and script.does.focus and script.does.placed:
            assert o.closed or o.answered, f"/{o.step.command} was followed before its pane closed"

    def stopped(self, text: str) -> None:
        o = self.open
        assert o is not None, "a stop line for a chain that is not running"
        prefix, suffix = f"stopped after /{o.step.command}: ", _not_run(o.left)
        assert text.startswith(prefix) and text.endswith(suffix), f"the stop names other steps: {text!r}"
        why = text[len(prefix) : len(text) - len(suffix)]
        assert texts.stopped_text(o.step, why, o.left) == text
        script, mark = POOL.get(o.step.command), self.mark
        if why.startswith("it failed: "):
            match mark:
                case ResolveMark(command, str(error)) if command == o.step.command:
                    message = error
                case _ if script is None:
                    message = f"Unknown command: /{o.step.command}"
                case _:
                    assert script is not None and isinstance(script.does, Throws), f"{why!r} with nothing thrown"
                    message = script.does.message
            assert why == texts.thrown_why(message)
        elif why.startswith("its turn ended with "):
            assert isinstance(mark, TurnMark | ResolveMark), f"{why!r} with no turn end"
            assert why != "its turn ended with answer"
        else:
            assert isinstance(mark, FailMark) and mark.agent is None and isinstance(mark.reason, str), why
            assert why == texts.failed_why(js_trim(mark.reason))
        self.close()

    def cancelled(self, text: str) -> None:
        o = self.open
        assert o is not None, "a cancel line for a chain that is not running"
        assert text == texts.cancelled_text(o.left)
        own = (f"/{o.step.command}", "/slash-chain")
        match self.mark:
            case TypedChain(origin=origin):
                assert origin in PERSON
            case Submitted(prompt, origin):
                assert origin in PERSON and not prompt.startswith(own)
            case TypedSingle(command, args):
                assert isinstance(POOL[command].does, Prompt) and not f"/{command} {args}".startswith(own)
            case Slash(args):
                assert js_trim(args) in ("stop", "off")
            case other:
                raise AssertionError(f"a chain was cancelled by {other!r}")
        self.close()

    def close(self) -> None:
        self.open = None
        self.ended += 1


#: One event of each kind a host may skip when the state does not name it (`wants`), by the host's name for it.
SKIPPABLE: Final[dict[str, list[Event]]] = {
    "PromptHanded": [PromptHanded("do it")],
    "PaneOpened": [PaneOpened("p1", focus=True, placed=True)],
    "PaneClosed": [PaneClosed(p) for p in ("p1", "p2", "p3", "p4")],
    "TurnEnded": [TurnEnded("answer"), TurnEnded("error")],
    "PromptSubmitted": [PromptSubmitted("never mind", "composer"), PromptSubmitted("/pr", "bridge")],
}


class ChainMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.timeline: list[Entry] = []
        self.h = MemoryHost(commands=dict(HOST_COMMANDS))
        self.h.ui.lines = Recorded(self.timeline, Line)
        self.h.runs = Recorded(self.timeline, lambda run: Ran(*run))
        self.h.prompts = Recorded(self.timeline, Handed)
        self.model = SeedModel()
        self.transcript = TranscriptRules()

    def note(self, mark: Mark) -> None:
        self.timeline.append(mark)

    @rule(
        first=st.sampled_from(NAMES),
        first_args=st.sampled_from(ARGS),
        rest=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(ARGS)), min_size=1, max_size=3),
        origin=st.sampled_from([*PERSON, *PERSON, "sdk", "plugin"]),
    )
    def type_a_chain(self, first: str, first_args: str, rest: list[tuple[str, str]], origin: str) -> None:
        # A command the host does not list runs only for the person's typing (slashkit.core.policy): anyone else's
        # chain naming one is the refusal rule's (tests/property/test_refusal_stateful.py), not the seed's.
        assume(origin in PERSON_TYPING or UNKNOWN not in {first, *(name for name, _ in rest)})
        text = f"/{first} {first_args}" + "".join(f" && /{name} {args}" for name, args in rest)
        args = text.partition(" ")[2]
        steps = (Step(first, js_trim(first_args)), *(Step(name, js_trim(a)) for name, a in rest))
        self.note(TypedChain(steps, args, origin, self.h.store.data.get("enabled") is not False))
        self.model.chain_typed(first, args, origin, steps)
        self.h.type(text, origin)

    @rule(name=st.sampled_from(NAMES), args=st.sampled_from(ARGS))
    def type_a_single_command(self, name: str, args: str) -> None:
        self.note(TypedSingle(name, args))
        self.model.host_run(name, args, "composer", lambda _: None)
        self.h.type(f"/{name} {args}")

    @rule(
        reason=st.sampled_from(["answer", "answer", "error", "refusal", "aborted"]),
        agent=st.sampled_from([None, None, "agent-1"]),
    )
    def end_a_turn(self, reason: str, agent: str | None) -> None:
        self.note(TurnMark(reason, agent))
        self.model.turn_complete(reason, agent)
        self.model.settle()
        self.h.end_turn(reason, agent)

    @rule(pane=st.sampled_from(["p1", "p2", "p3", "p4", "p9"]))
    def close_a_pane(self, pane: str) -> None:
        self.note(CloseMark(pane))
        self.model.ui_close(pane)
        self.model.settle()
        self.h.close_pane(pane)

    @precondition(lambda self: bool(self.model.held))
    @rule(which=st.integers(0, 9), error=st.sampled_from([None, None, "late failure", "slash-chain: late"]))
    def resolve_a_held_run(self, which: int, error: str | None) -> None:
        names = sorted(self.model.held)
        command = names[which % len(names)]
        self.note(ResolveMark(command, error))
        self.model.held.pop(command)(error)
        self.model.settle()
        self.h.resolve(command, error)

    # Rules aimed at the running step, so the rare orders (a pane closed or a turn ended before the step's held
    # run resolved) come up in most runs rather than by chance.

    @precondition(lambda self: (r := self.h.session.chains.running) is not None and r.pane is not None)
    @rule()
    def close_the_running_steps_pane(self) -> None:
        running = self.h.session.chains.running
        assert running is not None and running.pane is not None
        self.close_a_pane(running.pane)

    @precondition(
        lambda self: (
            self.h.session.chains.running is not None
            and self.h.session.chains.running.pane is not None
            and self.h.session.chains.running.wait == "run"
        )
    )
    @rule(error=st.sampled_from([None, None, "late failure"]))
    def close_the_pane_then_resolve_its_held_run(self, error: str | None) -> None:
        running = self.h.session.chains.running
        assert running is not None and running.pane is not None
        self.close_a_pane(running.pane)
        if running.step.command in self.model.held:
            self.resolve_a_held_run(sorted(self.model.held).index(running.step.command), error)

    @precondition(
        lambda self: (
            self.h.session.chains.running is not None and self.h.session.chains.running.step.command in self.model.held
        )
    )
    @rule(error=st.sampled_from([None, None, "late failure"]))
    def resolve_the_running_steps_held_run(self, error: str | None) -> None:
        running = self.h.session.chains.running
        assert running is not None
        names = sorted(self.model.held)
        self.resolve_a_held_run(names.index(running.step.command), error)

    @precondition(lambda self: self.h.session.chains.running is not None and self.h.session.chains.running.saw_prompt)
    @rule(reason=st.sampled_from(["answer", "answer", "error"]))
    def end_the_running_steps_turn(self, reason: str) -> None:
        self.end_a_turn(reason, None)

    @rule(
        text=st.sampled_from(["never mind", "/slash-chain status", "/pr again", "/prh", "/loc", "/pane x", "/nope"]),
        origin=st.sampled_from(["composer", "bridge", "plugin"]),
    )
    def submit_a_prompt(self, text: str, origin: str) -> None:
        self.note(Submitted(text, origin))
        self.model.prompt_submit(text, origin)
        if text.startswith("/"):
            self.h.handle(PromptSubmitted(text, origin))
        else:
            self.h.type(text, origin)

    @rule(
        args=st.sampled_from(
            ["", "stop", "on", "off", "bogus", "  stop  ", "status", "builtin off", "builtin on", " builtin\u3000off "]
        )
    )
    def run_slash_chain(self, args: str) -> None:
        self.note(Slash(args))
        self.model.out.append(Ran("slash-chain", args))
        self.model.answers.append(self.model.chain_command(args))
        self.h.type(f"/slash-chain {args}")

    @rule(
        reason=st.sampled_from(["it broke", "  padded  ", "", "   ", None, 42]),
        agent=st.sampled_from([None, None, "agent-1"]),
    )
    def call_the_fail_tool(self, reason: object, agent: str | None) -> None:
        self.note(FailMark(reason, agent))
        expected = self.model.fail(reason, agent)
        assert self.h.handle(FailCalled(reason, agent)) == expected

    @rule(args=st.sampled_from(["", "keep it"]), twice=st.booleans())
    def the_model_queues_a_built_in(self, args: str, twice: bool) -> None:
        # Called once or twice in one turn; the turn then ends as far as the queued command cares (the host idles).
        for _ in range(2 if twice else 1):
            self.note(Other(f"builtin {args!r}"))
            self.model.builtin_asked(args)
            self.h.builtin_call(SELF, args)
        self.model.settle()
        self.h.settle()

    @rule(value=st.sampled_from([True, False, None]))
    def switch_the_models_commands_in_another_window(self, value: object) -> None:
        self.note(Other(f"store builtin {value!r}"))
        self.model.builtin = value
        self.h.store.data["builtin"] = value

    @rule(value=st.sampled_from([True, False, None, "off"]))
    def change_the_setting_in_another_window(self, value: object) -> None:
        self.note(Other(f"store {value!r}"))
        self.model.enabled = value
        self.h.store.data["enabled"] = value

    @rule()
    def restart_the_session(self) -> None:
        self.note(Other("restart"))
        self.h.start_session()

    @rule()
    def settle_the_clock(self) -> None:
        self.note(Other("settle"))
        self.model.settle()
        self.h.settle()

    @invariant()
    def the_host_shows_what_the_seed_would(self) -> None:
        assert [e for e in self.timeline if not isinstance(e, Mark)] == self.model.out
        assert self.h.answers == self.model.answers
        assert self.h.store.data.get("enabled") == self.model.enabled
        assert self.h.store.data.get("builtin") == self.model.builtin
        assert self.h.clock.pending == 0
        r, m = self.h.session.chains.running, self.model.running
        assert (r is None) == (m is None)
        if r is not None and m is not None:
            assert (r.index, r.total, r.step, r.left, r.wait) == (m.index, m.total, m.step, m.left, m.wait)

    @invariant()
    def the_transcript_keeps_the_chain_rules(self) -> None:
        self.transcript.catch_up(self.timeline)
        assert self.transcript.foreign == [], f"the last rule's runs did not happen: {self.transcript.foreign}"
        mark = self.transcript.mark
        if isinstance(mark, TypedChain) and mark.enabled:
            assert self.transcript.started_for_mark, "a chain typed while on did not start"

    @invariant()
    def an_event_the_state_does_not_want_changes_nothing(self) -> None:
        state, wanted = self.h.session.chains, self.h.wants()
        for name, events in SKIPPABLE.items():
            if name not in wanted:
                for event in events:
                    assert on_event(state, event) == Transition(state), f"{name} is needed but not wanted"

    @invariant()
    def at_most_one_chain_runs_and_every_other_one_ended_once(self) -> None:
        self.transcript.catch_up(self.timeline)
        o, r = self.transcript.open, self.h.session.chains.running
        assert self.transcript.started - self.transcript.ended == (0 if o is None else 1)
        assert (o is None) == (r is None)
        if o is not None and r is not None:
            assert (r.index, r.step) == (o.k, o.step)


ChainMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
TestChainMachine = ChainMachine.TestCase
