"""slashkit's benchmarks: the parser against the reference regex under Node, the helper's round trip and
memory, the import floor of the design's libraries, a whole `claude -p "/cost && /context"` run against the
seed's in-process mod (with the person's shared helper running, started cold by the run, and with a helper per
session), 30 such sessions at once, the shared helper's memory under them, the processes a session with no chain
starts, and a Gemini hook's cost per call. Prints a Markdown report; docs/performance.md holds the last one.

Run with `scripts/bench` (it sets everything up first). Needs the pinned Claude Code CLI and seed 003, the
reference mod, which lives outside the repository (docs/architecture.md, "The reference mod"): in the folder
SLASHKIT_SEEDS names, else in ../shared/seeds beside the clone. Without it the benchmark stops, saying where it
looked.
"""

import contextlib
import http.client
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import seed as reference  # noqa: E402
from tests.support.claude_cli import Isolation, claude_path, isolated_env  # noqa: E402
from tests.support.model_server import ModelServer, Turn, text, tool_use  # noqa: E402

from slashkit.adapters.bridge.protocol import VERSION  # noqa: E402
from slashkit.adapters.claude_code.plugins import plugin_dir  # noqa: E402
from slashkit.core.chain import parse_chain  # noqa: E402

# Parser


def corpus(size: int, seed: int = 3) -> list[str]:
    """Typed argument strings, most of them chains, a few plain, with odd whitespace among them."""
    rng = random.Random(seed)
    words = ["fix", "the", "bug", "&&", "&& b", "||", ";", "x/y", "--all", "'quoted'", "\u00a0", "\ufeff", "\x1c"]
    names = ["test", "build", "review", "deploy:prod", "a.b", "compact", "cost"]
    out = []
    for _ in range(size):
        parts = [rng.choice(words) for _ in range(rng.randint(0, 6))]
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            parts += ["&&", f"/{rng.choice(names)}", *(rng.choice(words) for _ in range(rng.randint(0, 3)))]
        out.append(" ".join(parts))
    return out


# Times the seed's parseChain, which comes before it, on the strings in the file in argv[1].
NODE_PARSER = r"""
const fs = require('fs')
const strings = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'))
const rounds = Number(process.argv[2])
let best = Infinity
for (let r = 0; r < rounds; r++) {
  const t = process.hrtime.bigint()
  for (const s of strings) parseChain(s)
  best = Math.min(best, Number(process.hrtime.bigint() - t))
}
console.log(best / strings.length)
"""


