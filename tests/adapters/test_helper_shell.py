"""Shell steps in a real helper (issue 34): the helper runs the step a session's chain reached, and the host waits
for its end at `POST /v1/shell`; what it answers a body that is not one token, a token of no shell step, and a
helper that leaves while a step runs (its process group ends with it)."""

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.adapters.test_helper import Helper
from tests.unit.test_shell_runner import gone


@pytest.fixture
def helper() -> Iterator[Helper]:
    started = Helper()
    yield started
    started.kill()


def effects(answer: dict[str, object]) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], answer["effects"])


def reach_shell_step(helper: Helper, shell: str) -> dict[str, object]:
    """Types `/a && !shell` and carries the chain on to its shell step: the `shell` effect."""
    status, typed = helper.event("ChainTyped", command="a", args=f"&& !{shell}", origin="composer", enabled=True)
    assert status == 200, typed
    token = cast(dict[str, Any], typed["reply"])["token"]
    _, ran = helper.event("RunEnded", token=token, error=None, output="", applied=False)
    timer = next(e for e in effects(ran) if e["kind"] == "after")
    _, fired = helper.event("TimerFired", token=timer["token"], applied=False)
    return next(e for e in effects(fired) if e["kind"] == "shell")


def shell(helper: Helper, body: object) -> tuple[int, dict[str, object]]:
    return helper.request(json.dumps(body).encode(), path="/v1/shell")


def test_the_host_waits_for_the_step_the_helper_runs_and_reports_its_end(helper: Helper, tmp_path: Path) -> None:
    script = f"sh -c 'echo made > {tmp_path}/made; echo done; exit 3'"
    effect = reach_shell_step(helper, script)

    assert effect["text"] == script
    status, ended = shell(helper, {"token": effect["token"]})

    assert status == 200
    assert ended == {"v": 3, "error": "it exited with status 3", "output": "done"}
    assert (tmp_path / "made").read_text() == "made\n"
    _, reported = helper.event("RunEnded", token=effect["token"], error=ended["error"], output="done", applied=False)
    texts = [e["text"] for e in effects(reported) if e["kind"] == "log"]
    assert texts == ["done", "stopped after !sh: it exited with status 3"]


@pytest.mark.parametrize("body", [{"token": True}, {"token": "1"}, {"token": 0}, {"token": 1, "more": 1}, [1], None])
def test_a_body_that_is_not_one_token_is_refused(helper: Helper, body: object) -> None:
    status, answer = shell(helper, body)

    assert status == 400
    assert "token" in str(answer["error"])


def test_a_token_of_no_shell_step_is_not_found(helper: Helper) -> None:
    status, answer = shell(helper, {"token": 7})

    assert status == 404
    assert answer["error"] == "this session runs no shell step 7"


def test_a_helper_that_leaves_ends_the_step_it_runs(helper: Helper, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    reach_shell_step(helper, f"sh -c 'echo $$ > {pid_file}; exec sleep 300'")
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pid = int(pid_file.read_text())

    helper.process.send_signal(signal.SIGTERM)
    helper.process.wait(timeout=10)

    assert gone(pid), "the step outlived its helper"
