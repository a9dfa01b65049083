"""Where a `claude -p` session spends its CPU, plugin by plugin: 30 sessions at once are CPU-bound on this machine's two
cores, so a plugin's cost there is the processor time it adds to each session, not its wall time alone.

Runs the given plugin folders interleaved (the order turning each round, one warm-up round dropped), each with
`--debug-file`, samples the engine's threads (`/proc/<pid>/task/*/schedstat`) every 2 ms, and prints the medians of
the CPU each phase took, on the main thread and on all threads, cut at the debug log's marks
(benchmarks.start_probe.MARKS); then the whole session's CPU as the kernel counts it at its exit (`wait4`: user and
system, every thread and every process it waited for), and its wall time.

Usage: python benchmarks/session_cpu.py ROUNDS NAME=FOLDER... (`seed`, `ours` or a plugin folder, as start_probe's)
       python benchmarks/session_cpu.py ROUNDS --modules
`--modules` measures the engine's check of a hooks module by the module's size: it lays out plugins whose module
registers one hook and holds code that never runs (the empty one, a string of 27 KB, slashkit's client alone, client
and bridge, 320 small functions, one function of 660 statements, 3,400 numbers in an array, 1,100 small objects,
slashkit's whole bundle), runs `/cost` with each and prints the check's CPU with the module's tokens counted.
PROMPT sets the prompt (default `/cost && /context`). Every run shares one XDG_RUNTIME_DIR, so slashkit's shared
helper is warm after the warm-up round."""

import bisect
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench import end_helpers, runtime_folder  # noqa: E402
from benchmarks.start_probe import bundle_parts, folder_for, marked, print_medians, probe_run, turned  # noqa: E402
from tests.support.model_server import ModelServer  # noqa: E402

from slashkit.adapters.claude_code.plugins import plugin_dir  # noqa: E402

#: The phases, each from one mark to the next (start_probe.MARKS; spawn and exit are the process's own).
STEPS = ["spawn", "notseated", "worker", "loaded", "cmds", "raised", "ss_settled", "promptctx", "step1", "last", "exit"]
#: A JavaScript token, roughly: comments, template and quoted strings, names, numbers, operators, punctuation.
TOKEN = re.compile(
    r"//[^\n]*|/\*.*?\*/|`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|[A-Za-z_$][\w$]*|\d[\w.]*"
    r"|\?\?=|\?\.|===|!==|=>|\.\.\.|&&|\|\||\?\?|[<>=!]=|\S",
    re.S,
)
#: The one hook every measured module registers.
ENTRY = "export function register(on) {\n  on('session.start', async ($, e, next) => next(e));\n}\n"


def tokens(code: str) -> int:
    """The tokens of `code` that are not comments."""
    return sum(1 for token in TOKEN.findall(code) if not token.startswith(("//", "/*")))


def cpu_of(pid: int) -> tuple[float, float] | None:
    """The CPU (ms) the process's main thread and all its threads have used so far; None once it is gone."""
    main = every = 0
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in threads:
        try:
            used = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
        every += used
        if tid == str(pid):
            main = used
    return main / 1e6, every / 1e6


def one_run(argv: list[str], project: Path, env: dict[str, str], debug: Path) -> dict[str, float]:
    """One session: each phase's CPU (main thread and all threads), its whole CPU (wait4) and its wall time."""
    spawned = time.time()
    child = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples: list[tuple[float, float, float]] = []
    while True:
        done, status, usage = os.wait4(child.pid, os.WNOHANG)
        if done:
            break
        used = cpu_of(child.pid)
        if used is not None:
            samples.append((time.time(), *used))
        time.sleep(0.002)
    child.returncode = os.waitstatus_to_exitcode(status)
    ended = time.time()
    row = {"whole cpu": (usage.ru_utime + usage.ru_stime) * 1000, "wall": (ended - spawned) * 1000}
    if not samples:
        return row
    marks = {**marked(debug.read_text().splitlines()), "spawn": spawned, "exit": ended}
    times = [sample[0] for sample in samples]

    def at(moment: float, which: int) -> float:
        """The CPU used by `moment`, as the last sample before it read it (the first, before any)."""
        return samples[max(bisect.bisect_right(times, moment) - 1, 0)][which]

    for a, b in itertools.pairwise(STEPS):
        if a in marks and b in marks:
            row[f"{a}>{b} main"] = at(marks[b], 1) - at(marks[a], 1)
            row[f"{a}>{b} all"] = at(marks[b], 2) - at(marks[a], 2)
    return row


