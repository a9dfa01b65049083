"""Shell steps (`!npm test`): the person's own shell line, run with `/bin/sh -c` by the helper or the in-process host,
never by the model's tools, so the host's own permission prompts do not apply to it (docs: README, "Shell steps").

A step runs in the session's working directory, with the person's environment and stdin closed, in a process group
of its own. Everything it can do is bounded: its time (`timeout_s`, then SIGTERM to the whole group and SIGKILL
GRACE_S later; the same on `/slash-chain stop`, the person's next prompt and the session's end), and the output kept
(its last MAX_LINES lines and MAX_BYTES bytes, stdout and stderr in the order written, as UTF-8 with replacement
characters), so a command that prints gigabytes, forks children that keep its output open, ignores SIGTERM or closes
its output early still ends, and memory stays bounded.
"""

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from attrs import frozen

from slashkit.core.ports import Environment

if TYPE_CHECKING:
    # Imported where a step starts or waits, not before the helper's first answer (most sessions run no shell step).
    import subprocess

#: The shell every step runs through.
SHELL: Final = "/bin/sh"
#: How long a step may run unless the person sets another (SLASHKIT_SHELL_TIMEOUT, in seconds).
DEFAULT_TIMEOUT_S: Final = 600
#: The longest timeout the person may set: a day.
MAX_TIMEOUT_S: Final = 24 * 3600
#: The person's setting of the timeout, in seconds (a whole number from 1 to MAX_TIMEOUT_S).
TIMEOUT_VARIABLE: Final = "SLASHKIT_SHELL_TIMEOUT"
#: What is kept of a step's output: its last lines, and at most this many bytes of them.
MAX_LINES: Final = 200
MAX_BYTES: Final = 16 * 1024
#: How long a process group has between SIGTERM and SIGKILL.
GRACE_S: Final = 5.0
#: How long the output is read on once the shell exited, for what its children still write; then it is closed.
DRAIN_S: Final = 0.2
#: How often a step that prints nothing looks at its clock and its stop.
TICK_S: Final = 0.1
#: What one read takes at most.
READ_BYTES: Final = 64 * 1024


#: The process groups of the steps running in this process, so a helper that leaves ends them first (`end_all`).
_groups: set[int] = set()
_groups_lock = threading.Lock()


@frozen
class ShellEnded:
    """How a shell step ended: `error` None when it exited 0, else why it failed, in words; `output` what it printed,
    bounded."""

    error: str | None
    output: str


def timeout_of(env: Environment) -> int:
    """The person's timeout (SLASHKIT_SHELL_TIMEOUT), or the default when it is unset or not a whole number of
    seconds from 1 to MAX_TIMEOUT_S.

    >>> timeout_of({"SLASHKIT_SHELL_TIMEOUT": "30"}), timeout_of({}), timeout_of({"SLASHKIT_SHELL_TIMEOUT": "-1"})
    (30, 600, 600)
    """
    written = (env.get(TIMEOUT_VARIABLE) or "").strip()
    if written.isdigit() and 1 <= int(written) <= MAX_TIMEOUT_S:
        return int(written)
    return DEFAULT_TIMEOUT_S


def run_shell(text: str, cwd: str, env: Mapping[str, str], timeout_s: float, stop: threading.Event) -> ShellEnded:
    """Runs `/bin/sh -c text` to its end, its timeout, or `stop`; never raises for anything the command does."""
    import subprocess

    # Started and registered under one lock: `end_all` (the helper leaving) then ends this step, or runs before it
    # started. Registered after the lock was let go, a step whose shell was quick to run could be missed and left
    # running (seen under load in tests/unit/test_shell_runner.py).
    with _groups_lock:
        try:
            process = subprocess.Popen(
                [SHELL, "-c", text],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as err:
            return ShellEnded(f"it could not start: {err.strerror or err}", "")
        _groups.add(process.pid)
    assert process.stdout is not None
    try:
        return _ran(process, timeout_s, stop)
    finally:
        with _groups_lock:
            _groups.discard(process.pid)


def _ran(process: "subprocess.Popen[bytes]", timeout_s: float, stop: threading.Event) -> ShellEnded:
    assert process.stdout is not None
    tail = _Tail()
    late = f"it ran past its timeout of {_duration(timeout_s)} and was ended"
    why = _follow(process, process.stdout.fileno(), tail, (time.monotonic() + timeout_s, stop, late))
    process.stdout.close()
    if why is not None:
        _end_group(process)
        return ShellEnded(why if not stop.is_set() else "it was stopped", tail.text())
    code = process.wait()
    if code == 0:
        return ShellEnded(None, tail.text())
    if code < 0:
        return ShellEnded(f"it was ended by {_signal_name(-code)}", tail.text())
    return ShellEnded(f"it exited with status {code}", tail.text())


_Until = tuple[float, threading.Event, str]


def _follow(process: "subprocess.Popen[bytes]", fd: int, tail: "_Tail", until: _Until) -> str | None:
    """Reads the output until the shell exited and its output closed (or was given DRAIN_S after the exit); says why
    the step is to be ended instead (`until`: its deadline and what its passing is called, or a stop), or None."""
    deadline, stop, late = until
    os.set_blocking(fd, False)
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        if stop.is_set():
            return "it was stopped"
        if now >= deadline:
            return late
        if exited_at is None and process.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at >= DRAIN_S:
            return None  # the shell is gone; a child that kept its output open is not waited for
        ready, _, _ = select.select([fd], [], [], min(TICK_S, max(deadline - now, 0.0)))
        if not ready:
            continue
        try:
            chunk = os.read(fd, READ_BYTES)
        except BlockingIOError:
            continue
        if not chunk:
            if process.poll() is not None:
                return None
            # The output closed early and the command runs on: wait for it without reading.
            return _wait(process, until)
        tail.add(chunk)


def _wait(process: "subprocess.Popen[bytes]", until: _Until) -> str | None:
    import subprocess

    deadline, stop, late = until
    while True:
        if stop.is_set():
            return "it was stopped"
        left = deadline - time.monotonic()
        if left <= 0:
            return late
        try:
            process.wait(timeout=min(TICK_S, left))
            return None
        except subprocess.TimeoutExpired:
            continue


def end_all() -> None:
    """Ends the process group of every step still running here (the process is leaving): SIGTERM, then SIGKILL
    to the groups still there GRACE_S later."""
    with _groups_lock:
        groups = set(_groups)
    for group in groups:
        _signal_group(group, signal.SIGTERM)
    until = time.monotonic() + GRACE_S
    while groups and time.monotonic() < until:
        groups = {group for group in groups if _group_alive(group)}
        time.sleep(TICK_S)
    for group in groups:
        _signal_group(group, signal.SIGKILL)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _end_group(process: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the step's whole process group, then SIGKILL GRACE_S later if the shell has not ended."""
    import subprocess

    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=GRACE_S)
    # Children that outlived the shell, or ignored SIGTERM, are ended too.
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(pid, sig)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _duration(seconds: float) -> str:
    """`10m`, `90s`, `0.5s`."""
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds) // 60}m"
    return f"{seconds:g}s"


