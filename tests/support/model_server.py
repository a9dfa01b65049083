"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI offline.

Standard library only. A test hands :class:`ModelServer` a script, a list of turns (:func:`text`,
:func:`tool_use` / :func:`tool_uses`, :func:`http_error`), and points the CLI at :attr:`ModelServer.url`
with ``ANTHROPIC_BASE_URL``. Each main-loop request (``POST /v1/messages``) consumes the next turn and is
answered with a standard SSE stream (``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``
per block, ``message_delta`` with ``stop_reason``, ``message_stop``), or a plain JSON message when the
request says ``"stream": false``. Every request is recorded (:attr:`ModelServer.requests`) with its body
parsed, so a test can assert the tool list and descriptions and the messages (tool results) sent.

Side requests do not consume the script (see :func:`classify`):

- the session-title request: no ``tools``, and its system prompt or messages mention a title. From the
  2.1.328 binary (``querySource: generate_session_title``): a tool-free helper request whose system prompt
  ends 'Return JSON with a single "title" field.' and whose ``output_config.format`` is a JSON schema with
  a ``title`` string. It gets ``{"title": <title>}``. Measured on 2.1.328: no title request was made in
  ``-p`` runs nor in an interactive session with this harness's environment (the CLI titles sessions
  only in some modes), so this path is covered by the server's own tests.
- the summary request of ``/compact``: its last user message asks for a "summary of the conversation"
  (2.1.328: "Your task is to create a detailed summary of the conversation so far ..."). Measured: it
  carries the same tools as a main request, so the text alone tells it apart. It gets
  :attr:`ModelServer.summary`, in the ``<analysis>``/``<summary>`` tags the request asks for.
- any other request without tools (a side query) gets :attr:`ModelServer.side_text`, or, when it asks for
  a JSON-schema output, an object with that text in every string property. Measured on 2.1.328:
  ``/rename`` with no name sends one (``claude-haiku-5-5``, schema ``{"name"}``) and renames the
  session to the side text.
- ``POST /v1/messages/count_tokens`` gets ``{"input_tokens": N}`` (measured: ``/context`` sends ~17-27).

Anything else answers 200 (``HEAD``/``GET /``) or 404, so a probe never hangs. The server is also a
guard proxy: pointed at by ``HTTPS_PROXY``/``HTTP_PROXY`` (with ``NO_PROXY=127.0.0.1,localhost``), every
attempt to reach another host arrives here as a ``CONNECT`` or an absolute-URI request, is refused with 403
and recorded as kind ``proxy``, so a test can prove the run stayed offline. The server binds
127.0.0.1 on a free port, serves from a daemon thread, and stops when its context exits or, failing
that, after ``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final, Literal
from urllib.parse import parse_qs, urlsplit

JsonObject = dict[str, Any]
RequestKind = Literal["main", "title", "summary", "side", "count_tokens", "proxy", "other"]

DEFAULT_TITLE: Final = "Scripted test session"
# Measured on 2.1.328: the compact request asks for "an <analysis> block followed by a <summary> block"; an
# answer without the tags is asked for again once (a second summary request) before /compact goes on.
DEFAULT_SUMMARY: Final = (
    "<analysis>Scripted test conversation.</analysis>\n"
    "<summary>The user and the assistant exchanged scripted test messages.</summary>"
)
DEFAULT_SIDE_TEXT: Final = "ok"
UNSCRIPTED_MESSAGE: Final = "slashkit model server: the script has no turn left for this request"
#: The longest a held turn waits for its test (a test that forgets to let go still ends).
HOLD_LIMIT: Final = 120.0

