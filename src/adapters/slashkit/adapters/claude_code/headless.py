"""Runs a chain in a real headless Claude Code session through the slash-chain plugin, and ends when the
chain has ended. Plain `claude -p PROMPT` exits as soon as the session is idle, before a step queued from a
timer runs (measured on 2.1.328: a third step is dropped), so the prompt goes in as stream-json and stdin
stays open until the chain's last line has come."""

import json
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from attrs import frozen

from slashkit.core.texts import CHAIN_COMMAND

#: The lines that end a chain, named by how it ended: it ran, it stopped, it was cancelled, or the helper
#: could not take it.
_ENDS: Final = re.compile(
    r"^(?:(?P<ran>all \d+ command\(s\) ran$)|(?P<stopped>stopped after /)|(?P<cancelled>cancelled)"
    r"|(?P<unavailable>unavailable: ))"
)
_STEP: Final = re.compile(r"^\d+/\d+: /")


@frozen
class ChainRun:
    """How a chain went: the plugin's transcript lines, and how it ended."""

    lines: tuple[str, ...]
    ended: str

    @property
    def ran_all(self) -> bool:
        """Tells whether every step ran."""
        return self.ended == "ran"


def run_chain(
    chain: str,
    *,
    claude: str,
    plugin_dir: Path,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    on_line: Callable[[str], None] = lambda _: None,
) -> ChainRun:
    """Types `chain` into a headless session and waits until it has ended, or `timeout` seconds have passed.

    `ended` is `ran`, `stopped`, `cancelled`, `unavailable`, `single` (no chain: the command ran alone),
    `exited` (the CLI ended first) or `timeout`.
    """
    argv = [
        claude,
        "-p",
        "--input-format=stream-json",
        "--output-format=stream-json",
        "--verbose",
        f"--plugin-dir={plugin_dir}",
        *extra_args,
    ]
    child = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert child.stdin is not None and child.stdout is not None
    message = {"type": "user", "message": {"role": "user", "content": chain}}
    child.stdin.write(json.dumps(message) + "\n")
    child.stdin.flush()
    lines: list[str] = []
    ended = "exited"
    for event in _events(child.stdout, deadline=time.monotonic() + timeout):
        if event is None:
            ended = "timeout"
            break
        text = _plugin_line(event)
        if text is not None:
            lines.append(text)
            on_line(text)
            end = _ENDS.match(text)
            if end is not None and end.lastgroup is not None:
                ended = end.lastgroup
                break
        elif event.get("type") == "result" and not any(_STEP.match(line) for line in lines):
            ended = "single"
            break
    _close(child)
    return ChainRun(lines=tuple(lines), ended=ended)


def _events(stdout: Iterator[str], deadline: float) -> Iterator[dict[str, object] | None]:
    """The CLI's stream-json events as they come; None once the deadline passed."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            yield None
            return
        if line is None:
            return
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def _plugin_line(event: dict[str, object]) -> str | None:
    if event.get("type") == "system" and event.get("subtype") == "ui_log" and event.get("plugin") == CHAIN_COMMAND:
        text = event.get("text")
        return text if isinstance(text, str) else None
    return None


def _close(child: "subprocess.Popen[str]") -> None:
    """Closes stdin so the session ends as a finished one; a CLI that lingers is stopped."""
    assert child.stdin is not None
    try:
        child.stdin.close()
        child.wait(timeout=15)
    except (subprocess.TimeoutExpired, BrokenPipeError):
        os.killpg(child.pid, 15)
        child.wait(timeout=5)
