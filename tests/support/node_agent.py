"""What pi and omp (pi's fork) share in the tests: a throwaway folder holding a project with slashkit's extension and
prompt templates, an agent folder on one scripted model (tests/support/openai_server.py), a HOME and a state folder;
and the environment each runs in, built from scratch. tests/support/pi_cli.py and omp_cli.py add what is their own:
the model's files, the extension's place, the command line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from tests.support import HELPER_ENV, socket_tmpdir


@dataclass
class NodeAgent:
    """A pi-like agent's project and agent folder under `root`."""

    root: Path
    #: The project's folder of the agent's own (`.pi`, `.omp`): its `prompts/` hold the templates.
    CONFIG: ClassVar[str]
    #: The folder whose executables the agent's runtime is (Node for pi, Bun for omp): first on PATH, so that what
    #: an extension spawns as `node` is that one.
    RUNTIME: ClassVar[str]
    #: The agent's own variables (offline, no telemetry) beside the folders.
    OWN_ENV: ClassVar[dict[str, str]] = {}

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def agent(self) -> Path:
        return self.root / "agent"

    def setup(self, url: str, templates: dict[str, str], chains: Mapping[str, str] | None = None) -> Self:
        """Lays out the agent folder (the scripted model at `url`) and the project (templates, the extension, and the
        saved chains `chains`, each file's text by name, in `.slashkit/chains/`)."""
        self.agent.mkdir(parents=True, exist_ok=True)
        (self.root / "home").mkdir(exist_ok=True)
        self.write_model(url)
        prompts = self.project / self.CONFIG / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        for name, body in templates.items():
            (prompts / f"{name}.md").write_text(f"---\ndescription: {name}\n---\n{body}\n")
        saved = self.project / ".slashkit" / "chains"
        for name, text in (chains or {}).items():
            saved.mkdir(parents=True, exist_ok=True)
            (saved / f"{name}.md").write_text(text)
        self.install_extension()
        return self

    def write_model(self, url: str) -> None:
        """Writes the agent folder's files that name the scripted model."""
        raise NotImplementedError

    def install_extension(self) -> None:
        """Installs slashkit's extension into the project, as its installer does."""
        raise NotImplementedError

    def env(self, **extra: str) -> dict[str, str]:
        """The agent's environment: its own HOME, agent folder and state, this clone's Python for the helper."""
        # PYTHONPATH too: a clone tested beside another's editable install names its own sources there, and the
        # helper the agent starts must import those.
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "TERM", "SLASHKIT_PYTHON", "PYTHONPATH")}
        return {
            **keep,
            "PATH": f"{self.RUNTIME}:{os.environ.get('PATH', '')}",
            "HOME": str(self.root / "home"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "TMPDIR": str(socket_tmpdir(self.root / "tmp")),
            **HELPER_ENV,
            "PI_CODING_AGENT_DIR": str(self.agent),
            **self.OWN_ENV,
            **extra,
        }

    def tui_argv(self) -> list[str]:
        """The agent's interactive command line."""
        raise NotImplementedError
