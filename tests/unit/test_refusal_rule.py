"""The refusal rule itself, as every path asks it (`slashkit.core.policy`): `/model` and `/effort` run only when the
person typed them, whatever slashes, spaces, casing or arguments are around the name."""

import pytest

from slashkit.core.policy import DEFAULT_RULE, is_refused

#: Origins that are not the person's typing (Claude Code's other `PromptOrigin` kinds, and none).
OTHERS = ["plugin", "peer", "channel", "scheduled-trigger", "unclassified", ""]
PERSON = ["composer", "bridge", "sdk"]


@pytest.mark.parametrize(
    "command", ["/model/ opus", "effort/ high", "/model/", "//effort//", "model/\topus", "/Model/ sonnet", "EFFORT/"]
)
def test_a_trailing_slash_does_not_hide_model_or_effort(command: str) -> None:
    assert is_refused(command)
    assert [origin for origin in OTHERS if DEFAULT_RULE.may_run(command, origin)] == []
    assert all(DEFAULT_RULE.may_run(command, origin) for origin in PERSON)


@pytest.mark.parametrize(
    "command",
    [
        "\x85model",  # NEXT LINE: space to Python, a name character to JavaScript
        "/model\x1copus",
        "\x1f/effort high",
        "/effort\x1dmax",
        "\x1e/Model",
        "\ufeff/model",  # ZERO WIDTH NO-BREAK SPACE: space to JavaScript, not to Python
        "/effort\u3000high",
        "\u2028model",
    ],
)
def test_whitespace_of_either_language_around_the_name_does_not_hide_it(command: str) -> None:
    assert is_refused(command)
    assert not DEFAULT_RULE.may_run(command, "plugin")


@pytest.mark.parametrize(
    "command",
    [
        "models",
        "/modelx",
        "/modelX",
        "/Xmodel",
        "XXeffort",
        "/effortless",
        "model-opus",
        "/mode",
        "/compact model",
        "/effort.high",
        "/",
    ],
)
def test_a_command_that_only_looks_like_model_or_effort_runs_for_anyone(command: str) -> None:
    assert not is_refused(command)
    assert DEFAULT_RULE.may_run(command, "plugin")


@pytest.mark.parametrize("origin", PERSON)
def test_the_persons_own_model_and_effort_run_unless_a_pipe_hands_them_text(origin: str) -> None:
    assert DEFAULT_RULE.may_run("/model opus", origin)
    assert DEFAULT_RULE.may_run("effort", origin)
    assert not DEFAULT_RULE.may_run("/model", origin, handed=True)
    assert not DEFAULT_RULE.may_run("effort", origin, handed=True)


@pytest.mark.parametrize("origin", OTHERS)
def test_anyone_elses_model_and_effort_are_refused_and_other_commands_run(origin: str) -> None:
    assert not DEFAULT_RULE.may_run("/model opus", origin)
    assert not DEFAULT_RULE.may_run("/effort", origin)
    assert DEFAULT_RULE.may_run("/compact", origin)
    assert DEFAULT_RULE.may_run("/compact", origin, handed=True)
