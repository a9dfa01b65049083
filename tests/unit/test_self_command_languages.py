"""Self-command texts follow LICH_PROMPT_LANG: an exact match of en, pt-BR, zh-CN or es, else English; the
toast stays English (docs/lich.md)."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Throws
from slashkit.core.policy import Denied
from slashkit.core.self_command import ControlQueued, Identity, SkillQueued
from slashkit.core.texts import CATALOGS, Key

DESCRIPTION = "Original description."
LANGUAGES = ["en", "pt-BR", "zh-CN", "es"]
#: A word of each language's text that no other language's has, so a wrong catalog cannot pass.
MARKS = {"en": "queued", "pt-BR": "fila", "zh-CN": "队列", "es": "cola"}


def in_lich(lang: str | None) -> MemoryHost:
    env = {"LICH_SESSION_ID": "lich-9"} if lang is None else {"LICH_SESSION_ID": "lich-9", "LICH_PROMPT_LANG": lang}
    commands = {
        "compact": Command(does=Local(), builtin=True),
        "context": Command(does=Throws("the command queue is closed"), builtin=True),
        "model": Command(builtin=True),
    }
    h = MemoryHost(commands=commands, env=DictEnvironment(env))
    h.lich_control = lambda *_: ("refused", True)
    h.whoami.answer = Identity(label="fix/x", name="repo-a1b2")
    return h


def texts_seen(h: MemoryHost) -> dict[Key, str]:
    """Collects every self-command text the model can be shown."""
    skill = h.skill_call("compact", "keep the plan")
    control = h.control_call("FIX/X", "command", "/compact", "keep the plan")
    denied = h.skill_call("model")
    assert isinstance(skill, SkillQueued)
    assert isinstance(control, ControlQueued)
    assert isinstance(denied, Denied)
    return {
        Key.SKILL_NOTE: h.describe("Skill", DESCRIPTION).removeprefix(f"{DESCRIPTION}\n\n"),
        Key.CONTROL_NOTE: h.describe("mcp__lich__control_session", DESCRIPTION).removeprefix(f"{DESCRIPTION}\n\n"),
        Key.DENY_DEFAULT_SAVED: denied.text,
        Key.SKILL_QUEUED: skill.note,
        Key.CONTROL_QUEUED: control.text,
    }


def expected(lang: str) -> dict[Key, str]:
    catalog = CATALOGS[lang]
    return {
        Key.SKILL_NOTE: catalog[Key.SKILL_NOTE],
        Key.CONTROL_NOTE: catalog[Key.CONTROL_NOTE].format(session_id="lich-9"),
        Key.DENY_DEFAULT_SAVED: catalog[Key.DENY_DEFAULT_SAVED].format(name="model"),
        Key.SKILL_QUEUED: catalog[Key.SKILL_QUEUED].format(queued="/compact keep the plan"),
        Key.CONTROL_QUEUED: catalog[Key.CONTROL_QUEUED].format(queued="/compact keep the plan"),
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_language_gets_its_own_texts(lang: str) -> None:
    h = in_lich(lang)

    seen = texts_seen(h)

    assert seen == expected(lang)
    assert MARKS[lang] in seen[Key.SKILL_QUEUED]
    for other, mark in MARKS.items():
        if other != lang:
            assert mark not in seen[Key.SKILL_QUEUED]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_tool_names_the_session_id_and_the_lich_tag_stay_untranslated(lang: str) -> None:
    seen = texts_seen(in_lich(lang))

    assert seen[Key.SKILL_NOTE].startswith("[lich] ")
    assert seen[Key.CONTROL_NOTE].startswith("[lich] ")
    assert "`command`" in seen[Key.CONTROL_NOTE]
    assert "lich-9" in seen[Key.CONTROL_NOTE]
    assert "LICH_SESSION_ID" in seen[Key.CONTROL_NOTE]
    assert "/model" in seen[Key.DENY_DEFAULT_SAVED]
    assert "/compact keep the plan" in seen[Key.SKILL_QUEUED]
    assert "/compact keep the plan" in seen[Key.CONTROL_QUEUED]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_refusal_is_in_the_sessions_language_on_both_paths(lang: str) -> None:
    h = in_lich(lang)
    chained = Denied(CATALOGS[lang][Key.DENY_CHAINED].format(name="compact"))
    saved = Denied(CATALOGS[lang][Key.DENY_DEFAULT_SAVED].format(name="model"))

    assert h.skill_call("compact", "now && /context") == chained
    assert h.control_call("lich-9", "command", "/compact", "now && /context") == chained
    assert h.control_call("lich-9", "command", "/model", "opus") == saved
    h.settle()
    assert h.runs == []


@pytest.mark.parametrize("lang", [None, "", "fr", "PT-br", "pt-br", "pt", "zh", "en-US", " es", "es "])
def test_an_unset_empty_or_unknown_language_gets_english(lang: str | None) -> None:
    assert texts_seen(in_lich(lang)) == expected("en")


def test_the_english_texts_read_as_written() -> None:
    seen = texts_seen(in_lich("en"))

    assert seen[Key.SKILL_QUEUED] == "/compact keep the plan is queued and runs once this turn ends. End the turn now."
    assert seen[Key.CONTROL_QUEUED] == (
        "/compact keep the plan is queued on this session and runs once this turn ends. End the turn now."
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_toast_for_a_queued_command_that_failed_stays_english(lang: str) -> None:
    h = in_lich(lang)

    h.skill_call("context")

    assert h.ui.toasts == ["/context did not run: the command queue is closed"]
