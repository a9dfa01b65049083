"""Self-commands through the Skill tool: its description note, a refused built-in queued and answered as a
loaded skill, the toast when it fails, and what reaches the model untouched (docs/lich.md, "How the plugin behaves")."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Prompt, Throws
from slashkit.core.policy import Denied
from slashkit.core.self_command import SkillQueued
from slashkit.core.session import SkillAnswered

DESCRIPTION = "Execute a skill within the main conversation."
SKILL_NOTE = (
    "[lich] Built-in slash commands: when the user asks you to run one of the CLI's own slash commands (such as "
    "/compact), you may name it here as the skill (for example `compact`, with its arguments in `args`). It is "
    "queued and runs once this turn ends, so end your turn right after the call."
)


QUEUED = "/compact is queued and runs once this turn ends. End the turn now."


def deny(name: str) -> str:
    return (
        f"/{name} was not run: run from here, Claude Code would save it as the default for every new Claude Code "
        "session. Set it from lich instead, whose model and effort override applies to this session only."
    )


def refusal(name: str) -> str:
    return f"{name} is a built-in CLI command, not a skill. Ask the user to run /{name} themselves."


def in_lich(**commands: Command) -> MemoryHost:
    h = MemoryHost(commands=dict(commands), env=DictEnvironment({"LICH_SESSION_ID": "lich-1"}))
    assert h.session.lich is not None
    return h


def builtin() -> Command:
    return Command(does=Local(), builtin=True)


def test_the_skill_tool_description_gets_the_built_in_command_note() -> None:
    h = in_lich()

    assert h.describe("Skill", DESCRIPTION) == f"{DESCRIPTION}\n\n{SKILL_NOTE}"


@pytest.mark.parametrize("tool", ["Bash", "skill", "Skills", "mcp__lich__list_sessions", "mcp__slash-chain__fail"])
def test_other_tools_descriptions_are_untouched(tool: str) -> None:
    h = in_lich()

    assert h.describe(tool, DESCRIPTION) == DESCRIPTION


def test_a_built_in_the_skill_tool_refused_is_queued_and_answered_as_a_loaded_skill() -> None:
    h = in_lich(compact=builtin())

    reply = h.skill_call("compact", "  keep the plan \n")

    assert reply == SkillQueued(
        command="compact",
        note="/compact keep the plan is queued and runs once this turn ends. End the turn now.",
    )
    assert h.runs == [("compact", "keep the plan")]
    assert h.ui.toasts == []


def test_the_queued_command_runs_only_after_the_call_was_answered() -> None:
    h = in_lich(compact=builtin())

    reply = h.handle(SkillAnswered("compact", True, tuple(h.builtins())))

    assert reply == SkillQueued(command="compact", note=QUEUED)
    assert h.runs == []
    assert h.clock.pending == 1
    h.settle()
    assert h.runs == [("compact", "")]


def test_one_leading_slash_is_dropped_from_the_skill_name() -> None:
    h = in_lich(compact=builtin())

    reply = h.skill_call(" /compact ")

    assert reply == SkillQueued(command="compact", note=QUEUED)
    assert h.runs == [("compact", "")]


def test_only_one_leading_slash_is_dropped() -> None:
    h = in_lich(compact=builtin())

    assert h.handle(SkillAnswered("//compact", True, tuple(h.builtins()))) is None
    h.settle()
    assert h.runs == []


def test_non_string_args_count_as_none() -> None:
    h = in_lich(compact=builtin())

    reply = h.skill_call("compact", {"keep": "plan"})

    assert reply == SkillQueued(command="compact", note=QUEUED)
    assert h.runs == [("compact", "")]


def test_a_queued_command_that_fails_raises_a_toast() -> None:
    h = in_lich(compact=Command(does=Throws("the command queue is closed"), builtin=True))

    reply = h.skill_call("compact")

    assert isinstance(reply, SkillQueued)
    assert h.ui.toasts == ["/compact did not run: the command queue is closed"]
    # The lines that it was queued and runs (issue 27), and no line of a chain.
    assert h.ui.lines == [
        "the model queued /compact; it runs once this turn ends (/slash-chain stop cancels it)",
        "/compact runs now: the model queued it",
    ]


def test_a_skill_the_skill_tool_served_reaches_the_model_untouched() -> None:
    h = in_lich(review=Command(does=Prompt("review the diff")))

    assert h.skill_call("review") == "Launching skill: review"
    assert h.runs == []
    assert h.clock.pending == 0


def test_an_answer_that_is_not_an_error_is_never_taken_even_for_a_built_in() -> None:
    h = in_lich(init=builtin())

    assert h.handle(SkillAnswered("init", False, tuple(h.builtins()))) is None
    h.settle()
    assert h.runs == []


def test_a_refusal_of_a_name_that_is_no_command_reaches_the_model_untouched() -> None:
    h = in_lich(compact=builtin())

    assert h.skill_call("nonexistent") == refusal("nonexistent")
    assert h.runs == []


def test_a_refusal_of_a_command_that_is_not_built_in_reaches_the_model_untouched() -> None:
    h = in_lich(deploy=Command(does=Local(), builtin=False))

    assert h.handle(SkillAnswered("deploy", True, tuple(h.builtins()))) is None
    h.settle()
    assert h.runs == []


def test_a_built_in_named_in_another_casing_is_not_queued() -> None:
    h = in_lich(compact=builtin())

    assert h.skill_call("Compact") == refusal("Compact")
    assert h.runs == []


def test_a_non_string_skill_name_reaches_the_model_untouched() -> None:
    h = in_lich(compact=builtin())

    assert h.handle(SkillAnswered(None, True, tuple(h.builtins()))) is None
    assert h.handle(SkillAnswered(["compact"], True, tuple(h.builtins()))) is None
    h.settle()
    assert h.runs == []


@pytest.mark.parametrize("name", ["model", "effort"])
def test_model_and_effort_are_denied_through_the_skill_tool_and_never_run(name: str) -> None:
    h = in_lich(model=builtin(), effort=builtin())

    reply = h.skill_call(name, "high")

    assert reply == Denied(deny(name))
    h.settle()
    assert h.runs == []
    assert h.clock.pending == 0


def test_model_is_denied_even_when_the_host_does_not_list_it_as_a_built_in() -> None:
    h = in_lich()

    assert h.skill_call("/model", "opus") == Denied(deny("model"))
    assert h.runs == []


def test_the_skill_tool_path_never_asks_lich_who_this_session_is() -> None:
    h = in_lich(compact=builtin())
    h.whoami.answer = None

    h.skill_call("compact")

    assert h.whoami.calls == 0
