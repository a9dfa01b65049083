"""Run the real opencode (`opencode serve`) isolated and offline from pytest, and drive it over its HTTP API.

Every server gets its own HOME and XDG_* dirs under a folder the test gives (normally `tmp_path`), an
environment built from scratch, and the `OPENCODE_DISABLE_*` variables that keep it off the network
(measured on opencode 1.18.33: no models fetch, no autoupdate, no share, no LSP download, no default
plugins, no Claude Code compatibility). Its model is a :class:`~tests.support.openai_server.OpenAIServer`
on 127.0.0.1, reached through the built-in `@ai-sdk/openai-compatible` provider, named in the project's
`opencode.json` for both `model` and `small_model`.

npm: opencode runs `npm install @opencode-ai/plugin@<its version>` in any config dir that holds a plugin
and waits for it (measured on 1.18.33: ~70 s of retries with no registry). Every server runs npm offline
(`npm_config_offline=true`) against the cache scripts/setup.sh seeded in `.tools/opencode/npm-cache`, so
that install succeeds from the cache in a few seconds.

The global config dir (`$XDG_CONFIG_HOME/opencode`) gets that install too, side by side with the project's
`.opencode`: about 5.5 of a first start's 7.5 s (measured on 1.18.33). What it installs is the same every time, so
it is installed once per checkout into `.tools/opencode/global-config-<version>` (by a first server with nothing
of slashkit in it) and each fresh HOME and project gets a hard-linked copy: opencode then finds its dependencies
in place and starts in about 2 s.

A server is started with :meth:`OpencodeServer.start`, which waits for its "listening" line (a request
sent before it can hang for good, measured on 1.18.33), and stops when its context exits, when the test
process dies (the child gets SIGKILL with its parent, by `PR_SET_PDEATHSIG`), or after `lifetime` seconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from tests.support import HELPER_ENV, shared_helpers, socket_tmpdir

JsonObject = dict[str, Any]

REPO_ROOT: Final = Path(__file__).resolve().parents[2]
OPENCODE_VERSION: Final = "1.18.33"
PROVIDER: Final = "scripted"
MODEL: Final = "model"

#: Everything opencode would fetch or start on its own, turned off (measured on 1.18.33).
OFFLINE_ENV: Final[Mapping[str, str]] = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "npm_config_offline": "true",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "npm_config_update_notifier": "false",
}
_LISTENING: Final = re.compile(r"listening on (http://[\d.]+:\d+)")


def opencode_path() -> Path | None:
    """The pinned opencode binary scripts/setup.sh installed ($SLASHKIT_OPENCODE first), or None."""
    named = os.environ.get("SLASHKIT_OPENCODE")
    path = Path(named) if named else REPO_ROOT / ".tools" / "opencode" / "node_modules" / ".bin" / "opencode"
    return path if path.exists() else None


def npm_cache() -> Path:
    """npm's cache that scripts/setup.sh seeded with `@opencode-ai/plugin` and its dependencies."""
    return Path(os.environ.get("SLASHKIT_OPENCODE_NPM_CACHE") or REPO_ROOT / ".tools" / "opencode" / "npm-cache")


def global_config() -> Path:
    """What opencode installs into a fresh global config dir, installed once per checkout (see the module's
    docstring); every call after the first finds it there."""
    made = npm_cache().parent / f"global-config-{OPENCODE_VERSION}"
    if made.exists():
        return made
    made.parent.mkdir(parents=True, exist_ok=True)
    with open(made.parent / "global-config.lock", "w") as lock:
        # Both pytest workers may ask at once: one installs, the other waits and finds it made.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            with tempfile.TemporaryDirectory(dir=made.parent) as scratch:
                base = Path(scratch)
                # opencode installs into its config dirs only when one holds a plugin (measured on 1.18.33): the
                # project holds one that does nothing.
                plugin = base / "project" / ".opencode" / "plugins" / "nothing.ts"
                plugin.parent.mkdir(parents=True)
                plugin.write_text("export const Nothing = async () => ({})\n")
                with OpencodeServer(base / "project", base, seed_config=False):
                    pass
                installed = base / "xdg" / "config" / "opencode"
                if not (installed / "node_modules" / "@opencode-ai" / "plugin").is_dir():
                    raise RuntimeError(f"opencode installed no @opencode-ai/plugin into {installed}")
                # Its own config file stays out: a test may write one before its server starts.
                (installed / "opencode.jsonc").unlink(missing_ok=True)
                installed.rename(made)
    return made