def measure(rounds: int, folders: dict[str, Path], base: Path, prompt: str) -> dict[str, list[dict[str, float]]]:
    """`rounds` runs of each plugin, interleaved, after one warm-up round."""
    names = list(folders)
    project = base / "project"
    project.mkdir()
    runtime = runtime_folder(base, "warm")
    sockets = {"XDG_RUNTIME_DIR": str(runtime)}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with ModelServer() as model:
        for r in range(rounds + 1):
            for name in turned(names, r):
                iso, env, debug, argv = probe_run(base, name, r, folders[name], model.url, sockets, prompt)
                row = one_run(argv, project, env, debug)
                iso.cleanup()
                if r > 0:
                    results[name].append(row)
    end_helpers(runtime)
    return results


def modules(base: Path) -> dict[str, tuple[Path, int]]:
    """The plugins `--modules` measures, each with its module's tokens."""
    ours = plugin_dir("slash-chain", base / "ours")
    bundle = (ours / "hooks" / "register.js").read_text()
    parts = bundle_parts(bundle)
    client = parts["wire.ts"] + parts["client.ts"] + parts["host.ts"]
    code = {
        "empty": "",
        "string": f'const PAD = "{"x" * 27000}";\n',
        "client": client,
        "bridge": client + parts["bridge.ts"],
        "functions": "".join(
            f"function f{i}(a, b) {{\n  if (a.x{i} === b) return a.y + {i};\n  return b.z(a, {i});\n}}\n"
            for i in range(320)
        ),
        "one function": "function big(a, b) {\n"
        + "".join(f"  if (a.x{i} === b) return a.y + {i};\n  b.z(a, {i});\n" for i in range(330))
        + "}\n",
        "numbers": "const NUMS = [" + ",".join(str(i * 7919 % 100000) for i in range(3400)) + "];\n",
        "objects": "const OBJS = [" + ",".join(f'{{k:"v{i}",n:{i}}}' for i in range(1100)) + "];\n",
    }
    found: dict[str, tuple[Path, int]] = {}
    for name, body in code.items():
        folder = base / name.replace(" ", "-")
        shutil.copytree(ours / ".claude-plugin", folder / ".claude-plugin")
        (folder / "hooks").mkdir()
        shutil.copy(ours / "hooks" / "hooks.json", folder / "hooks" / "hooks.json")
        (folder / "hooks" / "register.js").write_text(body + ENTRY)
        found[name] = (folder, tokens(body + ENTRY))
    found["whole bundle"] = (ours, tokens(bundle))
    return found


def main() -> None:
    rounds = int(sys.argv[1])
    base = Path(tempfile.mkdtemp(prefix="cpu-", dir=os.environ.get("PROBE_DIR", "/tmp")))
    print("load before:", os.getloadavg(), flush=True)
    if sys.argv[2:] == ["--modules"]:
        laid = modules(base)
        results = measure(rounds, {name: folder for name, (folder, _) in laid.items()}, base, "/cost")
        print("load after:", os.getloadavg())
        print(f"{'module':16}{'tokens':>8}{'check main':>12}{'check all':>12}{'µs a token':>12}")
        empty = statistics.median(row["notseated>worker all"] for row in results["empty"])
        for name, (_, count) in laid.items():
            main = statistics.median(row["notseated>worker main"] for row in results[name])
            every = statistics.median(row["notseated>worker all"] for row in results[name])
            added = count - laid["empty"][1]
            # Over the empty module's check, per token added: only where the code is more than a string.
            per = f"{(every - empty) * 1000 / added:12.1f}" if added > 1000 else f"{'-':>12}"
            print(f"{name:16}{count:8}{main:12.1f}{every:12.1f}{per}")
        return
    folders = {name: folder_for(spec, base) for name, spec in (arg.split("=", 1) for arg in sys.argv[2:])}
    results = measure(rounds, folders, base, os.environ.get("PROMPT", "/cost && /context"))
    print("load after:", os.getloadavg())
    first = next(iter(results.values()))
    print_medians("CPU, median ms", list(first[0]) if first else [], results)


if __name__ == "__main__":
    main()
