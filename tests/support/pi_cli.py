"""Runs the pinned pi (scripts/setup.sh: `SLASHKIT_PI_NODE`, `SLASHKIT_PI`) offline against a scripted model on
127.0.0.1 (tests/support/openai_server.py), in a throwaway HOME and agent folder, as docs/pi.md's recipe says:
`models.json` names the scripted model, `PI_OFFLINE=1`, and `--approve` trusts the project's `.pi/`."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from slashkit.adapters.pi import install

NODE = os.environ.get("SLASHKIT_PI_NODE", "")
CLI = os.environ.get("SLASHKIT_PI", "")


def available() -> bool:
    """Whether the pinned pi is installed (scripts/setup.sh)."""
    return os.path.isfile(NODE) and os.path.isfile(CLI)


@dataclass
class Pi:
    """A project with slashkit's extension installed and prompt templates, and an agent folder on one model."""

    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    def setup(self, url: str, templates: dict[str, str]) -> Pi:
        """Lays out the agent folder (the scripted model) and the project (templates, the extension)."""
        self.agent.mkdir(parents=True, exist_ok=True)
        (self.root / "home").mkdir(exist_ok=True)
        provider = {"baseUrl": url, "api": "openai-completions", "apiKey": "any"}
        models = {"providers": {"fake": {**provider, "models": [{"id": "fake-model", "maxTokens": 4000}]}}}
        (self.agent / "models.json").write_text(json.dumps(models))
        (self.agent / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
        prompts = self.project / ".pi" / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        for name, body in templates.items():
            (prompts / f"{name}.md").write_text(f"---\ndescription: {name}\n---\n{body}\n")
        install.install(install.extensions_dir(self.project))
        return self

    def env(self, **extra: str) -> dict[str, str]:
        """pi's environment: its own HOME, agent folder and state, offline, this clone's Python for the helper."""
        node_bin = str(Path(NODE).parent)
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "TERM", "SLASHKIT_PYTHON")}
        return {
            **keep,
            "PATH": f"{node_bin}:{os.environ.get('PATH', '')}",
            "HOME": str(self.root / "home"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "TMPDIR": str(self.root),
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            **extra,
        }

    def run(self, line: str, timeout: float = 60, **extra: str) -> subprocess.CompletedProcess[str]:
        """`pi -p --approve LINE` in the project folder."""
        argv = [NODE, CLI, "-p", "--approve", "--no-session", line]
        return subprocess.run(
            argv, cwd=self.project, env=self.env(**extra), capture_output=True, text=True, timeout=timeout, check=False
        )