class _Tail:
    """The last MAX_BYTES bytes of what a step printed, and whether more came before them."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.cut = False

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > MAX_BYTES:
            del self.data[: len(self.data) - MAX_BYTES]
            self.cut = True

    def text(self) -> str:
        lines = self.data.decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        cut = self.cut or len(lines) > MAX_LINES
        if self.cut and lines:
            lines.pop(0)  # a line cut at its start
        kept = lines[-MAX_LINES:]
        note = [f"[slash-chain: only the last {len(kept)} lines of the output are shown]"] if cut else []
        return "\n".join(note + kept)


class ShellSteps:
    """The shell steps of one session, each on a thread of its own, named by the token of the effect that asked: a
    host starts one (`start`), waits for its end (`ended`), and ends the ones its session no longer waits on
    (`keep`) or all of them as the session ends (`close`)."""

    def __init__(self, cwd: Callable[[], str], env: Mapping[str, str], timeout_s: float | None = None) -> None:
        self._cwd = cwd
        self._env = env
        self._timeout_s = timeout_of(env) if timeout_s is None else timeout_s
        self._running: dict[int, tuple[threading.Event, threading.Thread, list[ShellEnded]]] = {}
        self._lock = threading.Lock()

    def start(
        self, token: int, text: str, done: Callable[[str | None, str], None] = lambda error, output: None
    ) -> None:
        """Starts the step on its own thread; `done` hears how it ended, as `ShellEnded`'s two fields (a stopped
        step's end is heard too)."""
        stop = threading.Event()
        result: list[ShellEnded] = []

        def run() -> None:
            try:
                ended = run_shell(text, self._cwd(), self._env, self._timeout_s, stop)
            except Exception as err:
                ended = ShellEnded(f"it could not run: {err!r}", "")
            result.append(ended)
            done(ended.error, ended.output)

        thread = threading.Thread(target=run, name=f"slashkit-shell-{token}", daemon=True)
        with self._lock:
            self._running[token] = (stop, thread, result)
        thread.start()

    def ended(self, token: int, timeout_s: float | None = None) -> ShellEnded | None:
        """Waits for the step's end and forgets it; None when no step has this token, or it did not end in time."""
        with self._lock:
            held = self._running.get(token)
        if held is None:
            return None
        _, thread, result = held
        thread.join(timeout_s)
        if thread.is_alive():
            return None
        with self._lock:
            self._running.pop(token, None)
        return result[0]

    def keep(self, tokens: Callable[[int], bool]) -> None:
        """Stops every step whose token the session no longer waits on (its chain was stopped or replaced)."""
        with self._lock:
            gone = [token for token in self._running if not tokens(token)]
            stops = [self._running.pop(token)[0] for token in gone]
        for stop in stops:
            stop.set()

    def close(self) -> None:
        """Stops every step still running (the session ended), and waits until each ended (SIGTERM, and SIGKILL
        GRACE_S later), so a helper that leaves next leaves none behind."""
        with self._lock:
            held = list(self._running.values())
            self._running.clear()
        for stop, _, _ in held:
            stop.set()
        until = time.monotonic() + GRACE_S + 1
        for _, thread, _ in held:
            thread.join(max(until - time.monotonic(), 0.0))
