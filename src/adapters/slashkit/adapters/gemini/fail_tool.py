"""The fail tool on Gemini CLI: an MCP server on stdio (`python -m slashkit.adapters.gemini.fail_tool`), named
`slash-chain` in the settings, whose tool `fail` Gemini offers the model as `mcp_slash-chain_fail` (measured on
0.61.0; with `"trust": true` it runs in `gemini -p` without a confirmation). Gemini starts it as its own child
and tells it no session, so a call finds its session as the one whose hooks ran under the same Gemini process
(`resident`'s state names it), and hands the core `FailCalled`; the core's answer is the tool's.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any, Final

from slashkit.adapters.bridge import protocol
from slashkit.adapters.files import read_regular
from slashkit.adapters.gemini import resident
from slashkit.core import texts

SERVER: Final = "slash-chain"
TOOL: Final = "fail"
#: The longest line read from Gemini (a tools/call carries the model's arguments, bounded by the wire's text).
MAX_LINE: Final = 1024 * 1024

Json = dict[str, Any]


def main() -> None:
    """Answers Gemini's JSON-RPC requests, one a line, until stdin closes."""
    for raw in iter(lambda: sys.stdin.buffer.readline(MAX_LINE), b""):
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError):  # a model's arguments nested past Python's reader end no server
            continue
        if isinstance(request, dict) and "id" in request:
            reply = {"jsonrpc": "2.0", "id": request["id"], **_answer(request)}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def _answer(request: Json) -> Json:
    method, params = request.get("method"), request.get("params")
    params = params if isinstance(params, dict) else {}
    if method == "initialize":
        version = params.get("protocolVersion")
        return {
            "result": {
                "protocolVersion": version if isinstance(version, str) else "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": SERVER, "version": "1"},
            }
        }
    if method == "tools/list":
        tool = {"name": TOOL, "description": texts.FAIL_DESCRIPTION, "inputSchema": texts.FAIL_SCHEMA}
        return {"result": {"tools": [tool]}}
    if method == "tools/call" and params.get("name") == TOOL:
        arguments = params.get("arguments")
        reason = arguments.get("reason") if isinstance(arguments, dict) else None
        text, failed = called(_bounded(reason))
        return {"result": {"content": [{"type": "text", "text": text}], "isError": failed}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": f"{SERVER}: no method {str(method)[:100]}"}}


def called(reason: object) -> tuple[str, bool]:
    """The tool's answer to one call, and whether it is an error."""
    sid = _session()
    if sid is None:
        return texts.FAIL_NOTHING_WAITS, True
    try:
        with resident.opened(sid) as held:
            if not held.running:
                return texts.FAIL_NOTHING_WAITS, True
            said = held.ask("FailCalled", {"reason": reason, "agent": None})
            # A tool's server shows the person nothing: its lines wait for the turn's next hook (`hook.shown`).
            effects = [e for e in said.get("effects") or [] if isinstance(e, dict)]
            lines = [str(e.get("text", "")) for e in effects if e.get("kind") == "log"]
            held.notes["lines"] = [*(held.notes.get("lines") or []), *lines][-64:]
            reply = said.get("reply") or {}
    except resident.Unavailable as gone:
        return texts.CHAIN_UNAVAILABLE.format(why=str(gone)), True
    if reply.get("kind") == "tool.answer":
        return str(reply.get("text", "")), False
    return str(reply.get("text") or texts.CHAIN_UNAVAILABLE.format(why="no answer")), True


def _session() -> str | None:
    """The session of this Gemini process whose state changed last."""
    try:
        base = resident.folder()
        found = sorted(base.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except (OSError, resident.Unavailable):
        return None
    for path in found[:64]:
        if _gemini_of(path) == os.getppid():
            return path.stem
    return None


def _gemini_of(path: Path) -> object:
    try:
        state = json.loads(read_regular(path, resident.MAX_STATE))
    except (OSError, ValueError):
        return None
    return state.get("gemini") if isinstance(state, dict) else None


def _bounded(value: object) -> object:
    """The model's reason as the core reads it: a text cut to the wire's bound; another value too long as JSON is
    none (as the Node hosts' `boundedInput`)."""
    if isinstance(value, str):
        return value[: protocol.MAX_TEXT]
    try:
        return value if len(json.dumps(value)) <= protocol.MAX_TEXT else None
    except (TypeError, ValueError):
        return None


if __name__ == "__main__":
    main()