_ERROR_TYPES: Final[Mapping[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

# The /compact request's last user message (2.1.328): "Your task is to create a detailed summary of the
# conversation so far ...". Matched loosely so a rewording of the prompt still counts.
_SUMMARY_ASK: Final = re.compile(r"\bsummary of (the|this) conversation\b", re.IGNORECASE)
_TITLE_WORD: Final = re.compile(r"\btitle\b", re.IGNORECASE)


# --- the script -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextTurn:
    """The model answers with one text block and ends its turn (``stop_reason: end_turn``), after waiting
    ``delay`` seconds (a slow model, so a test can act while the turn runs), and, when ``hold`` is given,
    until the test sets it (at most :data:`HOLD_LIMIT` seconds): a turn that runs exactly as long as the
    test needs, whatever the machine's load."""

    text: str
    delay: float = 0.0
    hold: threading.Event | None = None


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block: the tool's name as the CLI lists it, and its input."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class ToolUseTurn:
    """The model calls one or more tools (``stop_reason: tool_use``), after an optional text block."""

    calls: tuple[ToolCall, ...]
    text: str | None = None


@dataclass(frozen=True)
class ErrorTurn:
    """The request fails with an HTTP status and an Anthropic error body."""

    status: int = 500
    message: str = "scripted error"
    error_type: str | None = None  # default: the API's type for the status (500 → api_error)


Turn = TextTurn | ToolUseTurn | ErrorTurn


def text(answer: str, *, delay: float = 0.0, hold: threading.Event | None = None) -> TextTurn:
    return TextTurn(answer, delay, hold)


def tool_use(name: str, input: Mapping[str, Any] | None = None, *, text: str | None = None) -> ToolUseTurn:
    return ToolUseTurn((ToolCall(name, dict(input or {})),), text)


def tool_uses(*calls: ToolCall | tuple[str, Mapping[str, Any]], text: str | None = None) -> ToolUseTurn:
    made = tuple(c if isinstance(c, ToolCall) else ToolCall(c[0], dict(c[1])) for c in calls)
    if not made:
        raise ValueError("tool_uses needs at least one call")
    return ToolUseTurn(made, text)


def http_error(status: int = 500, message: str = "scripted error", error_type: str | None = None) -> ErrorTurn:
    return ErrorTurn(status, message, error_type)


# --- what was asked ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. ``body`` is the parsed JSON body (None when absent or not JSON)."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: JsonObject | None
    kind: RequestKind
    at: float
    turn: Turn | None = None  # the scripted turn that answered it (main requests only)
    turn_index: int | None = None

    @property
    def tools(self) -> list[JsonObject]:
        tools = (self.body or {}).get("tools") or []
        return [t for t in tools if isinstance(t, dict)]

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.tools]

    def tool(self, name: str) -> JsonObject | None:
        return next((t for t in self.tools if t.get("name") == name), None)

    @property
    def messages(self) -> list[JsonObject]:
        messages = (self.body or {}).get("messages") or []
        return [m for m in messages if isinstance(m, dict)]

    @property
    def system_text(self) -> str:
        return _flatten_text((self.body or {}).get("system"))

    def tool_results(self) -> list[JsonObject]:
        """Every ``tool_result`` block of the user messages, oldest first."""
        return [
            block
            for m in self.messages
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _flatten_text(m.get("content"))
        return ""

    def all_text(self) -> str:
        """System and message texts of the request, joined: handy for `in` assertions."""
        return "\n".join([self.system_text, *(_flatten_text(m.get("content")) for m in self.messages)])


def _flatten_text(value: object) -> str:
    """The text of a system prompt or message content: a string, or text/tool_result blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts: list[str] = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "tool_result":
                    parts.append(_flatten_text(block.get("content")))
        return "\n".join(parts)
    return ""


def classify(method: str, path: str, body: JsonObject | None) -> RequestKind:
    """Which kind of request this is; only ``main`` consumes a scripted turn.

    - ``count_tokens``: ``POST /v1/messages/count_tokens``.
    - ``summary``: a messages request whose last user message asks to create/write a summary (the
      ``/compact`` request, which carries tools like a main request).
    - ``title``: a messages request with no tools whose system prompt or messages mention a title.
    - ``side``: any other messages request with no tools (a small side query).
    - ``main``: any other messages request (it carries the tool list).
    - ``proxy``: a ``CONNECT`` or an absolute-URI request (an attempt to reach another host).
    - ``other``: anything else (probes).
    """
    if method == "CONNECT" or path.startswith(("http://", "https://")):
        return "proxy"
    route = urlsplit(path).path.rstrip("/")
    if method != "POST" or (not route.endswith("/v1/messages") and not route.endswith("/count_tokens")):
        return "other"
    if route.endswith("/count_tokens"):
        return "count_tokens"
    probe = RecordedRequest(method, path, {}, {}, body, "other", 0.0)
    if _SUMMARY_ASK.search(probe.last_user_text()):
        return "summary"
    if not probe.tools:
        return "title" if _TITLE_WORD.search(probe.all_text()) else "side"
    return "main"


# --- answers ---------------------------------------------------------------------------------------


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _approx_tokens(body: JsonObject | None) -> int:
    return max(1, len(json.dumps(body or {})) // 4)


@dataclass(frozen=True)
class _Block:
    type: Literal["text", "tool_use"]
    text: str = ""
    name: str = ""
    id: str = ""
    input: Mapping[str, Any] = field(default_factory=dict)


def _blocks_of(turn: TextTurn | ToolUseTurn) -> tuple[list[_Block], str]:
    if isinstance(turn, TextTurn):
        return [_Block("text", text=turn.text)], "end_turn"
    blocks = [_Block("text", text=turn.text)] if turn.text else []
    blocks += [_Block("tool_use", name=c.name, id=c.id or _new_id("toolu"), input=c.input) for c in turn.calls]
    return blocks, "tool_use"


def _message(model: str, blocks: Sequence[_Block], stop_reason: str, input_tokens: int) -> JsonObject:
    content: list[JsonObject] = [
        {"type": "text", "text": b.text}
        if b.type == "text"
        else {"type": "tool_use", "id": b.id, "name": b.name, "input": dict(b.input)}
        for b in blocks
    ]
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": _output_tokens(blocks)},
    }


def _output_tokens(blocks: Sequence[_Block]) -> int:
    return max(1, sum(len(b.text) + len(json.dumps(dict(b.input))) for b in blocks) // 4)


def _sse_events(model: str, blocks: Sequence[_Block], stop_reason: str, input_tokens: int) -> Iterator[JsonObject]:
    start = _message(model, [], stop_reason, input_tokens)
    start.update(stop_reason=None, content=[])
    start["usage"] = {"input_tokens": input_tokens, "output_tokens": 1}
    yield {"type": "message_start", "message": start}
    for index, b in enumerate(blocks):
        if b.type == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for piece in _pieces(b.text):
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
        else:
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": b.id, "name": b.name, "input": {}},
            }
            for piece in _pieces(json.dumps(dict(b.input))):
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece},
                }
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": _output_tokens(blocks)},
    }
    yield {"type": "message_stop"}


def _pieces(s: str, size: int = 40) -> list[str]:
    """A text cut in a few deltas, as the API streams it (an empty text still gets one delta)."""
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def _output_schema(body: JsonObject | None) -> JsonObject | None:
    """The JSON schema a request asks its answer to follow (``output_format`` or ``output_config.format``)."""
    body = body or {}
    config = body.get("output_config")
    fmt = body.get("output_format") or (config.get("format") if isinstance(config, dict) else None)
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        if isinstance(schema, dict):
            return schema
    return None


_EMPTY_BY_TYPE: Final[Mapping[str, object]] = {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}


def _schema_answer(body: JsonObject | None, value: str) -> JsonObject | None:
    """A JSON object for a request with a JSON-schema output format: every string property gets ``value``
    (the title request of 2.1.328 asks for ``{"title"}``, the /rename name request for ``{"name"}``)."""
    schema = _output_schema(body)
    if schema is None:
        return None
    props = schema.get("properties")
    answer: JsonObject = {}
    for name, spec in (props if isinstance(props, dict) else {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        answer[str(name)] = _EMPTY_BY_TYPE.get(str(kind), value)
    return answer


def _error_body(turn: ErrorTurn) -> JsonObject:
    kind = turn.error_type or _ERROR_TYPES.get(turn.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": turn.message}}


# --- the server ------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    def do_HEAD(self) -> None:
        self._simple("HEAD")

    def do_GET(self) -> None:
        self._simple("GET")

    def do_PUT(self) -> None:
        self._simple("PUT")

    def do_DELETE(self) -> None:
        self._simple("DELETE")

    def do_OPTIONS(self) -> None:
        self._simple("OPTIONS")

    def do_CONNECT(self) -> None:
        self._simple("CONNECT")

    def do_POST(self) -> None:
        owner = self.server.owner
        body = self._read_body()
        kind = classify("POST", self.path, body)
        if kind == "proxy":
            owner._record(self, body, kind)
            self._refuse()
            return
        if kind == "other":
            owner._record(self, body, kind)
            self._json(
                HTTPStatus.NOT_FOUND, {"type": "error", "error": {"type": "not_found_error", "message": "no route"}}
            )
            return
        if kind == "count_tokens":
            owner._record(self, body, kind)
            self._json(HTTPStatus.OK, {"input_tokens": _approx_tokens(body)})
            return
        model = str((body or {}).get("model") or "claude-scripted")
        stream = (body or {}).get("stream") is True
        turn: Turn
        if kind == "main":
            turn = owner._take_turn(self, body)
        elif kind == "title":
            owner._record(self, body, kind)
            turn = TextTurn(json.dumps(_schema_answer(body, owner.title) or {"title": owner.title}))
        elif kind == "summary":
            owner._record(self, body, kind)
            turn = TextTurn(owner.summary)
        else:
            owner._record(self, body, kind)
            answer = _schema_answer(body, owner.side_text)
            turn = TextTurn(owner.side_text if answer is None else json.dumps(answer))
        if isinstance(turn, ErrorTurn):
            self._json(turn.status, _error_body(turn))
            return
        if isinstance(turn, TextTurn) and turn.delay:
            time.sleep(turn.delay)
        if isinstance(turn, TextTurn) and turn.hold is not None:
            turn.hold.wait(HOLD_LIMIT)
        blocks, stop_reason = _blocks_of(turn)
        tokens = _approx_tokens(body)
        if not stream:
            self._json(HTTPStatus.OK, _message(model, blocks, stop_reason, tokens))
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", _new_id("req"))
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for event in _sse_events(model, blocks, stop_reason, tokens):
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()

    def _read_body(self) -> JsonObject | None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def _refuse(self) -> None:
        """An attempt to reach another host through this server as a proxy: refused."""
        self.send_response(HTTPStatus.FORBIDDEN, "offline test: no host but 127.0.0.1")
        self.send_header("content-length", "0")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _simple(self, method: str) -> None:
        kind = classify(method, self.path, None)
        self.server.owner._record(self, None, kind)
        if kind == "proxy":
            self._refuse()
            return
        route = urlsplit(self.path).path
        status = HTTPStatus.OK if route in ("", "/") else HTTPStatus.NOT_FOUND
        payload = b"" if status == HTTPStatus.OK else b'{"type":"error","error":{"type":"not_found_error"}}'
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, payload: JsonObject) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _new_id("req"))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    #: socketserver's default backlog of 5 overflows when many sessions connect at once (30 `claude -p` runs made
    #: ~1,300 TCP listen overflows a round): each dropped connection waits out a SYN retransmit of 1 s, 2 s, 4 s...,
    #: which spread the rounds of `sessions_at_once` several-fold for any plugin.
    request_queue_size = 1024

    def __init__(self, owner: ModelServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class ModelServer:
    """The scripted API. Use as a context manager; :meth:`stop` is idempotent.

    ``script`` holds the main-loop turns in order. When it runs out, a main request is answered with a
    500 error (``UNSCRIPTED_MESSAGE``) and counted in :attr:`unscripted`, so a test can see it asked
    for more than it scripted.
    """

    def __init__(
        self,
        script: Sequence[Turn] = (),
        *,
        title: str = DEFAULT_TITLE,
        summary: str = DEFAULT_SUMMARY,
        side_text: str = DEFAULT_SIDE_TEXT,
        idle_timeout: float = 300.0,
    ) -> None:
        self.title = title
        self.summary = summary
        self.side_text = side_text
        self.idle_timeout = idle_timeout
        self._script: list[Turn] = list(script)
        self._next = 0
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self.unscripted = 0
        self._last_activity = time.monotonic()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._stopped = threading.Event()

    # lifecycle

    def start(self) -> ModelServer:
        if self._server is not None:
            return self
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="model-server", daemon=True
        )
        self._thread.start()
        self._watchdog = threading.Thread(target=self._watch_idle, name="model-server-idle", daemon=True)
        self._watchdog.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._server is not None

    def _watch_idle(self) -> None:
        while not self._stopped.wait(0.5):
            with self._lock:
                idle = time.monotonic() - self._last_activity
            if idle > self.idle_timeout:
                self.stop()
                return

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the model server is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The value for ANTHROPIC_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    # the script

    def add(self, *turns: Turn) -> None:
        """Append turns to the script (e.g. between two prompts of a streaming session)."""
        with self._lock:
            self._script.extend(turns)

    @property
    def turns_left(self) -> int:
        with self._lock:
            return len(self._script) - self._next

    # what was asked

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def of_kind(self, *kinds: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind in kinds]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.of_kind("main")

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> list[RecordedRequest]:
        """Block until ``predicate(requests)`` is true; raise TimeoutError naming what arrived."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(list(self._requests)):
                left = deadline - time.monotonic()
                if left <= 0:
                    kinds = [f"{r.method} {r.path} ({r.kind})" for r in self._requests]
                    raise TimeoutError(f"model server: condition not met after {timeout}s; requests: {kinds}")
                self._lock.wait(left)
            return list(self._requests)

    def describe(self) -> str:
        """A short listing of the requests, for failure messages."""
        return "\n".join(
            f"{r.method} {r.path} kind={r.kind} model={(r.body or {}).get('model')} tools={len(r.tools)}"
            for r in self.requests
        )

    # handler side

    def _record(
        self,
        handler: BaseHTTPRequestHandler,
        body: JsonObject | None,
        kind: RequestKind,
        turn: Turn | None = None,
        turn_index: int | None = None,
    ) -> None:
        with self._lock:
            self._append(handler, body, kind, turn, turn_index)

    def _append(
        self,
        handler: BaseHTTPRequestHandler,
        body: JsonObject | None,
        kind: RequestKind,
        turn: Turn | None,
        turn_index: int | None,
    ) -> None:
        split = urlsplit(handler.path)
        self._requests.append(
            RecordedRequest(
                method=handler.command,
                path=handler.path,
                query=parse_qs(split.query),
                headers={k.lower(): v for k, v in handler.headers.items()},
                body=body,
                kind=kind,
                at=time.monotonic(),
                turn=turn,
                turn_index=turn_index,
            )
        )
        self._last_activity = time.monotonic()
        self._lock.notify_all()

    def _take_turn(self, handler: BaseHTTPRequestHandler, body: JsonObject | None) -> Turn:
        with self._lock:
            if self._next < len(self._script):
                index = self._next
                turn = self._script[index]
                self._next += 1
                self._append(handler, body, "main", turn, index)
                return turn
            self.unscripted += 1
            self._append(handler, body, "main", None, None)
            return ErrorTurn(500, UNSCRIPTED_MESSAGE)
