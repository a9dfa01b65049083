"""Run the real Claude Code CLI headless, isolated and offline, from pytest.

Every run gets its own HOME, CLAUDE_CONFIG_DIR, XDG_* dirs and TMPDIR (an :class:`Isolation`, normally
under a pytest ``tmp_path``), a fake API key, and an environment built from scratch (nothing of the
caller's ``ANTHROPIC_*``/``CLAUDE_*`` leaks in). It never reaches the network:

- ``ANTHROPIC_BASE_URL`` points at a :class:`~tests.support.model_server.ModelServer` on 127.0.0.1: the
  one the test gives, else a private one with an empty script that lives for the run (it answers
  ``count_tokens``, which ``/context`` calls, and fails any model turn with a 500).
  Measured on 2.1.328: without a local base URL the CLI fetches "remote settings" and "policy limits"
  from api.anthropic.com, five retries each with backoff, which costs ~18 s per run even when every
  connection is refused; with a 127.0.0.1 base URL it skips them.
- ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` (measured: skips the bootstrap fetch, plugin
  auto-update and the 1P event export; with it no connection left the machine), plus
  ``DISABLE_TELEMETRY``, ``DISABLE_AUTOUPDATER``, ``DISABLE_ERROR_REPORTING``, ``DISABLE_BUG_COMMAND``,
  ``CLAUDE_CODE_MAX_RETRIES=0`` (a scripted HTTP error is not retried).
- ``HTTPS_PROXY``/``HTTP_PROXY`` point at that same server, which refuses and records any attempt to
  reach another host (kind ``proxy``); ``NO_PROXY`` keeps 127.0.0.1 direct. Measured: a mod's
  ``$.http.fetch`` over a ``socketPath`` and to 127.0.0.1 is unaffected by the proxy.

Entry points: :func:`validate`, :func:`run_print`, :func:`run_streaming` (and :class:`StreamingRun` for
a session fed several user messages).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from tests.support import HELPER_ENV, socket_tmpdir
from tests.support.model_server import ModelServer

JsonObject = dict[str, Any]
EventPredicate = Callable[[Sequence[JsonObject]], bool]

REPO_ROOT: Final = Path(__file__).resolve().parents[2]
CLI_VERSION: Final = "2.1.328"
FAKE_API_KEY: Final = "sk-ant-api03-slashkit-offline-test-key-0000000000000000000000000000000"

#: Environment that turns off everything the CLI would fetch or report on its own (verified on 2.1.328).
OFFLINE_ENV: Final[Mapping[str, str]] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "NO_PROXY": "127.0.0.1,localhost,::1",
    "no_proxy": "127.0.0.1,localhost,::1",
}

#: Variables of the caller's environment a run keeps (everything else is dropped).
PASSED_THROUGH: Final = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME", "SHELL")


def claude_path() -> Path:
    """The CLI: $SLASHKIT_CLAUDE, else the pinned one that scripts/setup.sh installs in the clone."""
    override = os.environ.get("SLASHKIT_CLAUDE")
    if override:
        return Path(override)
    return REPO_ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"


def cli_available() -> bool:
    path = claude_path()
    return path.exists() and os.access(path, os.X_OK)


def project_key(project_dir: Path) -> str:
    """The folder name the CLI gives a project under ``$CLAUDE_CONFIG_DIR/projects``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project_dir))


