"""What becomes of a command the chain hook hears: the person's own /model and /effort run as typed when no chain
starts, a running step's own run is told from the person typing the same text, a chain that is dropped says how it
ended, and only a step a `|` follows has its output handed on."""

import pytest
from returns.result import Success

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, Throws, host
from slashkit.core.chain_machine import ChainState, Outcome, RunTyped, Tally, hands_on
from slashkit.core.chain_session import ChainSession
from slashkit.core.self_command import Lich, Queue, Request, decide

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
    assert h.chains.command_typed(command, "high && more", "composer", True) is None
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


def test_a_chain_replaced_by_anothers_chain_ends_cancelled_with_its_steps_not_run_counted_skipped() -> None:
    ended: list[tuple[int, Outcome]] = []
    h = host(a=Local(), b=Local(), c=Local(), d=Local())
    chains = ChainSession(h.clock, _NoRunner(), h.ui, h.store, lambda chain, outcome: ended.append((chain, outcome)))
    first = chains.command_typed("a", "&& /b && /c", "composer", True)
    assert first == RunTyped(chain=1, index=1, args="")

    chains.command_typed("d", "&& /a", "plugin", True)

    assert ended == [(1, Outcome("failure", True, Tally(skipped=2)))]


def test_a_cancelled_chain_counts_the_steps_that_ended_and_the_ones_it_did_not_run() -> None:
    ended: list[tuple[int, Outcome]] = []
    h = host(a=Local(), b=Local(), c=Local())
    chains = ChainSession(h.clock, _NoRunner(), h.ui, h.store, lambda chain, outcome: ended.append((chain, outcome)))
    chains.command_typed("a", "x && /b && /c", "composer", True)
    chains.report_run(1, 1, Success(""))

    assert chains.chain_command("stop", True) == "cancelled; not run: /c"

    assert ended == [(1, Outcome("failure", True, Tally(succeeded=1, skipped=1)))]


def test_a_chain_that_ran_to_its_end_names_itself_in_its_end() -> None:
    ended: list[tuple[int, Outcome]] = []
    h = host(a=Local())
    chains = ChainSession(h.clock, _NoRunner(), h.ui, h.store, lambda chain, outcome: ended.append((chain, outcome)))
    for number in (1, 2):
        chains.command_typed("a", "; /a", "composer", True)
        chains.report_run(number, 1, Success(""))
        h.settle()
        chains.report_run(number, 2, Success(""))

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
    assert not hands_on(piped.chains.state)

    piped.type("/a | /b")
    chained.type("/a && /b")

    assert hands_on(piped.chains.state)
    assert not hands_on(chained.chains.state)
    piped.resolve("a")
    assert not hands_on(piped.chains.state)
    assert not hands_on(ChainState())


def test_a_prompt_step_that_a_pipe_follows_hands_on_its_turns_answer() -> None:
    h = host(ask=Prompt("say a word"), echo=Local())

    h.type("/ask | /echo")

    assert hands_on(h.chains.state)
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
    lich = Lich(session_id="lich-1", lang="en")
    asked = Request(name="compact", args="keep the plan")

    assert decide(lich, asked, ["compact", "cost"]) == Queue(asked)
    assert decide(lich, Request(name="review", args=""), ["compact"]) is None


class _NoRunner:
    """A host whose runs never resolve on their own: the test reports them."""

    def run(self, command: str, args: str, done: object) -> None:
        pass
