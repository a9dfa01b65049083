"""Runs the pinned omp (scripts/setup.sh: `SLASHKIT_OMP_BUN`, `SLASHKIT_OMP`) offline against a scripted model on
127.0.0.1 (tests/support/openai_server.py), in a throwaway HOME, as docs/pi.md's "omp" says: `models.yml` in the
agent folder names the scripted model, `config.yml` turns the first-run wizard off, and the project's
`.omp/extensions/` holds the extension as `slashkit pi install --omp` lays it out."""

from __future__ import annotations

import json
import os
from pathlib import Path

from slashkit.adapters.pi import install
from tests.support.node_agent import NodeAgent

BUN = os.environ.get("SLASHKIT_OMP_BUN", "")
CLI = os.environ.get("SLASHKIT_OMP", "")


def available() -> bool:
    """Whether the pinned omp and its Bun are installed (scripts/setup.sh)."""
    return os.path.isfile(BUN) and os.path.isfile(CLI)


class Omp(NodeAgent):
    """A project with slashkit's extension installed for omp and prompt templates, and an agent folder on one model."""

    CONFIG = ".omp"
    RUNTIME = str(Path(BUN).parent)

    def write_model(self, url: str) -> None:
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

    def install_extension(self) -> None:
        install.install(install.extensions_dir(self.project, omp=True), omp=True)

    def argv(self, *args: str) -> list[str]:
        """omp on the scripted model, with no session file and no session title (a request of its own)."""
        return [BUN, CLI, "--model", "fake/fake-model", "--no-session", "--no-title", *args]

    def tui_argv(self) -> list[str]:
        return self.argv()
