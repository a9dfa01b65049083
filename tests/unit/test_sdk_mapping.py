"""The SDK host's mapping between the SDK's values and the core's events, with plain values and the real core:
how a query's end reads, what the core is told, and how the core's lines and chain ends reach the harness."""

from typing import Any

import pytest
from claude_agent_sdk import ResultMessage
from claude_agent_sdk._internal.message_parser import parse_message
from returns.result import Failure, Success

from slashkit.adapters.memory import DictStore
from slashkit.adapters.sdk import ChainEnded, Line, StepStarted
from slashkit.adapters.sdk.mapping import (
    DrainedClock,
    NoticeLog,
    ObservedChainSession,
    Ports,
    QueryEnd,
    QueuedRunner,
    report,
    step_end,
    step_note,
    tool_answer,
)
from slashkit.adapters.sdk.session import command_names, query_end
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_machine import Outcome, Tally
from slashkit.core.policy import Denied
from slashkit.core.ports import RunOutcome

B, C = Step("b", ""), Step("c", "")


class TestStepEnd:
    """How a step's query ended, read from its ResultMessage (values measured on Claude Code 2.1.328)."""

    def test_a_local_command_ran_and_its_output_is_its_result(self) -> None:
        assert step_end(QueryEnd(False, 0, "Estimated cost: $0", synthetic="Estimated cost: $0")) == (
            "ran",
            "Estimated cost: $0",
        )

    def test_a_local_command_whose_text_is_not_its_result_failed(self) -> None:
        """`/compact` with nothing to compact: its stderr is the synthetic text, the result is empty."""
        end = QueryEnd(False, 0, "", synthetic="Error: No messages to compact")
        assert step_end(end) == ("failed", "Error: No messages to compact")

    def test_a_local_command_with_no_output_ran(self) -> None:
        assert step_end(QueryEnd(False, 0, "")) == ("ran", "")

    def test_an_answered_prompt_hands_on_the_final_answer(self) -> None:
        end = QueryEnd(False, 1, "Hello Bob!", terminal_reason="completed", stop_reason="end_turn", prompted=True)
        assert step_end(end) == ("answer", "Hello Bob!")

    @pytest.mark.parametrize(
        ("end", "how"),
        [
            (QueryEnd(True, 1, "API Error: 500", terminal_reason="api_error"), "error"),
            (QueryEnd(True, 1, "", terminal_reason="aborted_streaming"), "aborted"),
            (QueryEnd(True, 1, "", terminal_reason="aborted_tools"), "aborted"),
            (QueryEnd(True, 3, "", terminal_reason="max_turns"), "max_turns"),
            (QueryEnd(False, 1, "", stop_reason="refusal"), "refusal"),
            (QueryEnd(True, 1, "", terminal_reason="completed"), "error"),
            (QueryEnd(True, 1, "", terminal_reason="something new"), "error"),
            (QueryEnd(False, 1, "ok", terminal_reason=None), "answer"),
        ],
    )
    def test_a_turn_that_did_not_answer_names_why(self, end: QueryEnd, how: str) -> None:
        assert step_end(end)[0] == how

    def test_a_prompt_whose_hook_fired_is_a_turn_even_with_no_turn_counted(self) -> None:
        assert step_end(QueryEnd(True, 0, "", terminal_reason="aborted_streaming", prompted=True))[0] == "aborted"

    def test_a_local_command_stopped_before_it_ran_failed_with_the_sessions_words(self) -> None:
        end = QueryEnd(True, 0, "", terminal_reason="aborted_streaming", errors=("prompt_check: stopped",))
        assert step_end(end) == ("failed", "prompt_check: stopped")


#: A ResultMessage as the CLI's JSON stream has it; the SDK's parser passes its fields through unchecked.
RESULT: dict[str, Any] = {
    "type": "result",
    "subtype": "error_during_execution",
    "duration_ms": 1,
    "duration_api_ms": 1,
    "is_error": True,
    "num_turns": 0,
    "session_id": "s",
}


