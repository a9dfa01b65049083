"""slashkit's Gemini CLI hooks (`python -m slashkit.adapters.gemini.hook`): Gemini runs one process per hook
event (measured on 0.61.0), so this entry is thin. It reads the payload and answers `{}` at once, importing nothing
of the core or the bridge, when the event cannot concern the core: a session with no chain state (no chain was
typed in it) at any event but the model request that follows a typed line starting with `/` (a chain,
`/slash-chain` or a saved chain's name all do) or with a word that may open a program (`while`, `until`, `for`,
`{`), or the start of a session Gemini resumed (`--resume`: its journal may hold a chain cut off). Anything else
goes to `slashkit.adapters.gemini.translate`, which holds the hooks' translation
(docs/gemini.md).

Every input is bounded and every failure answered: a hook prints one JSON object and exits 0, whatever came in.
"""

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

from slashkit.adapters.files import read_regular
from slashkit.adapters.json_depth import too_deep

Json = dict[str, Any]
#: The most of a hook's input that is read (a BeforeModel payload holds the whole request: history included).
MAX_INPUT: Final = 64 * 1024 * 1024
#: The deepest a payload's arrays and objects may nest: far past a request's (its tool calls' arguments included),
#: far under the depth where Python's reader gives up with a RecursionError (about 1,000).
MAX_DEPTH: Final = 256
#: The most of the transcript's end that is read for the typed line (its user records are small; a long reply
#: before them is not).
MAX_TAIL: Final = 4 * 1024 * 1024
#: A session id as Gemini makes them (a UUID); anything else names no state file.
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
#: A typed line that may be the core's: a slash command, or a word that may open a program. Looser than the core's
#: `grammar.starts_program` (which the translation asks), never stricter: a property test holds it so.
#: JavaScript's trim (the core's) also takes a leading U+FEFF, which `\s` does not match.
MAY_BE_OURS: Final = re.compile(r"[\s\ufeff]*(?:/|\{|while|until|for)")


def main() -> None:
    """Reads one payload on stdin, prints the hook's answer. A payload that cannot be read within the bounds is
    answered with a line saying why, and the turn goes on as Gemini made it; Gemini does not mind the input it could
    not write once the hook ended (EPIPE, read in its bundle)."""
    payload, unread = _payload(sys.stdin.buffer.read(MAX_INPUT + 1))
    if unread is not None:
        from slashkit.adapters.gemini import translate

        print(json.dumps(translate.unread(unread)))
    else:
        print(json.dumps(answer(payload) if isinstance(payload, dict) else {}))


def _payload(raw: bytes) -> tuple[object, str | None]:
    """The payload read within the bounds, or None and why it could not be."""
    if len(raw) > MAX_INPUT:
        return None, f"it is over {MAX_INPUT // (1024 * 1024)} MiB"
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return None, "it is not UTF-8"
    if too_deep(text, MAX_DEPTH):
        return None, f"it nests deeper than {MAX_DEPTH} levels"
    try:
        return json.loads(text), None
    except ValueError:
        return None, "it is not JSON"


def answer(payload: Json) -> Json:
    """The hook's output for one payload."""
    sid = session_id(payload.get("session_id"))
    if sid is None or not _may_concern(sid, payload):
        return {}
    from slashkit.adapters.gemini import translate

    return translate.handled(payload)


def _may_concern(sid: str, payload: Json) -> bool:
    if (state_folder() / f"{sid}.json").exists() or resumed(payload):
        return True
    typed = last_typed(payload.get("transcript_path")) if payload.get("hook_event_name") == "BeforeModel" else None
    return typed is not None and MAY_BE_OURS.match(typed[2]) is not None


def resumed(payload: Json) -> bool:
    """Whether the payload is the start of a session Gemini resumed: SessionStart says `resume` for `--resume`
    (`startup` for a new session), with the resumed session's id (measured on 0.61.0)."""
    return payload.get("hook_event_name") == "SessionStart" and payload.get("source") == "resume"


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
        # The payload names the path: a FIFO there would hang the hook, and Gemini's turn with it.
        tail = read_regular(transcript, MAX_TAIL, tail=True)
    except OSError:
        return None
    for raw in reversed(tail.splitlines()):
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):  # Gemini's lines, but a line nested too deep is passed over too
            continue
        if not isinstance(record, dict) or record.get("type") != "user":
            continue
        # A line that ran no custom command (`/slash-chain`, which is no command of Gemini's) was sent as typed.
        sent = text_of(record.get("content"))
        if sent or text_of(record.get("displayContent")):
            return str(record.get("id", "")), sent, text_of(record.get("displayContent")) or sent
    return None


def text_of(parts: object) -> str:
    """The text of a record's parts (or of a plain string)."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


if __name__ == "__main__":
    main()