def parser_ns(strings: list[str], seed_path: Path, rounds: int = 20) -> tuple[float, float]:
    """Nanoseconds per string, best of `rounds`: (Python parse_chain, the reference under Node)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for s in strings:
            parse_chain(s)
        best = min(best, time.perf_counter_ns() - start)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(strings, f)
    script = reference.parser_js(reference.seed_sources(seed_path)["chain.ts"]) + NODE_PARSER
    node = subprocess.run(["node", "-e", script, f.name, str(rounds)], capture_output=True, text=True, check=True)
    os.unlink(f.name)
    return best / len(strings), float(node.stdout)


# The helper, over its socket


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("slashkit")
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def helper_round_trips(events: int, program: bool = False, journal: Path | None = None) -> dict[str, float]:
    """Starts the helper as the mod does and times `events` events over one keep-alive connection: a two-step chain
    with a prompt step, or (`program`) the steps of a loop of local commands at its default cap (10 iterations, then
    typed again), each move foreseen 64 moves ahead. With `journal` (a state folder), the session has an id, so
    every move of its programs is journaled in SQLite there."""
    started = time.perf_counter()
    env = dict(os.environ)
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    if journal is not None:
        env.update(CLAUDE_CODE_SESSION_ID="bench", XDG_STATE_HOME=str(journal))
    child = subprocess.Popen(
        [sys.executable, "-m", "slashkit.adapters.bridge.helper"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    ready = child.stdout.readline()
    ready_ms = (time.perf_counter() - started) * 1000
    connection = UnixHTTPConnection(ready.split()[1])
    times: list[float] = []

    def send(event: str, e: dict[str, object]) -> dict[str, Any]:
        body = json.dumps({"v": VERSION, "event": event, "e": e})
        t = time.perf_counter()
        connection.request("POST", "/v1/event", body, {"content-type": "application/json"})
        answer: dict[str, Any] = json.loads(connection.getresponse().read())
        times.append((time.perf_counter() - t) * 1000)
        assert "error" not in answer, answer
        return answer

    # A loop typed as a program, its steps' timers and runs reported as a host that does not apply forecasts would.
    while program and len(times) < events:
        moved = send("LineTyped", {"text": "while /a; do /b x; done", "origin": "composer", "enabled": True})
        while len(times) < events and (timers := [fx for fx in moved["effects"] if fx["kind"] == "after"]):
            fired = send("TimerFired", {"token": timers[0]["token"]})
            [run] = [fx for fx in fired["effects"] if fx["kind"] == "run"]
            moved = send("RunEnded", {"token": run["token"]})
    # A realistic mix: a two-step chain of a prompt step, with the person's prompts and turn ends around it.
    while len(times) < events:
        typed = send("ChainTyped", {"command": "review", "args": "x && /test", "origin": "composer", "enabled": True})
        send("PromptHanded", {"text": "review x"})
        send("PromptSubmitted", {"text": "/review x && /test", "origin": "composer"})
        send("RunEnded", {"token": typed["reply"]["token"]})
        done = send("TurnEnded", {"reason": "answer"})
        [after] = [fx for fx in done["effects"] if fx["kind"] == "after"]
        timer = send("TimerFired", {"token": after["token"]})
        send("RunEnded", {"token": timer["effects"][0]["token"], "applied": False})
    peak_kib = _peak_kib(child.pid)
    child.terminate()
    child.wait()
    times.sort()
    return {
        "ready_ms": ready_ms,
        "p50": statistics.median(times),
        "p99": times[int(len(times) * 0.99) - 1],
        "n": len(times),
        "peak_mib": peak_kib / 1024,
    }


def cold_starts(starts: int = 20) -> dict[str, float]:
    """Starts the helper `starts` times as the mod does: the medians of spawn to `READY`, and of spawn to the
    answer to a typed chain (the first event, which pays for importing the core)."""
    ready: list[float] = []
    answered: list[float] = []
    body = json.dumps(
        {
            "v": VERSION,
            "seq": 1,
            "event": "ChainTyped",
            "e": {"command": "cost", "args": "&& /context", "origin": "sdk", "enabled": True},
        }
    )
    for _ in range(starts):
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "slashkit.adapters.bridge.helper"], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        line = child.stdout.readline()
        ready.append((time.perf_counter() - started) * 1000)
        connection = UnixHTTPConnection(line.split()[1])
        connection.request("POST", "/v1/event", body, {"content-type": "application/json"})
        assert "error" not in json.loads(connection.getresponse().read())
        answered.append((time.perf_counter() - started) * 1000)
        child.terminate()
        child.wait()
    return {"ready_ms": statistics.median(ready), "answered_ms": statistics.median(answered)}


#: What answering the first event needs beyond the interpreter: the design's libraries (attrs for the core's
#: values, cattrs to read the wire, returns for its results) and h11 for HTTP. No slashkit module.
FLOOR_IMPORTS = "import json, socket, threading, attrs, cattrs, h11, returns.result"


def import_floor(starts: int = 20) -> dict[str, float]:
    """The least a helper's first answer can cost with the design's libraries: the medians of `starts` runs of a
    bare interpreter (`-c pass`) and of one that only imports FLOOR_IMPORTS, each spawn to exit, measured
    outside the engine (inside it, its own start-up competes for the cores and the same work takes longer)."""
    medians: dict[str, float] = {}
    for name, code in (("bare_ms", "pass"), ("libraries_ms", FLOOR_IMPORTS)):
        runs: list[float] = []
        for _ in range(starts):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            runs.append((time.perf_counter() - started) * 1000)
        medians[name] = statistics.median(runs)
    return medians


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


# Whole runs of the real CLI


def seed_plugin(into: Path, seed_path: Path) -> Path:
    """Lays out the seed's TypeScript mod from seed 003 (never committed as a copy)."""
    script = ROOT / "scripts" / "seed_plugin.py"
    subprocess.run([sys.executable, str(script), str(into), str(seed_path)], check=True, capture_output=True)
    return into


