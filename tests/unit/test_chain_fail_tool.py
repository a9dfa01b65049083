"""The `mcp__slash-chain__fail` tool: the model's report that the step it was handed failed (seed 003,
`failStep`), and its three refusals."""

import pytest

from slashkit.adapters.memory import Command, Local, Prompt, host
from slashkit.core.chain_machine import FailCalled, ToolAnswered
from slashkit.core.policy import Denied

STOPPED = ToolAnswered("The chain stopped; the steps after this one do not run.")
NOTHING_WAITS = Denied("no slash-chain step waits on this turn, so there is nothing to stop")
NEEDS_REASON = Denied("reason is required: say in one sentence why the step failed")


def test_the_fail_tool_stops_a_chain_whose_prompt_step_waits_on_its_turn() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b && /c")

    reply = h.handle(FailCalled("the tests do not pass", None))

    assert reply == STOPPED
    assert h.ui.lines == [
        "1/3: /a",
        "stopped after /a: the model reported it failed: the tests do not pass; not run: /b, /c",
    ]
    h.end_turn("answer")
    assert h.runs == [("a", "")]
    assert h.ui.lines[-1].startswith("stopped after /a")


def test_the_fail_tool_trims_the_reason_as_javascript_trims() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    reply = h.handle(FailCalled("\ufeff  no network \u00a0\n", None))

    assert reply == STOPPED
    assert h.ui.lines[-1] == "stopped after /a: the model reported it failed: no network; not run: /b"


def test_the_fail_tool_stops_a_prompt_step_whose_run_has_not_resolved_yet() -> None:
    h = host(a=Command(does=Prompt("do a"), held=True), b=Local())
    h.type("/a && /b")

    reply = h.handle(FailCalled("cannot", None))
    h.resolve("a")
    h.end_turn("answer")

    assert reply == STOPPED
    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/2: /a", "stopped after /a: the model reported it failed: cannot; not run: /b"]


def test_the_fail_tool_on_the_last_step_names_no_steps_not_run() -> None:
    h = host(a=Local(), b=Prompt("do b"))
    h.type("/a && /b")

    assert h.handle(FailCalled("nope", None)) == STOPPED
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "stopped after /b: the model reported it failed: nope"]


def test_the_fail_tool_is_refused_when_no_chain_runs() -> None:
    h = host(a=Prompt("do a"))
    h.type("/a")

    assert h.handle(FailCalled("it failed", None)) == NOTHING_WAITS
    assert h.ui.lines == []


def test_the_fail_tool_is_refused_when_the_running_step_handed_the_model_no_prompt() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a && /b")

    assert h.handle(FailCalled("it failed", None)) == NOTHING_WAITS

    h.resolve("a")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_the_fail_tool_is_refused_from_a_subagent() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    assert h.handle(FailCalled("it failed", "agent-3")) == NOTHING_WAITS

    h.end_turn("answer")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


@pytest.mark.parametrize("reason", ["", "   ", "\ufeff\u00a0\u2028\t", None, 42, ["it failed"], {"why": "x"}])
def test_the_fail_tool_is_refused_a_blank_or_non_string_reason(reason: object) -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    assert h.handle(FailCalled(reason, None)) == NEEDS_REASON

    h.type("/slash-chain")
    assert h.answers == ["on · 1/2 /a, waiting for its turn"]
    assert h.ui.lines == ["1/2: /a"]


def test_a_reason_of_characters_javascript_does_not_trim_is_not_blank() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    assert h.handle(FailCalled("\x1c", None)) == STOPPED
    assert h.ui.lines[-1] == "stopped after /a: the model reported it failed: \x1c; not run: /b"


def test_the_fail_tool_is_refused_after_the_chain_it_would_stop_ended() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")
    h.end_turn("answer")

    assert h.handle(FailCalled("too late", None)) == NOTHING_WAITS
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]
