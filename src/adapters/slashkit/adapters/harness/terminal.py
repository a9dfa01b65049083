"""`slashkit run` as every harness host prints it: each event as it comes (text or JSON lines), a progress line on
a terminal's stderr while a step waits, and the exit status of how the run ended. Nothing here talks to a host."""

import asyncio
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal, TextIO

from attrs import frozen
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
    except asyncio.CancelledError:
        # Ctrl-C: asyncio.run cancels the run, then raises KeyboardInterrupt (exit 130); a JSONL stream still ends.
        printer.progress_done()
        printer.interrupted()
        raise
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

    def interrupted(self) -> None:
        """The run was interrupted (exit 130): text and `--json` say nothing more, as before `--jsonl` came."""

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


@frozen
class Reported:
    """What a host reported of a query's cost, read from one of its own messages: the tokens by kind, and the
    session's cost so far in US dollars (a running total, as Claude Code gives it: measured on Claude Code 2.1.328,
    each ResultMessage's `total_cost_usd` grows by the query's cost)."""

    tokens: Mapping[str, int]
    total_cost_usd: float | None


def _no_report(_: object) -> Reported | None:
    return None


class JsonlPrinter(Printer):
    """`--jsonl`: one JSON object a line as the run goes, for a CI job to keep and read: `run_start` (the run's id,
    the host's session id), `step_start` and `step_end` for each step (status, duration, tokens and cost where the
    host reports them), and `run_end` (the exit status). The shapes are in docs/ci.md; a key is only ever added."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        run: str,
        host: str,
        chain: str,
        reported: Callable[[object], Reported | None] = _no_report,
    ) -> None:
        super().__init__(out, err, as_json=True)
        self._run = run
        self._host = host
        self._chain = chain
        self._reported = reported
        self._began = time.monotonic()
        self._said_start = False
        #: The step running now (its `step_start` object) and when it started, or None between steps.
        self._open: tuple[dict[str, Any], float] | None = None
        #: The cost the host reported for the running step, and its running total as last reported.
        self._report: Reported | None = None
        self._step_cost: float | None = None
        self._total_cost: float | None = None
        #: Why the typed line was refused, for `run_end`.
        self._refused: str | None = None

    def begin(self, session: str | None) -> None:
        """`run_start`, once: the host's session id, once it is known (None: it never was)."""
        if not self._said_start:
            self._said_start = True
            self._emit({"event": "run_start", "session": session, "host": self._host, "chain": self._chain})

    def show(self, event: object) -> None:
        report = self._reported(event)
        if report is not None:
            self._account(report)
        match event:
            case StepStarted():
                self._start({"index": event.index, "total": event.total, "step": event.line}, event.step)
            case CommandStarted():
                self._start({"index": 0, "total": None, "step": event.step.name}, event.step)
            case StepEnded(how="refused"):
                self._refused = first_line(event.output)
            case StepEnded() if self._open is not None:
                self._end("success" if event.ok else "failure", event.how, event.output)

    def outcome(self, ended: Ended) -> None:
        """`run_end`, the last line, after a `step_end` for a step the run's end cut off."""
        if self._open is not None:
            self._end("timeout" if ended in ("timeout", "step_timeout") else "failure", None, "")
        self.begin(None)
        end: dict[str, Any] = {"event": "run_end", "exit": EXIT[ended], "outcome": ended}
        end["duration_ms"] = _ms(time.monotonic() - self._began)
        if self._total_cost is not None:
            end["cost_usd"] = self._total_cost
        if self._refused is not None:
            end["why"] = self._refused
        self._emit(end)

    def interrupted(self) -> None:
        """`run_end` of a run the person or the CI runner interrupted (Ctrl-C, SIGINT): exit 130."""
        if self._open is not None:
            self._end("interrupted", None, "")
        self.begin(None)
        self._emit(
            {
                "event": "run_end",
                "exit": 130,
                "outcome": "interrupted",
                "duration_ms": _ms(time.monotonic() - self._began),
            }
        )

    def _start(self, fields: dict[str, Any], step: Step) -> None:
        self.begin(None)
        started = {"event": "step_start", **fields, "command": step.command, "args": step.args}
        self._open, self._report, self._step_cost = (started, time.monotonic()), None, None
        self._emit(started)

    def _account(self, report: Reported) -> None:
        """A host's report during a step: its tokens are the step's; its cost is the growth of the running total."""
        self._report = report
        if report.total_cost_usd is not None:
            before = self._total_cost or 0.0
            self._step_cost = (self._step_cost or 0.0) + max(report.total_cost_usd - before, 0.0)
            self._total_cost = report.total_cost_usd

    def _end(self, status: str, how: str | None, output: str) -> None:
        assert self._open is not None
        (started, at), self._open = self._open, None
        ended: dict[str, Any] = {"event": "step_end", "index": started["index"], "step": started["step"]}
        ended |= {"status": status, "how": how, "duration_ms": _ms(time.monotonic() - at), "output": output}
        if self._report is not None and self._report.tokens:
            ended["tokens"] = dict(self._report.tokens)
        if self._step_cost is not None:
            ended["cost_usd"] = round(self._step_cost, 6)
        self._emit(ended)

    def _emit(self, fields: dict[str, Any]) -> None:
        # The run's id on every line: lines of several runs kept in one file still tell which run they belong to.
        stamped = {"event": fields["event"], "run": self._run, "at": _utc_now(), **fields}
        self._line(json.dumps(stamped))


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _utc_now() -> str:
    """Now, as ISO 8601 in UTC to the millisecond: `2026-12-06T00:10:00.123Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
