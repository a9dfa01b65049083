"""The resident helper of a Gemini CLI session, for hooks that each live one event long (Gemini runs a command hook
per event, measured on 0.61.0). The first hook that needs the core opens the session in the person's shared helper
(`slashkit.adapters.bridge.helper`, `--shared`), starting it when none runs, with the Gemini process as the session's
owner (the helper drops the session once it is gone). With `SLASHKIT_HELPER=session`, it starts a keeper instead
(`python -m slashkit.adapters.gemini.resident`), which starts a helper of the session's own, writes the session's
state file once the helper said READY, and stays as long as the Gemini process and the helper do; the helper goes
with its parent, the keeper. Later hooks find the helper again through the state file, keyed by the session id in a
private folder, and speak the bridge's wire to it (docs/bridge.md) one event at a time, under a lock, so the events
of a session are numbered in the order sent.

The state file also keeps what the hooks of one session share: the event count, the wire's `wants`, and the
session's own notes (`Session.notes`, the hook translation's).
"""

import contextlib
import fcntl
import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from slashkit.adapters import journal, shell
from slashkit.adapters.bridge import helper, protocol, server
from slashkit.adapters.bridge.helper import FAIL_TOOL_OPTION, HOST_OPTION, READY
from slashkit.adapters.bridge.sessions import SESSION_VARIABLES
from slashkit.adapters.bridge.shim import ANSWER_TIMEOUT_MS, HELPER_MODULE, START_TIMEOUT_MS
from slashkit.adapters.files import read_regular
from slashkit.adapters.gemini.hook import session_id, state_folder

#: The name Gemini gives the fail tool of the extension's MCP server `slash-chain` (`mcp_<server>_<tool>`,
#: measured on 0.61.0); the helper hears it, so that the core's fail note names it so.
FAIL_TOOL: Final = "mcp_slash-chain_fail"
#: The longest wait for a shell step's end: the helper ends it by its timeout first (slashkit.adapters.shell).
SHELL_WAIT_S: Final = shell.MAX_TIMEOUT_S + 2 * shell.GRACE_S + 60
HOST: Final = "gemini"
#: The variable that names the session to the helper, keying its journal.
SESSION_VARIABLE: Final = journal.SESSION_VARIABLES[HOST]
#: The helper's options for a Gemini session.
OPTIONS: Final = [FAIL_TOOL_OPTION, FAIL_TOOL, HOST_OPTION, HOST]
#: The most of a state file that is read: it holds a few texts of the running chain, each bounded by the wire.
MAX_STATE: Final = 4 * 1024 * 1024

Json = dict[str, Any]


class Unavailable(Exception):
    """The helper could not be started or did not answer; the message is the `{why}` of the unavailable line."""


def folder() -> Path:
    """The private folder of the state files: only this user's (made with mode 0700, and refused when another
    user owns it or others may enter it)."""
    base = state_folder()
    try:
        with contextlib.suppress(FileExistsError):
            base.mkdir(mode=0o700)
        found = os.lstat(base)
    except OSError as error:
        raise Unavailable(f"no folder for the session's state at {base} ({error.strerror})") from None
    if found.st_uid != os.getuid() or found.st_mode & 0o077 or not stat.S_ISDIR(found.st_mode):
        raise Unavailable(f"{base} is not a private folder of this user's")
    return base


