"""What the tests share to run real hosts."""

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Final

#: What every host a test starts gets in its environment: the person's shared helper leaves 2 s after its last
#: session instead of 10 minutes (the test's own TMPDIR keeps it apart from other tests' helpers).
HELPER_ENV: Final[Mapping[str, str]] = {"SLASHKIT_HELPER_IDLE": "2"}


def shared_helpers(folder: Path, variable: str = "TMPDIR") -> set[int]:
    """The person's shared helpers whose hosts ran with this TMPDIR (each test's own), or XDG_RUNTIME_DIR: not below
    any host's process, since the helper leaves the session that started it."""
    found = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"--shared" in argv and f"{variable}={folder}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.add(int(entry.name))
    return found
