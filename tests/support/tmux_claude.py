"""Drive the real Claude Code CLI interactively, in a detached tmux session on a private socket.

A mod may act only in an interactive session (``session.start`` says ``isInteractive: true``, which
``-p`` never does), so some end-to-end tests type into the real TUI:

    with TmuxClaude(cwd=project, isolation=tmp_path, model=server, plugin_dirs=[plugin]) as cli:
        cli.send("Say hello")
        cli.wait_for("Hello from the script", timeout=20)
        entries = cli.wait_for_transcript(lambda es: any(e.get("type") == "assistant" for e in es))

The session runs ``tmux -L <private socket> -f <own conf> new-session -d -x 200 -y 50`` with the isolated,
offline environment of :mod:`tests.support.claude_cli` and a pre-written ``.claude.json`` (onboarding
done, the fake key approved, the project trusted) so no first-run screen blocks. The CLI runs under
``timeout --foreground`` (it ends by itself after ``lifetime`` seconds); :meth:`TmuxClaude.close` kills
the tmux server and any process left from the pane.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from slashkit.adapters.bridge.shim import HELPER_MODULE
from tests.support import shared_helpers
from tests.support.claude_cli import (
    FAKE_API_KEY,
    Isolation,
    JsonObject,
    claude_path,
    isolated_env,
)
from tests.support.model_server import ModelServer

ScreenPredicate = Callable[[str], bool]
TranscriptPredicate = Callable[[list[JsonObject]], bool]

TMUX: Final = shutil.which("tmux") or "/usr/bin/tmux"
WIDTH: Final = 200
HEIGHT: Final = 50

#: The prompt box's marker (U+276F), at the start of the input line and of each echoed prompt.
PROMPT_MARK: Final = "\u276f"
# Measured on 2.1.328 (200x50, pre-written .claude.json): the banner "Claude Code v2.1.328" and the empty
# prompt line (PROMPT_MARK and a space) between two rules show within ~1 s.
_READY: Final = re.compile(r"Claude Code v\d[\s\S]*^" + PROMPT_MARK, re.MULTILINE)
# Screens that mean the pre-written config did not take: onboarding, trust dialog, API-key question.
_BLOCKERS: Final = (
    "Do you trust the files in this folder",
    "Unable to connect to Anthropic services",
    "Do you want to use this API key",
    "Choose the text style",
    "Select login method",
)
_TMUX_CONF: Final = """\
set -g status off
set -g focus-events on
set -g history-limit 20000
set -g escape-time 10
set -g remain-on-exit off
"""


def descendants(pid: int) -> list[int]:
    """PIDs of every process below ``pid`` (from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ")"
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    state = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return state.read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    return False


class TmuxClaude:
    """One interactive CLI in tmux. Use as a context manager, or :meth:`start` then :meth:`close`."""

    def __init__(
        self,
        *,
        cwd: Path,
        isolation: Isolation | Path,
        model: ModelServer | None = None,
        plugin_dirs: Sequence[Path] = (),
        mcp_configs: Sequence[Path | str] = (),
        extra_env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        width: int = WIDTH,
        height: int = HEIGHT,
        lifetime: float = 600.0,
        api_key: str = FAKE_API_KEY,
    ) -> None:
        self.cwd = cwd.resolve()
        self.iso = isolation if isinstance(isolation, Isolation) else Isolation.create(isolation)
        self._made_iso = not isinstance(isolation, Isolation)
        self._given_model = model
        self.model: ModelServer | None = model
        self._private_model = False
        self.plugin_dirs = list(plugin_dirs)
        self.mcp_configs = list(mcp_configs)
        self.extra_env = dict(extra_env or {})
        self.args = list(args)
        self.width = width
        self.height = height
        self.lifetime = lifetime
        self.api_key = api_key
        self.socket = f"slashkit-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.target = "claude"
        self.debug_file = self.iso.root / "debug.log"
        self._pane_pid: int | None = None
        self._socket_path: Path | None = None
        self._started = False
        self._closed = False

    # lifecycle

    def command(self) -> list[str]:
        """The CLI's argv inside the pane."""
        argv = [str(claude_path()), "--debug-file", str(self.debug_file)]
        for d in self.plugin_dirs:
            argv += ["--plugin-dir", str(d)]
        for c in self.mcp_configs:
            argv += ["--mcp-config", str(c)]
        return argv + self.args

    def start(self, ready_timeout: float = 30.0) -> TmuxClaude:
        if self._started:
            return self
        self._started = True
        if self.model is None:
            self.model = ModelServer(idle_timeout=max(self.lifetime, 120.0)).start()
            self._private_model = True
        elif not self.model.running:
            self.model.start()
        self.iso.write_claude_json(self.cwd, api_key=self.api_key)
        conf = self.iso.root / "tmux.conf"
        conf.write_text(_TMUX_CONF)
        env = isolated_env(self.iso, self.model.url, extra_env=self.extra_env, api_key=self.api_key)
        env.setdefault("TERM", "xterm-256color")
        # The pane runs sh: the CLI under `timeout --foreground` (it keeps the terminal's process group, so
        # the TUI can read the tty), then a line with its exit status, kept on screen for a while.
        script = 'timeout --foreground -k 5 "$@"; s=$?; printf "\\n[claude exited with status %s]\\n" "$s"; sleep 30'
        pane_cmd = ["sh", "-c", script, "sh", str(int(self.lifetime)), *self.command()]
        self._tmux(
            "-f",
            str(conf),
            "new-session",
            "-d",
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-s",
            self.target,
            "-c",
            str(self.cwd),
            "--",
            *pane_cmd,
            env=env,
        )
        shown = self._tmux("display-message", "-p", "-t", self.target, "#{pane_pid} #{socket_path}").stdout.split()
        self._pane_pid = int(shown[0]) if shown and shown[0].isdigit() else None
        self._socket_path = Path(shown[1]) if len(shown) > 1 else None
        try:
            self.wait_ready(ready_timeout)
        except BaseException:
            self.close()
            raise
        return self

    def wait_ready(self, timeout: float = 30.0) -> str:
        """Wait for the banner and the prompt; fail at once on a first-run screen."""

        def ready(screen: str) -> bool:
            for blocker in _BLOCKERS:
                if blocker in screen:
                    raise AssertionError(f"the CLI shows a first-run screen ({blocker!r}):\n{screen}")
            if "[claude exited with status" in screen:
                raise AssertionError(f"the CLI exited before its prompt showed:\n{self.describe()}")
            return _READY.search(screen) is not None

        return self.wait_for(ready, timeout=timeout, what="the CLI's prompt")

    def close(self) -> None:
        """Kill the tmux server, then any process the pane left; stop a private model server."""
        if self._closed:
            return
        self._closed = True
        pids = descendants(self._pane_pid) if self._pane_pid else []
        if self._pane_pid:
            pids.insert(0, self._pane_pid)
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._tmux("kill-server", check=False)
        deadline = time.monotonic() + 5
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        for p in pids:
            if alive(p):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, signal.SIGKILL)
        if self._socket_path is not None:  # measured: tmux 3.3a leaves the socket file after kill-server
            self._socket_path.unlink(missing_ok=True)
        if self._private_model and self.model is not None:
            self.model.stop()
        if self._made_iso:
            self.iso.cleanup()

    def __enter__(self) -> TmuxClaude:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        """The pane's shell and every process below it (the CLI, its helpers)."""
        if self._pane_pid is None:
            return []
        return [self._pane_pid, *descendants(self._pane_pid)]

    def helpers(self) -> list[int]:
        """The slashkit helpers running for the CLI: below it (a helper of the session's own), or the person's shared
        one in its TMPDIR, which leaves the process tree of the session that started it."""
        found = []
        for pid in self.pids:
            with contextlib.suppress(OSError):
                if HELPER_MODULE in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    found.append(pid)
        return sorted({*found, *shared_helpers(self.iso.tmp)})

    # tmux

    def _tmux(
        self, *args: str, env: Mapping[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [TMUX, "-L", self.socket, *args],
            env=dict(env) if env is not None else None,
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:3])}… failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def screen(self, *, history: bool = False) -> str:
        """The pane as text (trailing blanks trimmed); ``history`` adds the scrollback."""
        args = ["capture-pane", "-p", "-t", self.target]
        if history:
            args += ["-S", "-"]
        proc = self._tmux(*args, check=False)
        if proc.returncode != 0:
            return f"<no screen: {proc.stderr.strip()}>"
        return "\n".join(line.rstrip() for line in proc.stdout.splitlines()).rstrip("\n")

    def send_keys(self, *keys: str) -> None:
        """tmux key names, as they are (``Enter``, ``Escape``, ``C-c``, ``BTab``, ``Up`` ...)."""
        self._tmux("send-keys", "-t", self.target, *keys)

    def type_text(self, text: str) -> None:
        """Type ``text`` literally (no Enter)."""
        self._tmux("send-keys", "-t", self.target, "-l", text)

    def input_line(self) -> str:
        """The text in the prompt box: the last line that starts with PROMPT_MARK, without the marker."""
        lines = [line for line in self.screen().splitlines() if line.startswith(PROMPT_MARK)]
        return lines[-1][1:].strip() if lines else ""

    def send(self, text: str, *, timeout: float = 10.0, dismiss_menu: bool = False) -> None:
        """Type ``text``, wait until the prompt box shows it, then press Enter.

        Waiting for the echo keeps Enter out of the typed burst (a fast burst may be taken as a paste,
        where Enter is a newline). Measured on 2.1.328: a slash command's autocompletion menu (shown
        under the prompt while the first word is typed) does not change what Enter submits once the
        text is complete, so no Escape is needed; ``dismiss_menu`` presses Escape before Enter anyway.
        """
        self.type_text(text)
        wanted = " ".join(text.split())
        self.wait_for(
            lambda _s: " ".join(self.input_line().split()).endswith(wanted),
            timeout=timeout,
            what=f"the prompt box to show {text!r}",
        )
        if dismiss_menu:
            self.send_keys("Escape")
        self.send_keys("Enter")

    # waiting

    def wait_for(
        self,
        condition: str | re.Pattern[str] | ScreenPredicate,
        *,
        timeout: float = 30.0,
        what: str | None = None,
        interval: float = 0.1,
    ) -> str:
        """Poll the screen until ``condition`` holds (a substring, a regex, or a predicate on the screen
        text); return that screen. On timeout raise AssertionError with the screen and the debug-log tail."""
        if isinstance(condition, str):
            needle = condition
            check: ScreenPredicate = lambda s: needle in s  # noqa: E731
            label = what or repr(needle)
        elif isinstance(condition, re.Pattern):
            pattern = condition
            check = lambda s: pattern.search(s) is not None  # noqa: E731
            label = what or f"/{pattern.pattern}/"
        else:
            check = condition
            label = what or str(getattr(condition, "__name__", "condition"))
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {label}\n{self.describe(screen)}")
            time.sleep(interval)

    # transcript

    @property
    def transcript_dir(self) -> Path:
        """``$CLAUDE_CONFIG_DIR/projects/<cwd with every non-alphanumeric char as "-">``."""
        return self.iso.transcript_dir(self.cwd)

    def transcript_files(self) -> list[Path]:
        d = self.transcript_dir
        return sorted(d.glob("*.jsonl"), key=lambda p: p.stat().st_mtime) if d.is_dir() else []

    def transcript_entries(self) -> list[JsonObject]:
        """Every entry of every session file of the project (oldest file first; a torn last line skipped)."""
        entries: list[JsonObject] = []
        for path in self.transcript_files():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    value = json.loads(line)
                    if isinstance(value, dict):
                        entries.append(value)
        return entries

    def wait_for_transcript(
        self, predicate: TranscriptPredicate, *, timeout: float = 30.0, what: str = "transcript condition"
    ) -> list[JsonObject]:
        deadline = time.monotonic() + timeout
        while True:
            entries = self.transcript_entries()
            if predicate(entries):
                return entries
            if time.monotonic() >= deadline:
                kinds = [f"{e.get('type')}/{e.get('subtype', '')}" for e in entries]
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what}; transcript entries: {kinds}\n{self.describe()}"
                )
            time.sleep(0.1)

    # diagnostics

    def debug_log(self) -> str:
        try:
            return self.debug_file.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def describe(self, screen: str | None = None) -> str:
        shown = self.screen() if screen is None else screen
        requests = self.model.describe() if self.model is not None else ""
        return (
            f"--- screen ({self.socket}) ---\n{shown}\n--- model requests ---\n{requests}\n"
            f"--- debug log (tail) ---\n{self.debug_log()[-3000:]}"
        )


def transcript_texts(entries: Sequence[JsonObject], type_: str) -> list[str]:
    """Text of the user/assistant entries of a transcript (content string or text blocks)."""
    texts: list[str] = []
    for e in entries:
        if e.get("type") != type_:
            continue
        content: Any = (e.get("message") or {}).get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return texts


def system_texts(entries: Sequence[JsonObject]) -> list[str]:
    """``content`` of the transcript's system entries (where an interactive ``$.ui.log`` line lands)."""
    return [str(e.get("content")) for e in entries if e.get("type") == "system" and "content" in e]
