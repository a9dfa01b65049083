"""The Claude Code CLI that the Claude Agent SDK's wheel carries, which `slashkit run` falls back on when no
`claude` is found: where it is, and which version, so the person is told what runs."""

import importlib.metadata
from importlib import resources
from pathlib import Path

from attrs import frozen


@frozen
class Bundled:
    """The bundled CLI: its path, its version, and which SDK carries it (`bundled with claude-agent-sdk X`)."""

    path: Path
    version: str
    by: str


def cli() -> Bundled | None:
    """The CLI in the SDK's `_bundled` folder, or None when this SDK wheel carries none.

    Measured on claude-agent-sdk 0.2.184 (Claude Code 2.1.327), 0.2.189 (2.1.332) and 0.2.190 (2.1.337):
    `_bundled/claude` beside `_bundled/claude.version`, whose first word is the version; the SDK itself runs that
    file first when it is given no `cli_path`.
    """
    folder = Path(str(resources.files("claude_agent_sdk") / "_bundled"))
    path = folder / "claude"
    if not path.is_file():
        return None
    try:
        version = (folder / "claude.version").read_text().split()[0]
    except (OSError, IndexError):
        version = "(version unknown)"
    return Bundled(path, version, f"bundled with claude-agent-sdk {importlib.metadata.version('claude-agent-sdk')}")
