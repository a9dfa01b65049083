"""A chain cut off by a crash, resumed only by the person (issue 35), in the real pi 1.6.0 offline: pi (RPC mode) is
SIGKILLed while step 2 of 3 waits on the model; pi continued on that session (`--continue`, in RPC mode, in print
mode and in the TUI) says what was cut off as the session opens, and the person's `/slash-chain resume` runs step 2
again and then step 3, never step 1; a new session in the same project resumes nothing. As the person sees it (the
extension's lines) and as the model is handed it."""

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import shared_helpers
from tests.support.openai_server import OpenAIServer, text
from tests.support.pi_cli import CLI, NODE, Pi, Rpc, available
from tests.support.tui import Tui

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
]

CUT = (
    "the chain stopped at 2/3 /tiny b when the session ended; /slash-chain resume runs the rest, "
    "/slash-chain forget forgets it"
)
RESUMED = [
    CUT,
    "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
    "2/3: /tiny b",
    "3/3: /tiny c",
    "all 3 command(s) ran",
]
NOTHING = "no chain was cut off in this session: nothing to resume"
#: What pi is given to keep the session it runs, in its agent folder: the newest is the one `--continue` continues.
KEPT: tuple[str, ...] = ()
CONTINUED = ("--continue",)


class Cut:
    """A pi session whose chain was cut off by a SIGKILL while step 2 of 3 waited on the model."""

    def __init__(self, stack: contextlib.ExitStack, root: Path) -> None:
        hold = threading.Event()
        #: The model's answer to step 3, given at once unless a test clears it first.
        self.third = threading.Event()
        self.third.set()
        script = [text("A."), text("B, never heard.", hold=hold), text("B."), text("C.", hold=self.third)]
        self.model = stack.enter_context(OpenAIServer(script))
        self.pi = Pi(root).setup(self.model.url, {"tiny": "Say something tiny: $ARGUMENTS"})
        self.stack = stack
        stack.callback(_end_helpers, Path(self.pi.env()["TMPDIR"]))
        stack.callback(hold.set)
        stack.callback(self.third.set)
        killed = self.rpc(KEPT)
        killed.send({"id": "typed", "type": "prompt", "message": "/tiny a && /tiny b && /tiny c"})
        _wait(lambda: len(self.model.main_requests) == 2, 60)
        assert "Say something tiny: b" in self.model.main_requests[-1].last_user_text()
        killed.process.send_signal(signal.SIGKILL)
        killed.process.wait(10)
        self.before = len(self.model.main_requests)

    def rpc(self, session: tuple[str, ...]) -> Rpc:
        """pi in RPC mode on this project, killed at the end if still there."""
        started = Rpc(self.pi, session=session, SLASHKIT_PYTHON=sys.executable)
        self.stack.callback(_kill, started)
        return started

    def told(self) -> list[list[str]]:
        """Which of the chain's steps each request since the cut handed the model last."""
        asked = [r.last_user_text() for r in self.model.main_requests[self.before :]]
        return [[word for word in ("a", "b", "c") if f"Say something tiny: {word}" in a] for a in asked]


@pytest.fixture
def cut(tmp_path: Path) -> Iterator[Cut]:
    with contextlib.ExitStack() as stack:
        yield Cut(stack, tmp_path)


def _wait(done: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        time.sleep(0.05)


def _end_helpers(tmp: Path) -> None:
    for pid in shared_helpers(tmp):
        os.kill(pid, signal.SIGTERM)


def _kill(session: Rpc) -> None:
    if session.process.poll() is None:
        session.process.kill()
        session.process.wait()


def test_rpc_a_chain_killed_mid_step_resumes_its_step_and_the_rest_on_the_persons_word(cut: Cut) -> None:
    resumed = cut.rpc(CONTINUED)
    resumed.until(lambda e: e.get("message") == CUT)
    resumed.send({"id": "resume", "type": "prompt", "message": "/slash-chain resume"})
    resumed.until(lambda e: str(e.get("message", "")).startswith("all 3"), timeout=60)
    resumed.close()
    assert resumed.lines() == RESUMED, "\n".join(resumed.lines())
    assert cut.told() == [["b"], ["c"]]

    fresh = cut.rpc(KEPT)
    fresh.send({"id": "resume", "type": "prompt", "message": "/slash-chain resume"})
    fresh.until(lambda e: e.get("message") == NOTHING)
    fresh.close()
    assert fresh.lines() == [NOTHING], fresh.lines()
    assert cut.told() == [["b"], ["c"]]


def test_print_mode_continued_resumes_on_the_persons_word_and_a_new_session_resumes_nothing(cut: Cut) -> None:
    resumed = cut.pi.run("/slash-chain resume", session=CONTINUED, SLASHKIT_PYTHON=sys.executable)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.splitlines() == RESUMED, resumed.stderr
    assert cut.told() == [["b"], ["c"]]

    fresh = cut.pi.run("/slash-chain resume", session=KEPT, SLASHKIT_PYTHON=sys.executable)
    assert fresh.stderr.splitlines() == [NOTHING], fresh.stderr
    assert cut.told() == [["b"], ["c"]]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it")
def test_tui_continued_resumes_on_the_persons_word(cut: Cut) -> None:
    # Each line is read while it is the newest notice: pi draws every notice with the newest one's text, so a redraw
    # after the chain ended may show `all 3 command(s) ran` where `3/3: /tiny c` stood (docs/pi.md, measured on
    # 1.6.0). The model's answer to step 3 waits until its line was read.
    cut.third.clear()
    tui = Tui([NODE, CLI, "--approve", "--continue"], cut.pi.env(), cut.pi.project, cut.pi.root / "tmux.sock")
    try:
        tui.wait(lambda s: CUT[:60] in s)
        tui.type("/slash-chain resume")
        third = tui.wait(lambda s: "3/3: /tiny c" in s, timeout=60)
        cut.third.set()
        screen = tui.wait(lambda s: "all 3 command(s) ran" in s, timeout=60)
    finally:
        tui.close()
    (cut.pi.root / "screen-third.txt").write_text(third)
    (cut.pi.root / "screen-resumed.txt").write_text(screen)
    shown = [line.strip() for line in third.splitlines() if line.strip()]
    assert shown.index("2/3: /tiny b") < shown.index("B.") < shown.index("3/3: /tiny c"), third
    ended = [line.strip() for line in screen.splitlines() if line.strip()]
    assert ended.index("C.") < len(ended) - 1 - ended[::-1].index("all 3 command(s) ran"), screen
    assert cut.told() == [["b"], ["c"]]