@pytest.mark.parametrize(
    ("fields", "ended"),
    [
        ({"errors": [{"message": "boom"}, None, "cut"]}, ("failed", '{"message": "boom"}; cut')),
        ({"errors": "boom"}, ("failed", "boom")),
        ({"errors": 7, "result": "why"}, ("failed", "why")),
        ({"is_error": False, "result": 5}, ("ran", "5")),
        ({"is_error": False, "result": {"a": [1]}}, ("ran", '{"a": [1]}')),
        ({"num_turns": 1, "terminal_reason": ["x"]}, ("error", "")),
        ({"num_turns": 1, "is_error": False, "stop_reason": {"x": 1}, "result": "hi"}, ("answer", "hi")),
        ({"num_turns": None}, ("failed", "")),
        ({"num_turns": "3", "is_error": False, "result": "r"}, ("ran", "r")),
        ({"num_turns": True, "is_error": False, "result": "r"}, ("ran", "r")),
        ({"is_error": "no", "result": "r"}, ("ran", "r")),
    ],
)
def test_a_result_message_with_fields_of_the_wrong_type_ends_its_step_by_the_rules(
    fields: dict[str, Any], ended: tuple[str, str]
) -> None:
    # Each of these raised a TypeError (or made a number the step's output) before query_end checked types.
    message = parse_message({**RESULT, **fields})
    assert isinstance(message, ResultMessage)
    assert step_end(query_end(message, "", prompted=False)) == ended


class TestNote:
    def test_the_note_is_what_the_core_appended(self) -> None:
        r = m.on_event(m.ChainState(), m.ChainTyped("a", "x && /b && /c", "bridge", True)).state
        reply = m.on_event(r, m.PromptHanded("/a x")).reply
        assert step_note("/a x", reply) == texts.fail_note(1, 3, (B, C))

    def test_no_reply_no_note(self) -> None:
        assert step_note("/a x", None) is None
        assert step_note("/a x", m.PromptText("/a x")) is None


def test_the_fail_tool_answers_with_the_cores_text() -> None:
    assert tool_answer(m.ToolAnswered(texts.FAIL_STOPPED)) == (texts.FAIL_STOPPED, False)
    assert tool_answer(Denied(texts.FAIL_NEEDS_REASON)) == (texts.FAIL_NEEDS_REASON, True)
    assert tool_answer(None) == (texts.FAIL_NOTHING_WAITS, True)


# The chain session the host drives, with the host's own ports


def session() -> tuple[ObservedChainSession, list[tuple[int, object]], Ports]:
    seen: list[tuple[int, object]] = []
    ports = Ports(DrainedClock(), QueuedRunner(), NoticeLog(lambda n: seen.append((0, n))), DictStore())
    return ObservedChainSession(ports, lambda chain, e: seen.append((chain, e))), seen, ports


def typed(chains: ObservedChainSession, text: str = "x && /b && /c") -> m.RunTyped:
    started = chains.command_typed("a", text, "bridge", True)
    assert isinstance(started, m.RunTyped)
    return started


def test_a_chain_of_local_steps_runs_through_the_hosts_clock_and_runner() -> None:
    chains, seen, ports = session()
    run = typed(chains)
    chains.reporter(run.chain, run.index)(Success(""))
    ports.clock.fire_due()
    second = ports.runner.take(run.chain)
    assert second is not None and second.step == B and second.index == 2
    second.done(Success(""))
    ports.clock.fire_due()
    third = ports.runner.take(run.chain)
    assert third is not None
    third.done(Success(""))
    assert [e for _, e in seen] == [
        (Line("1/3: /a x")),
        StepStarted(1, 3, Step("a", "x")),
        Line("2/3: /b"),
        StepStarted(2, 3, B),
        Line("3/3: /c"),
        StepStarted(3, 3, C),
        Line("all 3 command(s) ran"),
        ChainEnded(Outcome("success", False, Tally(succeeded=3))),
    ]


def test_report_tells_the_core_a_prompt_steps_turn_even_when_no_hook_fired() -> None:
    chains, seen, _ = session()
    run = typed(chains, "x && /b")
    report(chains, chains.reporter(run.chain, run.index), "error", "API Error", "/a x")
    assert seen[-2:] == [
        (0, Line(texts.stopped_text(Step("a", "x"), texts.turn_why("error"), (B,)))),
        (1, ChainEnded(Outcome("failure", False, Tally(failed=1, skipped=1)))),
    ]


