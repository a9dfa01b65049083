"""Runs the pinned omp (scripts/setup.sh: `SLASHKIT_OMP_BUN`, `SLASHKIT_OMP`) offline against a scripted model on
127.0.0.1 (tests/support/openai_server.py), in a throwaway HOME, as docs/pi.md's "omp" says: `models.yml` in the
agent folder names the scripted model, `config.yml` turns the first-run wizard off, and the project's
`.omp/extensions/` holds the extension as `slashkit pi install --omp` lays it out."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from slashkit.adapters.pi import install

BUN = os.environ.get("SLASHKIT_OMP_BUN", "")
CLI = os.environ.get("SLASHKIT_OMP", "")


def available() -> bool:
    """Whether the pinned omp and its Bun are installed (scripts/setup.sh)."""
    return os.path.isfile(BUN) and os.path.isfile(CLI)


@dataclass
class Omp:
    """A project with slashkit's extension installed for omp and prompt templates, and an agent folder on one model."""

    root: Path

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    def setup(self, url: str, templates: dict[str, str]) -> Omp:
        """Lays out the agent folder (the scripted model, no wizard) and the project (templates, the extension)."""
        self.agent.mkdir(parents=True, exist_ok=True)
        (self.root / "home").mkdir(exist_ok=True)
        # YAML is a superset of JSON: omp reads these two files as written.
        model = {"id": "fake-model", "name": "fake-model", "maxTokens": 4000}
        # A second model, which a `^fake/other-model` mark tags (omp's model mentions, docs/pi.md "omp").
        other = {"id": "other-model", "name": "other-model", "maxTokens": 4000}
        provider = {"baseUrl": url, "api": "openai-completions", "apiKey": "any", "models": [model, other]}
        (self.agent / "models.yml").write_text(json.dumps({"providers": {"fake": provider}}))
        # No first-run wizard, which would take the keys typed; no update check, which asks npm's registry.
        startup = {"setupWizard": False, "checkUpdate": False}
        # Compaction keeps the newest 20k tokens by default, and then has the model go on by itself: neither here.
        compaction = {"keepRecentTokens": 1, "autoContinue": False}
        (self.agent / "config.yml").write_text(json.dumps({"startup": startup, "compaction": compaction}))
        prompts = self.project / ".omp" / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        for name, body in templates.items():
            (prompts / f"{name}.md").write_text(f"---\ndescription: {name}\n---\n{body}\n")
        install.install(install.extensions_dir(self.project, omp=True), omp=True)
        return self

    def env(self, **extra: str) -> dict[str, str]:
        """omp's environment: its own HOME, agent folder and state, this clone's Python for the helper."""
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "TERM", "SLASHKIT_PYTHON")}
        return {
            **keep,
            "PATH": f"{Path(BUN).parent}:{os.environ.get('PATH', '')}",
            "HOME": str(self.root / "home"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "TMPDIR": str(self.root),
            "PI_CODING_AGENT_DIR": str(self.agent),
            **extra,
        }

    def argv(self, *args: str) -> list[str]:
        """omp on the scripted model, with no session file and no session title (a request of its own)."""
        return [BUN, CLI, "--model", "fake/fake-model", "--no-session", "--no-title", *args]
