"""What the model is told after a chained step's prompt: the fail tool by the name the host gives it, and, in a
chain with operators besides `&&`, what a failure leads to (a `|` hands on only what a step that ended well
returned, so the step after it is passed over too)."""

import pytest

from slashkit.adapters.memory import Local, Prompt, host
from slashkit.core.chain_machine import ChainState, ChainTyped, PromptHanded, PromptText, on_event


@pytest.mark.parametrize("operator", ["&&", ";"])
def test_the_note_names_the_fail_tool_as_the_host_names_it_to_the_model(operator: str) -> None:
    # opencode names it `slash-chain_fail` (docs/opencode.md); Claude Code, the default, `mcp__slash-chain__fail`.
    typed = on_event(ChainState(fail_tool="slash-chain_fail"), ChainTyped("a", f"{operator} /b", "composer", True))

    handed = on_event(typed.state, PromptHanded("do a"))

    assert isinstance(handed.reply, PromptText)
    assert "call the slash-chain_fail tool with the reason" in handed.reply.text


def test_the_note_says_a_step_a_pipe_follows_does_not_run_after_a_failure() -> None:
    h = host(review=Prompt("review the change"), commit=Local(), notify=Local())

    h.type("/review | /commit ; /notify")

    assert h.prompts[0].endswith("after a failure /notify runs next, and /commit does not.")


def test_the_note_says_nothing_runs_after_a_failure_when_only_a_pipe_follows() -> None:
    h = host(review=Prompt("review the change"), commit=Local(), notify=Local())

    h.type("/review | /commit && /notify")

    assert h.prompts[0].endswith("after a failure none of them runs.")
