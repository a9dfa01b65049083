"""The lich CLI adapter: the session's lich variables, and `$LICH_BIN whoami --json` behind the Whoami port."""

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import Final, Self

from attrs import frozen
from returns.result import Failure, Result, Success, safe

from slashkit.core.ports import Identity

# Environment


@frozen
class LichEnvironment:
    """The variables lich exports into a session's PTY; None stands for a variable unset or empty."""

    session_id: str | None
    bin: str | None
    prompt_lang: str | None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Self:
        """Reads LICH_SESSION_ID, LICH_BIN and LICH_PROMPT_LANG from `environ`.

        >>> LichEnvironment.from_environ({"LICH_SESSION_ID": "", "LICH_BIN": "/opt/lich"})
        LichEnvironment(session_id=None, bin='/opt/lich', prompt_lang=None)
        """
        # Empty counts as unset: lich gives a plain-shell caller an empty LICH_SESSION_ID, which names no
        # session, and an empty LICH_PROMPT_LANG means English (docs/lich.md).
        return cls(
            session_id=environ.get("LICH_SESSION_ID") or None,
            bin=environ.get("LICH_BIN") or None,
            prompt_lang=environ.get("LICH_PROMPT_LANG") or None,
        )


# Whoami

#: The most whoami may write to stdout, and again to stderr: its answer is a few hundred bytes of JSON and its
#: failure one `lich: …` line, so past this it is not answering, and it is stopped unread.
OUTPUT_CAP: Final = 64 * 1024

#: The longest stderr line a failure reason carries, in characters.
_REASON_LINE_MAX: Final = 200


@frozen
class LichWhoami:
    """The Whoami port: asks `$LICH_BIN whoami --json` (lich 0.64 or later) which session this is."""

    env: LichEnvironment
    #: lich-plugin's hook gives whoami the same 2 s (WHOAMI_TIMEOUT_MS).
    timeout: float = 2.0

    def whoami(self) -> Result[Identity, str]:
        """Returns the label and name lich prints for this session, or a Failure saying why there are none.

        A Failure comes within `timeout` whatever the child does, and no more than OUTPUT_CAP bytes of either
        stream are ever held.
        """
        return (
            _absolute_bin(self.env.bin)
            .bind(lambda path: _run([path, "whoami", "--json"], self.timeout).alt(_not_run_why))
            .bind(_read_identity)
        )


def _absolute_bin(path: str | None) -> Result[str, str]:
    """Takes LICH_BIN only as the absolute path lich exports.

    >>> _absolute_bin("/opt/lich/bin/lich")
    <Success: /opt/lich/bin/lich>
    >>> _absolute_bin("lich")
    <Failure: LICH_BIN must be an absolute path, as lich exports it, and 'lich' is not: PATH is never searched>
    """
    # Never `lich` from PATH, nor a path from the working directory: a dev build and an installed lich can
    # both be there, and only the one that started this session knows it.
    if path is None:
        return Failure(NO_BIN_WHY)
    if not os.path.isabs(path):
        return Failure(
            f"LICH_BIN must be an absolute path, as lich exports it, and {_one_line(path)!r} is not: "
            "PATH is never searched"
        )
    return Success(path)


@frozen
class _Finished:
    """A whoami that exited and closed its pipes in time, with no more than OUTPUT_CAP bytes on each."""

    code: int
    stdout: bytes
    stderr: bytes


