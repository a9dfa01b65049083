"""`slashkit run` on the SDK host: one session, the chain typed into it, each event printed as it comes (text
or JSON lines), a progress line on a terminal's stderr while a step waits, and the exit status."""

import asyncio
import itertools
import json
import logging
import os
import re
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, TextIO

from attrs import frozen
from cattrs.preconf.json import make_converter
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError

from slashkit.adapters.bridge.bridge import ALLOW_VARIABLE
from slashkit.adapters.sdk.events import (
    ChainEnded,
    CommandStarted,
    Event,
    Line,
    Message,
    Notice,
    Output,
    StepEnded,
    StepStarted,
)
from slashkit.adapters.sdk.session import SlashSession

Ended = Literal["ran", "single", "single_failed", "stopped", "cancelled", "exited", "timeout"]
EXIT: Final[Mapping[Ended, int]] = {
    "ran": 0,
    "single": 0,
    "single_failed": 1,
    "stopped": 1,
    "cancelled": 1,
    "exited": 4,
    "timeout": 4,
}
#: The most of Claude Code's stderr kept to show when it ends first: its last lines, each cut.
_STDERR_LINES: Final = 20
_STDERR_LINE_CHARS: Final = 300

_CONVERTER: Final = make_converter()
#: How long a step runs before the progress line shows: a local command takes 10-50 ms (measured on Claude
#: Code 2.1.328 through the SDK), so a step still running after this waits on the model.
_PROGRESS_AFTER: Final = 0.3
_SPINNER: Final = "|/-\\"
#: C0 and C1 controls but newline and tab, and DEL: text a model or a command wrote could carry them to move the
#: cursor, clear the screen, retitle the window or hide what follows, so text mode shows them as escapes. So are
#: the bidirectional marks, overrides and isolates, which reorder what a line shows against what it holds, and the
#: line and paragraph separators, where a reader that splits lines as Python's `str.splitlines` starts a new line.
_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: What starts each line of a command's output in text mode: the status lines (`2/2: /review`, `all 2 command(s)
#: ran`) start at the margin, so output that holds such a line (a model's answer can hold anything) is never read
#: as one.
OUTPUT_INDENT: Final = "  "


@frozen
class Settings:
    """What `slashkit run` was asked for."""

    chain: str
    cwd: Path
    claude: str
    timeout: float
    json: bool = False
    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    claude_args: tuple[str, ...] = ()


