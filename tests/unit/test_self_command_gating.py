"""Self-commands through lich's tools act only in an interactive session inside lich; outside lich only the Skill
tool's refusal of a built-in is taken (the slash-chain plugin's path, docs/claude-code.md "What the model may
run"), and a `claude -p` inside lich changes nothing, not even a tool description (docs/lich.md, "How the plugin
behaves")."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, host
from slashkit.core.policy import Denied
from slashkit.core.self_command import ControlQueued, SkillQueued

SKILL_DESCRIPTION = "Execute a skill within the main conversation."
CONTROL_DESCRIPTION = "Controls another Claude Code session: Claude Code sessions only, and never your own."
REFUSAL = '"lich-1" is this session, and a session cannot control itself'


def session(env: dict[str, str], interactive: bool = True) -> MemoryHost:
    commands = host(
        compact=Command(does=Local(), builtin=True), model=Command(builtin=True), config=Command(builtin=True)
    ).commands
    h = MemoryHost(commands=commands, interactive=interactive, env=DictEnvironment(env))
    h.lich_control = lambda *_: (REFUSAL, True)
    return h


def assert_lichs_tools_untouched(h: MemoryHost) -> None:
    assert h.describe("Skill", SKILL_DESCRIPTION) == SKILL_DESCRIPTION
    assert h.describe("mcp__lich__control_session", CONTROL_DESCRIPTION) == CONTROL_DESCRIPTION
    assert h.control_call("lich-1", "command", "/compact") == REFUSAL
    assert h.control_call("lich-1", "command", "/model", "opus") == REFUSAL
    assert h.whoami.calls == 0
    assert h.wants() == frozenset()


def assert_nothing_changes(h: MemoryHost) -> None:
    assert_lichs_tools_untouched(h)
    assert h.skill_call("compact") == (
        "compact is a built-in CLI command, not a skill. Ask the user to run /compact themselves."
    )
    assert (
        h.skill_call("model") == "model is a built-in CLI command, not a skill. Ask the user to run /model themselves."
    )
    assert h.runs == []
    assert h.ui.toasts == []
    assert h.clock.pending == 0


def assert_the_skill_tools_refusal_is_taken(h: MemoryHost) -> None:
    assert_lichs_tools_untouched(h)
    assert h.skill_call("compact") == SkillQueued(
        "compact", "/compact is queued and runs once this turn ends. End the turn now."
    )
    assert h.runs == [("compact", "")]
    # lich's language is not this session's, nor is lich's override its way: outside lich the texts are English.
    assert h.skill_call("model") == Denied(
        "/model was not run: only the user sets this session's model or effort. Ask them to type /model themselves."
    )
    assert h.skill_call("config") == Denied(
        "/config was not run: only the user may run it, because it can change what they set or reach beyond this "
        "session. Ask them to type /config themselves."
    )
    assert h.runs == [("compact", "")]
    assert h.ui.toasts == []


def test_outside_lich_the_skill_tools_refusal_of_a_built_in_is_queued() -> None:
    assert_the_skill_tools_refusal_is_taken(session({"LICH_PROMPT_LANG": "pt-BR"}))


def test_an_empty_lich_session_id_counts_as_outside_lich() -> None:
    assert_the_skill_tools_refusal_is_taken(session({"LICH_SESSION_ID": ""}))


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
