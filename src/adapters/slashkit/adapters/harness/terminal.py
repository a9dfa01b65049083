"""`slashkit run` as every harness host prints it: each event as it comes (text or JSON lines), a progress line on
a terminal's stderr while a step waits, and the exit status of how the run ended. Nothing here talks to a host."""

import asyncio
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any, Final, Literal, TextIO

from cattrs.preconf.json import make_converter

from slashkit.adapters.bridge.bridge import ALLOW_VARIABLE, LOOP_CAP_VARIABLE
from slashkit.adapters.harness.events import (
    ChainEnded,
    CommandStarted,
    Event,
    Line,
    Notice,
    Output,
    StepEnded,
    StepStarted,
)
from slashkit.adapters.harness.loop import SessionSettings
from slashkit.core.chain import Step

Ended = Literal[
    "ran", "single", "single_failed", "stopped", "cancelled", "refused", "exited", "timeout", "step_timeout"
]
#: The exit status of each way a run ends (README.md, "Exit status"). A refused line is 2, as bad usage is: the
#: caller wrote something that cannot run, and running it again unchanged cannot succeed. A timeout is 124, as
#: coreutils' `timeout` reports it, so CI tells a hung run from a failed one. 4 stays for a host that could not
#: start or ended first: neither the chain's outcome nor the caller's mistake.
EXIT: Final[Mapping[Ended, int]] = {
    "ran": 0,
    "single": 0,
    "single_failed": 1,
    "stopped": 1,
    "cancelled": 1,
    "refused": 2,
    "exited": 4,
    "timeout": 124,
    "step_timeout": 124,
}
_CONVERTER: Final = make_converter()


def _step_json(step: Step) -> dict[str, Any]:
    """A step as `--json` writes it: its command, args and operator, and the saved chain its text came from, if one
    did (`saved_chain`); the calls around it are the core's own bookkeeping."""
    written: dict[str, Any] = {"command": step.command, "args": step.args, "op": step.op}
    return written if step.by is None else {**written, "saved_chain": step.by}


_CONVERTER.register_unstructure_hook(Step, _step_json)
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


def persons_settings(env: Mapping[str, str]) -> SessionSettings:
    """What the person sets for `slashkit run` in the shell they start it from, as the helper reads it for the
    plugins: the built-ins they add to the allowlist (`SLASHKIT_ALLOW`) and the cap on loops (`SLASHKIT_LOOP_CAP`).

    >>> persons_settings({"SLASHKIT_ALLOW": "clear doctor", "SLASHKIT_LOOP_CAP": "25"})
    {'allow': ['clear', 'doctor'], 'loop_cap': '25'}
    """
    return {"allow": env.get(ALLOW_VARIABLE, "").split(), "loop_cap": env.get(LOOP_CAP_VARIABLE)}


def ended_by(event: ChainEnded) -> Ended:
    """How a chain ended, for the exit status: it ran to its end with success as its last status, it ended
    with a failure (a shell's non-zero `$?`), or it was cancelled."""
    if event.outcome.cancelled:
        return "cancelled"
    return "ran" if event.outcome.ended_well else "stopped"


def first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


async def exit_status(
    play: Awaitable[Ended],
    printer: "Printer",
    timeout: float,
    gone: tuple[type[Exception], ...],
    why_gone: Callable[[Exception], Iterable[str]],
) -> int:
    """Plays a run (`played`) within `timeout` seconds and prints how it ended; returns the exit status. A host
    that ended first (one of the errors `gone`) is `exited`, each of `why_gone`'s lines a problem line."""
    try:
        ended = await asyncio.wait_for(play, timeout=timeout)
    except TimeoutError:
        ended = "timeout"
        printer.problem(f"no end after {timeout:g} s")
    except gone as error:
        ended = "exited"
        for line in why_gone(error):
            printer.problem(line)
    finally:
        printer.progress_done()
    printer.outcome(ended)
    return EXIT[ended]


async def played(events: AsyncIterator[object], printer: "Printer", step_timeout: float | None = None) -> Ended:
    """Prints a run's events as they come and tells how it ended: as its chain ended, or, for a command typed
    alone (index 0 is outside a chain), as that command's step ended, or as refused when the typed line started
    nothing.

    With `step_timeout`, a step or command that shows no progress (no event at all, the host's own messages
    included) for that many seconds is ended: the events are no longer read, which ends the running query (and a
    shell step's process group) as a Ctrl-C does, and the run is `step_timeout`. Only a running step is timed: a
    program's `sleep` between steps waits as long as it says (the whole run's --timeout still bounds it)."""
    ended: Ended = "single"
    alone = True
    #: The step or command running now, as the person reads it, or None between steps.
    running: str | None = None
    while True:
        try:
            async with asyncio.timeout(step_timeout if running is not None else None):
                event = await anext(events)
        except StopAsyncIteration:
            break
        except TimeoutError:
            printer.progress_done()
            printer.problem(f"{running} showed no progress for {step_timeout:g} s, so it was ended (--step-timeout)")
            return "step_timeout"
        printer.show(event)
        match event:
            case StepStarted():
                running = f"step {event.line}"
            case CommandStarted():
                running = event.step.name
            case StepEnded():
                running = None
        match event:
            case ChainEnded():
                ended = ended_by(event)
            case StepEnded(index=0, how="refused") if alone:
                alone = False
                ended = "refused"
                printer.problem(f"refused: {first_line(event.output)}")
            case StepEnded(index=0) if alone:
                alone = False
                if not event.ok:
                    ended = "single_failed"
                    why = first_line(event.output) or f"its turn ended with {event.how}"
                    printer.problem(f"{event.label} failed: {why}")
    return ended


class Printer:
    """Prints events as a person reads them (each step's line at the margin, then its output indented) or as JSON
    lines."""

    def __init__(self, out: TextIO, err: TextIO, as_json: bool) -> None:
        self._out = out
        self._err = err
        self._json = as_json
        self._progress: asyncio.Task[None] | None = None

    def show(self, event: object) -> None:
        """Prints one event; a step or command that starts gets a progress line on a terminal's stderr. A host's own
        messages (the SDK's `Message`, Codex's `Raw`) are not printed."""
        if not isinstance(event, Event):
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

    >>> import sys
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
