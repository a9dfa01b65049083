"""A stand-in for `lich mcp`: a stdio MCP server whose one tool, control_session, answers as lich 0.64 would.

Register it in Claude Code under the server name `lich` (so the tool is `mcp__lich__control_session`) as
`python lich_mcp_stub.py ROSTER.json CALLS.jsonl`, or with no arguments and the variables LICH_STUB_ROSTER (the
roster's JSON itself) and LICH_STUB_LOG (the path). The roster is two sessions, the caller's own and one peer:
`{"self": {"id", "label", "name"}, "peer": {"id", "label", "name"}}`. Every tools/call's params are appended
to the log as one JSON line, so a test can assert what lich saw.

Standard library only, so any python3 can serve it.
"""

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

# Texts: lich's own wording for `lich control` and its MCP tool `control_session`

DESCRIPTION: Final = (
    "Drives another running session through its lich-plugin mod: prompt starts a turn on the text, abort stops "
    "the running turn, model and effort set what its next requests use (no value goes back to its own), and "
    "command runs a slash command once the session is idle. Claude Code sessions only, and never your own."
)
SELF_REFUSAL: Final = (
    '"{label}" is this session, and a session cannot control itself: an abort would end the turn asking for '
    "it, and a prompt or a slash command would only run once that turn is over"
)
NO_SESSION: Final = 'no session named "{target}"'
NOT_AN_ACTION: Final = (
    '"{action}" is not something lich control does: the actions are prompt, abort, model, effort and command'
)
ACTIONS: Final = ("prompt", "abort", "model", "effort", "command")

TOOL: Final[Mapping[str, Any]] = {
    "name": "control_session",
    "description": DESCRIPTION,
    "inputSchema": {
        "type": "object",
        "properties": {
            "session": {
                "type": "string",
                "description": "The session, by the label on its card, the name it answers to or its lich id",
            },
            "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do to it"},
            "value": {"type": "string", "description": "The prompt text, model, effort or command name"},
            "args": {"type": "string", "description": "The command's arguments (command only)"},
            "project": {"type": "string", "description": "The project's name or path, to narrow the label"},
        },
        "required": ["session", "action"],
    },
}


class Session(NamedTuple):
    id: str
    label: str
    name: str


class Roster(NamedTuple):
    own: Session
    peer: Session


def controlled_text(label: str, action: str, value: str) -> str:
    """Returns lich's line for an action a peer confirmed, e.g. `"auth-fix" ran /compact.`."""
    match action, value:
        case "prompt", _:
            return f'"{label}" started a turn on the prompt.'
        case "abort", _:
            return f'"{label}" stopped its turn.'
        case "model", "":
            return f'"{label}" is back on its own model.'
        case "model", _:
            return f'"{label}" uses {value} from its next request on.'
        case "effort", "":
            return f'"{label}" is back on its own effort level.'
        case "effort", _:
            return f'"{label}" runs at {value} effort from its next request on.'
    return f'"{label}" ran /{value.removeprefix("/")}.'


# Control


def resolve(roster: Roster, target: str) -> Session | None:
    """Finds the session `target` names: by id first and exactly, then by label, then by name, in any case."""
    sessions, folded = (roster.own, roster.peer), target.casefold()
    by_id = [s for s in sessions if s.id == target]
    by_label = [s for s in sessions if s.label.casefold() == folded]
    by_name = [s for s in sessions if s.name.casefold() == folded]
    return next(iter(by_id + by_label + by_name), None)


def control(roster: Roster, arguments: Mapping[str, str]) -> Mapping[str, Any]:
    """Answers a control_session call: a refusal is a result with isError, never a JSON-RPC error."""
    action, target = arguments.get("action", ""), arguments.get("session", "").strip()
    if action not in ACTIONS:
        return _text(NOT_AN_ACTION.format(action=action), is_error=True)
    session = resolve(roster, target)
    if session is None:
        return _text(NO_SESSION.format(target=target), is_error=True)
    if session == roster.own:
        return _text(SELF_REFUSAL.format(label=session.label), is_error=True)
    return _text(controlled_text(session.label, action, arguments.get("value", "").strip()))


def _text(text: str, is_error: bool = False) -> Mapping[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"content": content, "isError": True} if is_error else {"content": content}


# JSON-RPC over stdio


def answer(message: Mapping[str, Any], roster: Roster, log: Path) -> Mapping[str, Any] | None:
    """Returns the reply to one message; None for a notification, which gets none."""
    if "id" not in message:
        return None
    params = message.get("params", {})
    match message.get("method"):
        case "initialize":
            # The client's own version back: the one tool needs nothing a later protocol version changed.
            result: Mapping[str, Any] = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "lich", "version": "0.64.0"},
            }
        case "ping":
            result = {}
        case "tools/list":
            result = {"tools": [TOOL]}
        case "tools/call":
            with log.open("a", encoding="utf-8") as calls:
                calls.write(json.dumps(params) + "\n")
            result = control(roster, params.get("arguments", {}))
        case method:
            error = {"code": -32601, "message": f"lich has no method {method}"}
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def read_roster(text: str) -> Roster:
    raw = json.loads(text)
    own, peer = (Session(raw[key]["id"], raw[key]["label"], raw[key]["name"]) for key in ("self", "peer"))
    return Roster(own, peer)


def main(argv: list[str], environ: Mapping[str, str]) -> None:
    roster = read_roster(Path(argv[1]).read_text(encoding="utf-8") if len(argv) > 1 else environ["LICH_STUB_ROSTER"])
    log = Path(argv[2] if len(argv) > 2 else environ["LICH_STUB_LOG"])
    for line in sys.stdin.buffer:
        reply = answer(json.loads(line), roster, log) if line.strip() else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv, os.environ)
