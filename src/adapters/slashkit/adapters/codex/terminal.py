"""`slashkit run --host codex`: one Codex thread, the chain typed into it, each event printed as it comes (text or
JSON lines, as `slashkit run` prints the SDK host's), and the exit status."""

import asyncio
import os
import sys
import uuid
from pathlib import Path
from typing import TextIO

from attrs import frozen

from slashkit.adapters.codex.host import CodexSession
from slashkit.adapters.codex.rpc import CodexGone, RpcError
from slashkit.adapters.harness.terminal import (
    Ended,
    JsonlPrinter,
    Printer,
    exit_status,
    first_line,
    persons_settings,
    played,
)


@frozen
class Settings:
    """What `slashkit run --host codex` was asked for: `codex_args` go to `codex` before `app-server` as they are
    (`-c key=value`, `--profile NAME`)."""

    chain: str
    cwd: Path
    codex: str
    timeout: float
    json: bool = False
    #: Stream `--jsonl` events instead of text.
    jsonl: bool = False
    #: End a step that shows no progress for this many seconds (None: never).
    step_timeout: float | None = None
    codex_args: tuple[str, ...] = ()


def run(settings: Settings, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the chain in a new Codex thread and prints it; returns the exit status."""
    return asyncio.run(_run(settings, out, err))


async def _run(settings: Settings, out: TextIO, err: TextIO) -> int:
    printer = (
        # Codex reports no cost, and its token counts come apart from its turns: steps carry neither.
        JsonlPrinter(out, err, run=str(uuid.uuid4()), host="codex", chain=settings.chain)
        if settings.jsonl
        else Printer(out, err, settings.json)
    )
    play = _play(settings, printer)
    return await exit_status(play, printer, settings.timeout, (CodexGone, RpcError), _ended_first)


def _ended_first(error: Exception) -> list[str]:
    return [f"Codex ended first: {first_line(str(error))}"]


async def _play(settings: Settings, printer: Printer) -> Ended:
    codex = [settings.codex, *settings.codex_args]
    async with CodexSession(codex, cwd=str(settings.cwd.resolve()), **persons_settings(os.environ)) as session:
        if isinstance(printer, JsonlPrinter):
            printer.begin(session.thread)
        return await played(session.run(settings.chain), printer, settings.step_timeout)
