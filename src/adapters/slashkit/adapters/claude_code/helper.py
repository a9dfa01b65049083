"""The resident helper the mod starts once per session: serves the bridge over HTTP/1.1 on a unix socket in a
private directory, prints `READY <socket path>`, and ends with its parent.

Run as `python -m slashkit.adapters.claude_code.helper`. HTTP because the mod can only reach it through
`$.http.fetch` (measured on Claude Code 2.1.328: ~2 ms a call over a unix socket, keep-alive reused).
"""

import contextlib
import os
import signal
import socketserver
import tempfile
import threading
import time
from typing import Final

from returns.result import Failure, Success

from slashkit.adapters.claude_code import protocol
from slashkit.adapters.claude_code.bridge import Bridge
from slashkit.adapters.lich_cli import LichEnvironment, LichWhoami, OsEnvironment

#: Longest request line or header line read; the mod's are short.
MAX_LINE: Final = 8192
EVENT_PATH: Final = "/v1/event"
EXIT_PATH: Final = "/v1/exit"


class _Handler(socketserver.StreamRequestHandler):
    """One keep-alive connection from the engine: requests are read and answered in turn."""

    server: "_Server"

    def handle(self) -> None:
        while self._one_request():
            pass

    def _one_request(self) -> bool:
        line = self.rfile.readline(MAX_LINE + 1)
        if not line:
            return False
        method, _, rest = line.decode("latin-1").partition(" ")
        path = rest.split(" ", 1)[0]
        headers = self._headers()
        if headers is None:
            return self._send(400, protocol.encode_error("malformed request headers"), close=True)
        length = headers.get("content-length", "0")
        if not length.isdigit():
            return self._send(400, protocol.encode_error("content-length is required"), close=True)
        if int(length) > protocol.MAX_BODY:
            message = f"request of {length} bytes is over the {protocol.MAX_BODY} byte limit"
            return self._send(413, protocol.encode_error(message), close=True)
        body = self.rfile.read(int(length))
        if method == "POST" and path == EXIT_PATH:
            self._send(200, b"{}", close=True)
            _exit(self.server.directory)
        if method != "POST" or path != EVENT_PATH:
            return self._send(404, protocol.encode_error(f"no {method} {path}; POST {EVENT_PATH}"))
        match protocol.decode(body):
            case Success(request):
                answer = self.server.bridge.handle(request.event, request.seq)
                return self._send(200, protocol.encode(answer))
            case Failure(why):
                # A request the helper cannot read changes nothing; the mod logs the error and goes on.
                return self._send(400, protocol.encode_error(why))
        return False

    def _headers(self) -> dict[str, str] | None:
        headers: dict[str, str] = {}
        while True:
            line = self.rfile.readline(MAX_LINE + 1)
            if line in (b"\r\n", b"\n"):
                return headers
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or len(line) > MAX_LINE:
                return None
            headers[name.strip().lower()] = value.strip()

    def _send(self, status: int, body: bytes, close: bool = False) -> bool:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Content Too Large"}[status]
        head = (
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: {'close' if close else 'keep-alive'}\r\n\r\n"
        )
        self.wfile.write(head.encode("latin-1") + body)
        self.wfile.flush()
        return not close


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, directory: str, bridge: Bridge) -> None:
        super().__init__(os.path.join(directory, "s"), _Handler)
        self.directory = directory
        self.bridge = bridge


def _watch_parent(directory: str, parent: int) -> None:
    # If the engine itself dies (no SIGTERM), the helper is re-parented, and goes too.
    while os.getppid() == parent:
        time.sleep(1)
    _exit(directory)


def _exit(directory: str) -> None:
    """Leaves at once: the session that ends waits for its children, so a slow exit is its exit time."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(directory, "s"))
        os.rmdir(directory)
    os._exit(0)


def main() -> None:
    """Serves the bridge until the engine ends it."""
    environment = OsEnvironment()
    bridge = Bridge(environment, LichWhoami(LichEnvironment.from_environ(os.environ)))
    directory = tempfile.mkdtemp(prefix="slashkit-")  # mode 0700: only this user reaches the socket
    server = _Server(directory, bridge)
    # The engine ends the helper with SIGTERM when the session exits (measured on 2.1.328). The helper leaves
    # the terminal's process group, so a hangup or an interrupt meant for the engine does not end it first;
    # when the engine goes, the parent watch below ends it.
    with contextlib.suppress(PermissionError):  # already a group leader: started on its own, not by the engine
        os.setsid()
    for ending in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(ending, lambda *_: _exit(directory))
    threading.Thread(target=_watch_parent, args=(directory, os.getppid()), daemon=True).start()
    print(f"READY {server.server_address}", flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        _exit(directory)


if __name__ == "__main__":
    main()