def _seed_config(into: Path) -> None:
    """Gives a fresh config dir what opencode would install into it, hard-linked (files opencode rewrites are
    replaced, not written in place, so the copy made once stays as it was)."""
    if (into / "node_modules").exists():
        return
    shutil.copytree(global_config(), into, copy_function=os.link, symlinks=True, dirs_exist_ok=True)


def isolated_env(base: Path, extra: Mapping[str, str] | None = None, seed_config: bool = True) -> dict[str, str]:
    """An environment from scratch whose HOME and XDG dirs live under `base`, its global config dir holding what
    opencode installs there (unless `seed_config` is false)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": os.environ.get("TERM", "xterm-256color"),
        "HOME": str(base / "home"),
        "XDG_CONFIG_HOME": str(base / "xdg" / "config"),
        "XDG_DATA_HOME": str(base / "xdg" / "data"),
        "XDG_CACHE_HOME": str(base / "xdg" / "cache"),
        "XDG_STATE_HOME": str(base / "xdg" / "state"),
        "TMPDIR": str(socket_tmpdir(base / "tmp")),
        "npm_config_cache": str(npm_cache()),
        **OFFLINE_ENV,
        **HELPER_ENV,
    }
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    if seed_config:
        _seed_config(Path(env["XDG_CONFIG_HOME"]) / "opencode")
    env.update(extra or {})
    return env


def write_project(folder: Path, model_url: str, commands: Mapping[str, str] | None = None) -> Path:
    """Writes a project whose `opencode.json` points both models at `model_url`, with these custom commands
    (name → template body) in `.opencode/command/NAME.md`."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": model_url, "apiKey": "any"},
                "models": {
                    MODEL: {"name": "Scripted model", "tool_call": True, "limit": {"context": 64000, "output": 4000}}
                },
            }
        },
        "model": f"{PROVIDER}/{MODEL}",
        "small_model": f"{PROVIDER}/{MODEL}",
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(config, indent=2))
    _seed_config(folder / ".opencode")
    for name, body in (commands or {}).items():
        path = folder / ".opencode" / "command" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndescription: {name} (test command)\n---\n{body}\n")
    return folder


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): the kernel sends SIGKILL to the server when the test process ends, however it ends.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


@dataclass
class Call:
    """A request sent from a thread (a command or prompt call holds its request until its turn ended)."""

    thread: threading.Thread
    status: int | None = None
    body: Any = None
    error: str | None = None

    def wait(self, timeout: float = 60.0) -> Call:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError(f"the call got no answer within {timeout:g} s")
        return self


