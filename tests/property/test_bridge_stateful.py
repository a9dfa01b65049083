"""The bridge as a host meets it, under any interleaving: a model of the TypeScript client
(src/adapters/slashkit/adapters/bridge/client.ts, rule for rule) talks to a real `Bridge` through requests that
reach it in any order, while the host's timers fire and its runs end in any order, forecasts are applied when
the client thinks they hold (and turn out stale when a later request overtook the report), and the helper dies
and is started afresh.

The invariant: the two ends never part. Every timer and run the helper waits on is one the client holds (it
started it and has not reported it yet, or its report is on the way), so no chain waits forever on a step the
host never heard of. A helper that trusted a stale forecast breaks it: it skips what it did instead of what the
client did.
"""

from collections.abc import Callable
from typing import Any, Final, cast

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from slashkit.adapters.bridge import bridge as bridge_module
from slashkit.adapters.bridge import protocol as p
from slashkit.adapters.bridge.bridge import Bridge, LateEvent
from slashkit.adapters.memory import DictEnvironment
from slashkit.core import chain_machine as m
from slashkit.core import session as s

#: Local commands the host runs at once; `prompt` hands the model a prompt, so its step waits on a turn.
COMMANDS: Final = ("a", "b", "c", "prompt")
CHAINS: Final = st.lists(st.sampled_from(COMMANDS), min_size=2, max_size=3).map(lambda names: names)
OPERATORS: Final = st.sampled_from(["&&", "||", ";"])


@attrs.define
class HelperRun:
    """One helper process: the bridge behind it, and the number the client knows it by."""

    bridge: Bridge
    generation: int


@attrs.define
class InFlight:
    """A request on its way to the helper: the event, its seq, and what the client does with the answer."""

    generation: int
    seq: int
    event: p.Event


@attrs.define
class Timer:
    token: int
    fires: tuple[Any, ...] | None
    at: int
    generation: int


@attrs.define
class Running:
    """A command the host runs for the helper; `token` None: a run nobody reports (a gone helper's)."""

    command: str
    token: int
    then: tuple[Any, ...] | None
    at: int
    generation: int