class _TooMuchOutput(Exception):
    """A stream of whoami went past OUTPUT_CAP."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


# `safe` rather than `impure_safe`: the port answers a Result, and mypy without the returns plugin has no typed
# way from an IOResult to one.
@safe(exceptions=(subprocess.TimeoutExpired, _TooMuchOutput, OSError))
def _run(argv: list[str], timeout: float) -> _Finished:
    """Runs `argv` without stdin and reads its output, killing its process group at `timeout` or past the cap."""
    deadline = time.monotonic() + timeout
    # A session of its own, so that the kill reaches its children too: killing lich alone would leave a
    # grandchild running, and one holding the pipes would keep them open.
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    ) as child:
        try:
            stdout, stderr = _read_both(child, deadline)
            code = child.wait(max(0.0, deadline - time.monotonic()))
        except (subprocess.TimeoutExpired, _TooMuchOutput) as stop:
            # The child is not reaped yet (nothing above polls it), so its pid still names its group.
            os.killpg(child.pid, signal.SIGKILL)
            if isinstance(stop, subprocess.TimeoutExpired):
                raise subprocess.TimeoutExpired(argv, timeout) from None
            raise
    return _Finished(code, stdout, stderr)


def _read_both(child: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes]:
    """Reads stdout and stderr to their ends, never more than OUTPUT_CAP + 1 bytes of either, nor past `deadline`."""
    # One selector rather than a thread per pipe: nothing here can outlive the call, and a read never waits.
    read: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    with selectors.DefaultSelector() as selector:
        for stream, pipe in (("stdout", child.stdout), ("stderr", child.stderr)):
            if pipe is not None:  # always, as both are PIPE; mypy knows them only as optional
                selector.register(pipe, selectors.EVENT_READ, stream)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(child.args, left)
            for key, _ in selector.select(left):
                buffer = read[key.data]
                chunk = os.read(key.fd, OUTPUT_CAP + 1 - len(buffer))
                if not chunk:
                    selector.unregister(key.fileobj)
                buffer += chunk
                if len(buffer) > OUTPUT_CAP:
                    raise _TooMuchOutput(key.data)
    return bytes(read["stdout"]), bytes(read["stderr"])


def _read_identity(done: _Finished) -> Result[Identity, str]:
    """Reads the identity from a finished whoami's exit code and stdout."""
    if done.code != 0:
        return Failure(_exited_why(done.code, done.stderr.decode("utf-8", errors="replace")))
    return _parse_json(done.stdout).alt(lambda _: NOT_JSON_WHY).bind(_identity_of)


@safe(exceptions=(ValueError, RecursionError))
def _parse_json(text: bytes) -> object:
    # A UnicodeDecodeError is a ValueError: stdout that is not UTF-8 is not JSON either. json's parser recurses
    # once per nesting level, so 64 KiB of `[` raises RecursionError, which is bad output like any other.
    return json.loads(text.decode("utf-8"))


def _identity_of(value: object) -> Result[Identity, str]:
    """Takes `label` and `name` from a whoami object, whose other fields (id, project, ...) do not matter."""
    match value:
        case {"label": str(label), "name": str(name)}:
            return Success(Identity(label, name))
    return Failure(NO_IDENTITY_WHY)


# Reasons: why whoami told nothing, for the log


NO_BIN_WHY: Final = "LICH_BIN is not set, so there is no lich to ask"
NOT_JSON_WHY: Final = "lich whoami printed something other than JSON"
NO_IDENTITY_WHY: Final = "lich whoami printed no object with a string label and name"


def _not_run_why(error: Exception) -> str:
    # `_run` lets only these three through; mypy widens them to Exception.
    match error:
        case subprocess.TimeoutExpired(timeout=timeout):
            return f"lich whoami did not answer within {timeout:g} s"
        case _TooMuchOutput(stream=stream):
            return f"lich whoami wrote more than {OUTPUT_CAP // 1024} KiB to {stream}, so it was stopped and ignored"
    return f"lich could not be run: {error}"


def _exited_why(code: int, stderr: str) -> str:
    # lich writes a failure as one `lich: …` line on stderr (docs/lich.md); a lich older than 0.64 writes
    # `lich: unknown command "whoami"`.
    lines = stderr.strip().splitlines()
    return f"lich whoami exited {code}: {_one_line(lines[0])}" if lines else f"lich whoami exited {code}"


def _one_line(text: str) -> str:
    r"""Shows `text` as one short printable line: control characters escaped, cut at _REASON_LINE_MAX.

    >>> _one_line("lich: \x1b[31mno\tsuch")
    'lich: \\x1b[31mno\\tsuch'
    >>> len(_one_line("é" * 500))
    201
    """
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return shown if len(shown) <= _REASON_LINE_MAX else shown[:_REASON_LINE_MAX] + "…"
