"""`slashkit run` on the SDK host: one session, the chain typed into it, each event printed as it comes (text
or JSON lines), a progress line on a terminal's stderr while a step waits, and the exit status."""

import asyncio
import logging
import os
import secrets
import sys
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

from attrs import frozen
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError, ResultMessage

from slashkit.adapters import journal
from slashkit.adapters.harness.terminal import (
    Ended,
    JsonlPrinter,
    Printer,
    Reported,
    exit_status,
    first_line,
    persons_settings,
    played,
)
from slashkit.adapters.journal import SessionJournal
from slashkit.adapters.sdk.events import Message
from slashkit.adapters.sdk.session import SlashSession
from slashkit.core.chain_machine import Cut

#: The token counts of a ResultMessage's `usage` that `--jsonl` writes, by their names there.
_TOKENS: Final = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
#: The most of Claude Code's stderr kept to show when it ends first: its last lines, each cut.
_STDERR_LINES: Final = 20
_STDERR_LINE_CHARS: Final = 300


@frozen
class Settings:
    """What `slashkit run` was asked for."""

    chain: str
    cwd: Path
    claude: str
    timeout: float
    json: bool = False
    #: Stream `--jsonl` events instead of text.
    jsonl: bool = False
    #: End a step that shows no progress for this many seconds (None: never).
    step_timeout: float | None = None
    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    claude_args: tuple[str, ...] = ()
    #: The run `--resume RUN_ID` goes on with (None: a new run of `chain`).
    resume: "Resumed | None" = None


@frozen
class Resumed:
    """A run cut off by a crash or a timeout, as the journal holds it: its id, the Claude Code session it ran in,
    and its program as it stood when its running step started."""

    run: str
    session: str
    cut: Cut


#: The journal's name for the host of `slashkit run`'s programs: apart from the Claude Code plugin's, so that
#: `claude --continue` in the same session never offers a run of slashkit's, and `--resume` never takes the plugin's.
JOURNAL_HOST: Final = "slashkit-run"


def resumed(run_id: str, env: Mapping[str, str]) -> "tuple[Resumed, Path] | str":
    """The run `run_id` and its project folder, as the journal holds it, or why it cannot be resumed."""
    # The codec (cattrs) is needed only here.
    from cattrs import ClassValidationError

    from slashkit.adapters.run_codec import read_cut

    try:
        entry = journal.default(env).of_run(run_id)
        if entry is None or entry.host != JOURNAL_HOST:
            return f"no run {run_id} was cut off (one that ended, or was resumed to its end, is done)"
        return Resumed(run_id, entry.session, read_cut(entry.state, entry.id)), Path(entry.project)
    except (journal.JournalError, ValueError, TypeError, ClassValidationError) as err:
        return f"cannot resume {run_id}: the journal of running chains is unavailable ({err})"


def run(settings: Settings, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the chain in a new session and prints it; returns the exit status."""
    # The SDK logs its reader's end ("Fatal error in message reader: ...") through Python's last-resort handler,
    # onto stderr; the step that failed of it says why in its own line.
    logging.getLogger("claude_agent_sdk").addHandler(logging.NullHandler())
    return asyncio.run(_run(settings, out, err))


async def _run(settings: Settings, out: TextIO, err: TextIO) -> int:
    run_id = settings.resume.run if settings.resume is not None else str(uuid.uuid4())
    printer = (
        JsonlPrinter(out, err, run=run_id, host="claude-code", chain=settings.chain, reported=reported)
        if settings.jsonl
        else Printer(out, err, settings.json)
    )
    said: deque[str] = deque(maxlen=_STDERR_LINES)

    def ended_first(error: Exception) -> list[str]:
        # The SDK's error says only "Check stderr output for details": Claude Code's own words are these.
        told = [f"Claude Code said: {line[:_STDERR_LINE_CHARS]}" for line in said]
        return [f"Claude Code ended first: {first_line(str(error))}", *told]

    play = _play(settings, run_id, printer, said.append)
    return await exit_status(play, printer, settings.timeout, (ClaudeSDKError,), ended_first)


async def _play(settings: Settings, run_id: str, printer: "Printer", stderr: Callable[[str], None]) -> Ended:
    cut = settings.resume
    # A resumed run goes on in its own session (Claude Code's --resume), where the model sees what it did before.
    session_id, extra = (cut.session, {"resume": cut.session}) if cut else session_to_start(settings.claude_args)
    async with SlashSession(options(settings, stderr, extra), **persons_settings(os.environ)) as session:
        # Each program's name starts with the run's id, which `--resume` is given; a resumed run's own programs get
        # a part of their own, so that going on never overwrites the entry it goes on from.
        prefix = run_id if cut is None else f"{run_id}-{secrets.token_hex(4)}"
        where = (JOURNAL_HOST, session_id or "", str(settings.cwd.resolve()))
        session.journal_to(SessionJournal(journal.default(os.environ), where, 0.0, prefix))
        if cut is not None:
            session.offer(cut.cut)
        if isinstance(printer, JsonlPrinter):
            printer.begin(session_id)
        return await played(session.run(settings.chain), printer, settings.step_timeout)


def session_to_start(claude_args: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """The id the session will have, as far as it is known before it starts, and the option that makes it so: the
    person's own `--session-id ID` or `--resume ID` after `--`; none when Claude Code picks it (`--continue`, the
    project's last session, or `--fork-session`, a new one); else one slashkit picks and passes as `--session-id`,
    so that `run_start` names the session before its first query.

    >>> session_to_start(["--resume", "abc"]), session_to_start(["--continue"])
    (('abc', {}), (None, {}))
    """
    given = extra_args(claude_args)
    if "continue" in given or "fork-session" in given:
        return None, {}
    named = given.get("session-id") or given.get("resume")
    if named:
        return named, {}
    picked = str(uuid.uuid4())
    return picked, {"session-id": picked}


def reported(event: object) -> Reported | None:
    """The tokens and running cost a query's ResultMessage reports (its `usage` is the query's alone; its
    `total_cost_usd` the session's so far, measured on Claude Code 2.1.328); any other message reports nothing."""
    if not (isinstance(event, Message) and isinstance(event.message, ResultMessage)):
        return None
    usage = event.message.usage if isinstance(event.message.usage, dict) else {}
    tokens = {name: usage[name] for name in _TOKENS if type(usage.get(name)) is int}
    # The SDK hands on the CLI's JSON without checking types: a cost that is no number counts as not reported.
    cost: object = event.message.total_cost_usd
    return Reported(tokens, float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None)


def options(
    settings: Settings, stderr: Callable[[str], None] = lambda _: None, extra: Mapping[str, str] | None = None
) -> ClaudeAgentOptions:
    """The session's options: the pinned CLI, the project folder, the Claude options passed through (and `extra`
    ones of slashkit's: the session id it picks), and where Claude Code's stderr lines go."""
    return ClaudeAgentOptions(
        cwd=str(settings.cwd),
        cli_path=settings.claude,
        model=settings.model,
        permission_mode=settings.permission_mode,  # type: ignore[arg-type]
        allowed_tools=list(settings.allowed_tools),
        extra_args={**extra_args(settings.claude_args), **(extra or {})},
        stderr=stderr,
        # Without them, the SDK hands on the model's text only once a whole block of it is written: a long answer
        # still streaming would look like a step that makes no progress. Each streamed piece is a message, which
        # --step-timeout counts as progress.
        include_partial_messages=settings.step_timeout is not None,
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
