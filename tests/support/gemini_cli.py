"""Runs the pinned Gemini CLI (scripts/setup.sh: `SLASHKIT_GEMINI`) offline against the scripted Gemini API on
127.0.0.1 (tests/support/gemini_server.py), in a throwaway HOME, as docs/gemini.md's recipe says: an API key that is
no key, `GOOGLE_GEMINI_BASE_URL` at the server, no relaunch, the workspace trusted, and the project's settings
choosing the API key. slashkit goes in as a person installs it: `slashkit gemini install PROJECT_DIR`."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from slashkit.adapters import cli
from tests.support import HELPER_ENV

CLI = os.environ.get("SLASHKIT_GEMINI", "")
MODEL = "gemini-2.5-flash"


def available() -> bool:
    """Whether the pinned Gemini CLI is installed (scripts/setup.sh)."""
    return os.path.isfile(CLI)


class Gemini:
    """A project with custom commands and slashkit installed, and a HOME of its own."""

    def __init__(self, root: Path) -> None:
        self.project, self.home = root / "project", root / "home"
        self.project.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        # A TMPDIR of its own keeps its shared helper apart from other tests'; short, as a socket's path is at most
        # 108 bytes.
        self.tmp = tempfile.mkdtemp(prefix="skg-", dir="/tmp")
        atexit.register(shutil.rmtree, self.tmp, True)

    def setup(self, commands: Mapping[str, str], install: bool = True) -> Gemini:
        folder = self.project / ".gemini" / "commands"
        folder.mkdir(parents=True, exist_ok=True)
        for name, prompt in commands.items():
            (folder / f"{name}.toml").parent.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.toml").write_text(f"prompt = {json.dumps(prompt)}\n")
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (self.project / ".gemini" / "settings.json").write_text(json.dumps(settings))
        if install:
            assert cli.main(["gemini", "install", str(self.project)]) == 0
        return self

    def env(self, url: str, **extra: str) -> dict[str, str]:
        # No slashkit on PATH: the hooks find Python through SLASHKIT_PYTHON, as a test gives it.
        path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if ".venv" not in p)
        return {
            "PATH": path,
            "HOME": str(self.home),
            "TERM": "xterm-256color",
            "GEMINI_API_KEY": "offline",
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "SLASHKIT_PYTHON": sys.executable,
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "TMPDIR": self.tmp,
            # A worktree's tests run its own slashkit in the hooks too, not the one the venv installed.
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
            **HELPER_ENV,
            **extra,
        }

    def argv(self) -> list[str]:
        return [CLI, "-m", MODEL]

    def run(
        self, line: str, url: str, extra: Mapping[str, str], timeout: float = 90, options: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        """`gemini -m MODEL [OPTIONS] -p LINE` in the project folder, with `extra` in its environment."""
        return subprocess.run(
            [*self.argv(), *options, "-p", line],
            cwd=self.project,
            env=self.env(url, **extra),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
