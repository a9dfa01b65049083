"""Reports about a step that no longer runs (a run that resolves late, a timer that fires twice or after its chain
ended) move nothing: a step is named by its chain and its index, and both must match the running one."""

from returns.result import Success

from slashkit.adapters.memory import Command, Local, host
from slashkit.core.chain_machine import RunTyped, TimerFired


def test_a_late_run_of_a_cancelled_chains_step_does_not_end_the_same_step_of_the_new_chain() -> None:
    h = host(a=Local(), b=Local(), c=Local(), d=Local())
    first = h.chains.command_typed("a", "&& /b", "composer", True)
    second = h.chains.command_typed("c", "&& /d", "composer", True)
    assert (first, second) == (RunTyped(chain=1, index=1, args=""), RunTyped(chain=2, index=1, args=""))

    h.chains.report_run(1, 1, Success(""))
    h.settle()

    assert h.runs == []
    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b", "1/2: /c"]


def test_a_second_report_of_an_earlier_step_does_not_end_the_step_that_runs_now() -> None:
    h = host(a=Local(), b=Command(does=Local(), held=True), c=Local())
    typed = h.chains.command_typed("a", "&& /b && /c", "composer", True)
    assert isinstance(typed, RunTyped)
    h.chains.report_run(typed.chain, typed.index, Success(""))
    h.settle()
    assert h.runs == [("b", "")]

    h.chains.report_run(typed.chain, typed.index, Success(""))
    h.settle()

    assert h.runs == [("b", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b"]
    h.resolve("b")
    assert h.runs == [("b", ""), ("c", "")]


def test_a_timer_left_from_an_earlier_chain_does_not_run_the_new_chains_step() -> None:
    h = host(a=Local(), b=Local(), c=Local(), d=Command(does=Local(), held=True), e=Local())
    h.type("/a && /b && /c")
    h.chains.command_typed("c", "&& /d && /e", "composer", True)
    h.chains.report_run(2, 1, Success(""))
    h.settle()
    assert h.runs[-1] == ("d", "")
    ran = list(h.runs)

    h.chains.handle(TimerFired(1, 2))

    assert h.runs == ran


def test_a_timer_of_an_earlier_step_that_fires_again_does_not_rerun_the_step_that_runs_now() -> None:
    h = host(a=Local(), b=Local(), c=Command(does=Local(), held=True), d=Local())
    h.type("/a && /b && /c && /d")
    assert h.runs == [("a", ""), ("b", ""), ("c", "")]

    h.chains.handle(TimerFired(1, 2))

    assert h.runs == [("a", ""), ("b", ""), ("c", "")]


def test_a_timer_that_fires_after_its_chain_ended_does_nothing() -> None:
    h = host(a=Local(), b=Local())
    h.type("/a && /b")
    lines = list(h.ui.lines)

    h.chains.handle(TimerFired(1, 2))

    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == lines
