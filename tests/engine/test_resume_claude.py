"""A chain cut off by a crash, resumed only by the person (issue 35), in the real Claude Code 2.1.328 offline: the CLI
is SIGKILLed while step 2 of 3 waits on the model; `claude -p --continue "/slash-chain resume"` says what was cut off,
runs step 2 again and then step 3, never step 1; a new session in the same project resumes nothing. As the person sees
it (the plugin's lines) and as the model is handed it (the scripted model server)."""

import contextlib
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support import shared_helpers
from tests.support.claude_cli import Isolation, _cli_argv, isolated_env, run_print, ui_log_texts
from tests.support.model_server import ModelServer, text

pytestmark = pytest.mark.engine

CUT = (
    "the chain stopped at 2/3 /tiny b when the session ended; /slash-chain resume runs the rest, "
    "/slash-chain forget forgets it"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / ".claude" / "commands" / "tiny.md").write_text(
        "---\ndescription: Tiny\n---\nSay something tiny: $ARGUMENTS\n"
    )
    return folder


def _end_helpers(tmp: Path) -> None:
    for pid in shared_helpers(tmp):
        os.kill(pid, signal.SIGTERM)


def _kill_group(process: "subprocess.Popen[bytes]") -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)


def test_a_chain_killed_mid_step_resumes_its_step_and_the_rest_on_the_persons_word(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    person = Isolation.create(tmp_path)
    hold = threading.Event()
    script = [text("A."), text("B, never heard.", hold=hold), text("B."), text("C.")]
    with contextlib.ExitStack() as stack:
        stack.callback(person.cleanup)
        stack.callback(_end_helpers, person.tmp)
        stack.callback(hold.set)
        model = stack.enter_context(ModelServer(script))
        argv = _cli_argv("/tiny a && /tiny b && /tiny c", [plugin], person.root / "debug-killed.log", [])
        killed = subprocess.Popen(
            argv,
            cwd=project,
            env=isolated_env(person, model.url),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        stack.callback(_kill_group, killed)
        model.wait_for(lambda requests: sum(r.kind == "main" for r in requests) == 2, timeout=60)
        assert "Say something tiny: b" in model.main_requests[-1].last_user_text()
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(10)
        asked_before = len(model.main_requests)

        resumed = run_print("/slash-chain resume", [plugin], project, model, isolation=person, args=["--continue"])
        asked = [r.last_user_text() for r in model.main_requests[asked_before:]]
        lines = ui_log_texts(resumed.events, "slash-chain")
        assert lines and lines[0] == CUT, resumed.describe()
        assert lines[1:] == [
            "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
            "2/3: /tiny b",
            "3/3: /tiny c",
            "all 3 command(s) ran",
        ], resumed.describe()
        told = [[word for word in ("a", "b", "c") if f"Say something tiny: {word}" in a] for a in asked]
        assert told == [["b"], ["c"]], asked

        fresh = run_print("/slash-chain resume", [plugin], project, model, isolation=person)
        assert "no chain was cut off in this session: nothing to resume" in fresh.stdout, fresh.describe()
        assert CUT not in fresh.stdout
        assert len(model.main_requests) == asked_before + len(asked)