@dataclass
class OpencodeServer:
    """One `opencode serve` on 127.0.0.1 in `project`, with its event stream read into :attr:`events`."""

    project: Path
    base: Path
    env_extra: Mapping[str, str] = field(default_factory=dict)
    lifetime: float = 300.0
    start_timeout: float = 60.0
    seed_config: bool = True
    url: str = ""
    events: list[JsonObject] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    _process: subprocess.Popen[str] | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _changed: threading.Condition = field(init=False)
    _last_event_at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._changed = threading.Condition(self._lock)

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> OpencodeServer:
        binary = opencode_path()
        if binary is None:
            raise FileNotFoundError("no opencode binary: run scripts/setup.sh")
        command = [str(binary), "serve", "--port", "0", "--hostname", "127.0.0.1"]
        self._process = subprocess.Popen(
            command,
            cwd=self.project,
            env=isolated_env(self.base, self.env_extra, self.seed_config),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        reader = threading.Thread(target=self._read_output, daemon=True)
        reader.start()
        threading.Thread(target=self._end_after_lifetime, daemon=True).start()
        if not self._wait(
            lambda: bool(self.url) or self._process is None or self._process.poll() is not None, self.start_timeout
        ):
            self.stop()
            raise TimeoutError(f"opencode did not say 'listening' within {self.start_timeout:g} s:\n{self.log()}")
        if not self.url:
            # The process may be seen gone before its last lines were read: read them to the end first.
            reader.join(5.0)
            raise RuntimeError(f"opencode exited before it listened:\n{self.log()}")
        threading.Thread(target=self._read_events, daemon=True).start()
        self._wait(lambda: any(e.get("type") == "server.connected" for e in self.events), 10.0)
        return self

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def kill(self) -> None:
        """SIGKILLs the server's process group, as a crash would: nothing of it ends in order."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def __enter__(self) -> OpencodeServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def helper_pids(self) -> list[int]:
        """The slashkit helpers this server's plugin started and that still run: descendants of the server whose
        command line runs `slashkit.adapters.bridge.helper` (a helper starts a session of its own, so its process
        group is not the server's), and the person's shared helper its TMPDIR holds (which leaves the server's
        process tree)."""
        process = self._process
        if process is None:
            return []
        parents: dict[int, int] = {}
        helpers = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                # The parent's pid is the second field after the command name, which may hold spaces.
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                # A helper that exited and was not reaped yet has an empty command line.
                if b"slashkit.adapters.bridge.helper" in (entry / "cmdline").read_bytes().split(b"\0"):
                    helpers.append(int(entry.name))

        def below_server(pid: int) -> bool:
            seen = 0
            while pid > 1 and seen < 64:
                if pid == process.pid:
                    return True
                pid, seen = parents.get(pid, 0), seen + 1
            return False

        shared = shared_helpers(Path(isolated_env(self.base, self.env_extra)["TMPDIR"]))
        return sorted({pid for pid in helpers if below_server(pid)} | shared)

    def log(self) -> str:
        """What the server printed, for a failure message."""
        with self._lock:
            return "".join(self.output)[-6000:]

    def _read_output(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        for line in process.stdout:
            with self._changed:
                self.output.append(line)
                found = _LISTENING.search(line)
                if found and not self.url:
                    self.url = found.group(1)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _end_after_lifetime(self) -> None:
        deadline = time.monotonic() + self.lifetime
        while self._process is not None and time.monotonic() < deadline:
            time.sleep(0.5)
        self.stop()

    def _read_events(self) -> None:
        connection = http.client.HTTPConnection(self._host, self._port, timeout=None)
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection.request("GET", "/event", headers={"accept": "text/event-stream"})
            response = connection.getresponse()
            for raw in response:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line.startswith("data:"):
                    continue
                with contextlib.suppress(json.JSONDecodeError):
                    event = json.loads(line[5:])
                    with self._changed:
                        self.events.append(event)
                        self._last_event_at = time.monotonic()
                        self._changed.notify_all()

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.5))
        return True

    # --- the HTTP API -------------------------------------------------------------------------------

    @property
    def _host(self) -> str:
        return self.url.split("//", 1)[1].rsplit(":", 1)[0]

    @property
    def _port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def request(self, method: str, path: str, body: Any = None, timeout: float = 30.0) -> tuple[int, Any]:
        """Sends one request; returns its status and its JSON body (or text)."""
        connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"content-type": "application/json"} if data is not None else {}
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read().decode("utf-8", "replace")
        finally:
            connection.close()
        try:
            return response.status, json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return response.status, raw

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120.0) -> Call:
        """Sends one request from a thread, so the test can go on while its turn runs."""
        holder: list[Call] = []

        def send() -> None:
            try:
                holder[0].status, holder[0].body = self.request(method, path, body, timeout)
            except (OSError, http.client.HTTPException) as err:
                holder[0].error = str(err)

        thread = threading.Thread(target=send, daemon=True)
        holder.append(Call(thread))
        thread.start()
        return holder[0]

    def create_session(self) -> str:
        # The first request makes the project's instance, which installs the plugin's npm package first: ~15 s of
        # npm alone on a loaded 2-core machine, and over a minute with opencode's own start beside other work.
        status, body = self.request("POST", "/session", {}, timeout=180.0)
        assert status == 200, (status, body)
        return str(body["id"])

    def command(self, session: str, name: str, arguments: str = "") -> Call:
        """Sends a custom command as the TUI does when one is typed: `/name arguments`."""
        return self.call("POST", f"/session/{session}/command", {"command": name, "arguments": arguments})

    def prompt(self, session: str, text: str) -> Call:
        """Sends a prompt, as a person's Enter does (measured on 1.18.33: the TUI posts every line it does not
        take for a custom command here, one led by its own built-in such as `/compact` included)."""
        return self.call("POST", f"/session/{session}/message", {"parts": [{"type": "text", "text": text}]})

    def messages(self, session: str) -> list[JsonObject]:
        """The session's messages, each `{info, parts}`, oldest first."""
        status, body = self.request("GET", f"/session/{session}/message")
        assert status == 200, (status, body)
        return list(body)

    def ignored_lines(self, session: str) -> list[str]:
        """The transcript lines the model never sees: text parts marked `ignored` in user messages."""
        return [
            str(part.get("text"))
            for message in self.messages(session)
            for part in message.get("parts", [])
            if part.get("type") == "text" and part.get("ignored") is True
        ]

    # --- the event stream ---------------------------------------------------------------------------

    def of_type(self, kind: str, session: str | None = None) -> list[JsonObject]:
        """The events of this type so far (for this session when one is named)."""
        with self._lock:
            events = list(self.events)
        return [e for e in events if e.get("type") == kind and (session is None or _session_of(e) == session)]

    def wait_event(self, kind: str, session: str | None = None, count: int = 1, timeout: float = 60.0) -> JsonObject:
        """Waits until `count` events of this type came; returns the last of them."""
        if not self._wait(lambda: len(self.of_type(kind, session)) >= count, timeout):
            seen = [e.get("type") for e in self.events][-40:]
            raise TimeoutError(f"no {count}x {kind} within {timeout:g} s; last events: {seen}\n{self.log()}")
        return self.of_type(kind, session)[count - 1]

    def wait_quiet(self, session: str, quiet: float = 2.0, timeout: float = 90.0) -> None:
        """Waits until the session is idle and no event came for `quiet` seconds (a chain's next step starts
        shortly after an idle)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while time.monotonic() < deadline:
                calm = time.monotonic() - self._last_event_at
                if calm >= quiet and self.is_idle(session):
                    return
                self._changed.wait(max(quiet - calm, 0.1))
        raise TimeoutError(f"session {session} did not go quiet within {timeout:g} s\n{self.log()}")

    def is_idle(self, session: str) -> bool:
        statuses = [e for e in self.of_type("session.status", session)]
        last = statuses[-1]["properties"]["status"]["type"] if statuses else "idle"
        return bool(last == "idle")


def _session_of(event: JsonObject) -> str | None:
    properties = event.get("properties") or {}
    found = properties.get("sessionID") or (properties.get("info") or {}).get("sessionID")
    if found is None and isinstance(properties.get("part"), dict):
        found = properties["part"].get("sessionID")
    return None if found is None else str(found)


def texts_of(messages: Sequence[JsonObject], role: str) -> list[str]:
    """The text parts of the messages of this role that the model sees (ignored parts left out)."""
    return [
        str(part.get("text"))
        for message in messages
        if (message.get("info") or {}).get("role") == role
        for part in message.get("parts", [])
        if part.get("type") == "text" and not part.get("ignored") and not part.get("synthetic")
    ]
