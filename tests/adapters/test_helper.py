"""The resident helper as the mod meets it: a process that says READY, serves HTTP/1.1 on a private unix
socket, refuses what it cannot read without losing its state, and leaves at once when told to."""

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


class Helper:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "slashkit.adapters.bridge.helper", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline()
        assert ready.startswith("READY "), ready
        self.path = ready.split()[1]
        self.connection = self.connect()

    def connect(self) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(5)
        connection.connect(self.path)
        return connection

    def request(self, body: bytes, path: str = "/v1/event", length: int | None = None) -> tuple[int, dict[str, object]]:
        size = len(body) if length is None else length
        head = f"POST {path} HTTP/1.1\r\nhost: slashkit\r\ncontent-length: {size}\r\n\r\n"
        self.connection.sendall(head.encode() + body)
        return self.response()

    def response(self) -> tuple[int, dict[str, object]]:
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.connection.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split()[1])
        length = int(
            next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        )
        while len(body) < length:
            body += self.connection.recv(65536)
        answer: dict[str, object] = json.loads(body)
        return status, answer

    def event(self, event: str, **e: object) -> tuple[int, dict[str, object]]:
        return self.request(json.dumps({"v": 3, "event": event, "e": e}).encode())

    def kill(self) -> None:
        """Kills the helper, and removes the private directory a killed helper cannot remove itself."""
        self.process.kill()
        self.process.wait()
        shutil.rmtree(Path(self.path).parent, ignore_errors=True)


@pytest.fixture
def helper() -> Iterator[Helper]:
    started = Helper()
    yield started
    started.kill()


def test_it_says_ready_with_a_socket_in_a_directory_only_its_user_reaches(helper: Helper) -> None:
    directory = Path(helper.path).parent
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(Path(helper.path).stat().st_mode)


def test_one_connection_carries_many_events_in_order(helper: Helper) -> None:
    versions = []
    for _ in range(50):
        status, answer = helper.event("PromptSubmitted", text="hi", origin="composer")
        assert status == 200
        versions.append(answer["version"])
    assert versions == list(range(1, 51))


def test_a_malformed_event_gets_a_clear_error_and_leaves_the_state_unchanged(helper: Helper) -> None:
    status, typed = helper.event("ChainTyped", command="a", args="x && /b", origin="composer", enabled=True)
    assert (status, typed["wants"]) == (200, ["PaneOpened", "PromptHanded", "PromptSubmitted"])
    assert helper.request(b"{not json") == (
        400,
        {
            "v": 3,
            "error": "request is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        },
    )
    status, refused = helper.event("TurnEnded", reason=42)
    assert status == 400
    assert "bad TurnEnded event" in str(refused["error"])
    status, status_text = helper.event("ChainCommandTyped", args="", enabled=True)
    assert status_text["reply"] == {"kind": "command.answer", "text": "on · 1/2 /a x, running"}
    assert status_text["version"] == 2


def test_an_oversized_request_is_refused_before_it_is_read(helper: Helper) -> None:
    status, answer = helper.request(b"", length=2 << 20)
    assert status == 413
    assert "over the 1048576 byte limit" in str(answer["error"])
    fresh = helper.connect()
    helper.connection = fresh
    assert helper.event("PromptSubmitted", text="hi", origin="composer")[0] == 200


def test_another_path_is_not_found(helper: Helper) -> None:
    status, answer = helper.request(b"{}", path="/elsewhere")
    assert status == 404
    assert "POST /v1/event" in str(answer["error"])


def test_sigterm_ends_it_at_once_and_removes_its_socket(helper: Helper) -> None:
    started = time.monotonic()
    helper.process.send_signal(signal.SIGTERM)
    assert helper.process.wait(timeout=5) == 0
    assert time.monotonic() - started < 2
    assert not Path(helper.path).parent.exists()


def test_a_helper_a_test_kills_leaves_no_directory_behind() -> None:
    # SIGKILL gives the helper no chance to remove its private directory; Helper.kill does, so a test run does
    # not leave a slashkit-* folder in /tmp for every helper it killed.
    started = Helper()
    started.kill()
    assert started.process.returncode == -signal.SIGKILL
    assert not Path(started.path).parent.exists()


def test_the_exit_request_ends_it(helper: Helper) -> None:
    helper.request(b"", path="/v1/exit")
    assert helper.process.wait(timeout=5) == 0
    assert not os.path.exists(helper.path)


def fail_note_of(helper: Helper) -> str:
    helper.event("ChainTyped", command="review", args="x && /b", origin="composer", enabled=True)
    _, answer = helper.event("PromptHanded", text="review x")
    reply = answer["reply"]
    assert isinstance(reply, dict)
    return str(reply["text"])


def test_the_fail_note_names_the_tool_the_host_names_in_the_arguments() -> None:
    named = Helper("--fail-tool", "slash-chain_fail")
    plain = Helper()
    try:
        assert "call the slash-chain_fail tool" in fail_note_of(named)
        assert "call the mcp__slash-chain__fail tool" in fail_note_of(plain)
    finally:
        for started in (named, plain):
            started.kill()


@pytest.mark.parametrize(
    "args",
    [
        ["--fail-tool"],
        ["--fail-tool", ""],
        ["--fail-tool", "a tool; with words"],
        ["--fail-tool", "x" * 65],
        ["--fail-tool", "caf\u00e9"],
        ["--fail-tool", "ok", "more"],
        ["--fail-tool", "two\nlines"],
        ["--other", "ok"],
        ["--host", "vim"],
        ["--host"],
        ["--host", "opencode", "--host", "opencode"],
        ["--fail-tool", "a", "--fail-tool", "b"],
    ],
)
def test_arguments_it_does_not_take_end_it_with_one_line_before_ready(args: list[str]) -> None:
    # A name no model API takes is never put in front of the model, nor is Claude Code's put in its place.
    ended = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.bridge.helper", *args], capture_output=True, text=True, timeout=10
    )
    assert (ended.returncode, ended.stdout) == (1, "")
    assert ended.stderr.startswith("slashkit helper: expected --fail-tool NAME"), ended.stderr
    assert ended.stderr.count("\n") == 1
