"""slashkit's Gemini CLI hooks as Gemini runs them (one payload in, one JSON answer out), against the real helper:
the payloads are those measured on Gemini CLI 0.61.0 (docs/gemini.md)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slashkit.adapters.gemini import hook, resident
from tests.support import HELPER_ENV

FULL = "Greet Bob && /greet Alice warmly."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "project" / ".gemini" / "commands"
    folder.mkdir(parents=True)
    (folder / "greet.toml").write_text('prompt = "Greet {{args}} warmly."\n')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    # The test's own shared helper (a short TMPDIR: a socket's path is at most 108 bytes), gone soon after.
    tmp = tempfile.mkdtemp(prefix="skh-", dir="/tmp")
    monkeypatch.setenv("TMPDIR", tmp)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    for name, value in HELPER_ENV.items():
        monkeypatch.setenv(name, value)
    yield tmp_path / "project"
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def sid() -> Iterator[str]:
    made = str(uuid.uuid4())
    yield made
    resident.close(made)


def _typed(transcript: Path, line: str, sent: str) -> None:
    record = {"id": str(uuid.uuid4()), "type": "user", "content": [{"text": sent}], "displayContent": [{"text": line}]}
    with transcript.open("a") as file:
        file.write(json.dumps(record) + "\n")


def _payload(event: str, sid: str, project: Path, **more: Any) -> dict[str, Any]:
    transcript = project / "transcript.jsonl"
    return {
        "session_id": sid,
        "hook_event_name": event,
        "cwd": str(project),
        "transcript_path": str(transcript),
        **more,
    }


def _request(*texts: str) -> dict[str, Any]:
    return {"llm_request": {"messages": [{"role": "user", "content": t} for t in texts]}}


def test_a_typed_chain_is_trimmed_and_its_next_step_continues_the_turn(project: Path, sid: str) -> None:
    _typed(project / "transcript.jsonl", "/greet Bob && /greet Alice", FULL)
    first = hook.answer(_payload("BeforeModel", sid, project, **_request("<ctx>" + FULL)))
    assert first["systemMessage"] == "1/2: /greet Bob"
    [message] = first["hookSpecificOutput"]["llm_request"]["messages"]
    assert message["content"].startswith("<ctx>Greet Bob warmly.\n\n[slash-chain] This is step 1/2")
    assert "Alice" not in message["content"].split("after it")[0]
    # A later request of the same turn (a tool's follow-up) is trimmed the same way, and says nothing again.
    again = hook.answer(_payload("BeforeModel", sid, project, **_request("<ctx>" + FULL, "tool said")))
    assert "systemMessage" not in again
    assert again["hookSpecificOutput"]["llm_request"]["messages"][0] == message
    step = hook.answer(_payload("AfterAgent", sid, project, prompt=FULL, prompt_response="Hi Bob"))
    assert (step["decision"], step["reason"]) == ("deny", "Greet Alice warmly.")
    assert step["systemMessage"] == "2/2: /greet Alice"
    last = hook.answer(_payload("AfterAgent", sid, project, prompt=FULL, prompt_response="Hi Bob\nHi Alice"))
    assert last == {"systemMessage": "all 2 command(s) ran"}


def test_a_turn_that_ended_in_an_error_stops_the_chain_at_session_end(project: Path, sid: str) -> None:
    _typed(project / "transcript.jsonl", "/greet Bob && /greet Alice", FULL)
    hook.answer(_payload("BeforeModel", sid, project, **_request(FULL)))
    ended = hook.answer(_payload("SessionEnd", sid, project, reason="exit"))
    assert ended == {"systemMessage": "stopped after /greet: its turn ended with error; not run: /greet"}
    assert not resident.exists(sid)


def test_a_lone_command_and_a_session_without_chains_are_left_alone(project: Path, sid: str) -> None:
    _typed(project / "transcript.jsonl", "/greet Bob", "Greet Bob warmly.")
    for event in ("BeforeModel", "AfterAgent", "SessionEnd"):
        assert hook.answer(_payload(event, sid, project, **_request("Greet Bob warmly."))) == {}
        assert not resident.exists(sid)  # no helper was started for it, and no state written


def _run_hook(stdin: bytes, timeout: float = 30) -> Any:
    """The hook as Gemini runs it: a process with the payload on stdin, whose answer is one JSON object."""
    done = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.gemini.hook"], input=stdin, capture_output=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_hook_with_nothing_for_the_core_imports_neither_the_core_nor_the_bridge(project: Path, sid: str) -> None:
    # Gemini starts a process per hook event: one a session without chains fires answers without the core's imports.
    _typed(project / "transcript.jsonl", "Greet Bob please", "Greet Bob please")
    assert _answered_alone(_payload("BeforeModel", sid, project, **_request("Greet Bob please")))


def _answered_alone(payload: dict[str, Any]) -> bool:
    """Whether the hook answers `{}` to the payload without importing the core, the bridge or attrs."""
    check = (
        "import json, sys; from slashkit.adapters.gemini import hook; print(hook.answer(json.loads(sys.argv[1])), "
        "sorted(m for m in sys.modules if m.startswith(('slashkit.core', 'slashkit.adapters.bridge', 'attr'))))"
    )
    done = subprocess.run([sys.executable, "-c", check, json.dumps(payload)], capture_output=True, timeout=30)
    return done.stdout.decode().strip() == "{} []"


def test_a_new_sessions_start_is_left_alone_and_a_resumed_one_with_nothing_cut_off_keeps_no_state(
    project: Path, sid: str
) -> None:
    # The SessionStart hook runs for every session now: a new one's (`startup`) costs no import of the core.
    assert _answered_alone(_payload("SessionStart", sid, project, source="startup"))
    assert not resident.exists(sid)
    # A resumed one asks the helper's journal (Continued); nothing was cut off, so nothing is said or kept.
    assert hook.answer(_payload("SessionStart", sid, project, source="resume")) == {}
    assert not resident.exists(sid)


@pytest.mark.parametrize(
    "stdin",
    [
        b"[]",
        b'"a string"',
        b'{"session_id": "../../etc", "hook_event_name": "BeforeModel"}',
        b'{"session_id": 3, "hook_event_name": "AfterAgent"}',
        b'{"session_id": "abc", "hook_event_name": "BeforeModel", "transcript_path": "/nonexistent"}',
        b'{"session_id": "abc", "hook_event_name": "BeforeModel", "transcript_path": 7, "llm_request": []}',
    ],
)
def test_any_input_is_answered_with_one_json_object_and_exit_0(stdin: bytes) -> None:
    assert _run_hook(stdin) == {}


def unread(why: str) -> dict[str, str]:
    """The answer to a payload that could not be read: a line the person sees, and the turn goes on."""
    return {
        "systemMessage": f"unavailable: this hook's input was not read: {why}; commands run as typed until it is back"
    }


@pytest.mark.parametrize(
    ("stdin", "why"),
    [
        (b"", "it is not JSON"),
        (b"not json", "it is not JSON"),
        (b"\xff\xfe", "it is not UTF-8"),
        # Attacks of issue 34: nesting past Python's recursion limit crashed the hook with a RecursionError, and
        # a payload past the bound was cut, read as no JSON, and answered {} without a word.
        (b'{"session_id": "abc", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "it nests deeper than 256 levels"),
        (b'{"session_id": "abc", "x": "' + b"x" * (70 << 20) + b'"}', "it is over 64 MiB"),
    ],
    ids=["empty", "text", "not-utf-8", "deep", "70-mib"],
)
def test_a_payload_that_cannot_be_read_within_the_bounds_is_answered_with_a_line(stdin: bytes, why: str) -> None:
    assert _run_hook(stdin) == unread(why)


def test_a_payload_nested_within_the_bound_is_read(project: Path, sid: str) -> None:
    inner = hook.MAX_DEPTH - 1  # the payload's own object is the first level
    payload = json.dumps({**_payload("AfterAgent", sid, project), "x": "@"}).replace('"@"', "[" * inner + "]" * inner)
    assert _run_hook(payload.encode()) == {}


def test_a_transcript_path_that_is_a_fifo_does_not_hang_the_hook(project: Path, sid: str) -> None:
    # Attack of issue 34: the hook read the payload's transcript path with a plain open, which waits on a FIFO.
    fifo = project / "transcript.fifo"
    os.mkfifo(fifo)
    payload = {**_payload("BeforeModel", sid, project), "transcript_path": str(fifo)}
    assert _run_hook(json.dumps(payload).encode(), timeout=20) == {}


def test_a_second_chain_keeps_the_first_one_trimmed_in_the_history(project: Path, sid: str) -> None:
    transcript = project / "transcript.jsonl"
    _typed(transcript, "/greet Bob && /greet Alice", FULL)
    hook.answer(_payload("BeforeModel", sid, project, **_request(FULL)))
    hook.answer(_payload("AfterAgent", sid, project, prompt=FULL, prompt_response="Hi Bob"))
    hook.answer(_payload("AfterAgent", sid, project, prompt=FULL, prompt_response="Hi Bob\nHi Alice"))
    second = "Greet Ann ; /greet Eve warmly."
    _typed(transcript, "/greet Ann ; /greet Eve", second)
    out = hook.answer(_payload("BeforeModel", sid, project, **_request(FULL, "Hi Bob", second)))
    sent = [m["content"] for m in out["hookSpecificOutput"]["llm_request"]["messages"]]
    assert sent[0].startswith("Greet Bob warmly.") and sent[2].startswith("Greet Ann warmly.")
    assert "/greet Alice" not in sent[0].split("after it")[0] and "Eve warmly" not in sent[2]