class Session:
    """The state of one Gemini session's chain, as the hooks share it; `open` holds the session's lock."""

    def __init__(self, path: Path, state: Json) -> None:
        self.path = path
        self.state = state

    @property
    def notes(self) -> Json:
        """What the hook translation keeps between hooks (`slashkit.adapters.gemini.hook`)."""
        notes = self.state.setdefault("notes", {})
        return notes if isinstance(notes, dict) else {}

    @property
    def running(self) -> bool:
        """A helper was started for this session (it may have gone since)."""
        return isinstance(self.state.get("socket"), str)

    def wants(self, event: str) -> bool:
        wants = self.state.get("wants")
        return isinstance(wants, list) and event in wants

    def ask(self, event: str, e: Json) -> Json:
        """Sends one event and returns the helper's answer (`reply`, `effects`, `wants`); starts the helper when
        none runs. Unavailable when it cannot."""
        if not self.running:
            self._start()
        seq = int(self.state.get("seq", 0)) + 1
        body = json.dumps({"v": protocol.VERSION, "seq": seq, "event": event, "e": e}).encode()
        try:
            status, raw = _post(str(self.state["socket"]), self._named(server.EVENT_PATH), body)
            answer = json.loads(raw)
        except (OSError, ValueError, http.client.HTTPException) as error:
            self.forget()
            raise Unavailable(f"the helper did not answer {event} ({error})") from None
        self.state["seq"] = seq
        if status != 200 or not isinstance(answer, dict) or answer.get("v") != protocol.VERSION:
            why = answer.get("error") if isinstance(answer, dict) else None
            if status in (409, 410, 500, 503):
                self.forget()
            raise Unavailable(f"the helper refused {event}: {str(why or status)[:200]}")
        self.state["wants"] = answer.get("wants") if isinstance(answer.get("wants"), list) else []
        return answer

    def shell_ended(self, token: object) -> tuple[str | None, str]:
        """Waits for the end of the shell step the helper runs for `token` (it ends the step by its timeout): why it
        failed (None: it exited 0) and what it printed."""
        body = json.dumps({"token": token}).encode()
        try:
            status, raw = _post(str(self.state["socket"]), self._named(server.SHELL_PATH), body, SHELL_WAIT_S)
            ended = json.loads(raw)
        except (OSError, ValueError, http.client.HTTPException) as failed:
            return f"the helper did not say how it ended ({failed})", ""
        if status != 200 or not isinstance(ended, dict):
            return f"the helper answered {status}", ""
        why, output = ended.get("error"), ended.get("output")
        return (why if isinstance(why, str) else None), (output if isinstance(output, str) else "")

    def forget(self) -> None:
        """Leaves the helper: the shared one drops the session, a keeper ends the session's own; the next event
        starts afresh."""
        keeper = self.state.get("keeper")
        if isinstance(keeper, int) and keeper > 1:
            with contextlib.suppress(OSError):
                os.kill(keeper, signal.SIGTERM)
        if isinstance(self.state.get("session"), str):
            with contextlib.suppress(OSError, http.client.HTTPException):
                _post(str(self.state["socket"]), self._named(server.EXIT_PATH), b"")
        for key in ("socket", "keeper", "session", "seq", "wants"):
            self.state.pop(key, None)

    def _named(self, path: bytes) -> str:
        """A path of the helper's, naming the session in the shared helper."""
        session = self.state.get("session")
        return path.decode() + (f"?session={session}" if isinstance(session, str) else "")

    def _start(self) -> None:
        if os.environ.get(helper.MODE_VARIABLE) == "session":
            self._keep()
            return
        session = os.urandom(16).hex()
        opening = {
            "v": protocol.VERSION,
            "options": OPTIONS,
            "cwd": os.getcwd(),
            "env": _session_env(self.path.stem),
            "owner": os.getppid(),  # the Gemini process: the helper drops the session once it is gone
        }
        body = json.dumps(opening).encode()
        target = f"{server.OPEN_PATH.decode()}?session={session}"
        try:
            path: str | None = os.path.join(helper.shared_directory(), helper.shared_socket_name())
        except OSError:
            path = None
        # At the socket where a helper runs; else the helper is started (or found) by the bridge's own start, twice
        # at most: a helper found as it leaves (idle) is gone by the opening, and the second start starts one.
        for tries in range(3):
            if path is not None:
                with contextlib.suppress(OSError, http.client.HTTPException):
                    if _post(path, target, body)[0] == 200:
                        self.state.update(socket=path, session=session, seq=0, wants=[])
                        return
            if tries < 2:
                path = _shared_start()
        raise Unavailable("the shared helper did not open this session")

    def _keep(self) -> None:
        argv = [sys.executable, "-m", __name__, str(os.getppid()), self.path.stem]
        try:
            keeper = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            raise Unavailable(f"the helper could not start ({error.strerror})") from None
        assert keeper.stdout is not None
        line = _line(keeper.stdout.fileno(), START_TIMEOUT_MS / 1000)
        keeper.stdout.close()
        if not line.startswith(f"{READY} "):
            with contextlib.suppress(OSError):
                keeper.kill()
            raise Unavailable("the helper did not say READY")
        self.state.update(socket=line[len(READY) + 1 :], keeper=keeper.pid, seq=0, wants=[])


