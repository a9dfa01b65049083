"""Slash chains through the in-memory host: how the steps run, wait, stop and get cancelled (seed 003,
`register.ts`), asserted on what a person sees: transcript lines, runs and the prompts the model got."""

import pytest

from slashkit.adapters.memory import Command, Local, Pane, Prompt, Throws, host
from slashkit.core.chain_machine import ChainTyped, PromptSubmitted
from slashkit.core.session import RunEnded, RunTyped


def note(index: int, total: int, after: str) -> str:
    """The seed's `failNote`, spelled out."""
    return (
        f"[slash-chain] This is step {index}/{total} of a chain; after it: {after}. If you could not do what this "
        "step asks, call the mcp__slash-chain__fail tool with the reason before you end your turn, and the steps "
        "after it do not run."
    )


# Local steps


def test_chained_local_commands_run_one_after_another_each_with_its_own_args() -> None:
    h = host(a=Local(), b=Local(), c=Local())

    h.type("/a x && /b y z && /c")

    assert h.runs == [("a", "x"), ("b", "y z"), ("c", "")]
    assert h.ui.lines == ["1/3: /a x", "2/3: /b y z", "3/3: /c", "all 3 command(s) ran"]


def test_a_step_after_the_first_runs_from_a_timer_not_inside_the_hook_that_ended_its_predecessor() -> None:
    h = host(a=Local(), b=Local())
    typed = h.handle(ChainTyped("a", "x && /b y", "composer", True))
    assert isinstance(typed, RunTyped)
    assert typed.args == "x"

    h.handle(RunEnded(typed.token))

    assert h.ui.lines == ["1/2: /a x", "2/2: /b y"]
    assert h.runs == []
    assert h.clock.pending == 1
    h.settle()
    assert h.runs == [("b", "y")]
    assert h.ui.lines == ["1/2: /a x", "2/2: /b y", "all 2 command(s) ran"]


def test_a_held_local_step_lets_the_next_one_run_only_once_its_run_resolved() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())

    h.type("/a && /b")
    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/2: /a"]

    h.resolve("a")
    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_local_step_does_not_wait_on_a_turn_so_a_turn_end_does_not_stop_it() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a && /b")

    h.end_turn("error")
    assert h.ui.lines == ["1/2: /a"]

    h.resolve("a")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


# Failing steps


def test_a_throwing_step_stops_the_chain_and_names_the_steps_not_run() -> None:
    h = host(a=Local(), b=Throws("it broke"), c=Local())

    h.type("/a && /b && /c")

    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b", "stopped after /b: it failed: it broke; not run: /c"]


def test_a_failure_message_loses_the_slash_chain_prefix_the_engine_puts_in_front_of_it() -> None:
    h = host(a=Local(), b=Throws("slash-chain: the queue is closed"), c=Local())

    h.type("/a && /b && /c")

    assert h.ui.lines[-1] == "stopped after /b: it failed: the queue is closed; not run: /c"


def test_only_a_leading_slash_chain_prefix_is_dropped_from_a_failure_message() -> None:
    h = host(a=Local(), b=Throws("boom (slash-chain: inner)"), c=Local())

    h.type("/a && /b && /c")

    assert h.ui.lines[-1] == "stopped after /b: it failed: boom (slash-chain: inner); not run: /c"


def test_a_throwing_first_step_stops_the_chain_before_anything_else_runs() -> None:
    h = host(a=Throws("no such file"), b=Local(), c=Local())

    h.type("/a x && /b && /c")

    assert h.runs == [("a", "x")]
    assert h.ui.lines == ["1/3: /a x", "stopped after /a: it failed: no such file; not run: /b, /c"]


def test_a_last_step_that_throws_names_no_steps_not_run() -> None:
    h = host(a=Local(), b=Throws("it broke"))

    h.type("/a && /b")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "stopped after /b: it failed: it broke"]


def test_an_unknown_command_in_a_chain_stops_it_as_the_engine_refuses_to_run_it() -> None:
    h = host(a=Local(), c=Local())

    h.type("/a && /nope x && /c")

    assert h.runs == [("a", ""), ("nope", "x")]
    assert h.ui.lines == [
        "1/3: /a",
        "2/3: /nope x",
        "stopped after /nope: it failed: Unknown command: /nope; not run: /c",
    ]


def test_a_held_step_whose_run_throws_late_stops_the_chain() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a && /b")

    h.resolve("a", error="slash-chain: timed out")

    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/2: /a", "stopped after /a: it failed: timed out; not run: /b"]