# --- isolation -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Isolation:
    """A private HOME / config / XDG / TMPDIR set for one or more CLI runs.

    ``tmp`` is ``root/tmp`` unless that path is too long for Unix sockets, then a short folder in /tmp
    (``tests.support.socket_tmpdir``; ``root/tmp`` is a symlink to it) that :meth:`cleanup` removes.
    """

    root: Path
    home: Path
    config_dir: Path
    xdg_config: Path
    xdg_data: Path
    xdg_cache: Path
    xdg_state: Path
    tmp: Path
    owns_short_tmp: bool = False

    @classmethod
    def create(cls, base: Path, prefix: str = "claude-") -> Isolation:
        """A fresh isolation in a new folder under ``base`` (e.g. a pytest tmp_path)."""
        base.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=base)).resolve()
        home = root / "home"
        dirs = {
            "home": home,
            "config_dir": home / ".claude",
            "xdg_config": home / ".config",
            "xdg_data": home / ".local" / "share",
            "xdg_cache": home / ".cache",
            "xdg_state": home / ".local" / "state",
        }
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        # The CLI listens on $TMPDIR/cc-socks/<pid>.sock and the shared helper under it too: a short TMPDIR.
        tmp = socket_tmpdir(root / "tmp")
        short = tmp != root / "tmp"
        return cls(root=root, tmp=tmp, owns_short_tmp=short, **dirs)

    def cleanup(self) -> None:
        """Remove the short TMPDIR, if one was made outside ``root`` (``root`` is the caller's to remove)."""
        if self.owns_short_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def transcript_dir(self, project_dir: Path) -> Path:
        return self.config_dir / "projects" / project_key(project_dir.resolve())

    def write_claude_json(self, project_dir: Path, api_key: str = FAKE_API_KEY, theme: str = "dark") -> Path:
        """Pre-write ``$CLAUDE_CONFIG_DIR/.claude.json`` so no first-run screen blocks an interactive CLI."""
        path = self.config_dir / ".claude.json"
        data: JsonObject = json.loads(path.read_text()) if path.exists() else {}
        data.update(
            hasCompletedOnboarding=True,
            lastOnboardingVersion=CLI_VERSION,
            theme=theme,
            customApiKeyResponses={"approved": [api_key[-20:]], "rejected": []},
        )
        projects = data.setdefault("projects", {})
        entry = projects.setdefault(str(project_dir.resolve()), {})
        entry.update(hasTrustDialogAccepted=True, hasCompletedProjectOnboarding=True)
        path.write_text(json.dumps(data, indent=2))
        return path


