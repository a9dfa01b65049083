"""30 `claude -p "/cost && /context"` sessions at once, plugin by plugin: `benchmarks.bench.sessions_at_once` over
the plugin folders named, each round's wall time, the median, the complete chains and the ratio of each median to
the first plugin's.

Usage: python benchmarks/at_once.py ROUNDS NAME=SPEC... (a SPEC as start_probe's: `seed`, `ours`, `seed+bridge`,
or a plugin folder). `seed+bridge` is the seed's plugin with slashkit's bridge in its module as code no hook
calls, so its rounds over the seed's are what the engine's check of that much code costs 30 sessions at once."""

import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench import sessions_at_once  # noqa: E402
from benchmarks.start_probe import folder_for  # noqa: E402


def main() -> None:
    rounds = int(sys.argv[1])
    base = Path(tempfile.mkdtemp(prefix="at-once-", dir=os.environ.get("PROBE_DIR", "/tmp")))
    plugins = {name: folder_for(spec, base) for name, spec in (arg.split("=", 1) for arg in sys.argv[2:])}
    print("load before:", os.getloadavg(), flush=True)
    found = sessions_at_once(base, plugins, rounds=rounds)
    print("load after:", os.getloadavg())
    first = statistics.median(found[next(iter(plugins))])
    for name in plugins:
        median = statistics.median(found[name])
        rounds_s = ", ".join(f"{t:.2f}" for t in found[name])
        complete = sum(int(n) for n in found[f"{name}_complete"])
        print(f"{name:12} rounds {rounds_s} s; median {median:.2f} s ({median / first - 1:+.1%}); complete {complete}")
    print("shared helper's peak RSS:", ", ".join(f"{m:.1f}" for m in found["peak_mib"]), "MiB")


if __name__ == "__main__":
    main()
