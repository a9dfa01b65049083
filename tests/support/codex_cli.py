"""The real Codex CLI (`codex app-server`), offline against the scripted Responses API of
tests/support/openai_server.py: a private HOME and CODEX_HOME whose config.toml points a provider at 127.0.0.1
(the recipe of docs/codex.md, "Offline tests"), and a project folder with skills.

`SLASHKIT_CODEX` names the binary (scripts/setup.sh sets it to the pinned one in .tools/codex); without it the
tests that need Codex are skipped, saying so.
"""

import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer

#: The repository's root.
ROOT = Path(__file__).resolve().parents[2]


def codex_binary() -> str:
    """The Codex CLI to test, or skip."""
    found = os.environ.get("SLASHKIT_CODEX") or shutil.which("codex")
    if not found or not Path(found).exists():
        pytest.skip("no Codex CLI: source scripts/setup.sh (SLASHKIT_CODEX)")
    return found


CONFIG = """\
model = "stub-model"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false
[analytics]
enabled = false
[model_providers.stub]
name = "Scripted stub"
base_url = "{url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


@dataclass(frozen=True)
class CodexHome:
    """A private Codex setup: `env` for the app-server, `project` its working folder."""

    root: Path
    project: Path
    env: Mapping[str, str]

    def skill(self, name: str, instructions: str, description: str = "") -> Path:
        """Writes the project skill `name` (`.agents/skills/NAME/SKILL.md`) and returns its SKILL.md."""
        folder = self.project / ".agents" / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "SKILL.md"
        about = description or f"The {name} skill."
        path.write_text(f"---\nname: {name}\ndescription: {about}\n---\n\n{instructions}\n")
        return path


@contextmanager
def codex_home(model: OpenAIServer) -> Iterator[CodexHome]:
    """A fresh HOME, CODEX_HOME and git project, outside /tmp's shared names (mkdtemp), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="slashkit-codex-"))
    try:
        home, codex = root / "home", root / "home" / ".codex"
        project = root / "project"
        for folder in (codex, project / ".git"):
            folder.mkdir(parents=True)
        (codex / "config.toml").write_text(CONFIG.format(url=model.url))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "CODEX_HOME": str(codex),
            "TMPDIR": str(root),
            "NO_PROXY": "127.0.0.1,localhost",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "RUST_LOG": "error",
        }
        yield CodexHome(root, project, env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def alive(pid: int) -> bool:
    """Tells whether anything of the process group `pid` still runs."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone_within(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
