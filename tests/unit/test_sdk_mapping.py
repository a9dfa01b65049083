"""The SDK host's mapping between the SDK's values and the core's events, and its agenda, with plain values and the
real core: how a query's end reads, what the core is told, and how the core's effects become the queries the host
sends next and the events the harness sees."""

from typing import Any

import pytest
from claude_agent_sdk import ResultMessage
from claude_agent_sdk._internal.message_parser import parse_message

from slashkit.adapters.harness.agenda import Agenda, Query, chain_of, started_by
from slashkit.adapters.harness.loop import run_ended, step_note, tool_answer
from slashkit.adapters.memory import DictStore
from slashkit.adapters.sdk import ChainEnded, Line, Notice, StepStarted
from slashkit.adapters.sdk.events import Event
from slashkit.adapters.sdk.mapping import QueryEnd, step_end, step_ended
from slashkit.adapters.sdk.session import command_names, query_end
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_machine import Outcome, Tally
from slashkit.core.policy import Denied

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
        typed = s.on_event(s.opened(), m.ChainTyped("a", "x && /b && /c", "bridge", True)).session
        reply = s.on_event(typed, m.PromptHanded("/a x")).reply
        assert step_note("/a x", reply) == texts.fail_note(1, 3, (B, C))

    def test_no_reply_no_note(self) -> None:
        assert step_note("/a x", None) is None
        assert step_note("/a x", m.PromptText("/a x")) is None


def test_the_fail_tool_answers_with_the_cores_text() -> None:
    assert tool_answer(m.ToolAnswered(texts.FAIL_STOPPED)) == (texts.FAIL_STOPPED, False)
    assert tool_answer(Denied(texts.FAIL_NEEDS_REASON)) == (texts.FAIL_NEEDS_REASON, True)
    assert tool_answer(None) == (texts.FAIL_NOTHING_WAITS, True)


# The agenda: the core's session as the host holds it, its effects carried out on the host's schedule

#: How queries end, as `query_end` reads them: a local command that ran, a turn that answered, a turn the API
#: ended with an error.
RAN = QueryEnd(False, 0, "")
ANSWERED = QueryEnd(False, 1, "done", terminal_reason="completed", prompted=True)


def typed(text: str = "x && /b && /c") -> tuple[Agenda, Query, int]:
    """A fresh agenda with a chain typed into it: the query of its head, and its chain."""
    agenda = Agenda(s.opened(), DictStore())
    moved = agenda.move(m.ChainTyped("a", text, "bridge", True))
    assert isinstance(moved.reply, s.RunTyped)
    chain = chain_of(moved)
    assert chain is not None
    return agenda, Query(Step("a", moved.reply.args), moved.reply.token, started_by(moved)), chain


def ended(agenda: Agenda, query: Query, end: QueryEnd = RAN) -> None:
    """A step's query, as the host sends it: the events before it go out, and the core is told how it ended."""
    if query.started is not None:
        agenda.flush(query.started.chain)
    for event in step_ended(query.token, end, query.step.name):
        agenda.move(event)


def test_a_chain_of_local_steps_runs_one_query_a_step_with_its_line_and_report_before_it() -> None:
    agenda, query, chain = typed()
    seen: list[Event] = []
    queries: list[Query] = []
    while True:
        seen += agenda.flush(chain)
        queries.append(query)
        for event in step_ended(query.token, RAN, query.step.name):
            agenda.move(event)
        if (after := agenda.next_run()) is None:
            break
        query = after
    seen += agenda.flush(chain)
    assert [(q.step, q.index) for q in queries] == [(Step("a", "x"), 1), (B, 2), (C, 3)]
    assert seen == [
        Line("1/3: /a x"),
        StepStarted(1, 3, Step("a", "x")),
        Line("2/3: /b"),
        StepStarted(2, 3, B),
        Line("3/3: /c"),
        StepStarted(3, 3, C),
        Line("all 3 command(s) ran"),
        ChainEnded(Outcome("success", False, Tally(succeeded=3))),
    ]


def test_a_prompt_steps_turn_reaches_the_core_even_when_no_hook_fired() -> None:
    agenda, query, chain = typed("x && /b")
    ended(agenda, query, QueryEnd(True, 1, "API Error", terminal_reason="api_error"))
    assert agenda.flush(chain)[-2:] == [
        Line(texts.stopped_text(Step("a", "x"), texts.turn_why("error"), (B,))),
        ChainEnded(Outcome("failure", False, Tally(failed=1, skipped=1))),
    ]


def test_a_failed_local_command_stops_the_chain_with_its_message() -> None:
    agenda, query, chain = typed("x && /b")
    ended(agenda, query, QueryEnd(False, 0, "", synthetic="Error: No messages to compact"))
    assert agenda.flush(chain)[-2] == Line("stopped after /a: it failed: Error: No messages to compact; not run: /b")


