"""Self-commands act only in an interactive session inside lich; otherwise nothing changes, not even a tool
description (docs/lich.md, "How the plugin behaves")."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, host
from slashkit.core.self_command import ControlQueued, SkillQueued

SKILL_DESCRIPTION = "Execute a skill within the main conversation."
CONTROL_DESCRIPTION = "Controls another Claude Code session: Claude Code sessions only, and never your own."
REFUSAL = '"lich-1" is this session, and a session cannot control itself'


def session(env: dict[str, str], interactive: bool = True) -> MemoryHost:
    commands = host(compact=Command(does=Local(), builtin=True), model=Command(builtin=True)).commands
    h = MemoryHost(commands=commands, interactive=interactive, env=DictEnvironment(env))
    h.lich_control = lambda *_: (REFUSAL, True)
    return h


def assert_nothing_changes(h: MemoryHost) -> None:
    assert h.describe("Skill", SKILL_DESCRIPTION) == SKILL_DESCRIPTION
    assert h.describe("mcp__lich__control_session", CONTROL_DESCRIPTION) == CONTROL_DESCRIPTION
    assert h.skill_call("compact") == (
        "compact is a built-in CLI command, not a skill. Ask the user to run /compact themselves."
    )
    assert (
        h.skill_call("model") == "model is a built-in CLI command, not a skill. Ask the user to run /model themselves."
    )
    assert h.control_call("lich-1", "command", "/compact") == REFUSAL
    assert h.control_call("lich-1", "command", "/model", "opus") == REFUSAL
    assert h.runs == []
    assert h.ui.toasts == []
    assert h.clock.pending == 0
    assert h.whoami.calls == 0
    assert h.wants() == frozenset()


def test_outside_lich_nothing_changes() -> None:
    assert_nothing_changes(session({"LICH_PROMPT_LANG": "pt-BR"}))


def test_an_empty_lich_session_id_counts_as_outside_lich() -> None:
    assert_nothing_changes(session({"LICH_SESSION_ID": ""}))


def test_a_non_interactive_run_inside_lich_changes_nothing() -> None:
    # A `claude -p` started from a tool inside a lich session inherits lich's variables.
    assert_nothing_changes(session({"LICH_SESSION_ID": "lich-1"}, interactive=False))


def test_an_interactive_session_inside_lich_is_active() -> None:
    h = session({"LICH_SESSION_ID": "lich-1"})

    assert h.describe("Skill", SKILL_DESCRIPTION).startswith(f"{SKILL_DESCRIPTION}\n\n[lich] ")
    assert isinstance(h.control_call("lich-1", "command", "/compact"), ControlQueued)
    assert h.runs == [("compact", "")]
    assert h.wants() != frozenset()


@pytest.mark.parametrize("interactive", [True, False])
def test_a_session_start_asks_for_a_redraw_of_tool_descriptions_only_when_active(interactive: bool) -> None:
    h = session({"LICH_SESSION_ID": "lich-1"}, interactive=interactive)

    before = h.ui.invalidated
    h.start_session()
    assert h.ui.invalidated - before == (1 if interactive else 0)


def test_a_restart_keeps_the_session_active() -> None:
    h = session({"LICH_SESSION_ID": "lich-1"})

    h.start_session()

    assert isinstance(h.skill_call("compact"), SkillQueued)
    assert h.runs == [("compact", "")]
