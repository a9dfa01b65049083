"""The sessions one shared helper serves, each apart: its own core session (a `Bridge`), opened by the client that
names it with an id of its choosing (`POST /v1/open?session=ID`), and dropped when that client asks
(`/v1/exit?session=ID`), when the process that opened it is gone, or after it was idle for `SESSION_IDLE_S`.

What a session brings when it opens is what a helper of its own read from its arguments, its environment and its
working directory: the host and the fail tool's name (the helper's options), the variables the core and the saved
chains read, and the project's folder. Nothing else crosses between sessions: each has its own state, its own order
of events and its own lock, so one that is slow or hostile holds only its own events up.
"""

import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import attrs
from returns.result import Failure, Result, Success

from slashkit.adapters import journal
from slashkit.adapters.bridge import protocol
from slashkit.adapters.bridge.bridge import ALLOW_VARIABLE, HARNESS_VARIABLE, Bridge
from slashkit.adapters.bridge.helper import options
from slashkit.adapters.saved_chains import PROJECT_VARIABLE, load
from slashkit.adapters.shell import TIMEOUT_VARIABLE

#: The variables a session brings, and all it may bring: what the core reads (the allowlist's widening, the
#: harness's mark, lich's), what finds the saved chains (the project, the person's folders) and the approvals of
#: them (the person's state), the shell steps' timeout, and what keys and bounds the journal of running programs (the
#: host's session id, the hours a cut-off run is offered).
SESSION_VARIABLES: Final = frozenset(
    {
        ALLOW_VARIABLE,
        HARNESS_VARIABLE,
        "LICH_SESSION_ID",
        "LICH_PROMPT_LANG",
        PROJECT_VARIABLE,
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        TIMEOUT_VARIABLE,
        *journal.SESSION_VARIABLES.values(),
        journal.RESUME_VARIABLE,
        "HOME",
    }
)
#: A session's id, as the client makes it.
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The keys of an opening.
OPEN_KEYS: Final = frozenset({"v", "options", "cwd", "env", "owner"})
#: Sessions open at once: far over what one person runs; a new one past it is refused (503).
MAX_SESSIONS: Final = 256
#: A session with no event for this long is dropped, even if the process that opened it still runs.
SESSION_IDLE_S: Final = 6 * 3600.0


@attrs.define
class _Open:
    bridge: Bridge
    owner: int
    used: float


class Full(Exception):
    """No room for another session."""


class Sessions:
    """The sessions of one shared helper, by id."""

    def __init__(self, alive: Callable[[int], bool] | None = None) -> None:
        self._open: dict[str, _Open] = {}
        self._lock = threading.Lock()
        self._alive = alive or _alive
        #: Since when no session is open (None while one is).
        self.empty_since: float | None = time.monotonic()

    def open(self, sid: str, body: bytes, peer: int) -> Result[None, str]:
        """Opens (or opens afresh) the session `sid` from an opening's body; `peer` is the process that sent it,
        whose end ends the session unless the opening names another `owner` (a hook's host, for Gemini's)."""
        match _opening(body):
            case Failure(why):
                return Failure(why)
            case Success((args, cwd, env, owner)):
                pass
        fail_tool, host = options(args)
        project = Path(env.get(PROJECT_VARIABLE) or cwd)
        bridge = Bridge(env, fail_tool, host, lambda: load(project, env), cwd)
        with self._lock:
            if sid not in self._open and len(self._open) >= MAX_SESSIONS:
                raise Full(f"{MAX_SESSIONS} sessions are open")
            before = self._open.get(sid)
            self._open[sid] = _Open(bridge, owner or peer, time.monotonic())
            self.empty_since = None
        if before is not None:
            before.bridge.close()
        return Success(None)

    def get(self, sid: str) -> Bridge | None:
        with self._lock:
            found = self._open.get(sid)
            if found is None:
                return None
            found.used = time.monotonic()
            return found.bridge

    def close(self, sid: str) -> None:
        with self._lock:
            closed = self._open.pop(sid, None)
            self._emptied()
        if closed is not None:
            closed.bridge.close()

    def close_all(self) -> None:
        """Drops every session (the helper leaves), ending what each still runs."""
        with self._lock:
            dropped = list(self._open.values())
            self._open.clear()
        for held in dropped:
            held.bridge.close()

    def reap(self) -> None:
        """Drops the sessions whose opening process is gone, and those idle too long."""
        now = time.monotonic()
        with self._lock:
            gone = [
                sid
                for sid, held in self._open.items()
                if now - held.used > SESSION_IDLE_S or not self._alive(held.owner)
            ]
            dropped = [self._open.pop(sid) for sid in gone]
            self._emptied()
        for held in dropped:
            held.bridge.close()

    def _emptied(self) -> None:
        if not self._open and self.empty_since is None:
            self.empty_since = time.monotonic()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process took the number: alive, and not this session's host
    return True


def _opening(body: bytes) -> Result[tuple[list[str], str, Mapping[str, str], int | None], str]:
    """Reads an opening: `{"v": 3, "options": [...], "cwd": "/abs", "env": {...}, "owner": pid or null}`."""
    return protocol.load_json(body).bind(_fields)


def _fields(given: object) -> Result[tuple[list[str], str, Mapping[str, str], int | None], str]:
    if not isinstance(given, dict) or given.get("v") != protocol.VERSION or set(given) != OPEN_KEYS:
        return Failure(f"an opening has exactly the keys {', '.join(sorted(OPEN_KEYS))}, v {protocol.VERSION}")
    args, cwd, env, owner = given["options"], given["cwd"], given["env"], given["owner"]
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return Failure("options is not an array of strings")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return Failure("cwd is not an absolute path")
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        return Failure("env is not an object of strings")
    if unknown := env.keys() - SESSION_VARIABLES:
        return Failure(f"env names variable(s) a session does not bring: {', '.join(sorted(unknown))[:200]}")
    if owner is not None and (type(owner) is not int or owner < 1):
        return Failure("owner is not a process id")
    try:
        options(args)
    except SystemExit as refused:
        return Failure(str(refused.code))
    return Success((args, cwd, env, owner))
