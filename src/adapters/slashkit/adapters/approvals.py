"""The person's approvals of projects' saved chains (`/slash-chain allow NAME`): each file's path and the SHA-256 of the
content approved, kept in the person's state (`$XDG_STATE_HOME/slashkit/approved.json`, or
`~/.local/state/slashkit/` when that is unset), outside every project, so a clone can bring a file but never its
approval. A changed file hashes to another digest, and needs approving again.

The file is read bounded (MAX_FILE, a regular file opened without following links or waiting), and anything in it
that is not an approval is passed over: a file that cannot be read approves nothing. It is written whole, to a
temporary file renamed into place, so a reader never sees half of it.
"""

import json
import os
from pathlib import Path
from typing import Final

from attrs import frozen

from slashkit.adapters.files import read_regular
from slashkit.core.ports import Environment

#: The file's name in the person's state folder.
FILE: Final = "approved.json"
#: The largest file read, and the most approvals kept (the oldest go first).
MAX_FILE: Final = 1 << 20
MAX_APPROVALS: Final = 1000


def state_folder(env: Environment) -> Path:
    """`$XDG_STATE_HOME/slashkit`, or `~/.local/state/slashkit` when it is unset."""
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home(), ".local", "state"))
    return Path(state, "slashkit")


def approved(env: Environment) -> frozenset[tuple[str, str]]:
    """The (path, SHA-256) of every approved file, as the state holds them now."""
    return frozenset(_read(state_folder(env) / FILE))


def approve(env: Environment, source: str, digest: str) -> None:
    """Records an approval of the file at `source` with this content; a path approved before keeps only the new
    digest. Raises OSError when the state cannot be written."""
    folder = state_folder(env)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    kept = [(path, held) for path, held in _read(folder / FILE) if path != source]
    kept = [*kept, (source, digest)][-MAX_APPROVALS:]
    text = json.dumps([{"path": path, "sha256": held} for path, held in kept], indent=1)
    # Imported when the person approves a file, not before the helper's first answer: tempfile brings shutil,
    # random and the compression modules (~2 ms, CPython 3.11.7).
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=".approved.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        os.replace(temporary, folder / FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@frozen
class StateApprovals:
    """The approvals port (`slashkit.core.ports.Approvals`) of an in-process host: the person's state, as `env`
    names it."""

    env: Environment

    def approve(self, source: str, digest: str) -> None:
        approve(self.env, source, digest)


def _read(path: Path) -> list[tuple[str, str]]:
    try:
        data = read_regular(path, MAX_FILE + 1)
    except OSError:
        return []
    if len(data) > MAX_FILE:
        return []
    try:
        given = json.loads(data)
    except (ValueError, RecursionError):
        return []
    if not isinstance(given, list):
        return []
    return [
        (entry["path"], entry["sha256"])
        for entry in given
        if isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str)
    ]
