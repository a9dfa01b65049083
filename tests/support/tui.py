"""A pi-like agent's TUI (pi's, omp's) in a detached tmux session on a socket in the test's own folder, on a scripted
model: `tui_on` starts the model, lays the agent out, starts its TUI, and stops all three whatever the test did."""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, TypeVar

from tests.support.node_agent import NodeAgent
from tests.support.openai_server import OpenAIServer, Turn, text

A = TypeVar("A", bound=NodeAgent)


class Tui:
    """An agent's TUI in a detached tmux session on the socket `socket`, started as `argv` in `cwd` with only
    `env`."""

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


@contextmanager
def tui_on(
    agent: A, turns: Sequence[Turn], templates: dict[str, str], chains: Mapping[str, str] | None = None
) -> Iterator[tuple[Tui, OpenAIServer, A]]:
    """The scripted model answering `turns`, `agent` laid out on it with these prompt templates and saved chains,
    and its TUI started in `agent.root`; the TUI and the model are stopped when the block ends."""
    with OpenAIServer(list(turns)) as model:
        agent.setup(model.url, templates, chains)
        tui = Tui(agent.tui_argv(), agent.env(), agent.project, agent.root / "tmux.sock")
        try:
            yield tui, model, agent
        finally:
            tui.close()


#: A saved chain of two steps over the templates `greet` and `bye`, for the status line's tests.
SHIP: Final = {"ship": "---\ndescription: Ships it\n---\n/greet $1 && /bye $1\n"}


def saved_chain_screens(agent: NodeAgent, ready: str) -> tuple[str, str, OpenAIServer]:
    """Types `/ship Bob` (SHIP) into `agent`'s TUI once the screen shows `ready`, with the model holding its first
    answer: the screen while step 1 surely runs, the one once the chain ended and its status went, and the model.
    Both screens are kept in the agent's folder (`screen-mid-chain.txt`, `screen-after-chain.txt`)."""
    hold = threading.Event()
    turns = [text("ANSWER ONE", hold=hold), text("ANSWER TWO")]
    templates = {"greet": "Say hello to $1", "bye": "Say bye to $1"}
    with tui_on(agent, turns, templates, SHIP) as (tui, model, _):
        tui.wait(lambda s: ready in s)
        tui.type("/ship Bob")
        mid = tui.wait(lambda s: "Say hello to Bob" in s and len(model.requests) == 1)
        hold.set()
        end = tui.wait(lambda s: "all 2 command(s) ran" in s and "chain 2/2" not in s)
    (agent.root / "screen-mid-chain.txt").write_text(mid)
    (agent.root / "screen-after-chain.txt").write_text(end)
    return mid, end, model


def status_lines(screen: str) -> list[str]:
    """The lines of a screen that show a chain's progress (`chain 1/2: ...`)."""
    return [line.strip() for line in screen.splitlines() if line.strip().startswith("chain ")]