#: The engine's debug line for the typed command's hook, with how long it held the command.
_HOOK = re.compile(r"slash-chain@inline command\.run settled in ([0-9.]+)ms")
#: The engine's debug line for the plugin starting a process (the helper, or its launcher).
_HELPER_SPAWN = "$.process.spawn (slash-chain):"
#: The chain's last line in the engine's debug log.
_LAST_LINE = "$.ui.log: all 2 command(s) ran"


#: The ways slashkit runs in `whole_runs`: with the person's shared helper already running (`warm`: every run
#: shares one runtime folder), starting it (`cold`: a fresh runtime folder each run, its helper ended after), and
#: with a helper per session (`session`: SLASHKIT_HELPER=session, as before issue 36).
MODES = ("warm", "cold", "session")


def runtime_folder(base: Path, name: str) -> Path:
    """A private folder for XDG_RUNTIME_DIR: where the shared helper's socket goes."""
    folder = Path(tempfile.mkdtemp(prefix=f"rt-{name}-", dir=base))
    folder.chmod(0o700)
    return folder


def shared_helpers(runtime: Path, variable: str = "XDG_RUNTIME_DIR") -> list[int]:
    """The pids of the shared helpers whose socket is in `runtime`: those started with `variable` (XDG_RUNTIME_DIR,
    or TMPDIR where none is set) naming it."""
    pids = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
            if b"--shared" in argv and f"{variable}={runtime}".encode() in environ:
                pids.append(int(entry.name))
    return pids


def end_helpers(runtime: Path, variable: str = "XDG_RUNTIME_DIR") -> None:
    """Ends the shared helpers whose socket is in `runtime` (a cold run's, so the next starts cold again)."""
    for pid in shared_helpers(runtime, variable):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def whole_runs(rounds: int, base: Path, seed_path: Path) -> dict[str, dict[str, list[float]]]:
    """Times `claude -p "/cost && /context"` with the seed's plugin and with slashkit's in each of MODES,
    interleaved (the order turns each round); each run is filed as complete (both steps ran: the chain's last line
    came) or cut short by `-p`'s exit. Of a complete run it also keeps, from the engine's debug log, how long the
    typed command's hook held the command (`hook`: for slashkit, the helper's answer inside the engine) and the
    time from the chain's last line to the process's exit (`exit`: the engine ends its children as it shuts
    down)."""
    ours = plugin_dir("slash-chain", base / "ours")
    seed = seed_plugin(base / "seed", seed_path)
    kinds = ("complete", "cut", "hook", "exit", "started")
    names = ("seed", *MODES)
    times: dict[str, dict[str, list[float]]] = {name: {k: [] for k in kinds} for name in names}
    project = base / "project"
    project.mkdir()
    warm = runtime_folder(base, "warm")
    with ModelServer() as model:
        for r in range(rounds + 1):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                folder = seed if name == "seed" else ours
                iso = Isolation.create(base, prefix=f"{name}-{r}-")
                runtime = warm if name in ("warm", "seed") else runtime_folder(base, name)
                # The tests' idle of 2 s (tests.support.HELPER_ENV) would end the warm helper between two of its
                # runs (three other runs come between), so every "warm" run started it again: it stays 10 minutes.
                extra = {"XDG_RUNTIME_DIR": str(runtime), "SLASHKIT_HELPER_IDLE": "600"}
                env = isolated_env(iso, model.url, extra_env=extra)
                if name == "session":
                    env["SLASHKIT_HELPER"] = "session"
                debug = base / f"debug-{name}-{r}.log"
                argv = [str(claude_path()), "-p", "/cost && /context", f"--plugin-dir={folder}"]
                argv += ["--output-format=stream-json", "--verbose", f"--debug-file={debug}"]
                t = time.perf_counter()
                out = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
                elapsed = time.perf_counter() - t
                ended = time.time()
                iso.cleanup()
                if name == "cold":
                    end_helpers(runtime)
                if r == 0:
                    continue  # warm-up: the first run of each fills the disk cache
                complete = _ui_logs(out.stdout) == ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]
                times[name]["complete" if complete else "cut"].append(elapsed)
                if complete:
                    log = debug.read_text()
                    hook = _HOOK.search(log)
                    last = next(line for line in log.splitlines() if _LAST_LINE in line)
                    if hook is not None:
                        times[name]["hook"].append(float(hook[1]) / 1000)
                    # 1 when the plugin started a helper in this run (a warm run should start none).
                    times[name]["started"].append(float(_HELPER_SPAWN in log))
                    logged = datetime.fromisoformat(last[:23]).replace(tzinfo=UTC).timestamp()
                    times[name]["exit"].append(ended - logged)
    end_helpers(warm)
    return times


