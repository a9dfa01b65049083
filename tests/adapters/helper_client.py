"""A real helper process started as the mod starts it, and a small HTTP/1.1 client for its unix socket that can
also send what no well-behaved client sends."""

import contextlib
import json
import resource
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import attrs


@attrs.frozen
class Answered:
    """One answer as it came off the socket: the status, the headers (names lowered) and the JSON body."""

    status: int
    headers: dict[str, str]
    body: dict[str, object]
    raw: bytes


class Closed(Exception):
    """The helper closed the connection without an answer."""


class Helper:
    """`python -m slashkit.adapters.bridge.helper`, read up to its `READY <path>` line."""

    def __init__(self, open_files: int | None = None) -> None:
        def limit() -> None:
            if open_files is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "slashkit.adapters.bridge.helper"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=limit,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        assert ready.startswith("READY "), ready
        self.path = ready.split()[1]
        self.connection = self.connect()

    def connect(self, timeout: float = 10) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(timeout)
        for _ in range(200):
            try:
                connection.connect(self.path)
                return connection
            except BlockingIOError:  # the listen queue is full: the helper has not taken them in yet
                time.sleep(0.01)
        raise TimeoutError(f"the helper took no connection in 2 s at {self.path}")

    def stop(self) -> str:
        """Kills the helper and returns what it wrote on stderr.

        Killed, the helper cannot remove its private directory, so the test does (they used to pile up in /tmp)."""
        self.process.kill()
        _, stderr = self.process.communicate()
        shutil.rmtree(Path(self.path).parent, ignore_errors=True)
        return stderr

    def request(self, body: bytes, path: str = "/v1/event", length: int | None = None) -> tuple[int, dict[str, object]]:
        size = len(body) if length is None else length
        head = f"POST {path} HTTP/1.1\r\nhost: slashkit\r\ncontent-length: {size}\r\n\r\n"
        answered = self.send(head.encode() + body)
        return answered.status, answered.body

    def send(self, data: bytes, connection: socket.socket | None = None) -> Answered:
        """Sends raw bytes and reads one answer; a helper that stops reading first still gets its answer read."""
        connection = connection or self.connection
        # A helper that answered and closed before it read everything: its answer is still there to read.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.sendall(data)
        return read_answer(connection)

    def event(self, event: str, connection: socket.socket | None = None, **e: object) -> Answered:
        body = json.dumps({"v": 3, "event": event, "e": e}).encode()
        head = f"POST /v1/event HTTP/1.1\r\nhost: slashkit\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        return self.send(head + body, connection)

    def still_serves(self) -> None:
        """Asserts that a normal event is answered, on a fresh connection."""
        fresh = self.connect()
        try:
            answered = self.event("PromptSubmitted", fresh, text="hi", origin="composer")
        finally:
            fresh.close()
        assert answered.status == 200, answered
        assert set(answered.body) == {"v", "version", "wants", "reply", "effects"}

    def rss_kib(self) -> int:
        return _status_field(self.process.pid, "VmRSS:")

    def settled(self, threads: int, timeout: float = 10) -> None:
        """Waits until the helper runs `threads` threads and each sleeps (blocked on its socket or the listener):
        by then it has read all that was sent to it. A loaded machine may take a while to get there."""
        deadline = time.monotonic() + timeout
        tasks = Path(f"/proc/{self.process.pid}/task")
        while time.monotonic() < deadline:
            states = [state for state in map(_task_state, tasks.iterdir()) if state is not None]
            if len(states) >= threads and set(states) == {"S"}:
                return
            time.sleep(0.02)
        raise AssertionError(f"the helper did not settle within {timeout} s")

    def cpu_ticks(self) -> int:
        """User and system time the helper has used, in clock ticks (/proc/<pid>/stat fields 14 and 15)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])


def read_answer(connection: socket.socket) -> Answered:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            raise Closed(f"closed without an answer after {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            raise Closed(f"closed in the middle of an answer: {data!r}")
        body += chunk
    return Answered(status, headers, json.loads(body), body)


def _status_field(pid: int, name: str) -> int:
    line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(name))
    return int(line.split()[1])


def _task_state(task: Path) -> str | None:
    """A thread's state letter, or None once it has ended (between the listing and the read)."""
    try:
        return (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None
