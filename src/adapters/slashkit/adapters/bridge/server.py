"""The helper's server: HTTP/1.1 on the unix socket `slashkit.adapters.bridge.helper` listens on, each request
read within its bounds and handed to the bridge, one connection per thread.

HTTP/1.1 is read by h11, a small parser that does no I/O, so every read below has its bound and its timeout
here. Chosen over the standard library's `http.server` for the helper's start, which is on the first chain's
path: on top of what the helper imports anyway, h11 costs ~7 ms and `http.server` ~15 ms (it pulls in
`http.client`, `email` and `ssl`), measured with `python -X importtime` on CPython 3.11.7.
"""

import contextlib
import os
import resource
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Final
from urllib.parse import parse_qs

import h11
from returns.result import Failure, Success

from slashkit.adapters.bridge import protocol
from slashkit.adapters.bridge.bridge import MAX_SEQ_AHEAD, Bridge, LateEvent
from slashkit.adapters.bridge.helper import leave
from slashkit.adapters.bridge.sessions import SESSION_ID, Full, Sessions

EVENT_PATH: Final = b"/v1/event"
EXIT_PATH: Final = b"/v1/exit"
#: The shared helper's: a session opens (naming itself: `?session=ID`, as its events and its exit do).
OPEN_PATH: Final = b"/v1/open"
#: A host waits here for the end of a shell step the helper runs (`{"token": N}`): answered once it ended.
SHELL_PATH: Final = b"/v1/shell"

# Bounds. The mod's requests are a request line, about six headers and a body of a few KiB.

#: Longest request line, and longest head (request line and headers together), in bytes.
MAX_REQUEST_LINE: Final = 8 << 10
MAX_HEAD: Final = 16 << 10
MAX_HEADERS: Final = 100
#: Connections open at once (fewer when the helper may open fewer than twice as many files). The engine's fetch
#: keeps one alive and opens more only for requests in parallel.
MAX_CONNECTIONS: Final = 32
#: Seconds a request may take from its first byte to its last, and its answer to be written.
REQUEST_S: Final = 2.0
#: Seconds a kept-alive connection may sit idle between requests. The engine's fetch reuses an idle connection,
#: and opens a new one once the helper closed it (measured on Claude Code 2.1.328: with this cut to 1 s, two
#: chains whose model turns took 3 s each ran to their end over five connections). Generous all the same: a
#: close that crosses the next request on its way is a race the engine's fetch is not known to retry.
IDLE_S: Final = 600.0
#: Pause after `accept` failed (descriptors exhausted), instead of spinning on a listener that stays readable.
ACCEPT_PAUSE_S: Final = 0.1
#: How often the shared helper looks for sessions whose host is gone, and whether it has been idle long enough.
REAP_S: Final = 1.0

_REASONS: Final = {
    200: b"OK",
    400: b"Bad Request",
    403: b"Forbidden",
    404: b"Not Found",
    409: b"Conflict",
    410: b"Gone",
    413: b"Content Too Large",
    500: b"Internal Server Error",
    503: b"Service Unavailable",
}