def isolated_env(
    iso: Isolation,
    base_url: str,
    *,
    extra_env: Mapping[str, str] | None = None,
    api_key: str = FAKE_API_KEY,
) -> dict[str, str]:
    """The full environment of a CLI run: built from scratch, isolated, offline; ``extra_env`` last."""
    env = {k: os.environ[k] for k in PASSED_THROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(OFFLINE_ENV)
    env.update(HELPER_ENV)
    env.update(
        HOME=str(iso.home),
        CLAUDE_CONFIG_DIR=str(iso.config_dir),
        XDG_CONFIG_HOME=str(iso.xdg_config),
        XDG_DATA_HOME=str(iso.xdg_data),
        XDG_CACHE_HOME=str(iso.xdg_cache),
        XDG_STATE_HOME=str(iso.xdg_state),
        TMPDIR=str(iso.tmp),
        ANTHROPIC_API_KEY=api_key,
        ANTHROPIC_BASE_URL=base_url,
        HTTPS_PROXY=base_url,
        HTTP_PROXY=base_url,
        https_proxy=base_url,
        http_proxy=base_url,
    )
    env.update(extra_env or {})
    return env


@contextlib.contextmanager
def model_or_private(model: ModelServer | None) -> Iterator[ModelServer]:
    """The given server, or a private one with an empty script for the block's duration."""
    if model is not None:
        if not model.running:
            model.start()
        yield model
        return
    with ModelServer(idle_timeout=120.0) as private:
        yield private


def _isolation_for(isolation: Isolation | Path | None) -> tuple[Isolation, Callable[[], None]]:
    """An Isolation and what to do with it after the run.

    Given an Isolation: nothing (it is the caller's). A folder: a fresh Isolation in it whose short TMPDIR
    (if any) is removed after the run; the folder is the caller's (a pytest tmp_path). None: a throwaway
    Isolation under the system temp dir, removed entirely after the run.
    """
    if isinstance(isolation, Isolation):
        return isolation, lambda: None
    if isolation is not None:
        made = Isolation.create(isolation)
        return made, made.cleanup
    throwaway = Isolation.create(Path(tempfile.gettempdir()), prefix="slashkit-claude-")

    def dispose() -> None:
        throwaway.cleanup()
        shutil.rmtree(throwaway.root, ignore_errors=True)

    return throwaway, dispose


# --- results ---------------------------------------------------------------------------------------


def parse_stream(stdout: str) -> tuple[list[JsonObject], list[str]]:
    """stream-json lines → (events, lines that were not JSON objects)."""
    events: list[JsonObject] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if isinstance(value, dict):
            events.append(value)
        else:
            other.append(line)
    return events, other


def ui_log_texts(events: Sequence[JsonObject], plugin: str | None = None) -> list[str]:
    return [
        str(e.get("text"))
        for e in events
        if e.get("type") == "system" and e.get("subtype") == "ui_log" and (plugin is None or e.get("plugin") == plugin)
    ]


@dataclass(frozen=True)
class RunResult:
    """What a CLI run left: exit code, output, parsed stream-json events, the debug log."""

    argv: tuple[str, ...]
    exit_code: int | None  # None: it had to be killed
    stdout: str
    stderr: str
    events: tuple[JsonObject, ...]
    non_json: tuple[str, ...]
    debug_log: str
    duration: float
    timed_out: bool
    isolation: Isolation
    model: ModelServer | None = None  # the server the run talked to (a private one when none was given)
    until_met: bool | None = None  # run_streaming: whether `until` became true

    def of(self, type_: str, subtype: str | None = None) -> list[JsonObject]:
        return [e for e in self.events if e.get("type") == type_ and (subtype is None or e.get("subtype") == subtype)]

    def ui_logs(self, plugin: str | None = None) -> list[str]:
        """The ``$.ui.log`` texts (``{"type":"system","subtype":"ui_log","plugin":…,"text":…}``), in order."""
        return ui_log_texts(self.events, plugin)

    @property
    def ui_log_events(self) -> list[JsonObject]:
        return self.of("system", "ui_log")

    @property
    def toasts(self) -> list[str]:
        return [str(e.get("text")) for e in self.of("system", "ui_toast")]

    @property
    def init(self) -> JsonObject | None:
        inits = self.of("system", "init")
        return inits[0] if inits else None

    @property
    def results(self) -> list[JsonObject]:
        return self.of("result")

    @property
    def session_id(self) -> str | None:
        return next((str(e["session_id"]) for e in self.events if "session_id" in e), None)

    def assistant_texts(self) -> list[str]:
        """Text blocks of the assistant messages (model answers and ``<synthetic>`` command output)."""
        texts: list[str] = []
        for e in self.of("assistant"):
            content = (e.get("message") or {}).get("content") or []
            texts += [str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return texts

    def load_errors(self) -> list[str]:
        """Debug-log lines that say a mod did not load, and [ERROR] lines (stream-json hides load errors)."""
        return [
            line
            for line in self.debug_log.splitlines()
            if "did not load" in line or ("[ERROR]" in line and "hooks module" in line)
        ]

    def describe(self, limit: int = 6000) -> str:
        """Everything worth reading when a test fails: command, exit, stderr, events, debug-log tail."""
        events = "\n".join(json.dumps(e)[:400] for e in self.events)
        return (
            f"argv: {' '.join(self.argv)}\nexit: {self.exit_code} timed_out={self.timed_out} "
            f"duration={self.duration:.2f}s\nstderr:\n{self.stderr[-limit:]}\nevents:\n{events[-limit:]}\n"
            f"non-json stdout:\n{chr(10).join(self.non_json)[-limit:]}\n"
            f"load errors:\n{chr(10).join(self.load_errors())}\n"
            f"debug log (tail):\n{self.debug_log[-limit // 2 :]}"
        )


# --- validate --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidateResult:
    """``claude plugin validate``: its exit code, output, and the errors/warnings it found."""

    exit_code: int | None
    stdout: str
    stderr: str
    report: JsonObject | None  # the --json report
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.errors

    def describe(self) -> str:
        return (
            f"exit {self.exit_code}; {len(self.errors)} error(s), {len(self.warnings)} warning(s)\n"
            + "\n".join(f"error: {e}" for e in self.errors)
            + "\n"
            + "\n".join(f"warning: {w}" for w in self.warnings)
            + f"\nstdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}"
        )


def _finding_text(file: str, finding: object) -> str:
    if isinstance(finding, dict):
        where = finding.get("path") or ""
        return f"{file}: {where}: {finding.get('message')}" if where else f"{file}: {finding.get('message')}"
    return f"{file}: {finding}"


def _findings(report: JsonObject, key: str) -> tuple[str, ...]:
    """``key`` ("errors", "warnings", "notes") of the manifest and of every content file, as lines.

    Measured on 2.1.328: the --json report holds ``manifest`` and ``contents[]``, each with ``file``,
    ``errors``, ``warnings`` (objects with ``path``, ``message``, ``code``) and ``notes`` (strings); the
    plugin-directory findings (README, LICENSE, icon) sit apart under ``directory`` and are advisory.
    """
    parts = [report.get("manifest") or {}, *(report.get("contents") or [])]
    return tuple(
        _finding_text(str(part.get("file", "")), f)
        for part in parts
        if isinstance(part, dict)
        for f in part.get(key) or []
    )


def single_module_plugin(folder: Path, name: str, mod: str) -> Path:
    """Lays out a test plugin whose one hooks module is `mod` in `folder`, and asserts the CLI validates it."""
    manifest = {"name": name, "version": "0.0.1", "description": "test probe", "author": {"name": "slashkit"}}
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "hooks").mkdir()
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"modules": ["./mod.ts"]}))
    (folder / "hooks" / "mod.ts").write_text(mod)
    checked = validate(folder)
    assert checked.ok, checked.describe()
    return folder


