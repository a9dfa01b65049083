"""Tests for the lich MCP stub, spoken to over stdio as Claude Code speaks to it."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import lich_mcp_stub

ROSTER = {
    "self": {"id": "lich-1", "label": "fix/x", "name": "lich-plugin-a1b2"},
    "peer": {"id": "lich-2", "label": "auth-fix", "name": "lich-plugin-c3d4"},
}
SELF_REFUSAL = (
    '"fix/x" is this session, and a session cannot control itself: an abort would end the turn asking for it, '
    "and a prompt or a slash command would only run once that turn is over"
)


def converse(tmp_path: Path, *messages: object, env: dict[str, str] | None = None) -> list[Any]:
    """Sends `messages` to a fresh stub, one JSON line each, and returns its replies in order."""
    roster, log = tmp_path / "roster.json", tmp_path / "calls.jsonl"
    roster.write_text(json.dumps(ROSTER), encoding="utf-8")
    argv = [sys.executable, lich_mcp_stub.__file__] + ([] if env else [str(roster), str(log)])
    done = subprocess.run(
        argv,
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def call(session: str, action: str, **more: str) -> object:
    arguments = {"session": session, "action": action} | more
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "control_session", "arguments": arguments},
    }


def control(tmp_path: Path, session: str, action: str = "command", **more: str) -> Any:
    [reply] = converse(tmp_path, call(session, action, **more))
    return reply["result"]


def text(line: str, is_error: bool = False) -> object:
    content = [{"type": "text", "text": line}]
    return {"content": content, "isError": True} if is_error else {"content": content}


def test_initialize_echoes_the_clients_protocol_version_and_notifications_get_no_reply(tmp_path: Path) -> None:
    replies = converse(
        tmp_path,
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    )
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "lich", "version": "0.64.0"},
            },
        },
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ]


def test_tools_list_offers_control_session_for_claude_code_sessions_other_than_your_own(tmp_path: Path) -> None:
    [reply] = converse(tmp_path, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    [tool] = reply["result"]["tools"]
    assert tool["name"] == "control_session"
    assert tool["description"].endswith("Claude Code sessions only, and never your own.")
    assert tool["inputSchema"]["required"] == ["session", "action"]
    assert set(tool["inputSchema"]["properties"]) == {"session", "action", "value", "args", "project"}
    assert tool["inputSchema"]["properties"]["action"]["enum"] == ["prompt", "abort", "model", "effort", "command"]


def test_an_unknown_method_is_a_json_rpc_error(tmp_path: Path) -> None:
    [reply] = converse(tmp_path, {"jsonrpc": "2.0", "id": 1, "method": "resources/list"})
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize("session", ["lich-1", "fix/x", " FIX/X ", "Lich-Plugin-A1B2"])
def test_control_session_refuses_the_callers_own_session_by_its_label(tmp_path: Path, session: str) -> None:
    assert control(tmp_path, session, value="compact") == text(SELF_REFUSAL, is_error=True)


@pytest.mark.parametrize("session", ["lich-2", "Auth-Fix", "lich-plugin-c3d4"])
def test_control_session_runs_a_command_on_the_peer(tmp_path: Path, session: str) -> None:
    assert control(tmp_path, session, value="/compact", args="keep the plan") == text('"auth-fix" ran /compact.')


@pytest.mark.parametrize(
    ("action", "value", "line"),
    [
        ("prompt", "hi", '"auth-fix" started a turn on the prompt.'),
        ("abort", "", '"auth-fix" stopped its turn.'),
        ("model", "opus", '"auth-fix" uses opus from its next request on.'),
        ("model", "", '"auth-fix" is back on its own model.'),
        ("effort", "high", '"auth-fix" runs at high effort from its next request on.'),
        ("effort", "", '"auth-fix" is back on its own effort level.'),
    ],
)
def test_control_session_answers_the_other_actions_on_the_peer_in_lichs_words(
    tmp_path: Path, action: str, value: str, line: str
) -> None:
    assert control(tmp_path, "auth-fix", action, value=value) == text(line)


def test_control_session_knows_no_session_it_has_not_got(tmp_path: Path) -> None:
    assert control(tmp_path, " ghost ") == text('no session named "ghost"', is_error=True)


def test_control_session_refuses_an_action_lich_does_not_have(tmp_path: Path) -> None:
    line = '"rename" is not something lich control does: the actions are prompt, abort, model, effort and command'
    assert control(tmp_path, "auth-fix", "rename") == text(line, is_error=True)


def test_every_call_is_logged_as_lich_received_it(tmp_path: Path) -> None:
    converse(tmp_path, call("fix/x", "command", value="compact"), call("ghost", "abort"))
    logged = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert logged == [
        {"name": "control_session", "arguments": {"session": "fix/x", "action": "command", "value": "compact"}},
        {"name": "control_session", "arguments": {"session": "ghost", "action": "abort"}},
    ]


def test_the_roster_and_log_can_come_from_the_environment(tmp_path: Path) -> None:
    env = {"LICH_STUB_ROSTER": json.dumps(ROSTER), "LICH_STUB_LOG": str(tmp_path / "env-calls.jsonl")}
    [reply] = converse(tmp_path, call("lich-plugin-c3d4", "command", value="compact"), env=env)
    assert reply["result"] == text('"auth-fix" ran /compact.')
    assert (tmp_path / "env-calls.jsonl").exists()