class _Refusal(Exception):
    """A request the helper answers with an error and then closes the connection on."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


class _Gone(Exception):
    """The connection ended between requests: closed by its peer, idle too long, or closed to make room."""


class _Connection:
    """One connection from the engine: requests are read and answered in turn, within the bounds above."""

    def __init__(self, sock: socket.socket, server: "_Server", peer: int) -> None:
        self.sock = sock
        self.server = server
        #: The process at the other end (SO_PEERCRED), which a session it opens ends with.
        self.peer = peer
        self.http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        #: When the request being read must be complete; None between requests.
        self.deadline: float | None = None
        #: Since when the connection waits for a request; None while one is read or answered.
        self.idle_since: float | None = time.monotonic()

    def serve(self) -> None:
        try:
            while self._one_request():
                pass
        except (_Gone, OSError, h11.LocalProtocolError):
            pass  # nothing to answer, no one left to answer, or no answer h11 lets the helper write
        finally:
            self.server.closed(self)
            self.sock.close()

    def _one_request(self) -> bool:
        try:
            method, target, body = self._read_request()
        except h11.RemoteProtocolError as err:
            # h11 hints 431 for a head that outgrew its buffer before it ended.
            why = f"request head is longer than {MAX_HEAD} bytes" if err.error_status_hint == 431 else err
            return self._send(400, f"malformed request: {why}", close=True)
        except _Refusal as refusal:
            return self._send(refusal.status, refusal.why, close=True)
        path, _, query = target.partition(b"?")
        sessions = self.server.sessions
        sid = _session_id(query)
        if (method, path) == (b"POST", EXIT_PATH):
            if sessions is not None and sid is not None:
                sessions.close(sid)  # one session never ends the helper the others share: its own session goes
            self._send(200, None, close=True)
            if sessions is None:
                self.server.leave()
            return False
        if method == b"HEAD":
            return self._write(404, b"")  # an answer to HEAD has no body (RFC 9110): the status says it all
        if sessions is not None and (method, path) == (b"POST", OPEN_PATH):
            return self._open(sessions, sid, body)
        if method != b"POST" or path not in (EVENT_PATH, SHELL_PATH):
            asked = f"{method.decode('latin-1')} {target.decode('latin-1')}"
            return self._send(404, f"no {asked}; POST {EVENT_PATH.decode()}")
        bridge = self.server.bridge if sessions is None else None if sid is None else sessions.get(sid)
        if bridge is None:
            return self._send(410, f"this helper has no session {sid!r}: open it first")
        if path == SHELL_PATH:
            return self._shell(bridge, body)
        return self._event(bridge, body)

    def _shell(self, bridge: Bridge, body: bytes) -> bool:
        """Answers once the shell step named by the body's token ended: `{"error": why or null, "output": text}`."""
        match protocol.load_json(body):
            case Success({"token": int(token)} as given) if type(token) is int and token > 0 and len(given) == 1:
                pass
            case _:
                return self._send(400, 'a shell request is {"token": N}, N a shell effect\'s token')
        self.server.busy(self)
        ended = bridge.shell_ended(token)
        if ended is None:
            return self._send(404, f"this session runs no shell step {token}")
        return self._write(200, protocol.encode_shell(ended.error, ended.output))

    def _open(self, sessions: Sessions, sid: str | None, body: bytes) -> bool:
        """Opens a session of the shared helper."""
        if sid is None:
            return self._send(400, "no session named: ?session= 1 to 64 letters, digits, _ or -")
        try:
            opened = sessions.open(sid, body, self.peer)
        except Full as full:
            return self._send(503, str(full))
        match opened:
            case Failure(why):
                return self._send(400, why)
        return self._send(200, None)

    def _event(self, bridge: Bridge, body: bytes) -> bool:
        match protocol.decode(body):
            case Success(request) if not bridge.reaches(request.seq):
                why = f"seq {request.seq} is more than {MAX_SEQ_AHEAD} past the {bridge.version} events handled"
                return self._send(400, why)
            case Success(request):
                try:
                    answer = protocol.encode(bridge.handle(request.event, request.seq))
                except LateEvent as late:
                    return self._send(409, str(late))
                except Exception as err:  # a fault of the helper's own: answered, not a closed connection
                    traceback.print_exc(file=sys.stderr)
                    return self._send(500, f"the helper failed on {type(request.event).__name__}: {err!r}")
                return self._write(200, answer)
            case Failure(why):
                # A request the helper cannot read changes nothing; the mod logs the error and goes on.
                bridge.refused(protocol.seq_of(body))
                return self._send(400, why)
        return False

    def _read_request(self) -> tuple[bytes, bytes, bytes]:
        """Reads one whole request: its method, its target and its body."""
        request = self._next_event()
        if not isinstance(request, h11.Request):
            raise _Gone()  # ConnectionClosed: h11 says nothing else before a request
        _check_head(request)
        length = next((int(v) for n, v in request.headers if n == b"content-length"), 0)
        if length > protocol.MAX_BODY:
            raise _Refusal(413, f"request of {length} bytes is over the {protocol.MAX_BODY} byte limit")
        body = bytearray()
        while isinstance(part := self._next_event(), h11.Data):
            body += part.data
            if len(body) > protocol.MAX_BODY:
                raise _Refusal(413, f"request is over the {protocol.MAX_BODY} byte limit")
        return request.method, request.target, bytes(body)

    def _next_event(self) -> h11.Event:
        while (event := self.http.next_event()) is h11.NEED_DATA:
            self.http.receive_data(self._receive())
        if not isinstance(event, h11.Event):
            raise _Gone()  # PAUSED: h11 says it past a whole request only, and the helper answers one first
        return event

    def _receive(self) -> bytes:
        self.sock.settimeout(self._wait())
        try:
            data = self.sock.recv(64 << 10)
        except TimeoutError:
            if self.deadline is None:
                raise _Gone() from None
            raise _Refusal(400, f"request not complete within {REQUEST_S:g} s") from None
        # A peer that sends a byte at a time never lets a read time out: the deadline is checked after each.
        if time.monotonic() > self._started():
            raise _Refusal(400, f"request not complete within {REQUEST_S:g} s")
        return data

    def _wait(self) -> float:
        """How long the next read may wait: idle time between requests, what is left of the deadline within one."""
        if self.deadline is None:
            return IDLE_S
        return max(self.deadline - time.monotonic(), 0.001)

    def _started(self) -> float:
        """The deadline of the request being read, set by its first bytes."""
        if self.deadline is None:
            self.deadline = time.monotonic() + REQUEST_S
            self.server.busy(self)
        return self.deadline

    def _send(self, status: int, why: str | None, close: bool = False) -> bool:
        return self._write(status, b"{}" if why is None else protocol.encode_error(_one_line(why)), close)

    def _write(self, status: int, body: bytes, close: bool = False) -> bool:
        """Writes one answer; tells whether the connection goes on to the next request."""
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if close:
            headers.append((b"connection", b"close"))
        response = h11.Response(status_code=status, headers=headers, reason=_REASONS[status])
        self.sock.settimeout(REQUEST_S)
        self.sock.sendall(
            b"".join(self.http.send(e) or b"" for e in (response, h11.Data(data=body), h11.EndOfMessage()))
        )
        if close or self.http.our_state is not h11.DONE or self.http.their_state is not h11.DONE:
            return False
        self.http.start_next_cycle()
        self.deadline = None
        self.server.idle(self)
        return True