def validate(
    plugin_dir: Path,
    *,
    isolation: Isolation | Path | None = None,
    json_output: bool = True,
    strict: bool = False,
    timeout: float = 60.0,
) -> ValidateResult:
    """``claude plugin validate DIR [--json] [--strict]`` in an isolated, offline environment."""
    iso, dispose = _isolation_for(isolation)
    argv = [str(claude_path()), "plugin", "validate", str(plugin_dir)]
    if json_output:
        argv.append("--json")
    if strict:
        argv.append("--strict")
    try:
        with model_or_private(None) as server:
            code, out, err, _ = run_bounded(argv, cwd=iso.root, env=isolated_env(iso, server.url), timeout=timeout)
    finally:
        dispose()
    report: JsonObject | None = None
    if json_output:
        with contextlib.suppress(ValueError):
            parsed = json.loads(out)
            report = parsed if isinstance(parsed, dict) else None
    if report is not None:
        errors, warnings, notes = (_findings(report, k) for k in ("errors", "warnings", "notes"))
    else:  # text mode: the "✘"/"⚠" headed sections are not parsed further; rely on the exit code
        errors = (out.strip(),) if code != 0 else ()
        warnings = ()
        notes = ()
    return ValidateResult(code, out, err, report, errors, warnings, notes)


def validated_plugin(name: str, marketplace: Path) -> Path:
    """One of slashkit's plugins laid out in `marketplace` (`plugins.plugin_dir`), checked by ``claude plugin
    validate`` first: the engine tests' plugin, as a module's fixture makes it."""
    from slashkit.adapters.claude_code.plugins import plugin_dir

    folder = plugin_dir(name, marketplace)
    checked = validate(folder)
    assert checked.ok, checked.describe()
    return folder


