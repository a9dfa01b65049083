"""slashkit's Gemini CLI hooks as Gemini runs them (one payload in, one JSON answer out), against the real helper:
the payloads are those measured on Gemini CLI 0.61.0 (docs/gemini.md)."""

import json
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


def test_a_hook_with_nothing_for_the_core_imports_neither_the_core_nor_the_bridge(project: Path, sid: str) -> None:
    # Gemini starts a process per hook event: one a session without chains fires answers without the core's imports.
    _typed(project / "transcript.jsonl", "Greet Bob please", "Greet Bob please")
    payload = json.dumps(_payload("BeforeModel", sid, project, **_request("Greet Bob please")))
    check = (
        "import json, sys; from slashkit.adapters.gemini import hook; print(hook.answer(json.loads(sys.argv[1])), "
        "sorted(m for m in sys.modules if m.startswith(('slashkit.core', 'slashkit.adapters.bridge', 'attr'))))"
    )
    done = subprocess.run([sys.executable, "-c", check, payload], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "{} []", done.stderr


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json",
        b"[]",
        b'{"session_id": "../../etc", "hook_event_name": "BeforeModel"}',
        b'{"session_id": 3, "hook_event_name": "AfterAgent"}',
        b'{"session_id": "abc", "hook_event_name": "BeforeModel", "transcript_path": "/nonexistent"}',
        b'{"session_id": "abc", "hook_event_name": "BeforeModel", "transcript_path": 7, "llm_request": []}',
        b"\xff\xfe",
    ],
)
def test_any_input_is_answered_with_one_json_object_and_exit_0(stdin: bytes) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.gemini.hook"], input=stdin, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


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