def _ui_logs(stdout: str) -> list[str]:
    found = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("subtype") == "ui_log":
            found.append(event["text"])
    return found


def in_engine_round_trips(base: Path, asks: int = 30) -> list[int]:
    """Per-event fetch times the engine logs (ms, whole numbers): `/slash-chain` asked `asks` times in one
    session, each an event the helper must answer (a chain's local steps need none: they are foreseen)."""
    from tests.support.claude_cli import StreamingRun, results_seen

    iso = Isolation.create(base, prefix="events-")
    project = base / "events-project"
    project.mkdir()
    with (
        ModelServer() as model,
        StreamingRun([plugin_dir("slash-chain", base / "ours")], project, model=model, isolation=iso) as session,
    ):
        for n in range(1, asks + 1):
            session.send("/slash-chain")
            assert session.wait_until(results_seen(n), timeout=60), n
        result = session.finish()
    return [int(m) for m in re.findall(r"\$\.http\.fetch \(slash-chain\): 200 in (\d+)ms", result.debug_log)]


def processes_without_chain(base: Path) -> dict[str, int]:
    """Counts the processes the plugins start in a session with no chain (a prompt, a tool call, a command) while
    the person's shared helper runs: `$.process.spawn` and `$.process.run` calls in the engine's debug log."""
    project = base / "quiet-project"
    project.mkdir()
    debug = base / "quiet-debug.log"
    script: list[Turn] = [tool_use("Skill", {"skill": "compact"}), text("done")]
    iso = Isolation.create(base, prefix="quiet-")
    runtime = runtime_folder(base, "quiet")
    subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.bridge.helper", "--shared"],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        check=True,
        capture_output=True,
    )
    with ModelServer(script) as model:
        env = isolated_env(iso, model.url, extra_env={"XDG_RUNTIME_DIR": str(runtime)})
        for prompt in ("please compact", "/cost"):
            argv = [str(claude_path()), "-p", prompt, "--output-format=stream-json", "--verbose"]
            argv += [f"--plugin-dir={plugin_dir(name, base / 'ours')}" for name in ("slash-chain", "self-command")]
            argv += [f"--debug-file={debug}"]
            subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
        requests = len(model.requests)
    log = debug.read_text()
    end_helpers(runtime)
    started = len(re.findall(r"\$\.process\.(?:spawn|run) \(", log))
    return {"spawns": started, "model_requests": requests}


