"""The app-server client against hostile servers: each kind of bad output, death and silence ends the connection
with one line, and nothing of the server is left running."""

import asyncio
import os
import sys
import textwrap
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from slashkit.adapters.codex import rpc
from slashkit.adapters.codex.rpc import AppServer, CodexGone, Notification, RpcError, ServerRequest
from tests.support.codex_cli import alive, gone_within


def server(body: str) -> list[str]:
    """A fake app-server: Python that reads requests from stdin and writes what `body` says."""
    prelude = """\
        import json, subprocess, sys, time
        def send(message):
            sys.stdout.write(json.dumps(message) + "\\n"); sys.stdout.flush()
        def read():
            return json.loads(sys.stdin.readline())
    """
    return [sys.executable, "-c", textwrap.dedent(prelude) + textwrap.dedent(body)]


def run(go: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Runs a test's coroutine, bounded: a client that hangs fails the test instead of the suite."""
    asyncio.run(asyncio.wait_for(go(), 60))


async def started(body: str) -> AppServer:
    return await AppServer.start(server(body))


def test_requests_answers_server_requests_and_notifications_arrive_in_order() -> None:
    async def go() -> None:
        s = await started("""\
            request = read()
            send({"method": "turn/started", "params": {"turn": {"id": "t"}}})
            send({"id": 7, "method": "item/tool/call", "params": {"tool": "fail"}})
            send({"id": request["id"], "result": {"userAgent": "fake"}})
            answer = read()
            send({"method": "echo", "params": answer})
            failing = read()
            send({"id": failing["id"], "error": {"code": -32600, "message": "no\\nsuch"}})
            sys.stdin.readline()
        """)
        async with s:
            assert await s.request("initialize", {}) == {"userAgent": "fake"}
            assert await s.next_message(1) == Notification("turn/started", {"turn": {"id": "t"}})
            call = await s.next_message(1)
            assert call == ServerRequest(7, "item/tool/call", {"tool": "fail"})
            assert isinstance(call, ServerRequest)
            await s.respond(call, {"success": False})
            assert await s.next_message(5) == Notification("echo", {"id": 7, "result": {"success": False}})
            with pytest.raises(RpcError) as refused:
                await s.request("thread/start", {})
            assert str(refused.value) == "thread/start: no\\nsuch (-32600)"
        assert gone_within(s.pid)

    run(go)


def test_a_line_over_the_bound_ends_the_connection_with_a_line() -> None:
    async def go() -> None:
        s = await started(f"""\
            read()
            sys.stdout.write("[" + "1," * {rpc.MAX_LINE // 2 + 10} + "1]\\n"); sys.stdout.flush()
            time.sleep(60)
        """)
        with pytest.raises(CodexGone) as gone:
            await s.request("initialize", {}, timeout=30)
        assert str(gone.value) == f"codex app-server sent a line over {rpc.MAX_LINE:,} bytes"
        assert gone_within(s.pid)
        await s.close()

    run(go)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("not json at all", "codex app-server sent a line that is not JSON: not json at all"),
        ("[1, 2]", "codex app-server sent JSON that is not an object: [1, 2]"),
        ("\\xff\\xfe{", "codex app-server sent a line that is not JSON: \ufffd\ufffd{"),
    ],
)
def test_garbage_ends_the_connection_with_a_line(line: str, said: str) -> None:
    async def go() -> None:
        s = await started(f"""\
            sys.stdout.buffer.write(b"{line}\\n"); sys.stdout.flush()
            time.sleep(60)
        """)
        with pytest.raises(CodexGone) as gone:
            await s.next_message(10)
        assert str(gone.value) == said
        assert gone_within(s.pid)
        await s.close()

    run(go)


def test_a_server_that_dies_mid_turn_is_a_line_with_its_status_and_last_stderr_line() -> None:
    async def go() -> None:
        s = await started("""\
            request = read()
            send({"id": request["id"], "result": {}})
            send({"method": "turn/started", "params": {}})
            sys.stderr.write("\\x1b[31mERROR\\x1b[0m panicked at turn.rs:1\\nthread died\\n"); sys.stderr.flush()
            sys.exit(3)
        """)
        await s.request("turn/start", {})
        assert await s.next_message(5) == Notification("turn/started", {})
        with pytest.raises(CodexGone) as gone:
            await s.next_message(10)
        assert str(gone.value) == "codex app-server exited with status 3: thread died"
        assert "ERROR panicked at turn.rs:1" in s.stderr_tail()
        with pytest.raises(CodexGone):
            await s.request("turn/interrupt", {})
        await s.close()

    run(go)


def test_a_server_that_never_answers_times_out_and_is_killed_with_what_it_started() -> None:
    async def go() -> None:
        s = await started("""\
            import signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            send({"method": "child", "params": {"pid": child.pid}})
            read()
            time.sleep(120)
        """)
        began = time.monotonic()
        with pytest.raises(CodexGone) as gone:
            await s.request("initialize", {}, timeout=0.5)
        assert str(gone.value) == "codex app-server did not answer initialize within 0.5 s"
        assert time.monotonic() - began < 0.5 + 2 * rpc.EXIT_GRACE + 2
        child = await s.next_message(0)
        assert isinstance(child, Notification) and isinstance(child.params["pid"], int)
        assert gone_within(s.pid)
        with pytest.raises(ProcessLookupError):
            os.kill(child.params["pid"], 0)
        await s.close()

    run(go)


def test_too_many_unread_messages_end_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc, "MAX_UNREAD", 50)

    async def go() -> None:
        s = await started("""\
            for n in range(1000):
                send({"method": "warning", "params": {"n": n}})
            time.sleep(60)
        """)
        with pytest.raises(CodexGone) as gone:
            await asyncio.wait_for(s._gone_event.wait(), 10)
            for _ in range(51):
                await s.next_message(1)
        assert str(gone.value) == "codex app-server sent over 50 messages that were not read"
        assert gone_within(s.pid)
        await s.close()

    run(go)


def test_a_binary_that_cannot_start_is_a_line() -> None:
    async def go() -> None:
        with pytest.raises(CodexGone) as gone:
            await AppServer.start(["/nonexistent/codex", "app-server"])
        assert str(gone.value) == "could not start /nonexistent/codex: No such file or directory"

    run(go)


def test_close_ends_an_idle_server_that_exits_when_its_stdin_closes() -> None:
    async def go() -> None:
        s = await started("sys.stdin.read()")
        began = time.monotonic()
        await s.close()
        assert time.monotonic() - began < 1
        assert not alive(s.pid)
        with pytest.raises(CodexGone):
            await s.next_message(0.1)

    run(go)
