"""The refusal rule on the chain's paths: `/model` and `/effort` run only when the person typed them. A chain
someone else typed (another plugin) still runs its other steps; the model cannot queue a chain at all."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Prompt, host
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.policy import Denied


def lich_host() -> MemoryHost:
    builtin = Command(Local(), builtin=True)
    return MemoryHost(
        commands={"context": builtin, "model": builtin, "effort": builtin, "cost": builtin},
        env=DictEnvironment({"LICH_SESSION_ID": "s-1"}),
    )


def test_a_chain_hidden_in_a_queued_self_commands_args_is_refused_and_nothing_runs() -> None:
    h = lich_host()

    reply = h.skill_call("context", "&& /effort high && /model opus")

    assert reply == Denied(texts.text("en", texts.Key.DENY_CHAINED, name="context"))
    h.settle()
    assert h.runs == []
    assert h.ui.lines == []


@pytest.mark.parametrize("origin", ["plugin", "peer", "channel", "scheduled-trigger", "unclassified", ""])
def test_a_chain_anyone_but_the_person_typed_never_runs_model_or_effort(origin: str) -> None:
    h = host(cost=Local(), model=Local(), effort=Local(), usage=Local())

    h.type("/cost && /MODEL opus ; /Effort high || /usage", origin)

    assert [command for command, _ in h.runs] == ["cost"]
    assert h.origins == [origin]


def test_a_refused_typed_command_is_answered_and_not_run_and_the_chain_goes_on_without_it() -> None:
    h = host(model=Local(), cost=Local())

    h.type("/model opus && /cost", "plugin")

    assert h.runs == [("cost", "")]
    assert h.answers == [texts.refused_text(Step("model", "opus"), "plugin")]
    assert h.ui.lines == [
        f"skipped 1/2: /model opus ({texts.refused_why(Step('model', 'opus'), 'plugin')})",
        "2/2: /cost",
        "ended: 1 succeeded, 0 failed, 1 skipped",
    ]


def test_a_refused_command_with_a_chain_in_its_args_is_not_run_even_when_chains_are_off() -> None:
    h = host(model=Local(), cost=Local())
    h.store.data["enabled"] = False

    h.type("/model opus && /cost", "plugin")

    assert h.runs == []
    assert h.ui.lines == []


@pytest.mark.parametrize("origin", ["composer", "bridge", "sdk"])
def test_the_persons_own_chain_runs_model_and_effort(origin: str) -> None:
    h = host(cost=Local(), model=Local(), effort=Local())

    h.type("/cost && /model opus && /effort high", origin)

    assert h.runs == [("cost", ""), ("model", "opus"), ("effort", "high")]
    assert h.ui.lines[-1] == "all 3 command(s) ran"


@pytest.mark.parametrize("refused", ["model", "effort", "MODEL"])
def test_a_model_or_effort_step_that_a_pipe_would_hand_output_to_is_skipped_even_for_the_person(
    refused: str,
) -> None:
    # The person typed the command, not its arguments: they would be the model's answer, and Claude Code saves
    # what a mod sets as the default for every new session.
    h = host(pick=Prompt("pick a model"), model=Local(), effort=Local(), cost=Local())

    h.type(f"/pick | /{refused} && /cost")
    h.end_turn("answer", answer="sonnet")

    assert h.runs == [("pick", ""), ("cost", "")]
    assert h.ui.lines == [
        "1/3: /pick",
        f"skipped 2/3: /{refused} ({texts.handed_refused_why(Step(refused, ''))})",
        "3/3: /cost",  # a skipped command leaves the last status as it was, as in bash
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]


def test_a_pipe_into_model_from_anyone_else_is_skipped_for_who_typed_it() -> None:
    h = host(cost=Local(output="opus"), model=Local())

    h.type("/cost | /model", "plugin")

    assert h.runs == [("cost", "")]
    assert h.ui.lines[1] == f"skipped 2/2: /model ({texts.refused_why(Step('model', ''), 'plugin')})"


def test_the_persons_model_step_piped_onward_runs_with_what_the_person_typed() -> None:
    h = host(model=Local(output="set to opus"), cost=Local())

    h.type("/model opus | /cost")

    assert h.runs == [("model", "opus"), ("cost", "set to opus")]
