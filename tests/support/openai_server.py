"""A scripted OpenAI API on 127.0.0.1, chat completions for driving the real opencode offline and the Responses
API for the real Codex CLI.

Standard library only. A test hands :class:`OpenAIServer` a script, a list of turns (:func:`text`,
:func:`tool_call`, :func:`http_error`), and points opencode's `@ai-sdk/openai-compatible` provider at
:attr:`OpenAIServer.url` (see tests/support/opencode_cli.py). Each main request (`POST
/v1/chat/completions`) consumes the next turn and is answered with an SSE stream of `chat.completion.chunk`
objects (content deltas, or `delta.tool_calls`, then a chunk with `finish_reason`, then `data: [DONE]`), or
one JSON object when the request says `"stream": false`. Every request is recorded with its body parsed.

Two side requests do not consume the script (measured on opencode 1.18.33): the small model's session title,
whose system prompt says "You are a title generator", gets :attr:`title`; compaction's, whose system prompt
says "You are a context summarization agent", gets :attr:`summary`. A
request for a turn the script does not hold gets a 400 (opencode errors the turn at once; a 5xx would be
retried for ~70 s, measured on 1.18.33). Anything else answers 404.

The Responses API (`POST /v1/responses`, what Codex sends with `wire_api = "responses"`; shapes measured on Codex
0.169.0, docs/codex.md) takes turns from the same script and answers each with the Responses SSE events
(`response.created`, `response.output_item.added`, text deltas, `response.output_item.done`,
`response.completed`). A compaction request (its `x-codex-turn-metadata` header says `request_kind:
"compaction"`) is kind `summary` and gets :attr:`summary`. A text turn with `hold` waits until the test sets it
(at most HOLD_LIMIT seconds), so a test can interrupt a turn that is surely running.

The server binds 127.0.0.1 on a free port, serves from daemon threads, and stops when its context exits or after
`idle_timeout` seconds without a request.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, Literal

from tests.support.local_server import LocalServer

JsonObject = dict[str, Any]
RequestKind = Literal["main", "title", "summary", "other"]
#: The longest a held turn waits for its test.
HOLD_LIMIT: Final = 120.0

#: What the small model's title request holds in its system prompt (measured on opencode 1.18.33).
TITLE_MARK: Final = "title generator"
#: What the compaction request's system prompt says (measured on opencode 1.18.33: `session.summarize`).
SUMMARY_MARK: Final = "context summarization agent"
UNSCRIPTED: Final = "slashkit openai server: the script has no turn left for this request"

# --- the script -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextTurn:
    """The model answers with this text and ends its turn (`finish_reason: stop`), after `delay` seconds and, when
    `hold` is given, once the test sets it (at most HOLD_LIMIT seconds)."""

    text: str
    delay: float = 0.0
    hold: threading.Event | None = None


@dataclass(frozen=True)
class ToolTurn:
    """The model calls one tool (`finish_reason: tool_calls`)."""

    name: str
    arguments: Mapping[str, Any]
    delay: float = 0.0


@dataclass(frozen=True)
class ErrorTurn:
    """The request fails with this HTTP status and an OpenAI error body."""

    status: int = 400
    message: str = "scripted error"


Turn = TextTurn | ToolTurn | ErrorTurn


def text(answer: str, *, delay: float = 0.0, hold: threading.Event | None = None) -> TextTurn:
    return TextTurn(answer, delay, hold)


def tool_call(name: str, arguments: Mapping[str, Any] | None = None, *, delay: float = 0.0) -> ToolTurn:
    return ToolTurn(name, dict(arguments or {}), delay)


def http_error(status: int = 400, message: str = "scripted error") -> ErrorTurn:
    return ErrorTurn(status, message)


# --- what was asked ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it; `body` is the parsed JSON body (None when absent or not JSON)."""

    method: str
    path: str
    body: JsonObject | None
    kind: RequestKind
    at: float
    turn: Turn | None = None

    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[JsonObject]:
        """The conversation: chat completions' `messages`, or the Responses API's `input` messages."""
        body = self.body or {}
        messages = body.get("messages") or [i for i in body.get("input") or [] if _is_message(i)]
        return [m for m in messages if isinstance(m, dict)]

    @property
    def items(self) -> list[JsonObject]:
        """The Responses API's whole `input`: messages, function calls and their outputs."""
        return [i for i in (self.body or {}).get("input") or [] if isinstance(i, dict)]

    @property
    def tool_names(self) -> list[str]:
        tools = (self.body or {}).get("tools") or []
        return [str(_function(t).get("name")) for t in tools if isinstance(t, dict)]

    def tool(self, name: str) -> JsonObject | None:
        tools = (self.body or {}).get("tools") or []
        found = (_function(t) for t in tools if isinstance(t, dict))
        return next((f for f in found if f.get("name") == name), None)

    def function_outputs(self) -> list[str]:
        """The Responses API's `function_call_output` texts, oldest first."""
        return [str(i.get("output")) for i in self.items if i.get("type") == "function_call_output"]

    def user_texts(self) -> list[str]:
        """The text of every user message, oldest first."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "user"]

    def last_user_text(self) -> str:
        texts = self.user_texts()
        return texts[-1] if texts else ""

    def tool_results(self) -> list[str]:
        """The content of every tool message, oldest first."""
        return [_text_of(m.get("content")) for m in self.messages if m.get("role") == "tool"]

    def all_text(self) -> str:
        return "\n".join(_text_of(m.get("content")) for m in self.messages)


def _is_message(item: object) -> bool:
    return isinstance(item, dict) and item.get("type", "message") == "message" and "role" in item


def _function(tool: JsonObject) -> JsonObject:
    """A tool's definition: chat completions nest it under `function`, the Responses API does not."""
    nested = tool.get("function")
    return nested if isinstance(nested, dict) else tool


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and "text" in p)
    return ""


