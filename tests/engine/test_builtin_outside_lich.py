"""The model queues a built-in outside lich: the real Claude Code 2.1.328 with only the slash-chain plugin and no
LICH_* variable (the CLI's environment is built from scratch, tests/support/claude_cli.py), offline, headless
(`claude -p`) and interactive (tmux), against a scripted model.

Measured on 2.1.328 while writing these:

- In `claude -p "PROMPT"` a command the plugin runs from its timer while the turn still runs (the tool's hook
  answered; the model's next request is under way) is queued behind the turn, and the process exits only once it
  ran: the compact boundary comes after the turn's `result`, then a second `result`. (A chain's step queued after
  the session went idle is dropped instead: docs/claude-code.md, "Headless".)
- The plugin's `builtin` tool, registered as the typed prompt is submitted, is in that prompt's first request's
  tool list (not deferred) and is called in the default permission mode without any safety check, as its fail tool
  is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pytest

from slashkit.adapters.claude_code.plugins import plugin_dir
from slashkit.core import texts
from slashkit.core.texts import Key
from tests.engine.test_self_command_interactive import (
    CONTEXT_PREFIX,
    EN,
    NATIVE_REFUSAL,
    commands_run,
    flat,
    is_entry,
    messages_after_result,
    result_of,
    result_text,
    session,
    skill,
)
from tests.support.claude_cli import Isolation, JsonObject, RunResult, cli_available, run_print
from tests.support.model_server import ModelServer, RecordedRequest, Turn, text, tool_use
from tests.support.tmux_claude import TMUX

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed"),
]
interactive = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")

QUEUED: Final = EN[Key.SKILL_QUEUED].format(queued="/compact")
#: What the model is told when it asks for a command only the person may run, the same through the tool and the
#: Skill tool (outside lich the reason for /model is not lich's, which points to lich's own override).
REFUSED: Final = {
    "model": EN[Key.DENY_PERSON_ONLY].format(name="model"),
    "config": EN[Key.DENY_NOT_ALLOWED].format(name="config"),
}
#: What each refused call asks for: /model opus would save a default, /config a model and a permission mode.
REFUSED_ARGS: Final = {"model": "opus", "config": "model=opus permissionMode=acceptEdits"}


def builtin_tool(command: str, args: str | None = None) -> Turn:
    given = {"command": command} if args is None else {"command": command, "args": args}
    return tool_use(texts.BUILTIN_TOOL_ID, given)


def asked(path: str, command: str, args: str | None = None) -> Turn:
    """The model's call for `command` through `path`: the plugin's tool, or the Skill tool."""
    return builtin_tool(command, args) if path == "tool" else skill(command, args)


def settings_files(*roots: Path) -> dict[str, str]:
    """Every settings file the CLI could read or write under these folders, by path, as it is now."""
    return {str(p): p.read_text() for root in roots for p in sorted(root.rglob("settings*.json"))}


def assert_offered_the_tool(request: RecordedRequest) -> None:
    """The first request lists the tool (not deferred), with the core's description and schema."""
    offered = request.tool(texts.BUILTIN_TOOL_ID)
    assert offered is not None, request.tool_names
    assert offered.get("description") == EN[Key.SELF_TOOL_NOTE], offered
    assert offered.get("input_schema") == dict(texts.BUILTIN_SCHEMA), offered
    assert offered.get("defer_loading") is not True, offered


