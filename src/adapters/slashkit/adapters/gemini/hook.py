"""slashkit's Gemini CLI hooks (`python -m slashkit.adapters.gemini.hook`): Gemini runs one process per hook
event (measured on 0.61.0), so this entry is thin. It reads the payload and answers `{}` at once, importing nothing
of the core or the bridge, when the event cannot concern the core: a session with no chain state (no chain was
typed in it) at any event but the model request that follows a typed line starting with `/` (a chain,
`/slash-chain` or a saved chain's name all do). Anything else goes to `slashkit.adapters.gemini.translate`, which
holds the hooks' translation (docs/gemini.md).

Every input is bounded and every failure answered: a hook prints one JSON object and exits 0, whatever came in.
"""

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

Json = dict[str, Any]
#: The most of a hook's input that is read (a BeforeModel payload holds the whole request: history included).
MAX_INPUT: Final = 64 * 1024 * 1024
#: The most of the transcript's end that is read for the typed line (its user records are small; a long reply
#: before them is not).
MAX_TAIL: Final = 4 * 1024 * 1024
#: A session id as Gemini makes them (a UUID); anything else names no state file.
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")


def main() -> None:
    """Reads one payload on stdin, prints the hook's answer."""
    try:
        payload = json.loads(sys.stdin.buffer.read(MAX_INPUT))
    except ValueError:
        payload = None
    print(json.dumps(answer(payload) if isinstance(payload, dict) else {}))


def answer(payload: Json) -> Json:
    """The hook's output for one payload."""
    sid = session_id(payload.get("session_id"))
    if sid is None or not _may_concern(sid, payload):
        return {}
    from slashkit.adapters.gemini import translate

    return translate.handled(payload)


def _may_concern(sid: str, payload: Json) -> bool:
    if (state_folder() / f"{sid}.json").exists():
        return True
    typed = last_typed(payload.get("transcript_path")) if payload.get("hook_event_name") == "BeforeModel" else None
    return typed is not None and typed[2].startswith("/")


def session_id(value: object) -> str | None:
    """The session's id when it can name a file, else None."""
    return value if isinstance(value, str) and SESSION_ID.fullmatch(value) else None


def state_folder() -> Path:
    """Where the sessions' state files are (`slashkit.adapters.gemini.resident.folder` makes it, private)."""
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"slashkit-gemini-{os.getuid()}"


def last_typed(transcript: object) -> tuple[str, str, str] | None:
    """The last user record of the transcript that holds typed text: its id, the text Gemini sent, the line as
    typed. A tool's response is a user record without typed text, and is passed over."""
    if not isinstance(transcript, str) or not transcript:
        return None
    try:
        with open(transcript, "rb") as file:
            file.seek(0, 2)
            size = file.tell()
            file.seek(max(0, size - MAX_TAIL))
            tail = file.read(MAX_TAIL)
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != "user":
            continue
        # A line that ran no custom command (`/slash-chain`, which is no command of Gemini's) was sent as typed.
        sent = text_of(record.get("content"))
        if sent or text_of(record.get("displayContent")):
            return str(record.get("id", "")), sent, text_of(record.get("displayContent")) or sent
    return None


def text_of(parts: object) -> str:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


if __name__ == "__main__":
    main()