def run(settings: Settings, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the chain in a new session and prints it; returns the exit status."""
    # The SDK logs its reader's end ("Fatal error in message reader: ...") through Python's last-resort handler,
    # onto stderr; the step that failed of it says why in its own line.
    logging.getLogger("claude_agent_sdk").addHandler(logging.NullHandler())
    sys.unraisablehook = _without_closed_loop_leftover
    return asyncio.run(_run(settings, out, err))


def _without_closed_loop_leftover(unraisable: "sys.UnraisableHookArgs") -> None:
    # After its reader ended on a line over its buffer, the SDK leaves the CLI's stdout pipe open (the CLI itself
    # has exited and was waited for). SlashSession.disconnect collects it on the loop, but in some runs it is still
    # held then, and collected once asyncio.run closed the loop, closing it prints "Exception ignored in:
    # BaseSubprocessTransport.__del__ ... Event loop is closed" (measured on claude-agent-sdk 0.2.184). Only that
    # leftover is dropped; anything else is printed as Python prints it.
    leftover = getattr(unraisable.object, "__qualname__", "") == "BaseSubprocessTransport.__del__"
    closed = isinstance(unraisable.exc_value, RuntimeError) and str(unraisable.exc_value) == "Event loop is closed"
    if not (leftover and closed):
        sys.__unraisablehook__(unraisable)


async def _run(settings: Settings, out: TextIO, err: TextIO) -> int:
    printer = Printer(out, err, settings.json)
    said: deque[str] = deque(maxlen=_STDERR_LINES)
    try:
        ended = await asyncio.wait_for(_play(settings, printer, said.append), timeout=settings.timeout)
    except TimeoutError:
        ended = "timeout"
        printer.problem(f"no end after {settings.timeout:g} s")
    except ClaudeSDKError as error:
        ended = "exited"
        printer.problem(f"Claude Code ended first: {_first_line(str(error))}")
        # The SDK's error says only "Check stderr output for details": Claude Code's own words are these.
        for line in said:
            printer.problem(f"Claude Code said: {line[:_STDERR_LINE_CHARS]}")
    finally:
        printer.progress_done()
    printer.outcome(ended)
    return EXIT[ended]


async def _play(settings: Settings, printer: "Printer", stderr: Callable[[str], None]) -> Ended:
    ended: Ended = "single"
    alone = True
    # The person's own additions to the built-ins anyone may run, from their shell (slashkit.core.policy).
    allowed = os.environ.get(ALLOW_VARIABLE, "").split()
    async with SlashSession(options(settings, stderr), allow=allowed) as session:
        async for event in session.run(settings.chain):
            printer.show(event)
            match event:
                case ChainEnded():
                    ended = _ended(event)
                case StepEnded(index=0) if alone:
                    # The command typed alone (index 0 is outside a chain) ended: its status is the run's.
                    alone = False
                    if not event.ok:
                        ended = "single_failed"
                        why = _first_line(event.output) or f"its turn ended with {event.how}"
                        printer.problem(f"{event.step.name} failed: {why}")
    return ended


def options(settings: Settings, stderr: Callable[[str], None] = lambda _: None) -> ClaudeAgentOptions:
    """The session's options: the pinned CLI, the project folder, the Claude options passed through, and where
    Claude Code's stderr lines go."""
    return ClaudeAgentOptions(
        cwd=str(settings.cwd),
        cli_path=settings.claude,
        model=settings.model,
        permission_mode=settings.permission_mode,  # type: ignore[arg-type]
        allowed_tools=list(settings.allowed_tools),
        extra_args=extra_args(settings.claude_args),
        stderr=stderr,
    )


def extra_args(given: Sequence[str]) -> dict[str, str | None]:
    """Claude Code options given after `--`, as the SDK takes them: `--flag value`, `--flag=value`, `--flag`.

    >>> extra_args(["--max-turns", "3", "--verbose", "--add-dir=/x"])
    {'max-turns': '3', 'verbose': None, 'add-dir': '/x'}
    """
    found: dict[str, str | None] = {}
    words = list(given)
    while words:
        word = words.pop(0)
        if not word.startswith("--") or word == "--":
            continue
        name, has_value, value = word[2:].partition("=")
        if not has_value and words and not words[0].startswith("--"):
            value, has_value = words.pop(0), "="
        found[name] = value if has_value else None
    return found


def refused_args(given: Sequence[str]) -> list[str]:
    """The words after `--` that `extra_args` cannot pass on: the SDK hands Claude Code `--name [value]` only,
    so a word before any option (`stray`), a short option (`-x`) and a second `--` are refused, not dropped.

    >>> refused_args(["stray", "--max-turns", "3", "-x", "--verbose", "--"])
    ['stray', '-x', '--']
    """
    refused: list[str] = []
    takes_value = False
    for word in given:
        if word.startswith("--") and word != "--":
            takes_value = "=" not in word
        elif word.startswith("-") or not takes_value:
            refused.append(word)
        else:
            takes_value = False
    return refused


def _ended(event: ChainEnded) -> Ended:
    """How a chain ended, for the exit status: it ran to its end with success as its last status, it ended
    with a failure (a shell's non-zero `$?`), or it was cancelled."""
    if event.outcome.cancelled:
        return "cancelled"
    return "ran" if event.outcome.ended_well else "stopped"


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


class Printer:
    """Prints events as a person reads them (each step's line at the margin, then its output indented) or as JSON
    lines."""

    def __init__(self, out: TextIO, err: TextIO, as_json: bool) -> None:
        self._out = out
        self._err = err
        self._json = as_json
        self._progress: asyncio.Task[None] | None = None

    def show(self, event: Event) -> None:
        """Prints one event; a step or command that starts gets a progress line on a terminal's stderr."""
        if isinstance(event, Message):
            return
        self.progress_done()
        if self._json:
            # ASCII escapes: a lone surrogate (Claude Code's JSON can carry one where a string was cut inside a
            # pair) or a control reaches the reader as valid JSON, whatever the stream's encoding.
            self._line(json.dumps(json_of(event)))
        else:
            self._text(event)
        if isinstance(event, StepStarted | CommandStarted) and self._err.isatty():
            self._progress = asyncio.create_task(self._spin(visible(event.step.name, self._err)))

    def outcome(self, ended: Ended) -> None:
        """The last JSON line: how the run ended, and the exit status."""
        if self._json:
            self._line(json.dumps({"event": "outcome", "outcome": ended, "exit": EXIT[ended]}))

    def problem(self, text: str) -> None:
        print(visible(f"slashkit: {text}", self._err), file=self._err, flush=True)

    def progress_done(self) -> None:
        if self._progress is None:
            return
        self._progress.cancel()
        self._progress = None
        self._err.write("\r\x1b[K")
        self._err.flush()

    def _text(self, event: Event) -> None:
        match event:
            case Line(text):
                self._line(visible(text, self._out))
            case Output(text=text):
                self._line(indented(visible(text, self._out)))
            case Notice(text):
                self.problem(text)

    def _line(self, text: str) -> None:
        print(text, file=self._out, flush=True)

    async def _spin(self, name: str) -> None:
        started = time.monotonic()
        await asyncio.sleep(_PROGRESS_AFTER)
        for mark in itertools.cycle(_SPINNER):
            self._err.write(f"\r{mark} {name}: waiting on the model ({time.monotonic() - started:.0f} s)")
            self._err.flush()
            await asyncio.sleep(0.1)


def visible(text: str, stream: TextIO) -> str:
    """`text` as it is safe to print on `stream`: controls but newline and tab as `\\xNN` escapes (a CRLF line
    end is a newline), bidirectional controls as `\\uNNNN`, and characters the stream's encoding cannot hold (a
    lone surrogate, anything past ASCII on an ASCII stream) as backslash escapes, so printing neither fails nor
    drives the terminal.

    >>> print(visible("cut \\ud83d \\x1b[2J\\x9b1m ok\\r\\n", sys.stdout), end="")
    cut \\ud83d \\x1b[2J\\x9b1m ok
    """
    shown = _CONTROLS.sub(_escaped, text.replace("\r\n", "\n"))
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return shown.encode(encoding, "backslashreplace").decode(encoding)


def indented(text: str) -> str:
    """Each line of `text` (`visible` already, so a newline is the only line break left) after OUTPUT_INDENT; an
    empty line stays empty.

    >>> print(indented("fine\\n2/2: /review deploy\\n\\nall 2 command(s) ran"))
      fine
      2/2: /review deploy
    <BLANKLINE>
      all 2 command(s) ran
    """
    return "\n".join(f"{OUTPUT_INDENT}{line}" if line else line for line in text.split("\n"))


def _escaped(control: re.Match[str]) -> str:
    code = ord(control[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def json_of(event: Event) -> dict[str, Any]:
    """One event as a JSON object: `event` names it (`step_started`, `output`, `step_ended`, ...)."""
    name = "".join(f"_{c.lower()}" if c.isupper() else c for c in type(event).__name__).lstrip("_")
    data: dict[str, Any] = {"event": name, **_CONVERTER.unstructure(event)}
    match event:
        case StepStarted():
            data["line"] = event.line
        case StepEnded():
            data["ok"] = event.ok
        case ChainEnded():
            data["ok"] = event.ok
    return data
