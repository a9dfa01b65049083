"""Reports about a step that no longer runs (a run that resolves late, a timer that fires twice or after its chain
ended) move nothing: each timer and run is named by its own token, which the session forgets once its step no
longer runs. Tokens count from 1 in the order the session gives them: the typed head's run, then each later
step's timer and run."""

import pytest

from slashkit.adapters.memory import Command, Local, host
from slashkit.core.chain_machine import (
    ChainState,
    ChainTyped,
    Event,
    StepDue,
    StepFailed,
    StepRan,
    Transition,
    on_event,
)
from slashkit.core.session import RunEnded, RunTyped, TimerFired


def test_a_late_run_of_a_cancelled_chains_step_does_not_end_the_same_step_of_the_new_chain() -> None:
    h = host(a=Local(), b=Local(), c=Local(), d=Local())
    first = h.handle(ChainTyped("a", "&& /b", "composer", True))
    second = h.handle(ChainTyped("c", "&& /d", "composer", True))
    assert (first, second) == (RunTyped(args="", token=1), RunTyped(args="", token=2))

    h.handle(RunEnded(1))
    h.settle()

    assert h.runs == []
    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b", "1/2: /c"]
    assert list(h.session.pending) == [2]


def test_a_second_report_of_an_earlier_step_does_not_end_the_step_that_runs_now() -> None:
    h = host(a=Local(), b=Command(does=Local(), held=True), c=Local())
    typed = h.handle(ChainTyped("a", "&& /b && /c", "composer", True))
    assert isinstance(typed, RunTyped)
    h.handle(RunEnded(typed.token))
    h.settle()
    assert h.runs == [("b", "")]

    h.handle(RunEnded(typed.token))
    h.settle()

    assert h.runs == [("b", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b"]
    h.resolve("b")
    assert h.runs == [("b", ""), ("c", "")]


def test_a_timer_left_from_an_earlier_chain_does_not_run_the_new_chains_step() -> None:
    h = host(a=Local(), b=Local(), c=Local(), d=Command(does=Local(), held=True), e=Local())
    h.type("/a && /b && /c")  # tokens 1 (/a), 2 and 3 (/b's timer and run), 4 and 5 (/c's)
    typed = h.handle(ChainTyped("c", "&& /d && /e", "composer", True))
    assert isinstance(typed, RunTyped)
    h.handle(RunEnded(typed.token))
    h.settle()
    assert h.runs[-1] == ("d", "")
    ran = list(h.runs)

    h.handle(TimerFired(2))

    assert h.runs == ran


def test_a_timer_of_an_earlier_step_that_fires_again_does_not_rerun_the_step_that_runs_now() -> None:
    h = host(a=Local(), b=Local(), c=Command(does=Local(), held=True), d=Local())
    h.type("/a && /b && /c && /d")  # /b's timer is token 2
    assert h.runs == [("a", ""), ("b", ""), ("c", "")]

    h.handle(TimerFired(2))

    assert h.runs == [("a", ""), ("b", ""), ("c", "")]


def test_a_timer_that_fires_after_its_chain_ended_does_nothing() -> None:
    h = host(a=Local(), b=Local())
    h.type("/a && /b")
    lines = list(h.ui.lines)

    h.handle(TimerFired(2))

    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == lines
    assert h.session.pending == {}


@pytest.mark.parametrize(
    "stale",
    [
        StepRan(1, 1, "late"),
        StepFailed(1, 1, "late"),
        StepDue(1, 1),
        StepRan(2, 2),
        StepFailed(2, 2, "another chain's"),
        StepDue(2, 2),
    ],
)
def test_the_machine_alone_ignores_a_report_naming_another_step_or_chain(stale: Event) -> None:
    # The machine's own guard, for a host that drives it without the session's tokens: chain 1's step 2 runs.
    state = on_event(ChainState(), ChainTyped("a", "&& /b && /c", "composer", True)).state
    state = on_event(state, StepRan(1, 1)).state
    state = on_event(state, StepDue(1, 2)).state

    assert on_event(state, stale) == Transition(state)
