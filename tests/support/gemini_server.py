"""A scripted Gemini API (`generativelanguage`, v1beta) on 127.0.0.1, for driving the real Gemini CLI offline.

Standard library only. A test hands :class:`GeminiServer` a script of turns (:func:`text`, :func:`call`,
:func:`http_error`) and points the CLI at :attr:`GeminiServer.url` with ``GOOGLE_GEMINI_BASE_URL``. Each
``:streamGenerateContent`` request (the CLI's main loop, measured on 0.61.0) takes the next turn and is answered
with one server-sent event holding the whole candidate; ``:generateContent`` (a side query, e.g. the check of who
speaks next) is answered without taking a turn, with an object shaped by the schema it asks for (the first of an
enum's values, ``side_text`` in every string); ``:countTokens`` with a count. Every request is recorded with its
body parsed. The server binds 127.0.0.1 on a free port, serves from daemon threads, and stops when its context
exits or, failing that, after ``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, Literal

from tests.support.local_server import LocalServer

JsonObject = dict[str, Any]
Kind = Literal["main", "side", "count", "other"]

UNSCRIPTED: Final = "UNSCRIPTED: the script has no turn left"
_STATUS: Final = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 500: "INTERNAL"}


@dataclass(frozen=True)
class Text:
    """The model answers with this text and ends its turn; with `hold`, only once it is set (a test can kill the
    CLI while the model is still "thinking")."""

    text: str
    hold: threading.Event | None = None


@dataclass(frozen=True)
class Call:
    """The model calls a function (a tool, by the name the CLI declared) with these arguments."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Failure:
    """The request fails with this HTTP status and a Google API error body."""

    status: int
    message: str


Turn = Text | Call | Failure


def text(answer: str, hold: threading.Event | None = None) -> Text:
    return Text(answer, hold)


def call(name: str, args: Mapping[str, Any] | None = None) -> Call:
    return Call(name, dict(args or {}))


def http_error(status: int = 400, message: str = "scripted error") -> Failure:
    return Failure(status, message)


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    path: str
    body: JsonObject | None
    kind: Kind

    @property
    def texts(self) -> list[str]:
        """The text of each part of each message (`contents`), in order."""
        contents = (self.body or {}).get("contents") or []
        return [part.get("text", "") for message in contents for part in message.get("parts") or [] if "text" in part]

    @property
    def all_text(self) -> str:
        return "\n".join(self.texts)

    @property
    def tool_names(self) -> list[str]:
        tools = (self.body or {}).get("tools") or []
        return [f.get("name", "") for tool in tools for f in tool.get("functionDeclarations") or []]


def kind_of(path: str) -> Kind:
    if path.split("?")[0].endswith(":streamGenerateContent"):
        return "main"
    if path.split("?")[0].endswith(":generateContent"):
        return "side"
    return "count" if ":countTokens" in path else "other"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    def do_GET(self) -> None:
        self._json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(min(length, 64 * 1024 * 1024))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        kind = kind_of(self.path)
        owner = self.server.owner
        owner.record(Request(self.path, body if isinstance(body, dict) else None, kind))
        if kind == "count":
            self._json(200, {"totalTokens": max(1, len(raw) // 4)})
        elif kind == "side":
            self._json(200, _candidate({"text": json.dumps(_schema_answer(body, owner.side_text))}))
        elif kind == "main":
            self._answer(owner.next_turn())
        else:
            self._json(404, {"error": {"code": 404, "message": "not here", "status": "NOT_FOUND"}})

    def _answer(self, turn: Turn) -> None:
        if isinstance(turn, Failure):
            status = _STATUS.get(turn.status, "UNKNOWN")
            self._json(turn.status, {"error": {"code": turn.status, "message": turn.message, "status": status}})
            return
        if isinstance(turn, Text) and turn.hold is not None:
            turn.hold.wait()
        part = (
            {"text": turn.text} if isinstance(turn, Text) else {"functionCall": {"name": turn.name, "args": turn.args}}
        )
        event = f"data: {json.dumps(_candidate(part))}\r\n\r\n".encode()
        # A held turn's CLI may have been killed meanwhile: nobody is left to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(event)))
            self.end_headers()
            self.wfile.write(event)

    def _json(self, status: int, payload: JsonObject) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _candidate(part: JsonObject) -> JsonObject:
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    }


def _schema_answer(body: object, side_text: str) -> object:
    config = (body or {}).get("generationConfig", {}) if isinstance(body, dict) else {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return _fill(schema, side_text) if isinstance(schema, dict) else side_text


def _fill(schema: Mapping[str, Any], side_text: str) -> object:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _fill(sub, side_text) for name, sub in properties.items() if isinstance(sub, dict)}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    return False if kind == "boolean" else side_text


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: GeminiServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class GeminiServer(LocalServer):
    """The scripted API, as a context manager. A main request past the script's end gets :data:`UNSCRIPTED`."""

    def __init__(self, script: Sequence[Turn] = (), *, side_text: str = "ok", idle_timeout: float = 300.0) -> None:
        super().__init__(idle_timeout)
        self.side_text = side_text
        self._script = list(script)
        self._lock = threading.Lock()
        self._requests: list[Request] = []

    def _made(self) -> _Server:
        return _Server(self)

    @property
    def url(self) -> str:
        """The value for GOOGLE_GEMINI_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    def record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)
            self.heard()

    def next_turn(self) -> Turn:
        with self._lock:
            return self._script.pop(0) if self._script else Text(UNSCRIPTED)

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    @property
    def main(self) -> list[Request]:
        """The main loop's requests, in order."""
        return [r for r in self.requests if r.kind == "main"]