class BridgeMachine(RuleBasedStateMachine):
    """The client's state, as client.ts keeps it, and the host around it."""

    def __init__(self) -> None:
        super().__init__()
        self.generations = 0
        self.helper: HelperRun | None = None
        self.wants: frozenset[str] = frozenset()
        #: The version of the answer `wants` came from: an older answer arriving later does not undo them.
        self.wants_at = 0
        self.sent = 0
        self.in_flight: list[InFlight] = []
        self.timers: list[Timer] = []
        self.runs: list[Running] = []
        self.lines: list[str] = []
        # A request that overtook another is handled at once, as after the 2 s wait (counting the other gone).
        self.order_wait = bridge_module.ORDER_WAIT_S
        bridge_module.ORDER_WAIT_S = 0.0

    def teardown(self) -> None:
        bridge_module.ORDER_WAIT_S = self.order_wait

    # The client (client.ts)

    def start(self) -> HelperRun:
        self.generations += 1
        env = DictEnvironment({"LICH_SESSION_ID": "lich-1"})
        self.helper = HelperRun(Bridge(env), self.generations)
        self.sent = 0
        return self.helper

    def ask(self, event: p.Event) -> None:
        """`ask`: the event is in flight until delivered."""
        current = self.helper or self.start()
        self.sent += 1
        self.in_flight.append(InFlight(current.generation, self.sent, event))

    def answered(self, request: InFlight, answer: p.Answer) -> None:
        """What the client does with an answer (an event's or a report's): takes the wants unless a newer answer
        came first, carries out the effects, and for a typed chain runs its head."""
        if answer.version > self.wants_at:
            self.wants = answer.wants
            self.wants_at = answer.version
        for effect in answer.effects:
            self.act(effect, answer.version, request.generation)
        reply = answer.reply
        if isinstance(reply, s.RunTyped):
            typed = request.event
            assert isinstance(typed, m.ChainTyped)
            self.runs.append(Running(typed.command, reply.token, reply.then, answer.version, request.generation))

    def act(self, effect: Any, at: int, generation: int) -> None:
        match effect:
            case m.Log(text):
                self.lines.append(text)
            case s.After(_, token, fires):
                self.timers.append(Timer(token, fires, at, generation))
            case s.Run(command, _, token, then):
                self.runs.append(Running(command, token, then, at, generation))

    def current(self, generation: int) -> bool:
        return self.helper is not None and self.helper.generation == generation

    def send_foreseen(
        self, event: s.TimerFired | s.RunEnded, foreseen: tuple[Any, ...] | None, at: int, gen: int
    ) -> None:
        """`sendForeseen`: carry the forecast out and send the report, without waiting for its answer, when nothing
        was sent since it was made."""
        if foreseen is None or not self.current(gen) or self.sent != at:
            self.ask(attrs.evolve(event, applied=False))
            return
        self.sent += 1
        for effect in foreseen:
            self.act(effect, at + 1, gen)
        self.in_flight.append(InFlight(gen, self.sent, attrs.evolve(event, applied=True)))

    # The host

    @initialize()
    def inside_lich(self) -> None:
        """An interactive session inside lich: both features share the helper, and a self-command's timer
        takes a token between two of a chain's."""
        self.ask(s.SessionStarted(True))
        self.a_request_arrives_in_order()

    def a_request_arrives_in_order(self) -> None:
        self.arrives(self.in_flight.pop(0))

    @rule(names=CHAINS, operator=OPERATORS, by_person=st.booleans(), answered=st.booleans())
    def type_chain(self, names: list[str], operator: str, by_person: bool, answered: bool) -> None:
        """A chain is typed; its hook waits for the answer (`answered`), or another hook runs meanwhile."""
        args = f" {operator} ".join(f"/{name}" for name in names[1:])
        origin = "composer" if by_person else "plugin"
        self.ask(m.ChainTyped(names[0], f"{operator} {args}", origin, True))
        if answered:
            self.the_newest_request_arrives()

    @rule(word=st.sampled_from(["", "stop"]))
    def chain_command(self, word: str) -> None:
        self.ask(m.ChainCommandTyped(word, True))

    @rule()
    def person_prompts(self) -> None:
        if "PromptSubmitted" in self.wants:
            self.ask(m.PromptSubmitted("something else", "composer"))

    @rule()
    def turn_ends(self) -> None:
        if "TurnEnded" in self.wants:
            self.ask(m.TurnEnded("answer", None, "done"))

    @rule()
    def model_asks_for_compact(self) -> None:
        if "SkillAnswered" in self.wants:
            self.ask(s.SkillAnswered("compact", True, ("compact",)))

    @precondition(lambda self: self.timers)
    @rule(data=st.data())
    def a_timer_fires(self, data: st.DataObject) -> None:
        timer = self.timers.pop(data.draw(st.integers(0, len(self.timers) - 1)))
        if not self.current(timer.generation):
            for effect in timer.fires or ():
                self.act(effect, timer.at + 1, timer.generation)
            return
        self.send_foreseen(s.TimerFired(timer.token), timer.fires, timer.at, timer.generation)

    @precondition(lambda self: self.runs)
    @rule(data=st.data(), fails=st.booleans())
    def a_run_ends(self, data: st.DataObject, fails: bool) -> None:
        run = self.runs.pop(data.draw(st.integers(0, len(self.runs) - 1)))
        if not self.current(run.generation):
            return
        if run.command == "prompt" and "PromptHanded" in self.wants:
            self.ask(m.PromptHanded("do it"))
        error = "it broke" if fails else None
        self.send_foreseen(s.RunEnded(run.token, error), None if fails else run.then, run.at, run.generation)

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def a_request_arrives(self, data: st.DataObject) -> None:
        """Requests overtake each other on their way: any one in flight may arrive next."""
        # Counted from the newest, so that the simplest case is the one that overtakes the rest.
        self.arrives(self.in_flight.pop(-1 - data.draw(st.integers(0, len(self.in_flight) - 1))))

    def the_newest_request_arrives(self) -> None:
        self.arrives(self.in_flight.pop())

    def arrives(self, request: InFlight) -> None:
        """The helper handles a request and the client takes the answer. A request that comes after the helper
        counted it gone (it handled a later one first) is answered 409, and the client gives that helper up
        (client.ts `readAnswer`, `retire`)."""
        if not self.current(request.generation):
            return  # the dead helper's socket refuses it
        assert self.helper is not None
        try:
            answer = self.helper.bridge.handle(request.event, request.seq)
        except LateEvent:
            self.the_helper_dies()
            return
        self.answered(request, answer)

    @rule()
    def the_helper_dies(self) -> None:
        """`watch`: the child ended (or `retire`: the client gave it up); its state goes with it, and the next
        event starts a new one."""
        self.helper = None
        self.wants = frozenset()
        self.wants_at = 0

    # The invariant

    @invariant()
    def the_helper_waits_only_on_what_the_client_holds(self) -> None:
        helper = self.helper
        if helper is None:
            return
        mine = helper.generation
        held = {t.token for t in self.timers if t.generation == mine} | {
            r.token for r in self.runs if r.generation == mine
        }
        reported = {
            request.event.token
            for request in self.in_flight
            if request.generation == mine and isinstance(request.event, s.TimerFired | s.RunEnded)
        }
        waiting = set(helper.bridge.state.pending)
        assert waiting <= held | reported, f"the helper waits on {sorted(waiting - held - reported)}, unknown here"


