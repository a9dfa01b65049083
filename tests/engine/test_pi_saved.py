"""Saved chains (issue 28) in the real pi 1.6.0: chains written in the project's `.slashkit/chains/`, typed by name
in `pi -p --approve` and in RPC mode, offline against a scripted model: what the person sees (the lines, the status
line) and what the model is handed, or not."""

import sys
import threading
import time
from pathlib import Path

import pytest

from tests.engine.test_pi_chain import Ran
from tests.support.openai_server import OpenAIServer, Turn, text
from tests.support.pi_cli import Pi, Rpc, available

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
]

TEMPLATES = {"greet": "Say hello to $1", "bye": "Say bye to $1"}
#: The project's saved chains: two steps, one calling another (a function call), a cycle, and a step of a built-in
#: only the person may run (`/model`, off pi's allowlist) followed by `;`.
CHAINS = {
    "ship": "---\ndescription: Ships it\nargument-hint: <who>\n---\n/greet $1 && /bye $1\n",
    "release": "/check $1 && /bye done\n",
    "check": "/greet $1 || /bye fixed\n",
    "loop": "/loop2\n",
    "loop2": "/loop\n",
    "risky": "/model fake/other-model ; /greet Bob\n",
}


def _project(tmp_path: Path, url: str) -> Pi:
    return Pi(tmp_path).setup(url, TEMPLATES, CHAINS)


def _print(tmp_path: Path, line: str, script: list[Turn]) -> Ran:
    with OpenAIServer(script) as model:
        done = _project(tmp_path, model.url).run(line, SLASHKIT_PYTHON=sys.executable)
        return Ran(done.returncode, done.stdout, done.stderr, model)


def test_a_saved_chain_typed_by_name_runs_its_steps_with_the_arguments(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/ship Bob", [text("hello Bob"), text("bye Bob")])
    assert ran.status == 0
    # The first step's line comes from the timer that runs it, before pi shows the command's answer.
    assert ran.lines == ["1/2: /greet Bob", "/ship Bob runs 2 command(s)", "2/2: /bye Bob", "all 2 command(s) ran"]
    assert [asked.split("\n")[0] for asked in ran.asked()] == ["Say hello to Bob", "Say bye to Bob"]
    assert ran.stdout == "bye Bob\n"


def test_a_saved_chain_typed_with_more_of_a_chain(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/ship Bob && /greet Carol", [text("a"), text("b"), text("c")])
    assert ran.lines[-1] == "all 3 command(s) ran"
    assert [asked.split("\n")[0] for asked in ran.asked()] == [
        "Say hello to Bob",
        "Say bye to Bob",
        "Say hello to Carol",
    ]


def test_a_saved_chain_calling_another_is_a_function_call(tmp_path: Path) -> None:
    # release = /check $1 && /bye done; check = /greet $1 || /bye fixed: check's last status is its step's.
    ran = _print(tmp_path, "/release Bob", [text("hello Bob"), text("bye")])
    assert ran.lines == [
        "1/3: /greet Bob",
        "/release Bob runs 3 command(s)",
        "skipped 2/3: /bye fixed (the last command succeeded)",
        "3/3: /bye done",
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]
    assert [asked.split("\n")[0] for asked in ran.asked()] == ["Say hello to Bob", "Say bye to done"]


def test_a_cycle_runs_nothing_and_asks_the_model_nothing(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/loop", [text("never")])
    assert ran.status == 0
    assert ran.lines == ["saved chains call each other in a cycle (loop -> loop2 -> loop); nothing ran"]
    assert ran.model.requests == []


def test_a_step_only_the_person_may_run_is_refused_from_a_file_and_the_next_runs(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/risky", [text("hello Bob")])
    why = "only the person may run /model, and this came from saved chain risky"
    assert ran.lines[0] == f"skipped 1/2: /model fake/other-model ({why})"
    assert ran.lines[1:] == ["2/2: /greet Bob", "/risky runs 2 command(s)", "ended: 1 succeeded, 0 failed, 1 skipped"]
    assert ran.asked() == ["Say hello to Bob"]
    assert "other-model" not in ran.sent()


def test_a_saved_chain_in_rpc_mode_shows_its_step_on_the_status_line(tmp_path: Path) -> None:
    with OpenAIServer([text("hello Bob"), text("bye Bob")]) as model:
        session = Rpc(_project(tmp_path, model.url), SLASHKIT_PYTHON=sys.executable)
        try:
            session.send({"type": "prompt", "message": "/ship Bob"})
            session.until(lambda e: e.get("method") == "setStatus" and "statusText" not in e)
        finally:
            session.close()
    assert session.lines() == [
        "1/2: /greet Bob",
        "/ship Bob runs 2 command(s)",
        "2/2: /bye Bob",
        "all 2 command(s) ran",
    ]
    statuses = [(e.get("statusKey"), e.get("statusText")) for e in session.events if e.get("method") == "setStatus"]
    # Each step as it starts, then cleared (pi's RPC leaves an undefined text out) once the chain ended.
    assert statuses == [
        ("slash-chain", "chain 1/2: /greet Bob · next /bye"),
        ("slash-chain", "chain 2/2: /bye Bob"),
        ("slash-chain", None),
    ]
    assert [r.last_user_text().split("\n")[0] for r in model.requests] == ["Say hello to Bob", "Say bye to Bob"]


def test_a_saved_chain_typed_while_pi_works_runs_once_the_turn_is_over(tmp_path: Path) -> None:
    # pi runs an extension's command at once, even mid-turn, and takes no plain prompt while it streams: the first
    # step goes as a follow-up (docs/pi.md, "Saved chains and the status line").
    hold = threading.Event()
    with OpenAIServer([text("FIRST", hold=hold), text("hello Bob"), text("bye Bob")]) as model:
        session = Rpc(_project(tmp_path, model.url), SLASHKIT_PYTHON=sys.executable)
        try:
            session.send({"type": "prompt", "message": "tell me something"})
            _asked(model, 1)
            session.send({"type": "prompt", "message": "/ship Bob"})
            session.until(lambda e: e.get("message") == "/ship Bob runs 2 command(s)")
            hold.set()
            session.until(lambda e: e.get("message") == "all 2 command(s) ran")
        finally:
            session.close()
    asked = [r.last_user_text().split("\n")[0] for r in model.requests]
    assert asked == ["tell me something", "Say hello to Bob", "Say bye to Bob"]


def _asked(model: OpenAIServer, count: int) -> None:
    """Waits until the model was asked `count` times."""
    deadline = time.monotonic() + 20
    while len(model.requests) < count and time.monotonic() < deadline:
        time.sleep(0.05)