def _check_head(request: h11.Request) -> None:
    """Refuses a head past the bounds: h11 bounds a head it has not seen whole, not one that came in one read."""
    line = len(request.method) + len(request.target) + len(b"  HTTP/1.1")
    if line > MAX_REQUEST_LINE:
        raise _Refusal(400, f"request line is longer than {MAX_REQUEST_LINE} bytes")
    if len(request.headers) > MAX_HEADERS:
        raise _Refusal(400, f"request has more than {MAX_HEADERS} header lines")
    if line + sum(len(name) + len(value) + 4 for name, value in request.headers) > MAX_HEAD:
        raise _Refusal(400, f"request head is longer than {MAX_HEAD} bytes")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _session_id(query: bytes) -> str | None:
    """The session a request names (`?session=ID`), when it names one well."""
    named = parse_qs(query.decode("latin-1")).get("session", [])
    return named[0] if len(named) == 1 and SESSION_ID.fullmatch(named[0]) else None


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The process and the user at the other end of a unix socket, as the kernel saw them connect."""
    pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


class _Server:
    """The listening socket, the bridge (or the shared helper's sessions), and the connections open on it."""

    def __init__(
        self, listener: socket.socket, bridge: Bridge | None, sessions: Sessions | None, leave: Callable[[], None]
    ) -> None:
        self.bridge = bridge
        self.sessions = sessions
        self.leave = leave
        self.listener = listener
        self._open: set[_Connection] = set()
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.room = MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else max(1, min(MAX_CONNECTIONS, soft // 2))
        self._lock = threading.Lock()

    def serve_forever(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
                pid, uid = _peer(sock)
            except OSError:
                time.sleep(ACCEPT_PAUSE_S)
                continue
            if uid != os.getuid():
                _refuse(sock, 403, f"uid {uid} is not this helper's user")
                continue
            connection = _Connection(sock, self, pid)
            if not self._admit(connection):
                _refuse(sock, 503, f"all {self.room} connections are busy")
                continue
            threading.Thread(target=connection.serve, daemon=True).start()

    def _admit(self, connection: _Connection) -> bool:
        """Makes room for a new connection by closing the one idle longest, if all are taken."""
        with self._lock:
            if len(self._open) >= self.room:
                idle = [c for c in self._open if c.idle_since is not None]
                if not idle:
                    return False
                oldest = min(idle, key=lambda c: c.idle_since or 0.0)
                self._open.discard(oldest)
                with contextlib.suppress(OSError):
                    oldest.sock.shutdown(socket.SHUT_RDWR)  # its read ends, and its thread with it
            self._open.add(connection)
            return True

    def busy(self, connection: _Connection) -> None:
        with self._lock:
            connection.idle_since = None

    def idle(self, connection: _Connection) -> None:
        with self._lock:
            connection.idle_since = time.monotonic()

    def closed(self, connection: _Connection) -> None:
        with self._lock:
            self._open.discard(connection)


def _refuse(sock: socket.socket, status: int, why: str) -> None:
    """Answers a connection the helper does not serve (no room for it, another user's), then closes it."""
    http = h11.Connection(h11.SERVER)
    body = protocol.encode_error(why)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers.append((b"connection", b"close"))
    with contextlib.suppress(OSError), sock:
        sock.settimeout(REQUEST_S)
        head = h11.Response(status_code=status, headers=headers, reason=_REASONS[status])
        sock.sendall((http.send(head) or b"") + body)


def serve(directory: str, listener: socket.socket, bridge: Bridge) -> None:
    """Serves the bridge of one session on a listening socket until the host ends the helper."""

    def left() -> None:
        bridge.close()
        leave(directory)

    try:
        _Server(listener, bridge, None, left).serve_forever()
    finally:
        left()


def serve_shared(listener: socket.socket, idle_s: float, leave_shared: Callable[[], None]) -> None:
    """Serves every session that opens on the shared helper's socket; leaves once none was open for `idle_s`."""
    sessions = Sessions()

    def left() -> None:
        sessions.close_all()
        leave_shared()

    threading.Thread(target=_reap, args=(sessions, idle_s, left), daemon=True).start()
    try:
        _Server(listener, None, sessions, left).serve_forever()
    finally:
        left()


def _reap(sessions: Sessions, idle_s: float, leave_shared: Callable[[], None]) -> None:
    while True:
        time.sleep(min(REAP_S, idle_s))
        sessions.reap()
        empty = sessions.empty_since
        if empty is not None and time.monotonic() - empty >= idle_s:
            leave_shared()
