"""What the tests share to run real hosts."""

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

#: What every host a test starts gets in its environment: the person's shared helper leaves 2 s after its last
#: session instead of 10 minutes (the test's own TMPDIR keeps it apart from other tests' helpers).
HELPER_ENV: Final[Mapping[str, str]] = {"SLASHKIT_HELPER_IDLE": "2"}


#: The longest TMPDIR a host is given as is: a host and its shared helper put Unix sockets under it, whose paths
#: may be at most 107 bytes (pytest's folders under xdist are deeper).
MAX_TMPDIR: Final = 48


def socket_tmpdir(wanted: Path) -> Path:
    """A TMPDIR for a host at `wanted`, or, when that is too deep for a socket under it, a short folder in /tmp that
    `wanted` links to (removed when the tests' process exits). Asked again, it names the same folder."""
    if wanted.is_symlink():
        return wanted.resolve()
    if len(str(wanted)) <= MAX_TMPDIR:
        wanted.mkdir(parents=True, exist_ok=True)
        return wanted
    short = Path(tempfile.mkdtemp(prefix="skt-", dir="/tmp"))
    atexit.register(shutil.rmtree, short, True)
    wanted.parent.mkdir(parents=True, exist_ok=True)
    wanted.symlink_to(short, target_is_directory=True)
    return short


def helper_folders(base: Path) -> list[Path]:
    """The helpers' socket folders (`slashkit-*`) anywhere under `base`, a short TMPDIR it links to included."""
    return [
        Path(folder, name)
        for folder, folders, files in os.walk(base, followlinks=True)
        for name in folders + files
        if name.startswith("slashkit-")
    ]


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
