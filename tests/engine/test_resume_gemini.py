"""A chain cut off by a crash, resumed only by the person (issue 35), in the real Gemini CLI 0.61.0 offline: `gemini -p`
is SIGKILLed while step 2 of 3 waits on the scripted model; `gemini --resume latest -p "/slash-chain resume"` says
what was cut off, runs step 2 again and then step 3, never step 1; a new session in the same project resumes nothing.
As the person sees it (the hooks' lines) and as the model is handed it (the scripted Gemini API)."""

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from slashkit.core import texts
from tests.support import shared_helpers
from tests.support.gemini_cli import Gemini, available
from tests.support.gemini_server import GeminiServer, Request, text
from tests.support.tui import Tui

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not available(), reason="no Gemini CLI: scripts/setup.sh installs @google/gemini-cli 0.61.0"),
]

CUT = (
    "the chain stopped at 2/3 /tiny b when the session ended; /slash-chain resume runs the rest, "
    "/slash-chain forget forgets it"
)
PREFIX = "Hook system message: "


def _lines(stderr: str) -> list[str]:
    """What the hooks said: each `systemMessage` is printed after the prefix, its later lines on lines of their own
    (measured on 0.61.0), which end at the next line Gemini prints with a prefix of its own."""
    said: list[str] = []
    within = False
    for line in stderr.splitlines():
        if line.startswith(PREFIX):
            said.append(line[len(PREFIX) :])
            within = True
        elif within and line and not line.startswith(("[", "Hook ", "Error", "Warning")):
            said.append(line)
        else:
            within = False
    return said


def _told(request: Request) -> str:
    """The last user text of a request: what this turn handed the model."""
    contents = (request.body or {}).get("contents") or []
    users = [m for m in contents if m.get("role") == "user" and any("text" in p for p in m.get("parts") or [])]
    return "".join(p.get("text", "") for p in users[-1].get("parts") or []) if users else ""


def _wait(until: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _end_helpers(tmp: str) -> None:
    for pid in shared_helpers(Path(tmp)):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)


def _kill_group(process: "subprocess.Popen[bytes]") -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def _cut(gemini: Gemini, env: dict[str, str]) -> Iterator[GeminiServer]:
    """The scripted model, once `gemini -p "/tiny a && /tiny b && /tiny c"` was SIGKILLed while step 2 waited on it;
    its script holds the answers to step 2 and step 3 run again."""
    hold = threading.Event()
    script = [text("A."), text("B, never heard.", hold=hold), text("B."), text("C.")]
    with contextlib.ExitStack() as stack:
        stack.callback(_end_helpers, gemini.tmp)
        stack.callback(hold.set)
        model = stack.enter_context(GeminiServer(script))
        killed = subprocess.Popen(
            [*gemini.argv(), "-p", "/tiny a && /tiny b && /tiny c"],
            cwd=gemini.project,
            env=gemini.env(model.url, **env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        stack.callback(_kill_group, killed)
        _wait(lambda: len(model.main) == 2, timeout=90)
        assert _told(model.main[-1]).startswith("Say something tiny: b")
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(10)
        yield model


def _steps_told(requests: list[Request]) -> list[list[str]]:
    """Which steps' texts each request handed the model as its turn."""
    return [[word for word in ("a", "b", "c") if f"Say something tiny: {word}" in _told(r)] for r in requests]


@pytest.mark.parametrize("mode", ["shared", "session"])
def test_a_chain_killed_mid_step_resumes_its_step_and_the_rest_on_the_persons_word(tmp_path: Path, mode: str) -> None:
    """In the person's shared helper, and in a helper of the session's own (`SLASHKIT_HELPER=session`), whose keeper
    takes the killed session's state away."""
    gemini = Gemini(tmp_path).setup({"tiny": "Say something tiny: {{args}}"})
    env = {"SLASHKIT_HELPER": mode} if mode == "session" else {}
    with _cut(gemini, env) as model:
        asked_before = len(model.main)
        resumed = gemini.run("/slash-chain resume", model.url, env, options=["--resume", "latest"])
        asked = model.main[asked_before:]
        assert _lines(resumed.stderr) == [
            CUT,
            "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
            "2/3: /tiny b",
            "3/3: /tiny c",
            "all 3 command(s) ran",
        ], resumed.stderr
        assert _steps_told(asked) == [["b"], ["c"]], [_told(r) for r in asked]
        assert resumed.returncode == 0, resumed.stderr

        fresh = gemini.run("/slash-chain resume", model.url, env)
        assert texts.NOTHING_CUT_OFF in fresh.stdout, fresh.stderr
        assert CUT not in fresh.stdout + fresh.stderr
        assert len(model.main) == asked_before + len(asked)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it")
def test_the_tui_started_with_resume_says_what_was_cut_off_and_resumes_it_on_the_persons_word(tmp_path: Path) -> None:
    gemini = Gemini(tmp_path).setup({"tiny": "Say something tiny: {{args}}"})
    with _cut(gemini, {}) as model:
        asked_before = len(model.main)
        tui = Tui([*gemini.argv(), "--resume", "latest"], gemini.env(model.url), gemini.project, tmp_path / "tmux.sock")
        try:
            tui.wait(lambda s: "Type your message" in s and "1 MCP server" in s, timeout=60)
            # Told before the person types anything: the TUI shows SessionStart's message (after its hook's command).
            tui.wait(lambda s: "the chain stopped at 2/3 /tiny b when the session ended" in " ".join(s.split()))
            tui.key("/slash-chain resume")
            tui.wait(lambda s: "> /slash-chain resume" in s)
            time.sleep(2)  # an Enter while the command menu opens is the menu's (test_gemini_tui.py)
            tui.key("Enter")
            screen = tui.wait(lambda s: "all 3 command(s) ran" in s, timeout=90)
        finally:
            tui.close()
        asked = model.main[asked_before:]
    flat = " ".join(screen.split())
    assert "resumed: 2/3 /tiny b was interrupted and runs again, then the rest" in flat
    assert "3/3: /tiny c" in flat
    assert _steps_told(asked) == [["b"], ["c"]], [_told(r) for r in asked]