def sessions_at_once(
    base: Path, plugins: dict[str, Path], sessions: int = 30, rounds: int = 2
) -> dict[str, list[float]]:
    """`sessions` runs of `claude -p "/cost && /context"` started at once, with each plugin folder of `plugins` in
    turn over one shared helper (already running for slashkit's), `rounds` of each: in the order given, then in the
    reverse (ABBA for two), so none always goes first or last. For each name: the wall times from the first start to
    the last exit (`name`), the complete runs of each round (`name_complete`); and the shared helper's resident
    memory at its peak (`peak_mib`)."""
    project = base / "many-project"
    project.mkdir()
    runtime = runtime_folder(base, "many")
    subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.bridge.helper", "--shared"],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        check=True,
        capture_output=True,
    )
    names = list(plugins)
    found: dict[str, list[float]] = {key: [] for name in names for key in (name, f"{name}_complete")}
    order = [name for r in range(rounds) for name in (names if r % 2 == 0 else names[::-1])]
    with ModelServer() as model:
        for r, name in enumerate(order):
            argv = [str(claude_path()), "-p", "/cost && /context", f"--plugin-dir={plugins[name]}"]
            argv += ["--output-format=stream-json", "--verbose"]
            isos = [Isolation.create(base, prefix=f"many-{r}-{n}-") for n in range(sessions)]
            envs = [isolated_env(iso, model.url, extra_env={"XDG_RUNTIME_DIR": str(runtime)}) for iso in isos]
            t = time.perf_counter()
            children = [
                subprocess.Popen(
                    argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
                )
                for env in envs
            ]
            outs = [child.communicate(timeout=600)[0] for child in children]
            found[name].append(time.perf_counter() - t)
            done = ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]
            found[f"{name}_complete"].append(sum(_ui_logs(out) == done for out in outs))
            for iso in isos:
                iso.cleanup()
    found["peak_mib"] = [_peak_kib(pid) / 1024 for pid in shared_helpers(runtime)]
    end_helpers(runtime)
    return found


def gemini_hook_calls(base: Path, calls: int = 20) -> dict[str, float]:
    """A Gemini hook's cost per call, spawn to exit, medians of `calls`: one with nothing for the core (a session
    without chains: the thin entry alone) and one that reaches the translation (a model request after a typed
    `/name` line, the path every hook took before the thin entry)."""
    transcript = base / "gemini-transcript.jsonl"
    record = {"id": "1", "type": "user", "content": [{"text": "x"}], "displayContent": [{"text": "/greet Bob"}]}
    transcript.write_text(json.dumps(record) + "\n")
    env = {**os.environ, "TMPDIR": str(base), "HOME": str(base), "SLASHKIT_HELPER_IDLE": "1"}
    payloads = {
        "thin_ms": {"session_id": "bench", "hook_event_name": "AfterAgent"},
        "core_ms": {
            "session_id": "bench",
            "hook_event_name": "BeforeModel",
            "transcript_path": str(transcript),
            "cwd": str(base),
        },
    }
    medians: dict[str, float] = {}
    for name, payload in payloads.items():
        runs: list[float] = []
        for _ in range(calls):
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "slashkit.adapters.gemini.hook"],
                input=json.dumps(payload),
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append((time.perf_counter() - started) * 1000)
        medians[name] = statistics.median(runs)
    return medians


# Report