def _session_env(sid: str) -> dict[str, str]:
    """The variables this session brings its helper: the person's, and the session's id as the payload named it (the
    journal's key, the same on `--resume`: docs/gemini.md), over any a parent process left in the environment."""
    env = {name: os.environ[name] for name in sorted(SESSION_VARIABLES) if name in os.environ}
    return {**env, SESSION_VARIABLE: sid}


def _shared_start() -> str | None:
    """Starts the person's shared helper, or finds it: the socket it listens on, or None."""
    try:
        said = subprocess.run(
            [sys.executable, "-m", HELPER_MODULE, helper.SHARED_OPTION],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=START_TIMEOUT_MS / 1000,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = said.stdout.decode(errors="replace").split("\n")[0]
    return line[len(READY) + 1 :] if line.startswith(f"{READY} /") else None


def _line(descriptor: int, timeout: float) -> str:
    """The first line read from a pipe within `timeout` seconds (at most 4 KiB), or ''."""
    import select

    got, deadline = b"", time.monotonic() + timeout
    while b"\n" not in got and len(got) < 4096:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([descriptor], [], [], left)[0]:
            return ""
        piece = os.read(descriptor, 4096)
        if not piece:
            return ""
        got += piece
    return got.split(b"\n")[0].decode(errors="replace")


class _Unix(http.client.HTTPConnection):
    def __init__(self, path: str, timeout_s: float) -> None:
        super().__init__("localhost", timeout=timeout_s)
        self.unix = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix)


def _post(path: str, target: str, body: bytes, timeout_s: float = ANSWER_TIMEOUT_MS / 1000) -> tuple[int, bytes]:
    connection = _Unix(path, timeout_s)
    try:
        connection.request("POST", target, body, {"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read(protocol.MAX_BODY + 1)
    finally:
        connection.close()


def exists(sid: str) -> bool:
    """Whether the session has state (a chain was typed in it); False when the folder cannot be had either."""
    try:
        return (folder() / f"{sid}.json").exists()
    except Unavailable:
        return False


@contextlib.contextmanager
def opened(sid: str) -> Iterator[Session]:
    """The session's state under its lock, written back when the block ends (also when it raised)."""
    base = folder()
    path = base / f"{sid}.json"
    with open(base / f"{sid}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        session = Session(path, _read(path))
        try:
            yield session
        finally:
            _write(path, session.state)


def _read(path: Path) -> Json:
    try:
        state = json.loads(read_regular(path, MAX_STATE))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _write(path: Path, state: Json) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(state))
    os.replace(temporary, path)


def close(sid: str) -> None:
    """The session ended: its helper goes, and its files."""
    base = folder()
    with opened(sid) as session:
        session.forget()
    for name in (f"{sid}.json", f"{sid}.lock"):
        with contextlib.suppress(OSError):
            (base / name).unlink()


def keep(gemini: int, sid: str) -> None:
    """The keeper: starts the helper, passes its READY line on, then lives as long as the Gemini process and the
    helper do (the helper ends with it). A Gemini process that ended without its SessionEnd (killed) leaves the
    session's files to the keeper, which takes them out."""
    argv = [sys.executable, "-m", HELPER_MODULE, *OPTIONS]
    env = {**os.environ, SESSION_VARIABLE: sid}  # a helper of its own reads the session's variables from its own
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert child.stdout is not None
    line = _line(child.stdout.fileno(), START_TIMEOUT_MS / 1000)
    print(line, flush=True)
    os.close(1)
    signal.signal(signal.SIGTERM, lambda *_: _end(child))
    while child.poll() is None:
        try:
            os.kill(gemini, 0)
        except ProcessLookupError:
            base = folder()
            for name in (f"{sid}.json", f"{sid}.lock"):
                with contextlib.suppress(OSError):
                    (base / name).unlink()
            break
        time.sleep(1)
    _end(child)


def _end(child: "subprocess.Popen[bytes]") -> None:
    with contextlib.suppress(OSError):
        child.terminate()
    os._exit(0)


if __name__ == "__main__":
    keep(int(sys.argv[1]), str(session_id(sys.argv[2])))