# Prompt steps


def test_a_prompt_step_waits_for_its_turn_and_ignores_a_subagents_turn_end() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a x && /b")
    assert h.runs == [("a", "x")]

    h.end_turn("answer", agent="agent-7")
    assert h.runs == [("a", "x")]
    assert h.ui.lines == ["1/2: /a x"]

    h.end_turn("answer")
    assert h.runs == [("a", "x"), ("b", "")]
    assert h.ui.lines == ["1/2: /a x", "2/2: /b", "all 2 command(s) ran"]


def test_a_subagents_turn_that_ends_with_an_error_does_not_stop_the_chain() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.end_turn("error", agent="agent-7")
    assert h.ui.lines == ["1/2: /a"]

    h.end_turn("answer")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


@pytest.mark.parametrize("reason", ["error", "refusal", "aborted", "max_tokens"])
def test_a_prompt_steps_turn_that_ends_without_an_answer_stops_the_chain(reason: str) -> None:
    h = host(a=Local(), b=Prompt("do b"), c=Local(), d=Local())
    h.type("/a && /b y && /c && /d")

    h.end_turn(reason)

    assert h.runs == [("a", ""), ("b", "y")]
    assert h.ui.lines == ["1/4: /a", "2/4: /b y", f"stopped after /b: its turn ended with {reason}; not run: /c, /d"]


def test_a_turn_end_that_arrives_before_the_prompt_steps_run_resolved_is_remembered() -> None:
    h = host(a=Command(does=Prompt("do a"), held=True), b=Local())
    h.type("/a && /b")

    h.end_turn("answer")
    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/2: /a"]

    h.resolve("a")
    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_remembered_turn_end_without_an_answer_stops_the_chain_once_the_run_resolved() -> None:
    h = host(a=Command(does=Prompt("do a"), held=True), b=Local())
    h.type("/a && /b")

    h.end_turn("refusal")
    assert h.ui.lines == ["1/2: /a"]

    h.resolve("a")
    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/2: /a", "stopped after /a: its turn ended with refusal; not run: /b"]


def test_a_subagents_turn_end_before_the_run_resolved_is_not_remembered() -> None:
    h = host(a=Command(does=Prompt("do a"), held=True), b=Local())
    h.type("/a && /b")

    h.end_turn("answer", agent="agent-1")
    h.resolve("a")
    assert h.ui.lines == ["1/2: /a"]

    h.end_turn("answer")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_prompt_step_with_steps_after_it_hands_the_model_the_fail_note() -> None:
    h = host(a=Prompt("do a"), b=Prompt("do b"), c=Local())

    h.type("/a && /b && /c")
    h.end_turn("answer")

    assert h.prompts == [f"do a\n\n{note(1, 3, '/b, /c')}", f"do b\n\n{note(2, 3, '/c')}"]


def test_the_last_prompt_step_gets_no_note() -> None:
    h = host(a=Local(), b=Prompt("do b  \n"))

    h.type("/a && /b")

    assert h.prompts == ["do b  \n"]


def test_a_prompt_command_outside_a_chain_gets_no_note() -> None:
    h = host(a=Prompt("do a"))

    h.type("/a x")

    assert h.prompts == ["do a"]
    assert h.ui.lines == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("do a  \n\t", "do a"),
        # String.prototype.trimEnd removes U+00A0, U+2028 and U+FEFF ...
        ("do a\u00a0\u2028\ufeff", "do a"),
        # ... but not U+001C or U+0085, which Python's str.rstrip would remove.
        ("do a\x1c", "do a\x1c"),
        ("do a\x85", "do a\x85"),
    ],
)
def test_the_note_follows_the_prompt_trimmed_at_its_end_as_javascript_trims(text: str, kept: str) -> None:
    h = host(a=Prompt(text), b=Local())

    h.type("/a && /b")

    assert h.prompts == [f"{kept}\n\n{note(1, 2, '/b')}"]


# Pane steps