def classify(method: str, path: str, body: JsonObject | None, headers: Mapping[str, str] | None = None) -> RequestKind:
    """Which kind of request this is; only `main` consumes a scripted turn."""
    if method == "POST" and path.rstrip("/").endswith("/responses"):
        return "summary" if _request_kind(headers or {}) == "compaction" else "main"
    if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
        return "other"
    system = "\n".join(_text_of(m.get("content")) for m in (body or {}).get("messages") or [] if _is_system(m))
    if TITLE_MARK in system:
        return "title"
    return "summary" if SUMMARY_MARK in system else "main"


def _request_kind(headers: Mapping[str, str]) -> object:
    """Codex's `x-codex-turn-metadata` header's `request_kind`: `turn` or `compaction` (measured on 0.169.0)."""
    try:
        metadata = json.loads(headers.get("x-codex-turn-metadata") or "{}")
    except json.JSONDecodeError:
        return None
    return metadata.get("request_kind") if isinstance(metadata, dict) else None


def _is_system(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") == "system"


# --- answers ---------------------------------------------------------------------------------------


def _chunk(model: str, delta: JsonObject, finish: str | None = None) -> JsonObject:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chunks(model: str, turn: TextTurn | ToolTurn) -> list[JsonObject]:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if isinstance(turn, TextTurn):
        pieces = [turn.text[i : i + 40] for i in range(0, len(turn.text), 40)] or [""]
        body = [_chunk(model, {"role": "assistant", "content": p}) for p in pieces]
        finish = "stop"
    else:
        call = {
            "index": 0,
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": turn.name, "arguments": json.dumps(dict(turn.arguments))},
        }
        body = [_chunk(model, {"role": "assistant", "tool_calls": [call]})]
        finish = "tool_calls"
    return [*body, {**_chunk(model, {}, finish), "usage": usage}]


def _whole(model: str, turn: TextTurn | ToolTurn) -> JsonObject:
    """The non-streaming answer: the chunks folded into one message."""
    message: JsonObject = {"role": "assistant", "content": turn.text if isinstance(turn, TextTurn) else None}
    if isinstance(turn, ToolTurn):
        message["tool_calls"] = _chunks(model, turn)[0]["choices"][0]["delta"]["tool_calls"]
    finish = "stop" if isinstance(turn, TextTurn) else "tool_calls"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _events(turn: TextTurn | ToolTurn) -> list[JsonObject]:
    """The Responses API's SSE events for one turn, as Codex 0.169.0 reads them."""
    response = {"id": f"resp_{uuid.uuid4().hex[:12]}", "object": "response", "status": "in_progress", "output": []}
    item: JsonObject
    deltas: list[JsonObject] = []
    if isinstance(turn, TextTurn):
        ident = f"msg_{uuid.uuid4().hex[:12]}"
        item = {"type": "message", "id": ident, "role": "assistant", "status": "completed"}
        item["content"] = [{"type": "output_text", "text": turn.text, "annotations": []}]
        pieces = [turn.text[i : i + 40] for i in range(0, len(turn.text), 40)]
        where = {"item_id": ident, "output_index": 0, "content_index": 0}
        deltas = [{"type": "response.output_text.delta", **where, "delta": piece} for piece in pieces]
        added = {**item, "status": "in_progress", "content": []}
    else:
        call = f"call_{uuid.uuid4().hex[:12]}"
        item = {"type": "function_call", "id": f"fc_{call}", "call_id": call, "name": turn.name}
        item |= {"arguments": json.dumps(dict(turn.arguments)), "status": "completed"}
        added = item
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    return [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        *deltas,
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [item], "usage": usage},
        },
    ]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    def do_GET(self) -> None:
        self._answer_json(404, {"error": {"message": f"no GET {self.path}"}})

    def do_POST(self) -> None:
        body = self._read_body()
        owner = self.server.owner
        headers = {name.lower(): value for name, value in self.headers.items()}
        kind = classify("POST", self.path, body, headers)
        if kind == "other":
            owner.record(Recorded("POST", self.path, body, kind, time.monotonic(), headers=headers))
            self._answer_json(404, {"error": {"message": f"no POST {self.path}"}})
            return
        side = {"title": owner.title, "summary": owner.summary}
        turn: Turn = TextTurn(side[kind]) if kind in side else owner.take_turn()
        owner.record(Recorded("POST", self.path, body, kind, time.monotonic(), turn, headers))
        if isinstance(turn, ErrorTurn):
            error = {"message": turn.message, "type": "invalid_request_error", "code": None}
            self._answer_json(turn.status, {"error": error})
            return
        time.sleep(turn.delay)
        if isinstance(turn, TextTurn) and turn.hold is not None:
            turn.hold.wait(HOLD_LIMIT)
        if self.path.rstrip("/").endswith("/responses"):
            self._stream_events(_events(turn))
            return
        model = str((body or {}).get("model") or "scripted")
        if (body or {}).get("stream") is False:
            self._answer_json(200, _whole(model, turn))
            return
        self._stream(model, turn)

    def _read_body(self) -> JsonObject | None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(min(length, 64 << 20)) if length > 0 else b""
        try:
            parsed = json.loads(raw) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None
        return parsed if isinstance(parsed, dict) else None

    def _answer_json(self, status: int, payload: JsonObject) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, model: str, turn: TextTurn | ToolTurn) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for chunk in _chunks(model, turn):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _stream_events(self, events: list[JsonObject]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for event in events:
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client dropped the request (an interrupted turn)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: OpenAIServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class OpenAIServer(LocalServer):
    """The scripted model: `with OpenAIServer([text("hi")]) as model: ... model.main_requests`."""

    def __init__(
        self,
        script: Sequence[Turn] = (),
        *,
        title: str = "Scripted title",
        summary: str = "The user and the assistant exchanged scripted messages.",
        idle_timeout: float = 600.0,
    ):
        super().__init__(idle_timeout)
        self._script = list(script)
        self.title = title
        self.summary = summary
        self._recorded: list[Recorded] = []
        self._lock = threading.Lock()

    def _made(self) -> _Server:
        return _Server(self)

    @property
    def url(self) -> str:
        """The base URL the provider's `baseURL` takes (ends in `/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *turns: Turn) -> None:
        with self._lock:
            self._script.extend(turns)

    def take_turn(self) -> Turn:
        with self._lock:
            self.heard()
            return self._script.pop(0) if self._script else ErrorTurn(400, UNSCRIPTED)

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.heard()
            self._recorded.append(request)

    @property
    def turns_left(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._recorded)

    @property
    def main_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.kind == "main"]
