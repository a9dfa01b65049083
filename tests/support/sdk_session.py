"""A slashkit SDK session on the real Claude Code CLI, isolated and offline, for tests and benchmarks: the
options `tests.support.claude_cli` gives a headless run, as `ClaudeAgentOptions`."""

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from claude_agent_sdk import ClaudeAgentOptions

from slashkit.adapters.sdk import Event, Message
from tests.support.claude_cli import Isolation, claude_path, isolated_env
from tests.support.model_server import ModelServer

#: A project command that hands the model a prompt: `/greet Bob` asks the model to greet Bob.
GREET: Final = "---\ndescription: Greets someone\n---\nGreet $ARGUMENTS warmly.\n"


def project(root: Path) -> Path:
    """A project folder with `.claude/commands/greet.md`."""
    folder = root / "project"
    (folder / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / "commands" / "greet.md").write_text(GREET)
    return folder


def options(tmp: Path, model: ModelServer, **more: object) -> ClaudeAgentOptions:
    """Options for a session on the pinned CLI (`cli_path`), in a fresh isolation under `tmp`, talking to
    `model` only."""
    iso = Isolation.create(tmp)
    env = isolated_env(iso, model.url)
    return ClaudeAgentOptions(
        cwd=str(project(iso.root)),
        env=env,
        cli_path=str(claude_path()),
        stderr=lambda _: None,
        **more,  # type: ignore[arg-type]
    )


def visible(events: Sequence[Event]) -> list[Event]:
    """The events but the SDK's own messages."""
    return [e for e in events if not isinstance(e, Message)]
