"""The person's shared helper (`python -m slashkit.adapters.bridge.helper --shared`) as sessions meet it: sessions
starting at once start one helper, each session is served apart, a stale socket or an older version's helper is not
talked to, another user is refused, and the helper leaves once its sessions' hosts are gone and it was idle.

Each test gets its own TMPDIR, so its helper is its own (the folder `slashkit-<uid>` under it)."""

import fcntl
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from slashkit.adapters import __version__

NOBODY = 65534
CHAIN = {"command": "cost", "args": "&& /context", "origin": "sdk", "enabled": True, "builtins": [], "commands": []}


@pytest.fixture
def env() -> Iterator[dict[str, str]]:
    """An environment whose shared helper lives in a private, short TMPDIR (a socket's path is at most 108 bytes)."""
    tmp = tempfile.mkdtemp(prefix="sk-", dir="/tmp")
    made = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    made.update(TMPDIR=tmp, SLASHKIT_HELPER_IDLE="1")
    yield made
    for pid in helpers(made):
        os.kill(pid, signal.SIGKILL)
    subprocess.run(["rm", "-rf", tmp], check=False)


def starting(env: dict[str, str]) -> "subprocess.CompletedProcess[str]":
    """Runs a session's way to the shared helper, as a client does."""
    argv = [sys.executable, "-m", "slashkit.adapters.bridge.helper", "--shared"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)


def start(env: dict[str, str]) -> str:
    """Starts a session's way to the shared helper; returns the socket it names."""
    said = starting(env)
    assert said.stdout.startswith("READY "), said
    return said.stdout.split()[1]