def main() -> None:
    """Runs every benchmark and prints the report."""
    rounds = int(os.environ.get("SLASHKIT_BENCH_ROUNDS", "10"))
    seed_path = reference.seed_path()
    if not seed_path.is_file():
        raise SystemExit(f"bench: {reference.missing_reason(seed_path)}")
    out: list[str] = []
    say: Callable[[str], None] = out.append
    strings = corpus(10_000)
    python_ns, node_ns = parser_ns(strings, seed_path)
    say(f"- parser, {len(strings)} strings, best of 20: Python {python_ns:.0f} ns/string, Node {node_ns:.0f} ns/string")
    helper = helper_round_trips(2000)
    say(
        f"- helper over its socket, {helper['n']:.0f} events: p50 {helper['p50']:.3f} ms, p99 {helper['p99']:.3f} ms; "
        f"READY after {helper['ready_ms']:.0f} ms; peak RSS {helper['peak_mib']:.1f} MiB"
    )
    loop = helper_round_trips(2000, program=True)
    say(
        f"- a program's moves (`while /a; do /b x; done`, local steps) over the socket, {loop['n']:.0f} events: "
        f"p50 {loop['p50']:.3f} ms, p99 {loop['p99']:.3f} ms"
    )
    with tempfile.TemporaryDirectory(prefix="slashkit-bench-") as state:
        journaled = helper_round_trips(2000, program=True, journal=Path(state))
    say(
        f"- the same moves journaled (a session id, SQLite in WAL mode on this machine's disk): p50 "
        f"{journaled['p50']:.3f} ms, p99 {journaled['p99']:.3f} ms"
    )
    cold = cold_starts()
    say(
        f"- helper cold start, median of 20: READY after {cold['ready_ms']:.0f} ms, "
        f"the first event answered after {cold['answered_ms']:.0f} ms (spawn to answer)"
    )
    floor = import_floor()
    say(
        f"- import floor, median of 20 spawns to exit: bare interpreter {floor['bare_ms']:.0f} ms, "
        f"importing attrs, cattrs, returns and h11 {floor['libraries_ms']:.0f} ms"
    )
    with tempfile.TemporaryDirectory(prefix="slashkit-bench-") as tmp:
        base = Path(tmp)
        fetches = sorted(in_engine_round_trips(base))
        say(
            f"- in the engine, {len(fetches)} `/slash-chain` events: p50 {statistics.median(fetches):.0f} ms, "
            f"p99 {fetches[int(len(fetches) * 0.99) - 1]} ms, max {fetches[-1]} ms (the engine logs whole ms)"
        )
        quiet = processes_without_chain(base)
        say(
            "- session with no chain (a prompt with a Skill call, then /cost), the shared helper running: "
            f"{quiet['spawns']} processes started"
        )
        hook = gemini_hook_calls(base)
        say(
            f"- a Gemini hook, spawn to exit, median of 20: {hook['thin_ms']:.0f} ms with nothing for the core, "
            f"{hook['core_ms']:.0f} ms when it reaches the translation (every call's cost before the thin entry)"
        )
        runs = whole_runs(rounds, base, seed_path)
        seed_median = statistics.median(runs["seed"]["complete"])
        for name, kinds in runs.items():
            median = statistics.median(kinds["complete"])
            say(
                f'- `claude -p "/cost && /context"`, {name}: {len(kinds["complete"])} complete runs, median '
                f"{median:.3f} s (min {min(kinds['complete']):.3f}; {(median - seed_median) * 1000:+.0f} ms on the "
                f"seed's); {len(kinds['cut'])} cut short by -p's exit; of the complete runs, the typed command's hook "
                f"held it {statistics.median(kinds['hook']) * 1000:.0f} ms and the exit came "
                f"{statistics.median(kinds['exit']) * 1000:.0f} ms after the chain's last line (medians); "
                f"{sum(kinds['started']):.0f} of them started a helper"
            )
        say(
            f"- the import floor above is {floor['libraries_ms'] - floor['bare_ms']:.0f} ms past a bare interpreter, "
            "outside the engine; the goal with the helper running is at most that over the seed (<= 20 ms)"
        )
        # A run's rounds drift by a second or so: two rounds each cannot tell 5% (docs/performance.md, 2026-12-07).
        plugins = {
            "seed": seed_plugin(base / "seed-many", seed_path),
            "slashkit": plugin_dir("slash-chain", base / "ours"),
        }
        many = sessions_at_once(base, plugins, rounds=int(os.environ.get("SLASHKIT_BENCH_MANY_ROUNDS", "6")))
        say(
            f"- 30 `claude -p` at once, {len(many['seed'])} rounds each: seed "
            f"{', '.join(f'{t:.1f}' for t in many['seed'])} s, "
            f"slashkit {', '.join(f'{t:.1f}' for t in many['slashkit'])} s (complete runs: seed "
            f"{many['seed_complete']}, slashkit {many['slashkit_complete']}); ratio of the medians "
            f"{statistics.median(many['slashkit']) / statistics.median(many['seed']):.3f}; the shared helper's peak "
            f"RSS {', '.join(f'{m:.1f}' for m in many['peak_mib'])} MiB"
        )
    print("\n".join(out))


if __name__ == "__main__":
    main()
