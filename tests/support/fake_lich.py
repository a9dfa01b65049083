"""A fake `lich` executable for tests: writes one into a folder, and reads back how it was run."""

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from attrs import frozen

#: What the fake does whatever it is asked:
#: answer: prints the whoami JSON it was given and exits 0;
#: unknown-command: exits 1 with `lich: unknown command "whoami"`, as a lich older than 0.64 does;
#: hang: sleeps 30 s, with a grandchild that holds its stdout and stderr open as long;
#: garbage: prints a line that is not JSON;
#: missing-fields: prints a whoami object with a label and no name.
Mode = Literal["answer", "unknown-command", "hang", "garbage", "missing-fields"]

#: The `whoami --json` fixture of lich-plugin's tests (P-test in lich.md §3).
WHOAMI: Final[Mapping[str, str]] = {
    "label": "fix/x",
    "name": "lich-plugin-a1b2",
    "project": "lich-plugin",
    "kind": "claude",
    "state": "busy",
    "id": "lich-1",
}

# The body runs under this interpreter with only the standard library; MODE, ANSWER and LOG come first.
_BODY: Final = """
import json, os, subprocess, sys, time

pids = [os.getpid()]
if MODE == "hang":
    pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]).pid)
with open(LOG, "a", encoding="utf-8") as log:
    log.write(json.dumps({"argv": sys.argv, "pids": pids}) + "\\n")

if MODE == "answer":
    print(ANSWER)
elif MODE == "unknown-command":
    sys.exit('lich: unknown command "whoami"')
elif MODE == "hang":
    time.sleep(30)
elif MODE == "garbage":
    print("session\\tproject\\tprovider\\tname\\tstate\\tid {")
elif MODE == "missing-fields":
    print(json.dumps({"label": "fix/x", "project": "lich-plugin", "id": "lich-1"}))
"""


@frozen
class Invocation:
    """One run of the fake: its argv (argv[0] is the path it was run by) and the pids it started."""

    argv: tuple[str, ...]
    pids: tuple[int, ...]


@frozen
class FakeLich:
    """A fake lich on disk: `path` goes in LICH_BIN, and `log` gets a JSON line per run."""

    path: Path
    log: Path

    def invocations(self) -> list[Invocation]:
        """Lists the runs so far, oldest first; empty when it never ran."""
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [Invocation(tuple(run["argv"]), tuple(run["pids"])) for run in map(json.loads, lines)]


def write_fake_lich(directory: Path, mode: Mode = "answer", whoami: object = WHOAMI) -> FakeLich:
    """Writes an executable `lich` into `directory` that acts out `mode`; `answer` prints `whoami` as JSON."""
    fake = FakeLich(directory / "lich", directory / "lich-invocations.jsonl")
    header = [f"#!{sys.executable}", f"MODE = {mode!r}", f"ANSWER = {json.dumps(whoami)!r}", f"LOG = {str(fake.log)!r}"]
    fake.path.write_text("\n".join(header) + _BODY, encoding="utf-8")
    fake.path.chmod(0o755)
    return fake
