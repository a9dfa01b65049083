"""A small JSON-RPC 2.0 client for `codex app-server` on stdio: one JSON object a line each way.

Why not a library: none on the package index fits (docs/codex.md, "The JSON-RPC client"). OpenAI's own Python SDK
for the app-server reads lines without a bound, queues without a bound, waits on answers without a time limit,
accepts every command and file change the server asks to approve, and pins a Codex of its own; the general
JSON-RPC packages either frame messages as LSP does (`Content-Length` headers), build messages without a
transport, or read without bounds. The message types are generated from the pinned Codex's own schema
(`slashkit.adapters.codex.protocol`, scripts/codex_protocol.py).

Everything the server sends is bounded: a line over MAX_LINE bytes, a line that is not a JSON object, or more
than MAX_UNREAD messages the host has not taken ends the connection, as does the server exiting or not answering
a request in time. Each of these is a `CodexGone` whose message is one line, and the server's whole process
group is ended: nothing it started is left running.
"""

import asyncio
import contextlib
import json
import os
import re
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from slashkit.adapters.codex.protocol import ClientNotificationMethod, ClientRequestMethod
from slashkit.core.texts import one_line

#: The longest line the server may send. Its largest messages carry a turn's items (a command's output, a file's
#: diff); Codex bounds a tool's output it keeps, so 16 MiB is far above any real message and small for memory.
MAX_LINE: Final = 16 << 20
#: The most messages that may wait unread: a host that reads each turn to its end never nears it.
MAX_UNREAD: Final = 10_000
#: How long a request may wait on its answer (the app-server answers `turn/start` at once and reports the turn
#: in notifications; `initialize` took 0.1-0.25 s, measured on 0.169.0).
REQUEST_TIMEOUT: Final = 60.0
#: How long the server has to exit once its stdin closed (it exits within ~50 ms when idle, measured on 0.169.0)
#: before its process group is ended.
EXIT_GRACE: Final = 2.0
#: The stderr lines kept, to say why the server ended.
STDERR_LINES: Final = 20

JsonObject = dict[str, object]


class CodexGone(Exception):
    """The app-server ended, broke the protocol or did not answer; the message is one line saying which."""


@frozen
class RpcError(Exception):
    """The server answered a request with an error."""

    method: str
    code: int
    text: str

    def __str__(self) -> str:
        return one_line(f"{self.method}: {self.text} ({self.code})")


@frozen
class Notification:
    """A notification from the server."""

    method: str
    params: JsonObject


@frozen
class ServerRequest:
    """A request from the server, which the host answers with `respond` or `respond_error`."""

    id: int | str
    method: str
    params: JsonObject


Message = Notification | ServerRequest


