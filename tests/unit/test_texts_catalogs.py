"""The texts module: every self-command catalog has English's keys and slots, the language pick is exact,
and the chain's lines are seed 003's, character for character (`chain.ts`)."""

import string

import pytest

from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.texts import CATALOGS, Key


def slots(template: str) -> set[str]:
    """Names the `{slots}` a template has."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_english_has_every_key() -> None:
    assert set(CATALOGS["en"]) == set(Key)


def test_the_library_has_exactly_the_languages_lich_exports() -> None:
    assert set(CATALOGS) == {"en", "pt-BR", "zh-CN", "es"}


@pytest.mark.parametrize("lang", sorted(CATALOGS))
def test_every_catalog_has_the_same_keys_as_english(lang: str) -> None:
    assert set(CATALOGS[lang]) == set(CATALOGS["en"])


@pytest.mark.parametrize("lang", sorted(CATALOGS))
def test_every_catalog_has_the_same_slots_per_key_as_english(lang: str) -> None:
    for key, english in CATALOGS["en"].items():
        assert slots(CATALOGS[lang][key]) == slots(english), (lang, key)


def test_the_slots_are_the_ones_the_use_cases_fill() -> None:
    english = CATALOGS["en"]
    assert {key: slots(english[key]) for key in Key} == {
        Key.SKILL_NOTE: set(),
        Key.CONTROL_NOTE: {"session_id"},
        Key.DENY_DEFAULT_SAVED: {"name"},
        Key.SKILL_QUEUED: {"queued"},
        Key.CONTROL_QUEUED: {"queued"},
        Key.SELF_TOOL_NOTE: set(),
        Key.DENY_NOT_ALLOWED: {"name"},
        Key.DENY_CHAINED: {"name"},
        Key.DENY_PERSON_ONLY: {"name"},
        Key.NOT_BUILTIN: {"name"},
        Key.DENY_LINE_BREAK: {"name"},
        Key.DENY_NOT_TEXT: {"name"},
        Key.DENY_TOO_LONG: {"name", "length", "limit"},
        Key.DENY_ONE_QUEUED: {"name", "queued"},
        Key.DENY_SWITCHED_OFF: {"name"},
        Key.LOG_QUEUED: {"queued"},
        Key.LOG_RUNS: {"queued"},
    }


@pytest.mark.parametrize("lang", sorted(CATALOGS))
def test_every_catalog_text_formats_with_its_slots_and_differs_from_the_slot_values(lang: str) -> None:
    for key, template in CATALOGS[lang].items():
        filled = template.format(session_id="S", name="N", queued="Q", length="L", limit="M")
        assert "{" not in filled and "}" not in filled, (lang, key)
        if lang != "en":
            assert template != CATALOGS["en"][key], (lang, key)


def test_slots_sees_every_field_of_a_template() -> None:
    assert slots("{a} and {b} but not {{c}}") == {"a", "b"}


@pytest.mark.parametrize(
    ("prompt_lang", "lang"),
    [
        ("en", "en"),
        ("pt-BR", "pt-BR"),
        ("zh-CN", "zh-CN"),
        ("es", "es"),
        (None, "en"),
        ("", "en"),
        ("PT-br", "en"),
        ("fr", "en"),
        ("zh-cn", "en"),
        ("ES", "en"),
    ],
)
def test_the_language_is_an_exact_case_sensitive_match_else_english(prompt_lang: str | None, lang: str) -> None:
    assert texts.language(prompt_lang) == lang


def test_a_key_a_language_lacks_falls_back_to_english() -> None:
    assert texts.text("xx", Key.SKILL_QUEUED, queued="/compact") == CATALOGS["en"][Key.SKILL_QUEUED].format(
        queued="/compact"
    )


# The chain's lines, copied from seed 003 (`chain.ts`, `register.ts`).


def test_a_step_line_reads_index_total_and_the_step() -> None:
    assert texts.step_text(2, 3, Step("test2", "")) == "2/3: /test2"
    assert texts.step_text(1, 2, Step("a", "x y")) == "1/2: /a x y"


def test_the_done_line_counts_the_commands() -> None:
    assert texts.done_text(3) == "all 3 command(s) ran"


def test_the_stop_and_cancel_lines_name_the_steps_not_run() -> None:
    left = (Step("b", "x"), Step("c", ""))
    assert texts.stopped_text(Step("a", "y"), texts.turn_why("error"), left) == (
        "stopped after /a: its turn ended with error; not run: /b, /c"
    )
    assert texts.stopped_text(Step("a", ""), texts.failed_why("no"), ()) == (
        "stopped after /a: the model reported it failed: no"
    )
    assert texts.cancelled_text(left) == "cancelled; not run: /b, /c"
    assert texts.cancelled_text(()) == "cancelled"


def test_a_thrown_message_loses_only_a_leading_slash_chain_prefix() -> None:
    assert texts.thrown_why("slash-chain: boom") == "it failed: boom"
    assert texts.thrown_why("slash-chain: slash-chain: boom") == "it failed: slash-chain: boom"
    assert texts.thrown_why("x slash-chain: boom") == "it failed: x slash-chain: boom"


def test_the_status_names_each_wait() -> None:
    step = Step("b", "y")
    assert texts.status_text(True, None) == "on · no chain runs"
    assert texts.status_text(False, None) == "off · no chain runs"
    assert texts.status_text(True, (2, 3, step, "run")) == "on · 2/3 /b y, running"
    assert texts.status_text(True, (2, 3, step, "turn")) == "on · 2/3 /b y, waiting for its turn"
    assert texts.status_text(False, (2, 3, step, "pane")) == "off · 2/3 /b y, waiting for its pane to close"


def test_the_fail_note_names_the_steps_after_it() -> None:
    assert texts.fail_note(1, 3, (Step("b", "x"), Step("c", ""))) == (
        "[slash-chain] This is step 1/3 of a chain; after it: /b, /c. If you could not do what this step asks, "
        "call the mcp__slash-chain__fail tool with the reason before you end your turn, and the steps after it "
        "do not run."
    )
    assert "after it: none." in texts.fail_note(3, 3, ())


def test_the_command_and_fail_tool_texts_are_the_seeds() -> None:
    assert texts.CHAIN_COMMAND == "slash-chain"
    assert texts.CHAIN_COMMAND_DESCRIPTION == "Runs /a && /b one after another: status, stop, on, off (slash-chain)"
    # Beyond the seed: the switch of the model's self-commands (issue 27) adds its two words to the hint and usage.
    assert texts.CHAIN_COMMAND_HINT == (
        "[stop | on | off | list | steps | add /CMD | drop N | allow NAME | resume | forget | builtin on | builtin off]"
    )
    assert texts.USAGE == (
        "expects nothing (the status), stop, on, off, list, steps, add /CMD, drop N, allow NAME, resume, forget, "
        "builtin on or builtin off"
    )
    assert texts.NO_CHAIN_RUNS == "no chain runs"
    assert texts.ON_TEXT == "on: /a && /b runs /b once /a ended well"
    assert texts.OFF_TEXT == "off: the engine runs the first command alone, as it does without the mod"
    assert texts.FAIL_TOOL_ID == "mcp__slash-chain__fail"
    assert texts.FAIL_DESCRIPTION == (
        "Stops the running slash-chain (/a && /b) because the step you were handed failed, so the commands after it "
        "do not run. Call it only while a slash-chain step waits on your turn, and only when you could not do what "
        "that step asked; a step you did does not need it."
    )
    assert texts.FAIL_SCHEMA == {
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "Why the step failed, in one sentence."}},
        "required": ["reason"],
    }
    assert texts.FAIL_STOPPED == "The chain stopped; the steps after this one do not run."
    assert texts.FAIL_NOTHING_WAITS == "no slash-chain step waits on this turn, so there is nothing to stop"
    assert texts.FAIL_NEEDS_REASON == "reason is required: say in one sentence why the step failed"


def test_the_queued_toast_is_english() -> None:
    assert texts.queued_failed_toast("compact", "the command queue is closed") == (
        "/compact did not run: the command queue is closed"
    )