def test_an_answered_turn_after_the_hook_fired_runs_the_next_step() -> None:
    agenda, query, chain = typed("x && /b")
    agenda.move(m.PromptHanded("/a x"))
    ended(agenda, query, ANSWERED)
    second = agenda.next_run()
    assert second is not None and (second.step, second.index) == (B, 2)
    assert agenda.flush(chain)[-1] == StepStarted(2, 2, B)


def test_a_pipe_hands_a_local_steps_output_to_the_next_query() -> None:
    agenda, query, _ = typed("x | /b y")
    ended(agenda, query, QueryEnd(False, 0, "the text"))
    second = agenda.next_run()
    assert second is not None and second.step == Step("b", "y\n\nthe text")


def test_a_pipe_hands_a_prompt_steps_answer_to_the_next_query() -> None:
    agenda, query, _ = typed("x | /b")
    agenda.move(m.PromptHanded("/a x"))
    ended(agenda, query, QueryEnd(False, 1, "the answer", terminal_reason="completed", prompted=True))
    second = agenda.next_run()
    assert second is not None and second.step == Step("b", "the answer")


def test_a_built_in_the_model_queued_during_a_step_runs_before_the_next_step() -> None:
    agenda, query, _ = typed("x && /b")
    asked = agenda.move(s.BuiltinAsked("compact", "keep the plan", ("compact",)))
    assert isinstance(asked.reply, m.ToolAnswered) and agenda.due == 1
    ended(agenda, query)
    builtin = agenda.next_run()
    assert builtin is not None and (builtin.step, builtin.started) == (Step("compact", "keep the plan"), None)
    agenda.move(run_ended(builtin.token, "ran", ""))
    second = agenda.next_run()
    assert second is not None and (second.step, second.index) == (B, 2)
    assert agenda.next_run() is None


def test_a_queued_built_in_that_failed_is_a_notice() -> None:
    agenda = Agenda(s.opened(), DictStore())
    agenda.move(s.BuiltinAsked("/compact", None, ("compact",)))
    builtin = agenda.next_run()
    assert builtin is not None
    agenda.move(run_ended(builtin.token, "failed", "Error: No messages to compact"))
    assert agenda.flush(None)[-1] == Notice(texts.queued_failed_toast("compact", "Error: No messages to compact"))


def test_a_built_in_only_the_person_may_run_is_refused_and_queues_nothing() -> None:
    agenda = Agenda(s.opened(), DictStore())
    asked = agenda.move(s.BuiltinAsked("model", "opus", ("model", "compact")))
    assert tool_answer(asked.reply) == (texts.text("en", texts.Key.DENY_PERSON_ONLY, name="model"), True)
    assert agenda.next_run() is None


def test_each_chain_gets_its_own_reports_and_a_new_one_its_own_id() -> None:
    agenda, _, first = typed("x && /b")
    agenda.flush(first)
    moved = agenda.move(m.ChainTyped("c", "y && /b", "bridge", True))
    second = chain_of(moved)
    assert second is not None and second != first
    assert agenda.flush(first)[-1] == ChainEnded(Outcome("failure", True, Tally(skipped=1)))
    assert agenda.flush(second) == [StepStarted(1, 2, Step("c", "y"))]


def test_turning_chains_off_is_saved_in_the_hosts_store() -> None:
    store = DictStore()
    agenda = Agenda(s.opened(), store)
    assert agenda.enabled
    agenda.move(m.ChainCommandTyped("off", agenda.enabled))
    assert store.data == {s.ENABLED_KEY: False} and not agenda.enabled


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


def test_a_steps_end_reaches_the_core_as_its_runs_end_then_its_turns() -> None:
    assert step_ended(7, QueryEnd(True, 0, "", errors=("boom",)), "/x") == (s.RunEnded(7, "boom"),)
    assert step_ended(7, QueryEnd(False, 0, "its text"), "/x") == (s.RunEnded(7, None, "its text"),)
    unhooked = QueryEnd(False, 1, "hi", terminal_reason="completed")
    assert step_ended(7, unhooked, "/x") == (m.PromptHanded("/x"), s.RunEnded(7), m.TurnEnded("answer", None, "hi"))
    assert step_ended(7, ANSWERED, "/x") == (s.RunEnded(7), m.TurnEnded("answer", None, "done"))


def test_a_sleep_is_a_pause_the_harness_waits_before_the_next_step_and_no_query_of_its_own() -> None:
    agenda, query, _ = typed("x && sleep 2m && /b")
    ended(agenda, query, RAN)

    assert agenda.next_run() is None
    assert agenda.pause == 60.0  # the first minute; the status area counts down each minute
    agenda.paused()
    assert agenda.next_run() is None
    assert agenda.pause == 60.0
    agenda.paused()
    second = agenda.next_run()

    assert second is not None and second.step == B
    assert agenda.pause == 0.0
