"""Where a `claude -p "/cost && /context"` run spends its start, plugin by plugin: runs the given plugin folders
interleaved (the order turning each round, one warm-up round dropped), each with `--debug-file`, and prints the
medians of the engine's own log lines' times from the log's first line, and of the whole run (spawn to exit).

Usage: python benchmarks/start_probe.py ROUNDS NAME=FOLDER... (a FOLDER of `seed` lays out the seed's plugin, `ours`
slashkit's slash-chain, `seed+bridge` the seed's with slashkit's bridge as code no hook calls). Every run shares one
XDG_RUNTIME_DIR, so slashkit's shared helper is warm after the warm-up round; with PROBE_SOCKETS=tmp no run has
XDG_RUNTIME_DIR and all share one TMPDIR instead, as on a machine without a login session's runtime folder (the
helper's socket is then in `slashkit-<uid>` under it). Prints the medians of each mark's time and of each phase
between two marks (per run, then the median), and writes the raw numbers as JSON beside the logs (printed at the
end)."""

import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench import _ui_logs, end_helpers, runtime_folder, seed_plugin  # noqa: E402
from tests.support.claude_cli import Isolation, claude_path, isolated_env  # noqa: E402
from tests.support.model_server import ModelServer  # noqa: E402

from slashkit.adapters.claude_code.plugins import plugin_dir  # noqa: E402

SEED = Path(os.environ.get("SLASHKIT_SEEDS", "/work/shared/seeds")) / "003_e3cd542c3666b0ba.txt"

#: Phase name -> the first debug line that marks it.
MARKS = {
    "found": r"Found \d+ plugins",
    "notseated": r"cc-plugin-sec-default@builtin not seated",
    "agentsmd": r"plugin cc-plugin-agents-md: no pluginConfigs",
    "worker": r"hooks worker spawned",
    "loaded": r"hooks module slash-chain@inline loaded",
    "cmds": r"\[STARTUP\] Commands and agents loaded",
    "raised": r"session\.start: raised",
    "cmdreg": r"\$\.command\.register \(slash-chain\): /slash-chain listed",
    "failvis": r"mcp__slash-chain__fail visible",
    "toollist": r"slash-chain@inline tool\.list settled",
    "fetch1": r"\$\.http\.fetch \(slash-chain\): POST",
    "spawn": r"\$\.process\.spawn \(slash-chain\)",
    "ss_settled": r"slash-chain@inline session\.start settled",
    "promptctx": r"cc-plugin-agents-md@builtin prompt\.context settled",
    "step1": r"\$\.ui\.log: 1/2: /usage",
    "cr_settled": r"slash-chain@inline command\.run settled",
    "step2": r"\$\.ui\.log: 2/2: /context",
    "last": r"\$\.ui\.log: all 2 command\(s\) ran",
    "shutdown": r"\[uds-messaging\] Shutting down",
}
DURATIONS = {
    "ss_ms": r"slash-chain@inline session\.start settled in ([0-9.]+)ms",
    "cr_ms": r"slash-chain@inline command\.run settled in ([0-9.]+)ms",
}


def stamp(line: str) -> float:
    return datetime.fromisoformat(line[:23]).replace(tzinfo=UTC).timestamp()


def marked(lines: list[str]) -> dict[str, float]:
    """When each mark of MARKS first shows in a debug log's lines (seconds since the epoch); a mark that never does
    is left out."""
    found: dict[str, float] = {}
    for name, pattern in MARKS.items():
        rx = re.compile(pattern)
        hit = next((line for line in lines if rx.search(line)), None)
        if hit is not None:
            found[name] = stamp(hit)
    return found


def probe_run(
    base: Path,
    name: str,
    r: int,
    folder: Path,
    model_url: str,
    sockets: dict[str, str],
    prompt: str = "/cost && /context",
) -> tuple[Isolation, dict[str, str], Path, list[str]]:
    """One probe run's isolation, environment, debug log and argv: `claude -p` with the plugin folder, stream-json."""
    iso = Isolation.create(base, prefix=f"{name}-{r}-")
    # The tests' 2 s idle (HELPER_ENV) would end the shared helper between two of its runs: it stays 10 min.
    env = isolated_env(iso, model_url, extra_env={**sockets, "SLASHKIT_HELPER_IDLE": "600"})
    debug = base / f"debug-{name}-{r}.log"
    argv = [str(claude_path()), "-p", prompt, f"--plugin-dir={folder}"]
    argv += ["--output-format=stream-json", "--verbose", f"--debug-file={debug}"]
    return iso, env, debug, argv


def turned(names: list[str], r: int) -> list[str]:
    """The plugins' order in round `r`: turned by one each round, so none always goes first."""
    return names[r % len(names) :] + names[: r % len(names)]


def phases(log: str, spawned: float, ended: float) -> dict[str, float]:
    lines = log.splitlines()
    t0 = stamp(lines[0])
    out = {"first": (t0 - spawned) * 1000, "end": (stamp(lines[-1]) - t0) * 1000, "exit": (ended - t0) * 1000}
    for name, at in marked(lines).items():
        out[name] = (at - t0) * 1000
    if "step1" in out:
        out["start"] = out["first"] + out["step1"]  # spawn to the chain's first step: the start as a whole
    if "last" in out:
        out["tail"] = out["exit"] - out["last"]  # the chain's last line to the exit
    out["spawns"] = float(sum(1 for line in lines if "$.process.spawn (slash-chain):" in line and " args " in line))
    # The processes it ran (`id -u`, where the uid is not read from /proc), as the engine logs each.
    out["runs"] = float(sum(1 for line in lines if "$.process.run (slash-chain):" in line))
    for name, pattern in DURATIONS.items():
        m = re.search(pattern, log)
        if m:
            out[name] = float(m[1])
    return out


