"""slashkit's pi extension in pi 1.6.0's TUI, in tmux (a private socket in the test's folder): a typed chain runs,
its lines show on the screen, and the model gets each step; a chain led by the built-in `/compact` compacts, then
runs the next step (docs/pi.md, "A typed line led by a built-in")."""

import json
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from slashkit.adapters.pi.install import STORE_FILE
from slashkit.core.texts import OFF_TEXT
from tests.support.openai_server import OpenAIServer, text
from tests.support.pi_cli import CLI, NODE, SUMMARIZING, Pi, available

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it"),
]


class Tui:
    """An agent's TUI (pi's, or omp's in tests/engine/test_omp_tui.py) in a detached tmux session on a socket of the
    test's own, started as `argv` in `cwd` with only `env`."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, socket: Path) -> None:
        self.socket = str(socket)
        env = {**env, "SLASHKIT_PYTHON": sys.executable, "TERM": "xterm-256color"}
        line = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env -i {line} {shlex.join(argv)}"
        self._tmux("new-session", "-d", "-x", "160", "-y", "50", "-c", str(cwd), command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def wait(self, ready: Callable[[str], bool], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"the screen never showed what was awaited:\n{self.screen()}")

    def type(self, line: str) -> None:
        self._tmux("send-keys", "-l", line)
        time.sleep(0.3)
        self._tmux("send-keys", "Enter")

    def key(self, name: str) -> None:
        self._tmux("send-keys", name)

    def close(self) -> None:
        self._tmux("kill-server")


def pi_tui(pi: Pi, socket: Path) -> Tui:
    return Tui([NODE, CLI, "--approve", "--no-session"], pi.env(), pi.project, socket)


def test_a_chain_typed_in_the_tui(tmp_path: Path) -> None:
    with OpenAIServer([text("ANSWER ONE"), text("ANSWER TWO")]) as model:
        pi = Pi(tmp_path).setup(model.url, {"greet": "Say hello to $1", "bye": "Say bye to $1"})
        tui = pi_tui(pi, tmp_path / "tmux.sock")
        try:
            tui.wait(lambda s: "slashkit" in s)
            tui.type("/greet Bob && /bye Alice")
            screen = tui.wait(lambda s: "all 2 command(s) ran" in s)
        finally:
            tui.close()
    shown = [line.strip() for line in screen.splitlines() if line.strip()]
    assert shown.index("1/2: /greet Bob") < shown.index("ANSWER ONE") < shown.index("2/2: /bye Alice")
    assert shown.index("2/2: /bye Alice") < shown.index("ANSWER TWO") < shown.index("all 2 command(s) ran")
    assert [r.last_user_text() for r in model.requests][1] == "Say bye to Alice"


def test_a_chain_led_by_compact_runs_it_then_the_next_step(tmp_path: Path) -> None:
    # pi's own editor would run /compact with "&& /greet Bob" as its instructions (measured on 1.6.0): the
    # extension's editor hands the line to the core first (docs/pi.md, "A typed line led by a built-in").
    with OpenAIServer([text("ANSWER ONE"), text("THE SUMMARY"), text("HELLO BOB")]) as model:
        pi = Pi(tmp_path).setup(model.url, {"greet": "Say hello to $1"})
        tui = pi_tui(pi, tmp_path / "tmux.sock")
        try:
            tui.wait(lambda s: "slashkit" in s)
            tui.type("hello")
            tui.wait(lambda s: "ANSWER ONE" in s)
            tui.type("/compact && /greet Bob")
            screen = tui.wait(lambda s: "all 2 command(s) ran" in s)
            # The editor is still pi's: Up brings the chain back from its history.
            tui.key("Up")
            recalled = tui.wait(lambda s: s.count("/compact && /greet Bob") == 1)
        finally:
            tui.close()
    # pi redraws the chat from the session once it compacted, so the line `1/2: /compact` is gone by then.
    shown = [line.strip() for line in screen.splitlines() if line.strip()]
    compacted = next(i for i, line in enumerate(shown) if line.startswith("Compacted from"))
    assert compacted < shown.index("2/2: /greet Bob") < shown.index("HELLO BOB") < shown.index("all 2 command(s) ran")
    assert SUMMARIZING in model.requests[1].all_text()
    assert "/greet" not in model.requests[1].all_text()
    assert model.requests[2].last_user_text() == "Say hello to Bob"
    assert "/compact && /greet Bob" in recalled.splitlines()


def test_slash_chain_off_typed_in_the_tui_is_the_persons(tmp_path: Path) -> None:
    # `/slash-chain` is no pi command (an extension's would run for any other extension too, docs/pi.md): the
    # extension reads it from the input event, which pi 1.6.0's TUI sends with the person's line.
    with OpenAIServer([]) as model:
        pi = Pi(tmp_path).setup(model.url, {})
        tui = pi_tui(pi, tmp_path / "tmux.sock")
        try:
            tui.wait(lambda s: "slashkit" in s)
            tui.type("/slash-chain off")
            tui.wait(lambda s: OFF_TEXT[:40] in s)
        finally:
            tui.close()
    assert json.loads((tmp_path / "state" / "slashkit" / STORE_FILE).read_text()) == {"enabled": False}
    assert model.requests == []
