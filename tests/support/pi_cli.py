"""Runs the pinned pi (scripts/setup.sh: `SLASHKIT_PI_NODE`, `SLASHKIT_PI`) offline against a scripted model on
127.0.0.1 (tests/support/openai_server.py), in a throwaway HOME and agent folder, as docs/pi.md's recipe says:
`models.json` names the scripted model, `PI_OFFLINE=1`, and `--approve` trusts the project's `.pi/`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from slashkit.adapters.pi import install
from tests.support.node_agent import NodeAgent

NODE = os.environ.get("SLASHKIT_PI_NODE", "")
CLI = os.environ.get("SLASHKIT_PI", "")
#: What pi's compaction request says to the model (`SUMMARIZATION_SYSTEM_PROMPT`, read on 1.6.0).
SUMMARIZING = "You are a context summarization assistant."


def available() -> bool:
    """Whether the pinned pi is installed (scripts/setup.sh)."""
    return os.path.isfile(NODE) and os.path.isfile(CLI)


class Pi(NodeAgent):
    """A project with slashkit's extension installed and prompt templates, and an agent folder on one model."""

    CONFIG = ".pi"
    RUNTIME = str(Path(NODE).parent)
    OWN_ENV: ClassVar[dict[str, str]] = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}

    def write_model(self, url: str) -> None:
        provider = {"baseUrl": url, "api": "openai-completions", "apiKey": "any"}
        models = {"providers": {"fake": {**provider, "models": [{"id": "fake-model", "maxTokens": 4000}]}}}
        (self.agent / "models.json").write_text(json.dumps(models))
        # Compaction keeps the newest 20k tokens by default: a scripted session is far smaller, so it keeps none.
        settings = {"defaultProvider": "fake", "defaultModel": "fake-model", "compaction": {"keepRecentTokens": 1}}
        (self.agent / "settings.json").write_text(json.dumps(settings))

    def install_extension(self) -> None:
        install.install(install.extensions_dir(self.project))

    def tui_argv(self) -> list[str]:
        return [NODE, CLI, "--approve", "--no-session"]

    def run(
        self, line: str, timeout: float = 60, session: Sequence[str] = ("--no-session",), **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """`pi -p --approve LINE` in the project folder; `session` as for `Rpc`."""
        argv = [NODE, CLI, "-p", "--approve", *session, line]
        return subprocess.run(
            argv, cwd=self.project, env=self.env(**extra), capture_output=True, text=True, timeout=timeout, check=False
        )


class Rpc:
    """`pi --mode rpc --approve` in the project folder: JSONL commands on stdin, events on stdout (docs/pi.md)."""

    def __init__(self, pi: Pi, session: Sequence[str] = ("--no-session",), **extra: str) -> None:
        """`session` is pi's session options: none kept by default; `()` keeps a new one in the agent folder,
        `("--continue",)` continues the newest one there."""
        argv = [NODE, CLI, "--mode", "rpc", "--approve", *session]
        self.process = subprocess.Popen(
            argv, cwd=pi.project, env=pi.env(**extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.events: list[dict[str, object]] = []
        # A thread reads stdout line by line: select on the pipe would miss lines already in the reader's buffer.
        self._read: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._read.put(raw)
        self._read.put("")

    def send(self, command: dict[str, object]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def until(self, done: Callable[[dict[str, object]], bool], timeout: float = 30) -> dict[str, object]:
        """Reads events until one for which `done` holds; returns it (a test that waits longer fails)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                raw = self._read.get(timeout=left)
            except queue.Empty:
                break
            if raw == "":
                break
            event: dict[str, object] = json.loads(raw)
            self.events.append(event)
            if done(event):
                return event
        raise AssertionError(f"pi said nothing awaited within {timeout} s; it said {self.lines()}")

    def settled(self, timeout: float = 30) -> None:
        self.until(lambda e: e.get("type") == "agent_settled", timeout)

    def lines(self) -> list[str]:
        """The transcript lines the extension showed (its notices)."""
        notices = (e for e in self.events if e.get("type") == "extension_ui_request" and e.get("method") == "notify")
        return [str(e.get("message")) for e in notices]

    def close(self) -> None:
        """Closes stdin, which ends pi; kills it if it has not left within 10 s."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