def print_medians(title: str, keys: list[str], results: dict[str, list[dict[str, float]]]) -> None:
    """One row a key, one column a plugin: the median of the runs that have the key, or `-` when none has."""
    print(f"{title:32}" + "".join(f"{name:>12}" for name in results))
    for key in keys:
        cells = []
        for rows in results.values():
            values = [row[key] for row in rows if key in row]
            cells.append(f"{statistics.median(values):12.1f}" if values else f"{'-':>12}")
        print(f"{key:32}" + "".join(cells))


def folder_for(spec: str, base: Path) -> Path:
    """The plugin folder a NAME=SPEC argument names: `seed`, `ours`, `seed+bridge` or a folder of its own."""
    if spec == "seed":
        return seed_plugin(base / "seed", SEED)
    if spec == "ours":
        return plugin_dir("slash-chain", base / "ours")
    if spec == "seed+bridge":
        return seed_with_bridge(base)
    return Path(spec)


def bundle_parts(bundle: str) -> dict[str, str]:
    """slashkit's bundled hooks module (register.js) by the source file each part came from (esbuild marks each
    with a `// name.ts` line)."""
    parts: dict[str, str] = {}
    part = ""
    for line in bundle.splitlines(keepends=True):
        named = re.match(r"^// ([a-z-]+\.ts)$", line)
        part = named[1] if named else part
        parts[part] = parts.get(part, "") + line
    return parts


def seed_with_bridge(base: Path) -> Path:
    """The seed's plugin with slashkit's bridge in its module as code no hook calls: the bundle's wire, client,
    host and bridge parts (the client and the host's effects the seed has none of), in a file its register.ts
    imports. What its sessions cost over the seed's is what the engine's load and check of that code costs."""
    folder = seed_plugin(base / "seed-bridge", SEED)
    parts = bundle_parts((plugin_dir("slash-chain", base / "ours") / "hooks" / "register.js").read_text())
    code = "".join(parts[name] for name in ("wire.ts", "client.ts", "host.ts", "bridge.ts"))
    (folder / "hooks" / "bridge.js").write_text(code)
    module = folder / "hooks" / "register.ts"
    module.write_text("import './bridge.js'\n" + module.read_text())
    return folder


def main() -> None:
    rounds = int(sys.argv[1])
    specs = dict(arg.split("=", 1) for arg in sys.argv[2:])
    base = Path(tempfile.mkdtemp(prefix="probe-", dir=os.environ.get("PROBE_DIR", "/tmp")))
    folders = {name: folder_for(spec, base) for name, spec in specs.items()}
    names = list(folders)
    project = base / "project"
    project.mkdir()
    runtime = runtime_folder(base, "warm")
    # Where the shared helper's socket goes: XDG_RUNTIME_DIR, or (PROBE_SOCKETS=tmp) a TMPDIR every run shares.
    sockets = {"TMPDIR" if os.environ.get("PROBE_SOCKETS") == "tmp" else "XDG_RUNTIME_DIR": str(runtime)}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    cut: dict[str, int] = {name: 0 for name in names}
    print("load before:", os.getloadavg(), flush=True)
    with ModelServer() as model:
        for r in range(rounds + 1):
            for name in turned(names, r):
                iso, env, debug, argv = probe_run(base, name, r, folders[name], model.url, sockets)
                spawned = time.time()
                t = time.perf_counter()
                out = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
                elapsed = time.perf_counter() - t
                ended = time.time()
                iso.cleanup()
                if r == 0:
                    continue
                if _ui_logs(out.stdout) != ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]:
                    cut[name] += 1
                    continue
                row = phases(debug.read_text(), spawned, ended)
                row["wall"] = elapsed * 1000
                results[name].append(row)
    print("load after:", os.getloadavg())
    end_helpers(runtime, next(iter(sockets)))
    keys = ["wall", "start", "tail", "first", *MARKS, "exit", "ss_ms", "cr_ms", "spawns", "runs"]
    print_medians("phase (ms from first line)", keys, results)
    # A phase's median over runs, of each run's own time between its two marks: steadier than a difference of the
    # marks' medians, which each move with the runs' start.
    steps = ["notseated", "worker", "loaded", "cmds", "raised", "ss_settled", "promptctx", "step1", "last", "shutdown"]
    print(f"{'phase (ms, per run)':28}" + "".join(f"{n:>12}" for n in names))
    for a, b in itertools.pairwise(steps):
        cells = []
        for name in names:
            values = [row[b] - row[a] for row in results[name] if a in row and b in row]
            cells.append(f"{statistics.median(values):12.1f}" if values else f"{'-':>12}")
        print(f"{a + '>' + b:28}" + "".join(cells))
    print("complete:", {name: len(results[name]) for name in names}, "cut:", cut)
    (base / "probe.json").write_text(json.dumps(results))
    print(base / "probe.json")


if __name__ == "__main__":
    main()