# --- running ---------------------------------------------------------------------------------------


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def run_bounded(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> tuple[int | None, str, str, bool]:
    """Run to the end or kill the whole process group at ``timeout``: (exit code, stdout, stderr, timed out)."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate(timeout=10)
        return None, out, err, True
    finally:
        if proc.poll() is None:
            _kill_group(proc)
            proc.wait(timeout=10)


def _cli_argv(
    prompt: str | None,
    plugin_dirs: Sequence[Path],
    debug_file: Path,
    args: Sequence[str],
    *,
    streaming_input: bool = False,
) -> list[str]:
    argv = [str(claude_path()), "-p"]
    if prompt is not None:
        argv.append(prompt)
    for d in plugin_dirs:
        argv += ["--plugin-dir", str(d)]
    argv += ["--output-format", "stream-json", "--verbose", "--debug-file", str(debug_file)]
    if streaming_input:
        argv += ["--input-format", "stream-json"]
    argv += list(args)
    return argv


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def run_print(
    prompt: str,
    plugin_dirs: Sequence[Path],
    cwd: Path,
    model: ModelServer | None = None,
    *,
    timeout: float = 90.0,
    isolation: Isolation | Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> RunResult:
    """``claude -p PROMPT --plugin-dir D… --output-format stream-json --verbose --debug-file F``.

    ``isolation``: an Isolation to reuse (e.g. to see ``$.store`` persist across runs), or a folder to
    make a fresh one in (pass pytest's ``tmp_path``); None uses a throwaway one, removed after the run.
    Note (measured on 2.1.328): ``-p`` exits once the session is idle, so a chain step queued from a
    mod's timer may never run; use :func:`run_streaming` for chains that must finish.
    """
    iso, dispose = _isolation_for(isolation)
    debug_file = iso.root / f"debug-{time.monotonic_ns()}.log"
    argv = _cli_argv(prompt, plugin_dirs, debug_file, args)
    try:
        with model_or_private(model) as server:
            env = isolated_env(iso, server.url, extra_env=extra_env)
            started = time.monotonic()
            code, out, err, timed_out = run_bounded(argv, cwd=cwd, env=env, timeout=timeout)
            duration = time.monotonic() - started
        debug_log = _read(debug_file)
    finally:
        dispose()
    events, non_json = parse_stream(out)
    return RunResult(
        argv=tuple(argv),
        exit_code=code,
        stdout=out,
        stderr=err,
        events=tuple(events),
        non_json=tuple(non_json),
        debug_log=debug_log,
        duration=duration,
        timed_out=timed_out,
        isolation=iso,
        model=server,
    )


def user_message(text: str) -> str:
    """One ``--input-format stream-json`` line holding a user message."""
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}})


@dataclass
class StreamingRun:
    """A ``claude -p --input-format stream-json`` session: send user messages, wait on events, close.

    Use as a context manager (or call :meth:`start` / :meth:`finish`); leaving the block closes stdin,
    waits for the CLI to end (bounded) and kills its process group if it does not.
    """

    plugin_dirs: Sequence[Path]
    cwd: Path
    model: ModelServer | None = None
    isolation: Isolation | Path | None = None
    extra_env: Mapping[str, str] | None = None
    args: Sequence[str] = ()
    exit_timeout: float = 30.0

    _proc: subprocess.Popen[str] | None = field(default=None, init=False, repr=False)
    _events: list[JsonObject] = field(default_factory=list, init=False, repr=False)
    _non_json: list[str] = field(default_factory=list, init=False, repr=False)
    _stdout: list[str] = field(default_factory=list, init=False, repr=False)
    _stderr: list[str] = field(default_factory=list, init=False, repr=False)
    _cond: threading.Condition = field(default_factory=threading.Condition, init=False, repr=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False, repr=False)
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, init=False, repr=False)
    _iso: Isolation | None = field(default=None, init=False, repr=False)
    _dispose: Callable[[], None] = field(default=lambda: None, init=False, repr=False)
    _server: ModelServer | None = field(default=None, init=False, repr=False)
    _debug_file: Path | None = field(default=None, init=False, repr=False)
    _argv: list[str] = field(default_factory=list, init=False, repr=False)
    _started: float = field(default=0.0, init=False, repr=False)
    _timed_out: bool = field(default=False, init=False, repr=False)

    @property
    def pid(self) -> int:
        """The CLI's process id (the session's helpers run below it)."""
        assert self._proc is not None, "the run has not started"
        return self._proc.pid

    @property
    def tmpdir(self) -> Path:
        """The session's TMPDIR, where its shared helper's socket is (tests.support.shared_helpers)."""
        assert self._iso is not None, "the run has not started"
        return self._iso.tmp

    def start(self) -> StreamingRun:
        self._iso, self._dispose = _isolation_for(self.isolation)
        self._server = self._stack.enter_context(model_or_private(self.model))
        self._debug_file = self._iso.root / f"debug-{time.monotonic_ns()}.log"
        self._argv = _cli_argv(None, self.plugin_dirs, self._debug_file, self.args, streaming_input=True)
        env = isolated_env(self._iso, self._server.url, extra_env=self.extra_env)
        self._started = time.monotonic()
        self._proc = subprocess.Popen(
            self._argv,
            cwd=self.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump_stdout, args=(self._proc.stdout,), daemon=True),
            threading.Thread(target=self._pump_stderr, args=(self._proc.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def _pump_stdout(self, stream: Any) -> None:
        for line in stream:
            with self._cond:
                self._stdout.append(line)
                events, other = parse_stream(line)
                self._events += events
                self._non_json += other
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _pump_stderr(self, stream: Any) -> None:
        for line in stream:
            with self._cond:
                self._stderr.append(line)

    def send(self, text: str) -> None:
        """Write one user message line on stdin."""
        proc = self._require()
        assert proc.stdin is not None
        proc.stdin.write(user_message(text) + "\n")
        proc.stdin.flush()

    @property
    def events(self) -> list[JsonObject]:
        with self._cond:
            return list(self._events)

    def wait_until(self, until: EventPredicate, timeout: float) -> bool:
        """Wait until ``until(events)`` holds (True), or the CLI exited or ``timeout`` passed (False)."""
        proc = self._require()
        deadline = time.monotonic() + timeout
        with self._cond:
            while not until(list(self._events)):
                left = deadline - time.monotonic()
                if left <= 0 or (proc.poll() is not None and not self._threads[0].is_alive()):
                    return False
                self._cond.wait(min(left, 0.2))
            return True

    def finish(self) -> RunResult:
        """Close stdin, wait for the exit (bounded by ``exit_timeout``; then kill), and collect everything."""
        proc = self._require()
        with contextlib.suppress(BrokenPipeError, OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=self.exit_timeout)
        except subprocess.TimeoutExpired:
            self._timed_out = True
            _kill_group(proc)
            proc.wait(timeout=10)
        for t in self._threads:
            t.join(timeout=10)
        duration = time.monotonic() - self._started
        self._stack.close()
        assert self._iso is not None and self._debug_file is not None
        debug_log = _read(self._debug_file)
        self._disposed()
        return RunResult(
            argv=tuple(self._argv),
            exit_code=None if self._timed_out else proc.returncode,
            stdout="".join(self._stdout),
            stderr="".join(self._stderr),
            events=tuple(self._events),
            non_json=tuple(self._non_json),
            debug_log=debug_log,
            duration=duration,
            timed_out=self._timed_out,
            isolation=self._iso,
            model=self._server,
        )

    def kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            _kill_group(self._proc)
            self._proc.wait(timeout=10)

    def _require(self) -> subprocess.Popen[str]:
        if self._proc is None:
            raise RuntimeError("StreamingRun.start() was not called")
        return self._proc

    def __enter__(self) -> StreamingRun:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None and self._proc.poll() is None:
            if exc_type is None:
                self.finish()
                return
            self.kill()
        self._stack.close()
        self._disposed()

    def _disposed(self) -> None:
        dispose, self._dispose = self._dispose, lambda: None
        dispose()


def run_streaming(
    prompt: str,
    plugin_dirs: Sequence[Path],
    cwd: Path,
    model: ModelServer | None = None,
    *,
    until: EventPredicate,
    timeout: float = 90.0,
    isolation: Isolation | Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    exit_timeout: float = 30.0,
) -> RunResult:
    """Feed PROMPT as one stream-json user message and keep stdin open until ``until(events)`` holds
    (or ``timeout``), then close stdin and collect everything (``result.until_met`` says which).

    Plain ``-p`` exits as soon as the session is idle and can drop a chain step queued from a timer;
    holding stdin open keeps the session alive until the caller has seen what it waits for.
    """
    run = StreamingRun(
        plugin_dirs, cwd, model, isolation=isolation, extra_env=extra_env, args=args, exit_timeout=exit_timeout
    )
    with run:
        run.send(prompt)
        met = run.wait_until(until, timeout)
        result = run.finish()
    return replace(result, until_met=met)


def ui_log_seen(text: str, plugin: str | None = None) -> EventPredicate:
    """An ``until`` predicate: a ui_log line with exactly this text has arrived."""
    return lambda events: text in ui_log_texts(events, plugin)


def results_seen(count: int = 1) -> EventPredicate:
    """An ``until`` predicate: ``count`` result events have arrived (one per finished prompt or command)."""
    return lambda events: sum(1 for e in events if e.get("type") == "result") >= count
