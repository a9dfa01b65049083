"""The fail tool's MCP server as Gemini CLI speaks to it (JSON-RPC, one message a line on stdio; the messages as
measured on 0.61.0): it lists the tool with the core's description and schema, answers a call with no chain
running with the core's text as an error, and answers anything else without ending."""

import json
import subprocess
import sys

from slashkit.core import texts


def _talk(*lines: bytes) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.gemini.fail_tool"],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _request(id_: int, method: str, params: object = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}).encode()


def test_the_tool_is_listed_and_a_call_with_no_chain_is_told_so() -> None:
    initialize = _request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    notified = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
    listed, called = _request(1, "tools/list"), _request(2, "tools/call", {"name": "fail", "arguments": {"reason": 1}})
    answers = _talk(initialize, notified, listed, called)
    assert [a["id"] for a in answers] == [0, 1, 2]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"  # type: ignore[index]
    [tool] = answers[1]["result"]["tools"]  # type: ignore[index]
    assert tool == {"name": "fail", "description": texts.FAIL_DESCRIPTION, "inputSchema": texts.FAIL_SCHEMA}
    assert answers[2]["result"] == {  # no chain runs under this process
        "content": [{"type": "text", "text": texts.FAIL_NOTHING_WAITS}],
        "isError": True,
    }


def test_what_it_cannot_read_is_passed_over_and_an_unknown_method_answered() -> None:
    deep = b'{"id": 6, "method": "tools/call", "params": {"arguments": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    answers = _talk(b"not json", b"[1, 2]", b"\xff", deep, _request(7, "resources/list"), _request(8, "ping"))
    assert answers[0]["id"] == 7 and "error" in answers[0]
    assert answers[1] == {"jsonrpc": "2.0", "id": 8, "result": {}}
