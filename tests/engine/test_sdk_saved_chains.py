"""Saved chains on the SDK host (issue 28), in the real Claude Code 2.1.328 offline against a scripted model: a chain
written once in the project's `.slashkit/chains/` runs by name from `SlashSession.run`, nested ones as function
calls, a cycle with no model request, and a restricted built-in from a file refused while `;` goes on."""

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from slashkit.adapters.sdk import ChainEnded, Event, Line, Output, SlashSession
from tests.support.claude_cli import cli_available
from tests.support.model_server import ModelServer, Turn, text
from tests.support.sdk_session import options, visible

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed (scripts/setup.sh)"),
]


def play(
    tmp: Path, chains: dict[str, str], script: Sequence[Turn], typed: str
) -> tuple[list[Event], ModelServer, Path]:
    """Writes the saved chains into the session's project, types one text, and returns what its `run` yielded."""
    with ModelServer(script, idle_timeout=60) as model:
        given = options(tmp, model)
        assert given.cwd is not None
        project = Path(given.cwd)
        folder = project / ".slashkit" / "chains"
        folder.mkdir(parents=True)
        for name, body in chains.items():
            (folder / f"{name}.md").write_text(body)

        async def main() -> list[Event]:
            async with SlashSession(dataclasses.replace(given)) as session:
                return visible([e async for e in session.run(typed)])

        return asyncio.run(asyncio.wait_for(main(), timeout=90)), model, project


def lines(events: Sequence[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, Line)]


def test_a_saved_chain_typed_by_name_runs_its_steps_and_a_bad_file_beside_it_is_one_line(tmp_path: Path) -> None:
    ship = "---\ndescription: Greets two\n---\n/greet $1 && /greet $2\n"
    chains = {"ship": ship, "broken": "greet Bob"}
    events, model, project = play(tmp_path, chains, [text("Hi Bob!"), text("Hi Carol!")], "/ship Bob Carol")

    broken = project / ".slashkit" / "chains" / "broken.md"
    assert lines(events) == [
        f"saved chain {broken}:1: a command was expected, not 'greet'; nothing of it runs",
        "1/2: /greet Bob",
        "2/2: /greet Carol",
        "all 2 command(s) ran",
    ]
    assert Output(0, "/ship Bob Carol runs 2 command(s)") in events
    first, second = model.main_requests
    assert "Greet Bob warmly." in first.last_user_text()
    assert "Greet Carol warmly." in second.last_user_text()


def test_a_nested_saved_chain_is_a_function_call(tmp_path: Path) -> None:
    # check's /greet ends well, so its `|| /context` is passed over; check ended well, so ship's `&& /cost` runs.
    chains = {"ship": "/check $ARGUMENTS && /cost", "check": "/greet $1 || /context"}
    events, model, _ = play(tmp_path, chains, [text("Hi Bob!")], "/ship Bob")

    assert lines(events) == [
        "1/3: /greet Bob",
        "skipped 2/3: /context (the last command succeeded)",
        "3/3: /cost",
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]
    assert len(model.main_requests) == 1


def test_a_cycle_runs_nothing_and_asks_the_model_nothing(tmp_path: Path) -> None:
    # Not `loop`: Claude Code 2.1.328 has a /loop of its own, which a saved chain of that name leaves to it.
    events, model, _ = play(tmp_path, {"spin": "/greet a && /spin2", "spin2": "/spin"}, [], "/spin")

    assert [e.text for e in events if isinstance(e, Output)] == [
        "saved chains call each other in a cycle (spin -> spin2 -> spin); nothing ran"
    ]
    assert not any(isinstance(e, ChainEnded) for e in events)
    assert model.requests == []


def test_a_restricted_built_in_from_a_file_is_refused_and_the_next_step_runs(tmp_path: Path) -> None:
    events, model, project = play(tmp_path, {"ship": "/config theme=light ; /model opus ; /cost"}, [], "/ship")

    assert lines(events) == [
        "skipped 1/3: /config theme=light (only the person may run /config, and this came from saved chain ship)",
        "skipped 2/3: /model opus (only the person may run /model, and this came from saved chain ship)",
        "3/3: /cost",
        "ended: 1 succeeded, 0 failed, 2 skipped",
    ]
    assert model.main_requests == []
    # Nothing of the person's configuration changed: no settings file holds what the file's steps would set.
    settings = [json.loads(p.read_text()) for p in project.parent.rglob("settings*.json")]
    assert all("theme" not in s and "model" not in s for s in settings)


def test_shell_steps_a_typed_until_is_decided_by_exit_status_and_an_unapproved_file_runs_nothing(
    tmp_path: Path,
) -> None:
    # issue 34: the SDK host runs the shell itself, in the project, off its event loop.
    chains = {"ship": "/greet $1 && !touch shipped.txt\n"}
    flaky = 'n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 1 ]'
    events, model, project = play(tmp_path, chains, [text("Hi Bob!")], f"until !sh -c '{flaky}'; do /greet Bob; done")

    assert (project / "runs").read_text() == "2\n"
    assert lines(events)[-1] == "ended: 2 succeeded, 1 failed, 0 skipped", lines(events)
    assert len(model.main_requests) == 1

    events, model, project = play(tmp_path / "again", chains, [text("Hi Bob!")], "/ship Bob")
    assert not (project / "shipped.txt").exists()
    assert model.main_requests == []
    assert any("type /slash-chain allow ship" in getattr(e, "text", "") for e in events), events