def helpers(env: dict[str, str]) -> list[int]:
    """The shared helpers running for this environment (their TMPDIR is its)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"slashkit.adapters.bridge" in arg for arg in argv) and f"TMPDIR={env['TMPDIR']}".encode() in environ:
            found.append(int(entry.name))
    return found


class Client(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=10)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)

    def post(self, target: str, body: object) -> tuple[int, dict[str, object]]:
        self.request("POST", target, json.dumps(body))
        response = self.getresponse()
        return response.status, json.loads(response.read())


def opening(owner: int | None = None, **env: str) -> dict[str, object]:
    return {"v": 3, "options": ["--host", "pi"], "cwd": "/", "env": env, "owner": owner}


def event(seq: int, name: str, **e: object) -> dict[str, object]:
    return {"v": 3, "seq": seq, "event": name, "e": e}


def gone(pid: int) -> bool:
    """Waits for a process to end; True once it did (bounded: a test never hangs on it)."""
    for _ in range(300):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_ten_sessions_starting_at_once_start_one_helper_in_a_folder_only_its_user_enters(env: dict[str, str]) -> None:
    # The ten wait at the start's lock, held here until all of them run, so that they come to it at once.
    folder = Path(env["TMPDIR"], f"slashkit-{os.getuid()}")
    folder.mkdir(mode=0o700)
    argv = [sys.executable, "-m", "slashkit.adapters.bridge.helper", "--shared"]
    with open(folder / f"helper-{__version__}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        starts = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True) for _ in range(10)]
        time.sleep(1)
        assert [s.poll() for s in starts] == [None] * 10  # none went past the lock
    said = [s.communicate(timeout=30)[0] for s in starts]
    sockets = {line.split()[1] for line in said}
    assert len(sockets) == 1
    path = Path(sockets.pop())
    assert path.name == f"helper-{__version__}.sock"
    assert path.parent == Path(env["TMPDIR"], f"slashkit-{os.getuid()}")
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert len(helpers(env)) == 1
    # Every session is served by it.
    for n in range(10):
        client = Client(str(path))
        assert client.post(f"/v1/open?session=s{n}", opening())[0] == 200
        assert client.post(f"/v1/event?session=s{n}", event(1, "SavedAsked", commands=[]))[0] == 200
    assert len(helpers(env)) == 1


def test_sessions_are_apart_each_with_its_own_chain_and_order(env: dict[str, str]) -> None:
    path = start(env)
    ann, bob = Client(path), Client(path)
    assert ann.post("/v1/open?session=ann", opening())[0] == 200
    assert bob.post("/v1/open?session=bob", opening())[0] == 200
    status, typed = ann.post("/v1/event?session=ann", event(1, "ChainTyped", **CHAIN))
    assert status == 200
    assert typed["effects"] == [
        {"kind": "log", "text": "1/2: /cost"},
        {"kind": "progress", "text": "chain 1/2: /cost · next /context"},
    ]
    said = {"args": "", "enabled": True, "origin": "composer", "commands": []}
    status, asked = bob.post("/v1/event?session=bob", event(1, "ChainCommandTyped", **said))
    assert asked["reply"] == {"kind": "command.answer", "text": "on · no chain runs"}
    # A session whose events came out of order waits for the missing one: the other session does not wait with it.
    late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    late.connect(path)
    body = json.dumps(event(3, "ChainCommandTyped", **said)).encode()
    late.sendall(b"POST /v1/event?session=ann HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
    status, asked = bob.post("/v1/event?session=bob", event(2, "ChainCommandTyped", **said))
    assert (status, asked["reply"]) == (200, {"kind": "command.answer", "text": "on · no chain runs"})
    assert select.select([late], [], [], 0)[0] == []  # ann's event is still waiting for its turn
    # An unknown session is not served, nor one a session closed.
    assert bob.post("/v1/event?session=cy", event(1, "SavedAsked", commands=[]))[0] == 410
    assert bob.post("/v1/exit?session=bob", {})[0] == 200
    assert Client(path).post("/v1/event?session=bob", event(3, "SavedAsked", commands=[]))[0] == 410
    assert Client(path).post("/v1/event?session=ann", event(2, "SavedAsked", commands=[]))[0] == 200


def test_an_opening_is_read_strictly(env: dict[str, str]) -> None:
    path = start(env)
    client = Client(path)
    for wrong in (
        {**opening(), "extra": 1},
        {**opening(), "cwd": "relative"},
        opening(PATH="/bin"),
        {**opening(), "options": ["--host", "emacs"]},
        {**opening(), "owner": True},
    ):
        status, said = Client(path).post("/v1/open?session=x", wrong)
        assert status == 400, said
    assert client.post("/v1/open?session=../../x", opening())[0] == 400
    assert Client(path).post("/v1/event?session=x", event(1, "SavedAsked", commands=[]))[0] == 410


def test_a_stale_socket_file_is_replaced_by_a_helper_that_answers(env: dict[str, str]) -> None:
    folder = Path(env["TMPDIR"], f"slashkit-{os.getuid()}")
    folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(folder / f"helper-{__version__}.sock"))
    stale.close()  # the file stays, and nothing listens on it: a helper that was killed
    path = start(env)
    assert Client(path).post("/v1/open?session=a", opening())[0] == 200


def test_a_folder_too_deep_for_a_socket_falls_back_to_the_system_s_temporary_folder(env: dict[str, str]) -> None:
    # A socket's path is at most 107 bytes: in a deeper TMPDIR the helper could not listen, and no chain ran (seen
    # with pytest's folders under xdist: "the helper exited (code 1)").
    deep = Path(env["TMPDIR"], "d" * 60, "e" * 60)
    deep.mkdir(parents=True)
    env["TMPDIR"] = str(deep)
    try:
        path = start(env)
        assert path == f"/tmp/slashkit-{os.getuid()}/helper-{__version__}.sock"
        assert Client(path).post("/v1/open?session=deep", opening())[0] == 200
    finally:
        for pid in helpers(env):
            os.kill(pid, signal.SIGTERM)


def test_an_older_version_s_helper_is_never_talked_to(env: dict[str, str]) -> None:
    old = (
        "import sys, slashkit.adapters as a; a.__version__ = '0.0.1'; "
        "from slashkit.adapters.bridge import helper; helper.main(['--shared'])"
    )
    said = subprocess.run([sys.executable, "-c", old], env=env, capture_output=True, text=True, timeout=30, check=True)
    older = said.stdout.split()[1]
    assert older.endswith("helper-0.0.1.sock")
    path = start(env)
    assert path != older
    assert len(helpers(env)) == 2
    assert Client(path).post("/v1/open?session=a", opening())[0] == 200


def test_a_folder_others_may_enter_is_refused(env: dict[str, str]) -> None:
    Path(env["TMPDIR"], f"slashkit-{os.getuid()}").mkdir(mode=0o755)
    said = starting(env)
    assert said.returncode != 0
    assert "READY" not in said.stdout
    assert "only they may enter" in said.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused(env: dict[str, str]) -> None:
    path = start(env)
    # Open the way by hand, as only a mistake would: the helper still refuses whoever is not its user.
    os.chmod(env["TMPDIR"], 0o711)
    os.chmod(Path(path).parent, 0o711)
    os.chmod(path, 0o777)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's own
        os.close(read)
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            status, said = Client(path).post("/v1/open?session=x", opening())
            os.write(write, json.dumps([status, said]).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as answer:
        status, said = json.loads(answer.read())
    assert status == 403
    assert "is not this helper's user" in said["error"]
    assert Client(path).post("/v1/open?session=x", opening())[0] == 200


def test_it_leaves_once_its_sessions_hosts_are_gone_and_it_was_idle(env: dict[str, str]) -> None:
    path = start(env)
    (helper,) = helpers(env)
    host = subprocess.Popen(["sleep", "60"])
    assert Client(path).post("/v1/open?session=a", opening(owner=host.pid))[0] == 200
    # A session whose host runs keeps the helper past its idle time (1 s here).
    time.sleep(2.5)
    assert helpers(env) == [helper]
    assert Client(path).post("/v1/event?session=a", event(1, "SavedAsked", commands=[]))[0] == 200
    host.kill()
    host.wait()
    assert gone(helper)
    assert not Path(path).exists()


def test_sigterm_ends_it_and_the_next_start_starts_another(env: dict[str, str]) -> None:
    # A SIGTERM right after READY, before the helper's handler was in place, once left its socket behind (5 of 30
    # tries): each round here sends it at once.
    for _ in range(10):
        path = start(env)
        (helper,) = helpers(env)
        os.kill(helper, signal.SIGTERM)
        assert gone(helper)
        assert not Path(path).exists()
    assert start(env) == path
    assert len(helpers(env)) == 1


def test_it_leaves_the_starting_session_s_terminal_and_process_group(env: dict[str, str]) -> None:
    start(env)
    (helper,) = helpers(env)
    assert os.getsid(helper) == helper  # a session of its own: no hangup or interrupt of the host's reaches it
    for descriptor in (0, 1):
        assert os.readlink(f"/proc/{helper}/fd/{descriptor}") == "/dev/null"
