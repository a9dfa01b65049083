"""What becomes of a command the chain hook hears: the person's own /model and /effort run as typed when no chain
starts, a running step's own run is told from the person typing the same text, a chain that is dropped says how it
ended, and only a step a `|` follows has its output handed on."""

from collections.abc import Iterable

import pytest

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, Throws, host
from slashkit.core import session as s
from slashkit.core.chain_machine import (
    ChainCommandTyped,
    ChainEnded,
    ChainState,
    ChainTyped,
    CommandAnswer,
    Outcome,
    Tally,
    hands_on,
)
from slashkit.core.self_command import Queue, Request, decide

# The person's own /model and /effort


@pytest.mark.parametrize("origin", ["composer", "bridge", "sdk"])
def test_the_persons_own_model_with_a_chain_in_its_args_runs_as_typed_when_chains_are_off(origin: str) -> None:
    h = host(model=Local(), cost=Local())
    h.store.data["enabled"] = False

    h.type("/model opus && /cost", origin)

    assert h.runs == [("model", "opus && /cost")]
    assert h.answers == []
    assert h.ui.lines == []


def test_anyone_elses_model_with_a_chain_in_its_args_is_answered_with_why_when_chains_are_off() -> None:
    h = host(model=Local(), cost=Local())
    h.store.data["enabled"] = False

    h.type("/model opus && /cost", "plugin")

    assert h.runs == []
    assert h.answers == ["/model was not run: only the person may run /model, and this came from plugin"]


@pytest.mark.parametrize("command", ["model", "effort"])
def test_the_persons_own_model_or_effort_that_starts_no_chain_runs_as_typed(command: str) -> None:
    h = host(model=Local(), effort=Local())

    # A host that hands the chain hook a command whose arguments hold no `/<name>` after the operator.
    assert h.handle(ChainTyped(command, "high && more", "composer", True)) is None
    assert h.ui.lines == []


def test_the_persons_chain_of_and_with_model_in_it_keeps_the_seeds_lines_when_a_step_fails() -> None:
    h = host(model=Local(), cost=Throws("no usage yet"), usage=Local())

    h.type("/model opus && /cost && /usage")

    stopped = "stopped after /cost: it failed: no usage yet; not run: /usage"
    assert h.ui.lines == ["1/3: /model opus", "2/3: /cost", stopped]


def test_a_pipe_after_a_refused_first_command_hands_nothing_on_and_does_not_run() -> None:
    h = host(model=Local(output="opus"), cost=Local())

    h.type("/model opus | /cost", "plugin")

    assert h.runs == []
    assert h.ui.lines[-1] == "ended: 0 succeeded, 0 failed, 2 skipped"


# A running step's own run, or the person typing the same


def piped_into_held_b() -> MemoryHost:
    """A chain `/a | /b` whose first step returned text holding an operator, so that `/b` runs with arguments the
    chain hook hears as a chain (`&& /c`); `/b` is held, so it still runs."""
    h = host(a=Local(output="&& /c"), b=Command(does=Local(), held=True), c=Local())
    h.type("/a | /b")
    assert h.runs == [("a", ""), ("b", "&& /c")]
    return h


def test_the_running_steps_own_run_is_data_and_starts_no_chain() -> None:
    h = piped_into_held_b()

    h.resolve("b")

    assert h.runs == [("a", ""), ("b", "&& /c")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_the_person_typing_the_running_steps_own_text_starts_their_own_chain() -> None:
    h = piped_into_held_b()

    h.type("/b && /c")

    assert h.runs == [("a", ""), ("b", "&& /c"), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "cancelled", "1/2: /b"]


# How a chain ended


def ends(events: Iterable[s.Event]) -> tuple[list[tuple[int, Outcome]], s.Reply]:
    """Moves a new session by these events: how each chain ended, by its number, and the last reply."""
    session, ended, reply = s.opened(), [], None
    for event in events:
        moved = s.on_event(session, event)
        session, reply = moved.session, moved.reply
        ended += [(fx.chain, fx.outcome) for fx in moved.effects if isinstance(fx, ChainEnded)]
    return ended, reply


def test_a_chain_replaced_by_anothers_chain_ends_cancelled_with_its_steps_not_run_counted_skipped() -> None:
    ended, _ = ends([ChainTyped("a", "&& /b && /c", "composer", True), ChainTyped("d", "&& /a", "plugin", True)])

    assert ended == [(1, Outcome("failure", True, Tally(skipped=2)))]


def test_a_cancelled_chain_counts_the_steps_that_ended_and_the_ones_it_did_not_run() -> None:
    typed = ChainTyped("a", "x && /b && /c", "composer", True)

    ended, reply = ends([typed, s.RunEnded(1), ChainCommandTyped("stop", True)])

    assert reply == CommandAnswer("cancelled; not run: /c")
    assert ended == [(1, Outcome("failure", True, Tally(succeeded=1, skipped=1)))]


def test_a_chain_that_ran_to_its_end_names_itself_in_its_end() -> None:
    typed = ChainTyped("a", "; /a", "composer", True)
    # Each chain's tokens: its head's run, its second step's timer, that step's run.
    once: list[s.Event] = [typed, s.RunEnded(1), s.TimerFired(2), s.RunEnded(3)]
    twice: list[s.Event] = [typed, s.RunEnded(4), s.TimerFired(5), s.RunEnded(6)]

    ended, _ = ends([*once, *twice])

    assert ended == [(1, Outcome("success", False, Tally(succeeded=2))), (2, Outcome("success", False, Tally(2)))]


def test_a_chain_ended_well_only_when_it_ran_to_its_end_with_a_last_status_of_success() -> None:
    h = host(a=Local(), b=Throws("no"), c=Command(does=Local(), held=True))

    h.type("/a && /a")
    h.type("/a && /b")
    h.type("/b || /a")
    h.type("/a ; /b")
    h.type("/a && /c")
    h.type("/slash-chain stop")

    assert [o.ended_well for o in h.outcomes] == [True, False, True, False, False]


# Whose output is handed on


def test_only_a_step_that_a_pipe_follows_has_its_output_handed_on() -> None:
    piped = host(a=Command(does=Local(), held=True), b=Local())
    chained = host(a=Command(does=Local(), held=True), b=Local())
    assert not hands_on(piped.session.chains)

    piped.type("/a | /b")
    chained.type("/a && /b")

    assert hands_on(piped.session.chains)
    assert not hands_on(chained.session.chains)
    piped.resolve("a")
    assert not hands_on(piped.session.chains)
    assert not hands_on(ChainState())


def test_a_prompt_step_that_a_pipe_follows_hands_on_its_turns_answer() -> None:
    h = host(ask=Prompt("say a word"), echo=Local())

    h.type("/ask | /echo")

    assert hands_on(h.session.chains)
    h.end_turn("answer", answer="word")
    assert h.runs == [("ask", ""), ("echo", "word")]


def test_a_turn_that_ended_before_the_prompt_steps_run_resolved_still_hands_its_answer_on() -> None:
    h = host(ask=Command(does=Prompt("say a word"), held=True), echo=Local())
    h.type("/ask | /echo")

    h.end_turn("answer", answer="word")
    h.resolve("ask")

    assert h.runs == [("ask", ""), ("echo", "word")]


# A self-command the model asked for


def test_a_built_in_the_model_asked_for_is_queued_as_it_was_asked() -> None:
    asked = Request(name="compact", args="keep the plan")

    assert decide("en", asked, ["compact", "cost"]) == Queue(asked)
    assert decide("en", Request(name="review", args=""), ["compact"]) is None