def test_a_pane_step_waits_until_that_pane_closes() -> None:
    h = host(a=Local(), b=Pane("pane-1"), c=Local())
    h.type("/a && /b && /c")
    assert h.ui.lines == ["1/3: /a", "2/3: /b"]

    h.close_pane("pane-2")
    h.end_turn("answer")
    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b"]

    h.close_pane("pane-1")
    assert h.runs == [("a", ""), ("b", ""), ("c", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b", "3/3: /c", "all 3 command(s) ran"]


def test_a_pane_that_does_not_take_the_focus_does_not_hold_the_chain() -> None:
    h = host(a=Pane("pane-1", focus=False), b=Local())

    h.type("/a && /b")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_pane_the_host_did_not_place_does_not_hold_the_chain() -> None:
    h = host(a=Pane("pane-1", placed=False), b=Local())

    h.type("/a && /b")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_pane_closed_before_the_steps_run_resolved_is_remembered() -> None:
    h = host(a=Command(does=Pane("pane-1"), held=True), b=Local())
    h.type("/a && /b")

    h.close_pane("pane-1")
    assert h.ui.lines == ["1/2: /a"]

    h.resolve("a")
    assert h.runs == [("a", ""), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_held_pane_step_that_resolved_with_its_pane_open_waits_for_it() -> None:
    h = host(a=Command(does=Pane("pane-1"), held=True), b=Local())
    h.type("/a && /b")

    h.resolve("a")
    assert h.ui.lines == ["1/2: /a"]

    h.close_pane("pane-1")
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


# Cancelling


@pytest.mark.parametrize("origin", ["composer", "bridge"])
def test_a_prompt_the_person_submits_cancels_the_running_chain(origin: str) -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b && /c")

    h.type("never mind, do something else", origin=origin)
    assert h.ui.lines == ["1/3: /a", "cancelled; not run: /b, /c"]

    h.end_turn("answer")
    assert h.runs == [("a", "")]
    assert h.ui.lines == ["1/3: /a", "cancelled; not run: /b, /c"]


@pytest.mark.parametrize("origin", ["plugin", "hook", "queue"])
def test_a_prompt_that_is_not_the_persons_own_input_does_not_cancel(origin: str) -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.type("a reminder", origin=origin)
    h.end_turn("answer")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_the_running_steps_own_submitted_text_does_not_cancel_it() -> None:
    h = host(a=Local(), b=Prompt("do b"), c=Local())
    h.type("/a && /b y && /c")

    h.handle(PromptSubmitted("/b y", "composer"))
    h.end_turn("answer")

    assert h.ui.lines == ["1/3: /a", "2/3: /b y", "3/3: /c", "all 3 command(s) ran"]


def test_the_first_prompt_steps_own_submit_from_the_composer_does_not_cancel_it() -> None:
    h = host(a=Prompt("do a"), b=Local())

    h.type("/a x && /b")
    assert h.ui.lines == ["1/2: /a x"]

    h.end_turn("answer")
    assert h.ui.lines == ["1/2: /a x", "2/2: /b", "all 2 command(s) ran"]


def test_a_submitted_slash_chain_command_does_not_cancel_the_chain() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.handle(PromptSubmitted("/slash-chain", "composer"))
    h.type("/slash-chain")
    h.end_turn("answer")

    assert h.answers == ["on · 1/2 /a, waiting for its turn"]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_single_typed_command_does_not_cancel_the_running_chain() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b")

    h.type("/c now")
    assert h.runs == [("a", ""), ("c", "now")]
    assert h.ui.lines == ["1/2: /a"]

    h.end_turn("answer")
    assert h.runs == [("a", ""), ("c", "now"), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_new_chain_the_person_types_cancels_the_running_one_then_starts() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local(), d=Local())
    h.type("/a && /b")

    h.type("/c x && /d")
    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b", "1/2: /c x", "2/2: /d", "all 2 command(s) ran"]

    h.end_turn("answer")
    assert h.runs == [("a", ""), ("c", "x"), ("d", "")]
    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b", "1/2: /c x", "2/2: /d", "all 2 command(s) ran"]


def test_a_cancelled_steps_run_that_resolves_later_does_not_move_any_chain() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local(), c=Prompt("do c"), d=Local())
    h.type("/a && /b")
    h.type("/c && /d")

    h.resolve("a")

    assert h.runs == [("a", ""), ("c", "")]
    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b", "1/2: /c"]


def test_a_session_restart_inside_a_chain_does_not_lose_it() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b && /c")

    h.start_session()
    h.end_turn("answer")

    assert h.runs == [("a", ""), ("b", ""), ("c", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /b", "3/3: /c", "all 3 command(s) ran"]


def test_a_command_without_a_separator_runs_as_typed_and_logs_nothing() -> None:
    h = host(a=Local())

    h.type("/a x && y; /b|/c")

    assert h.runs == [("a", "x && y; /b|/c")]
    assert h.ui.lines == []