BridgeMachine.TestCase.settings = settings(
    max_examples=3000, stateful_step_count=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_the_client_and_the_helper_never_part = BridgeMachine.TestCase


class _Drawn:
    """Draws one given value, as hypothesis's `data` would."""

    def __init__(self, value: int) -> None:
        self.value = value

    def draw(self, strategy: object) -> int:
        return self.value


def drawn(value: int) -> st.DataObject:
    """A rule's `data` that draws `value`, to replay steps hypothesis found."""
    return cast(st.DataObject, _Drawn(value))


def test_a_report_that_comes_after_the_helper_counted_it_gone_gives_that_helper_up() -> None:
    """Issue 21's steps, which hypothesis once found: a self-command's timer and run are carried out from their
    forecasts and their reports sent; a chain typed meanwhile overtakes them, so the helper counts them gone and
    gives the chain's first run the token the host had used for the self-command's run. The run's report then
    comes: handled, it ended the chain's step, which the host still ran, and the helper waited on a timer the host
    never heard of. Now it is refused as late, and the client starts a fresh helper."""
    machine = BridgeMachine()
    try:
        steps: list[Callable[[], object]] = [
            machine.inside_lich,
            machine.model_asks_for_compact,
            lambda: machine.a_request_arrives(drawn(0)),
            lambda: machine.a_timer_fires(drawn(0)),
            lambda: machine.a_run_ends(drawn(0), fails=False),
            machine.model_asks_for_compact,
            lambda: machine.type_chain(names=["a", "a"], operator="&&", by_person=False, answered=True),
        ]
        for step in steps:
            step()
            machine.the_helper_waits_only_on_what_the_client_holds()
        assert machine.helper is not None
        first = machine.helper.generation

        machine.a_request_arrives(drawn(1))  # the report of the self-command's run

        machine.the_helper_waits_only_on_what_the_client_holds()
        assert machine.helper is None
        machine.model_asks_for_compact()
        machine.type_chain(names=["a", "b"], operator="&&", by_person=True, answered=True)
        assert machine.helper is not None and machine.helper.generation == first + 1
    finally:
        machine.teardown()
