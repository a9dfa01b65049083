"""slashkit's opencode plugin in the real opencode 1.18.33 TUI, driven in tmux: a chain typed at the prompt
runs step after step, and the person sees every line; the model's self-command tool compacts the session."""

import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from slashkit.adapters.opencode.install import BUILTIN_TOOL, config_dir, install
from tests.support.openai_server import OpenAIServer, Turn, text, tool_call
from tests.support.opencode_cli import isolated_env, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it"),
]


class Pane:
    """The TUI in a private tmux server, which is killed when the test ends."""

    def __init__(self, socket: Path) -> None:
        self.socket = str(socket)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=10).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "tui")

    def wait_for(self, words: str, timeout: float = 90.0) -> str:
        return self.wait_for_every([words], timeout)

    def wait_for_every(self, lines: list[str], timeout: float = 90.0) -> str:
        """The screen once it shows every one of `lines`. Under load the TUI may draw a line a moment after the one
        that follows it: in a whole run of the suite (2026-12-07), the screen taken as a chain's last line came lacked
        one of the lines before it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if all(line in shown for line in lines):
                return shown
            time.sleep(0.5)
        shown = self.screen()
        missing = [line for line in lines if line not in shown]
        raise TimeoutError(f"{missing!r} not on the screen within {timeout:g} s:\n{shown}")

    def open_opencode(self, project: Path, home: Path) -> None:
        """Starts opencode's TUI in `project` with the plugin installed, offline, and waits for its prompt."""
        install(config_dir(project))
        env = " ".join(f"{key}={shlex.quote(value)}" for key, value in isolated_env(home).items())
        command = f"env -i {env} {shlex.quote(str(opencode_path()))}"
        self.tmux("new-session", "-d", "-x", "140", "-y", "60", "-s", "tui", "-c", str(project), command)
        self.wait_for("Ask anything")

    def type_line(self, line: str) -> None:
        """Types a line at the prompt and sends it once the TUI shows it."""
        self.tmux("send-keys", "-t", "tui", "-l", line)
        self.wait_for(line)
        self.tmux("send-keys", "-t", "tui", "Enter")


#: The core's progress while the first step of `ship` (`/greet $1 && /greet done`) runs, as the TUI's toast shows it
#: (it wraps the rest, `/greet done`, at the toast's width); and what any progress of a chain starts with.
PROGRESS_FIRST = "chain 1/2: /greet Bob · next"
PROGRESS_MARK = "chain "


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    made = Pane(tmp_path / "tmux.sock")
    yield made
    made.tmux("kill-server")


def test_a_chain_typed_in_the_tui_runs_both_steps_and_shows_every_line(tmp_path: Path, pane: Pane) -> None:
    with OpenAIServer([text("Hello Bob"), text("Hello Carol")]) as model:
        pane.open_opencode(write_project(tmp_path / "project", model.url, {"greet": "Greet $1 warmly."}), tmp_path)
        pane.type_line("/greet Bob && /greet Carol")
        order = ["1/2: /greet Bob", "Hello Bob", "2/2: /greet Carol", "Hello Carol", "all 2 command(s) ran"]
        shown = pane.wait_for_every(order)
        asked = [r.last_user_text().split("\n\n")[0] for r in model.main_requests]
    assert asked == ["Greet Bob warmly.", "Greet Carol warmly."]
    places = [shown.index(words) for words in order]
    assert places == sorted(places)


def test_a_line_led_by_compact_typed_in_the_tui_compacts_then_runs_the_next_command(tmp_path: Path, pane: Pane) -> None:
    # The TUI sends this line as a plain prompt, not as a command (/compact is its own built-in).
    with OpenAIServer([text("Hello there"), text("Hello Carol")]) as model:
        pane.open_opencode(write_project(tmp_path / "project", model.url, {"greet": "Greet $1 warmly."}), tmp_path)
        pane.type_line("hi")
        pane.wait_for("Hello there")
        pane.type_line("/compact && /greet Carol")
        order = ["1/2: /compact", "2/2: /greet Carol", "Hello Carol", "all 2 command(s) ran"]
        screen = pane.wait_for_every(order)
        kinds = [r.kind for r in model.requests if r.kind != "title"]
        asked = [r.last_user_text().split("\n\n")[0] for r in model.main_requests]
    assert kinds == ["main", "summary", "main"]
    assert asked == ["hi", "Greet Carol warmly."]
    places = [screen.index(words) for words in order]
    assert places == sorted(places)


def test_the_models_self_command_tool_compacts_the_tui_session_once_its_turn_ended(tmp_path: Path, pane: Pane) -> None:
    script: list[Turn] = [tool_call(BUILTIN_TOOL, {"command": "compact"}), text("It will compact after this turn.")]
    with OpenAIServer(script) as model:
        pane.open_opencode(write_project(tmp_path / "project", model.url), tmp_path)
        pane.type_line("please compact yourself")
        pane.wait_for("It will compact after this turn.")
        deadline = time.monotonic() + 60
        while "summary" not in [r.kind for r in model.requests] and time.monotonic() < deadline:
            time.sleep(0.5)
        kinds = [r.kind for r in model.requests if r.kind != "title"]
    # The turn that asked for it ended first; then the session was summarized (no lich in this environment).
    assert kinds == ["main", "main", "summary"]


def test_a_saved_chain_typed_in_the_tui_shows_its_progress_while_a_step_runs_and_takes_it_away_at_the_end(
    tmp_path: Path, pane: Pane
) -> None:
    held = threading.Event()
    screens = tmp_path / "screens"
    screens.mkdir()
    with OpenAIServer([text("Hello there"), text("Hello Bob", hold=held), text("Hello done")]) as model:
        project = write_project(tmp_path / "project", model.url, {"greet": "Greet $1 warmly."})
        chains = project / ".slashkit" / "chains"
        chains.mkdir(parents=True)
        (chains / "ship.md").write_text(
            "---\ndescription: Greet someone, then say done\n---\n/greet $1 && /greet done\n"
        )
        pane.open_opencode(project, tmp_path)
        # The session is open before the chain: a toast that comes as the TUI opens a new session is drawn, in about
        # 1 run of 4, as an empty bar that stays (opencode 1.18.33; docs/opencode.md, "Saved chains and progress").
        pane.type_line("hi")
        pane.wait_for("Hello there")
        pane.type_line("/ship Bob")
        # The model holds its answer to the first step: the step runs, and the TUI says so.
        mid = pane.wait_for(PROGRESS_FIRST)
        (screens / "mid-step.txt").write_text(mid)
        held.set()
        end = pane.wait_for("all 2 command(s) ran")
        # The toast of the last step leaves once the chain ended.
        deadline = time.monotonic() + 10
        while PROGRESS_MARK in end and time.monotonic() < deadline:
            time.sleep(0.5)
            end = pane.screen()
        (screens / "after-end.txt").write_text(end)
    assert PROGRESS_MARK not in end, end