class AppServer:
    """One running `codex app-server`: `await AppServer.start(argv)`, then `request`, `next_message`, `close`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self._ids = 0
        self._waiting: dict[int, tuple[str, asyncio.Future[JsonObject]]] = {}
        self._unread: asyncio.Queue[Message] = asyncio.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._gone: CodexGone | None = None
        self._gone_event = asyncio.Event()
        self._process_ended = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._tasks = (
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        )

    @classmethod
    async def start(
        cls, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> "AppServer":
        """Starts the server (`argv` ends in `app-server`) in a process group of its own."""
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=None if env is None else dict(env),
                cwd=cwd,
                limit=MAX_LINE,
                start_new_session=True,
            )
        except OSError as error:
            raise CodexGone(one_line(f"could not start {argv[0]}: {error.strerror or error}")) from None
        return cls(process)

    @property
    def pid(self) -> int:
        """The launcher's process id, which is also its process group's."""
        return self._process.pid

    @property
    def gone(self) -> CodexGone | None:
        """Why the connection ended, once it did."""
        return self._gone

    # Sending

    async def request(
        self, method: ClientRequestMethod, params: Mapping[str, object], *, timeout: float = REQUEST_TIMEOUT
    ) -> JsonObject:
        """Sends a request and waits for its result (a JSON object); an error answer is an `RpcError`."""
        self._raise_if_gone()
        self._ids += 1
        ident = self._ids
        answer: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = (method, answer)
        try:
            await self._send({"id": ident, "method": method, "params": dict(params)})
            async with asyncio.timeout(timeout):
                return await answer
        except TimeoutError:
            await self._fail(f"codex app-server did not answer {method} within {timeout:g} s")
            raise self._gone or CodexGone("codex app-server did not answer") from None
        finally:
            self._waiting.pop(ident, None)

    async def notify(self, method: ClientNotificationMethod, params: Mapping[str, object] | None = None) -> None:
        """Sends a notification."""
        await self._send({"method": method} if params is None else {"method": method, "params": dict(params)})

    async def respond(self, request: ServerRequest, result: Mapping[str, object]) -> None:
        """Answers a server request with a result."""
        await self._send({"id": request.id, "result": dict(result)})

    async def respond_error(self, request: ServerRequest, code: int, text: str) -> None:
        """Answers a server request with an error."""
        await self._send({"id": request.id, "error": {"code": code, "message": text}})

    async def _send(self, message: JsonObject) -> None:
        self._raise_if_gone()
        stdin = self._process.stdin
        assert stdin is not None
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._write_lock:
            try:
                stdin.write(data)
                async with asyncio.timeout(REQUEST_TIMEOUT):
                    await stdin.drain()
            except (ConnectionError, RuntimeError):
                await self._ended()
                self._raise_if_gone()
            except TimeoutError:
                await self._fail(f"codex app-server read nothing for {REQUEST_TIMEOUT:g} s")
                self._raise_if_gone()

    # Receiving

    async def next_message(self, timeout: float | None = None) -> Message:
        """The next notification or server request, in the order sent; `CodexGone` once the connection ended and
        every message before the end was taken. `TimeoutError` when none came within `timeout` seconds."""
        if not self._unread.empty():
            return self._unread.get_nowait()
        if self._gone is not None:
            await self._process_ended.wait()  # nothing of the server runs once a caller hears it ended
            raise self._gone
        getting = asyncio.ensure_future(self._unread.get())
        ending = asyncio.ensure_future(self._gone_event.wait())
        try:
            done, _ = await asyncio.wait({getting, ending}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ending.cancel()
            if not getting.done():
                getting.cancel()
        if getting in done:
            return getting.result()
        if not done:
            raise TimeoutError
        if not self._unread.empty():
            return self._unread.get_nowait()
        await self._process_ended.wait()
        self._raise_if_gone()
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read_stdout(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # asyncio's "chunk exceed the limit": a line over MAX_LINE
                    await self._fail(f"codex app-server sent a line over {MAX_LINE:,} bytes")
                    return
                if not line:
                    await self._ended()
                    return
                if line.strip() and not await self._take(line):
                    return
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the pipe broke under the reader: end, saying why
            await self._fail(f"codex app-server's output could not be read: {error}")

    async def _take(self, line: bytes) -> bool:
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            await self._fail(f"codex app-server sent a line that is not JSON: {_clip(line)}")
            return False
        if not isinstance(message, dict):
            await self._fail(f"codex app-server sent JSON that is not an object: {_clip(line)}")
            return False
        method, ident = message.get("method"), message.get("id")
        if isinstance(method, str):
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if isinstance(ident, int | str) and not isinstance(ident, bool):
                return await self._queue(ServerRequest(ident, method, params))
            return await self._queue(Notification(method, params))
        if isinstance(ident, int) and ident in self._waiting:
            name, answer = self._waiting.pop(ident)
            error, result = message.get("error"), message.get("result")
            if answer.done():
                return True
            if isinstance(error, dict):
                code = error.get("code")
                answer.set_exception(
                    RpcError(name, code if isinstance(code, int) else 0, one_line(str(error.get("message", ""))))
                )
            else:
                answer.set_result(result if isinstance(result, dict) else {})
        # An answer to no request it was sent (or one that timed out) is dropped.
        return True

    async def _queue(self, message: Message) -> bool:
        if self._unread.qsize() >= MAX_UNREAD:
            await self._fail(f"codex app-server sent over {MAX_UNREAD:,} messages that were not read")
            return False
        self._unread.put_nowait(message)
        return True

    async def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        with contextlib.suppress(ValueError, ConnectionError):
            while line := await stderr.readline():
                text = line.decode(errors="replace").strip()
                if text and not _NOISE.search(text):
                    self._stderr.append(text[:500])

    # Ending

    async def _ended(self) -> None:
        """The server closed its output: it exited, or is about to."""
        try:
            async with asyncio.timeout(EXIT_GRACE):
                status = await self._process.wait()
        except TimeoutError:
            status = None
        if status is None:
            why = "codex app-server closed its output"
        elif status < 0:
            why = f"codex app-server was killed by signal {-status}"
        else:
            why = f"codex app-server exited with status {status}"
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.5):
                await self._tasks[1]
        last = self.stderr_tail(1)
        await self._fail(f"{why}: {last}" if last else why)

    def stderr_tail(self, lines: int = STDERR_LINES) -> str:
        """The server's last stderr lines (ANSI colour codes removed), joined by ` | `."""
        kept = [_plain(text) for text in list(self._stderr)[-lines:]]
        return " | ".join(text for text in kept if text)

    async def _fail(self, why: str) -> None:
        """Ends the connection for this reason: the server's process group first, then whoever waits hears why,
        so by the time a caller sees `CodexGone` nothing of the server runs."""
        if self._gone is not None:
            await self._process_ended.wait()
            return
        self._gone = CodexGone(one_line(why))
        try:
            await self._end_process()
        finally:
            self._process_ended.set()
            self._gone_event.set()
            for _, answer in list(self._waiting.values()):
                if not answer.done():
                    answer.set_exception(self._gone)
            self._waiting.clear()

    def _raise_if_gone(self) -> None:
        if self._gone is not None:
            raise self._gone

    async def _end_process(self) -> None:
        """Closes the server's stdin (it exits when it closes), then ends its process group after EXIT_GRACE."""
        process = self._process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if process.returncode is None:
            try:
                async with asyncio.timeout(EXIT_GRACE):
                    await process.wait()
            except TimeoutError:
                pass
        # The launcher's children (the native server) share its group; end whatever of it is left.
        _signal_group(process.pid, signal.SIGTERM)
        if process.returncode is None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EXIT_GRACE):
                    await process.wait()
        _signal_group(process.pid, signal.SIGKILL)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def close(self) -> None:
        """Ends the connection and the server; nothing of it is left running."""
        await self._fail("the connection to codex app-server was closed")
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        transport = getattr(self._process, "_transport", None)
        if transport is not None:
            transport.close()

    async def __aenter__(self) -> "AppServer":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _clip(line: bytes, limit: int = 80) -> str:
    text = line.decode(errors="replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _plain(text: str) -> str:
    """A stderr line without its ANSI colour codes."""
    return _ANSI.sub("", text).strip()


_ANSI: Final = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: What the app-server writes to stderr in every run that says nothing about why it ended (measured on 0.169.0:
#: the config warnings it repeats as ERROR lines, its refusal to write helpers under a temporary folder): left out
#: of the line that says why it ended.
_NOISE: Final = re.compile(
    r"could not find bubblewrap|Refusing to create helper binaries|Model metadata for .* not found", re.IGNORECASE
)