def test_report_of_a_failed_local_command_stops_the_chain_with_its_message() -> None:
    chains, seen, _ = session()
    run = typed(chains, "x && /b")
    report(chains, chains.reporter(run.chain, run.index), "failed", "Error: No messages to compact", "/a x")
    assert seen[-2][1] == Line("stopped after /a: it failed: Error: No messages to compact; not run: /b")


def test_an_answered_turn_after_the_hook_fired_runs_the_next_step() -> None:
    chains, seen, ports = session()
    run = typed(chains, "x && /b")
    chains.handle(m.PromptHanded("/a x"))
    report(chains, chains.reporter(run.chain, run.index), "answer", "done", "/a x")
    ports.clock.fire_due()
    assert ports.runner.take(run.chain) is not None
    assert seen[-1] == (1, StepStarted(2, 2, B))


def test_a_pipe_hands_a_local_steps_output_to_the_next_query() -> None:
    chains, _, ports = session()
    run = chains.command_typed("a", "x | /b y", "bridge", True)
    assert isinstance(run, m.RunTyped)
    report(chains, chains.reporter(run.chain, run.index), "ran", "the text", "/a x")
    ports.clock.fire_due()
    second = ports.runner.take(run.chain)
    assert second is not None and second.step == Step("b", "y\n\nthe text")


def test_a_pipe_hands_a_prompt_steps_answer_to_the_next_query() -> None:
    chains, _, ports = session()
    run = typed(chains, "x | /b")
    chains.handle(m.PromptHanded("/a x"))
    report(chains, chains.reporter(run.chain, run.index), "answer", "the answer", "/a x")
    ports.clock.fire_due()
    second = ports.runner.take(run.chain)
    assert second is not None and second.step == Step("b", "the answer")


def test_the_runner_hands_each_chain_its_own_runs_only() -> None:
    runner = QueuedRunner()
    done: list[RunOutcome] = []
    runner.running = lambda: m.Running(chain=1, index=2, total=2, step=B, left=())
    runner.run("b", "", done.append)
    runner.running = lambda: m.Running(chain=2, index=2, total=2, step=C, left=())
    runner.run("c", "", done.append)
    taken = runner.take(2)
    assert taken is not None and taken.step == C
    assert runner.take(1) is None


def test_a_queued_failure_is_a_notice() -> None:
    notices: list[object] = []
    NoticeLog(notices.append).toast("/compact did not run: x")
    assert len(notices) == 1


class TestCommandNames:
    """The session's command list from `get_server_info()`, whatever shape it comes in."""

    def test_names_aliases_and_builtins(self) -> None:
        info: dict[str, Any] = {
            "commands": [
                {"name": "greet", "description": "Greets (project)"},
                {"name": "usage", "aliases": ["cost", "stats"], "builtin": True},
                {"name": "compact", "builtin": True},
            ]
        }
        known, builtins = command_names(info)
        assert known == frozenset({"greet", "usage", "cost", "stats", "compact", texts.CHAIN_COMMAND})
        assert builtins == {"usage", "cost", "stats", "compact"}

    @pytest.mark.parametrize("info", [None, {}, {"commands": None}, {"commands": "usage"}, {"commands": {"a": 1}}])
    def test_no_list_checks_nothing(self, info: dict[str, Any] | None) -> None:
        assert command_names(info) == (None, frozenset())

    def test_odd_entries_are_skipped(self) -> None:
        info: dict[str, Any] = {
            "commands": [None, 3, {"name": 5}, {"aliases": ["x"]}, {"name": "a", "aliases": "b", "builtin": "yes"}]
        }
        assert command_names(info) == (frozenset({"a", texts.CHAIN_COMMAND}), frozenset())


def test_a_failure_reaches_the_core_as_the_runs_outcome() -> None:
    outcomes: list[RunOutcome] = []
    chains, _, _ = session()
    report(chains, outcomes.append, "failed", "boom", "/x")
    report(chains, outcomes.append, "ran", "its text", "/x")
    assert outcomes == [Failure("boom"), Success("its text")]
