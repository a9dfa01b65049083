"""The `/slash-chain` command: status, stop, on, off and the usage text, and the setting every window
shares (seed 003, `runCommand`, `setEnabled`, `readSettings`)."""

import pytest

from slashkit.adapters.memory import Command, Local, Pane, Prompt, host

ON = "on: /a && /b runs /b once /a ended well"
OFF = "off: the engine runs the first command alone, as it does without the mod"
USAGE = (
    "expects nothing (the status), stop, on, off, list, steps, add /CMD, drop N, allow NAME, resume, forget, "
    "builtin on or builtin off"
)


def test_off_is_saved_in_the_store_and_answered() -> None:
    h = host()

    h.type("/slash-chain off")

    assert h.answers == [OFF]
    assert h.store.data["enabled"] is False
    assert h.ui.lines == []


def test_a_chain_typed_while_off_runs_exactly_as_typed_with_nothing_logged() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/slash-chain off")

    h.type("/a x && /b y")
    h.end_turn("answer")

    assert h.runs == [("slash-chain", "off"), ("a", "x && /b y")]
    assert h.prompts == ["do a"]
    assert h.ui.lines == []


def test_on_is_saved_in_the_store_and_chains_run_again() -> None:
    h = host(a=Local(), b=Local())
    h.type("/slash-chain off")

    h.type("/slash-chain on")
    h.type("/a && /b")

    assert h.answers == [OFF, ON]
    assert h.store.data["enabled"] is True
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_off_cancels_the_running_chain() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b && /c")

    h.type("/slash-chain off")
    h.end_turn("answer")

    assert h.answers == [OFF]
    assert h.ui.lines == ["1/3: /a", "cancelled; not run: /b, /c"]
    assert h.runs == [("a", ""), ("slash-chain", "off")]


def test_on_while_a_chain_runs_keeps_it_running() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.type("/slash-chain on")
    h.end_turn("answer")

    assert h.answers == [ON]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_stop_cancels_the_running_chain_and_answers_what_did_not_run() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local())
    h.type("/a && /b && /c")

    h.type("/slash-chain stop")
    h.end_turn("answer")

    assert h.answers == ["cancelled; not run: /b, /c"]
    assert h.ui.lines == ["1/3: /a", "cancelled; not run: /b, /c"]
    assert h.runs == [("a", ""), ("slash-chain", "stop")]
    assert h.store.data == {}


def test_stop_on_the_last_step_answers_cancelled_alone() -> None:
    h = host(a=Local(), b=Prompt("do b"))
    h.type("/a && /b")

    h.type("/slash-chain stop")

    assert h.answers == ["cancelled"]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "cancelled"]


def test_stop_with_no_chain_answers_that_none_runs() -> None:
    h = host()

    h.type("/slash-chain stop")

    assert h.answers == ["no chain runs"]
    assert h.ui.lines == []


def test_the_word_may_have_javascript_whitespace_around_it() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.type("/slash-chain   stop \ufeff")

    assert h.answers == ["cancelled; not run: /b"]


def test_the_status_with_no_chain_says_on_and_that_none_runs() -> None:
    h = host()

    h.type("/slash-chain")

    assert h.answers == ["on · no chain runs"]


def test_the_status_when_off_says_off() -> None:
    h = host()
    h.type("/slash-chain off")

    h.type("/slash-chain")

    assert h.answers == [OFF, "off · no chain runs"]


def test_the_status_while_a_step_runs_names_it_running() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a x && /b")

    h.type("/slash-chain")

    assert h.answers == ["on · 1/2 /a x, running"]


def test_the_status_while_a_prompt_step_waits_says_waiting_for_its_turn() -> None:
    h = host(a=Local(), b=Prompt("do b"), c=Local())
    h.type("/a && /b y && /c")

    h.type("/slash-chain")

    assert h.answers == ["on · 2/3 /b y, waiting for its turn"]


def test_the_status_while_a_pane_step_waits_says_waiting_for_its_pane_to_close() -> None:
    h = host(a=Pane("pane-1"), b=Local())
    h.type("/a && /b")

    h.type("/slash-chain")

    assert h.answers == ["on · 1/2 /a, waiting for its pane to close"]


def test_the_status_after_a_chain_ended_says_none_runs() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")
    h.end_turn("answer")

    h.type("/slash-chain")

    assert h.answers == ["on · no chain runs"]


@pytest.mark.parametrize("args", ["bogus", "ON", "Off", "stop now", "status", "on off"])
def test_anything_else_gets_the_usage_text(args: str) -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.type(f"/slash-chain {args}")

    assert h.answers == [USAGE]
    assert h.ui.lines == ["1/2: /a"]
    assert "enabled" not in h.store.data


def test_the_setting_another_window_changed_is_read_before_the_next_chain() -> None:
    h = host(a=Local(), b=Local())

    h.store.data["enabled"] = False
    h.type("/a && /b")
    assert h.runs == [("a", "&& /b")]
    assert h.ui.lines == []

    h.store.data["enabled"] = True
    h.type("/a && /b")
    assert h.runs == [("a", "&& /b"), ("a", ""), ("b", "")]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_the_status_reads_the_setting_another_window_changed() -> None:
    h = host()
    h.type("/slash-chain off")

    h.store.data["enabled"] = True
    h.type("/slash-chain")

    assert h.answers == [OFF, "on · no chain runs"]


def test_turning_off_from_another_window_mid_chain_shows_in_the_status_but_does_not_cancel() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    h.store.data["enabled"] = False
    h.type("/slash-chain")
    h.end_turn("answer")

    assert h.answers == ["off · 1/2 /a, waiting for its turn"]
    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


@pytest.mark.parametrize("stored", [None, True, 0, "", "false", "off"])
def test_only_a_stored_false_turns_chains_off(stored: object) -> None:
    h = host(a=Local(), b=Local())
    h.store.data["enabled"] = stored

    h.type("/a && /b")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]


def test_a_new_chain_the_person_types_while_off_still_cancels_the_running_one() -> None:
    h = host(a=Prompt("do a"), b=Local(), c=Local(), d=Local())
    h.type("/a && /b")
    h.store.data["enabled"] = False

    h.type("/c && /d")

    assert h.ui.lines == ["1/2: /a", "cancelled; not run: /b"]
    assert h.runs == [("a", ""), ("c", "&& /d")]


# `/slash-chain` as a step: the engine runs it through the mod's own command, as it would the typed one.


def test_a_slash_chain_status_step_answers_and_the_chain_goes_on() -> None:
    h = host(a=Local(), b=Local())

    h.type("/a && /slash-chain status && /b")

    assert h.runs == [("a", ""), ("slash-chain", "status"), ("b", "")]
    assert h.ui.lines == ["1/3: /a", "2/3: /slash-chain status", "3/3: /b", "all 3 command(s) ran"]


def test_a_slash_chain_stop_step_cancels_its_own_chain() -> None:
    h = host(a=Local(), b=Local())

    h.type("/a && /slash-chain stop && /b")

    assert h.runs == [("a", ""), ("slash-chain", "stop")]
    assert h.ui.lines == ["1/3: /a", "2/3: /slash-chain stop", "cancelled; not run: /b"]
