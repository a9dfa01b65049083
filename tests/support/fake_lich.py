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
#: missing-fields: prints a whoami object with a label and no name;
#: flood-stdout: writes to stdout without end, as fast as the pipe takes it;
#: huge-answer: prints a whoami object padded to 300 MB of JSON and exits 0;
#: flood-stderr: writes 200 MB of one repeated line to stderr and exits 1;
#: long-error: exits 1 with a 10,000-character first line holding terminal escapes, then a second line;
#: trickle: writes one byte to stdout every 20 ms for 30 s, so a cap on its output is not what stops it;
#: orphan: prints the whoami JSON and exits 0, leaving a grandchild that holds stdout and stderr open 30 s;
#: deep-array: prints 20,000 `[` and exits 0, deeper than json's parser can recurse;
#: deep-object: prints a whoami object nested 5,000 levels down in `{"a": …}` (well-formed, under OUTPUT_CAP)
#: and exits 0.
Mode = Literal[
    "answer",
    "unknown-command",
    "hang",
    "garbage",
    "missing-fields",
    "flood-stdout",
    "huge-answer",
    "flood-stderr",
    "long-error",
    "trickle",
    "orphan",
    "deep-array",
    "deep-object",
]

#: A `lich whoami --json` answer, shaped as lich-plugin's own tests fix it (docs/lich.md lists its fields).
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
if MODE in ("hang", "orphan"):
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
elif MODE == "flood-stdout":
    block = b"x" * 65536
    while True:
        sys.stdout.buffer.write(block)
elif MODE == "huge-answer":
    out = sys.stdout.buffer
    out.write(b'{"label": "fix/x", "name": "lich-plugin-a1b2", "pad": "')
    for _ in range(300):
        out.write(b"x" * 1_000_000)
    out.write(b'"}\\n')
elif MODE == "flood-stderr":
    line = b"lich: " + b"e" * 1_000_000 + b"\\n"
    for _ in range(200):
        sys.stderr.buffer.write(line)
    sys.exit(1)
elif MODE == "long-error":
    sys.exit("lich: \\x1b[31m" + "no " * 3_330 + "\\x1b[0m\\nsecond line")
elif MODE == "trickle":
    for _ in range(1_500):
        sys.stdout.buffer.write(b"x")
        sys.stdout.buffer.flush()
        time.sleep(0.02)
elif MODE == "orphan":
    print(ANSWER)
elif MODE == "deep-array":
    print("[" * 20_000)
elif MODE == "deep-object":
    print('{"a": ' * 5_000 + ANSWER + "}" * 5_000)
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