@pytest.fixture(scope="module")
def chain_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slash-chain plugin alone (tests/engine/test_slash_chain_headless.py validates this layout)."""
    return plugin_dir("slash-chain", tmp_path_factory.mktemp("marketplace"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


# --- headless ----------------------------------------------------------------------------------------


def headless(iso: Isolation, project: Path, plugin: Path, script: Sequence[Turn]) -> RunResult:
    with ModelServer(script) as model:
        result = run_print("run it", [plugin], project, model, timeout=90, isolation=iso)
    assert result.exit_code == 0 and not result.timed_out, result.describe()
    assert not result.load_errors(), result.describe()
    assert model.unscripted == 0, f"the model was asked for more turns than scripted\n{result.describe()}"
    return result


def ran_locally(events: Sequence[JsonObject]) -> list[str]:
    """The outputs of the local commands that ran, as `claude -p` prints them (a user message of its own)."""
    said = [(e.get("message") or {}).get("content") for e in events if e.get("type") == "user"]
    return [c for c in said if isinstance(c, str) and "<local-command-stdout>" in c]


@pytest.mark.parametrize("path", ["tool", "skill"])
def test_headless_the_models_compact_runs_once_its_turn_ended_before_the_process_exits(
    tmp_path: Path, project: Path, chain_only: Path, path: str
) -> None:
    """`claude -p`: the model calls the tool with {"command": "compact"} (or Skill(compact), which the engine
    refuses and the plugin takes); the call is answered as queued, the turn ends, then /compact runs (a summary
    request, a compact boundary after the turn's result) and only then does the process exit."""
    script = [asked(path, "compact"), text("Compacting after this turn.")]
    result = headless(Isolation.create(tmp_path), project, chain_only, script)
    model = result.model
    assert model is not None
    assert_offered_the_tool(model.main_requests[0])
    answer = result_of(model.main_requests[1])
    assert answer.get("is_error") is not True, result.describe()
    if path == "tool":
        assert result_text(answer) == QUEUED, result.describe()
    else:
        assert result_text(answer) == "Launching skill: compact", result.describe()
        assert [flat(m) for m in messages_after_result(model.main_requests[1])] == [CONTEXT_PREFIX + QUEUED]
    kinds = [(e.get("type"), e.get("subtype")) for e in result.events]
    assert ("system", "compact_boundary") in kinds, result.describe()
    assert kinds.index(("result", "success")) < kinds.index(("system", "compact_boundary")), result.describe()
    assert len(model.of_kind("summary")) == 1, result.describe()
    assert [c for c in ran_locally(result.events) if "Compacted" in c], result.describe()


@pytest.mark.parametrize("path", ["tool", "skill"])
@pytest.mark.parametrize("command", ["config", "model"])
def test_headless_config_and_model_asked_by_the_model_are_refused_and_nothing_runs(
    tmp_path: Path, project: Path, chain_only: Path, path: str, command: str
) -> None:
    """`claude -p`: the model asks for /config (which would save a model and a permission mode) or /model opus
    (a default for every session), through the tool or the Skill tool: the call is denied with the text naming
    the command, no settings file changes, nothing runs, nothing compacts."""
    iso = Isolation.create(tmp_path)
    before = settings_files(iso.home, project)
    result = headless(iso, project, chain_only, [asked(path, command, REFUSED_ARGS[command]), text("I cannot.")])
    model = result.model
    assert model is not None
    answer = result_of(model.main_requests[1])
    assert answer.get("is_error") is True, result.describe()
    assert result_text(answer) == f"<tool_use_error>{REFUSED[command]}</tool_use_error>", result.describe()
    assert f"/{command} was not run" in REFUSED[command]
    assert settings_files(iso.home, project) == before, result.describe()
    assert ran_locally(result.events) == [], result.describe()
    assert not any(is_entry(e, "system", "compact_boundary") for e in result.events), result.describe()
    assert model.of_kind("summary") == [], result.describe()


# --- interactive -------------------------------------------------------------------------------------


@interactive
@pytest.mark.parametrize("path", ["tool", "skill"])
def test_interactive_the_models_compact_runs_once_its_turn_ended(
    tmp_path: Path, project: Path, chain_only: Path, path: str
) -> None:
    """A person at the terminal says "run /compact"; the model calls the tool (or Skill(compact)): the call is
    answered as queued, and once the turn ended /compact runs, once: a compact boundary, the command's row."""
    script = [asked(path, "compact"), text("Compacting once this turn ends.")]
    with session(tmp_path, project, chain_only, script, env={}) as run:
        run.cli.send("run /compact")
        first, second = run.mains(2)
        entries = run.wait_compacted()

        assert_offered_the_tool(first)
        answer = result_of(second)
        assert answer.get("is_error") is not True, run.describe()
        if path == "tool":
            assert result_text(answer) == QUEUED, run.describe()
        else:
            assert result_text(answer) == "Launching skill: compact", run.describe()
            assert NATIVE_REFUSAL not in result_text(answer)
        turn_ended = next(i for i, e in enumerate(entries) if is_entry(e, "system", "turn_duration"))
        boundary = next(i for i, e in enumerate(entries) if is_entry(e, "system", "compact_boundary"))
        assert turn_ended < boundary, run.describe()
        entries = run.quiet()
        assert commands_run(entries) == ["/compact"], run.describe()
        assert len(run.model.of_kind("summary")) == 1, run.describe()


@interactive
@pytest.mark.parametrize("path", ["tool", "skill"])
def test_interactive_config_and_model_asked_by_the_model_are_refused_and_nothing_runs(
    tmp_path: Path, project: Path, chain_only: Path, path: str
) -> None:
    """The model asks for /config (a model and a permission mode) and then /model opus, through one path: both
    calls are denied with the text naming the command, no settings file changes, nothing runs."""
    script = [
        asked(path, "config", REFUSED_ARGS["config"]),
        asked(path, "model", REFUSED_ARGS["model"]),
        text("Neither ran."),
    ]
    with session(tmp_path, project, chain_only, script, env={}) as run:
        before = settings_files(run.iso.home, project)
        run.cli.send("switch to opus and stop asking me for edits")
        requests = run.mains(3)
        run.assert_not_compacted()

        for request, command in ((requests[1], "config"), (requests[2], "model")):
            answer = result_of(request)
            assert answer.get("is_error") is True, run.describe()
            assert result_text(answer) == f"<tool_use_error>{REFUSED[command]}</tool_use_error>", run.describe()
        assert settings_files(run.iso.home, project) == before, run.describe()
        assert commands_run(run.entries()) == [], run.describe()
