"""Where saved chains live, read from disk for every host: the person's folder, then the project's, which shadows it.

The files' format and what a session does with them are the core's (`slashkit.core.saved_chain`); this module only
finds the files and reads their bytes, bounded: at most MAX_FILES of each folder, each to one byte past
`saved_chain.MAX_FILE`, and only regular files, opened without waiting (`slashkit.adapters.files`): a FIFO or a device
named `x.md`, or swapped in for one while it is read, would block or never end. A link named `x.md` is not followed.
"""

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from slashkit.adapters.approvals import approved
from slashkit.adapters.files import read_regular
from slashkit.core.saved_chain import MAX_FILE, Library, Problem, SavedFile, library

#: The project's folder of saved chains, under its root.
PROJECT_FOLDER: Final = Path(".slashkit", "chains")
#: The person's folder of saved chains, under their configuration folder.
PERSON_FOLDER: Final = Path("slashkit", "chains")
#: Names the project's root when the process does not run in it (a helper started elsewhere).
PROJECT_VARIABLE: Final = "SLASHKIT_PROJECT"
#: The most files read from one folder; the rest are named in one line.
MAX_FILES: Final = 256


def person_folder(env: Mapping[str, str]) -> Path:
    """The person's folder: `$XDG_CONFIG_HOME/slashkit/chains`, or `~/.config/slashkit/chains` when unset."""
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home(), ".config"))
    return Path(config) / PERSON_FOLDER


def project_folder(project: Path | None, env: Mapping[str, str]) -> Path:
    """The project's folder: under `project`, else `$SLASHKIT_PROJECT`, else the working directory."""
    root = project or Path(env.get(PROJECT_VARIABLE) or os.getcwd())
    # Absolute: an approval names the file by its path (slashkit.adapters.approvals).
    return Path(os.path.abspath(root)) / PROJECT_FOLDER


def load(project: Path | None = None, env: Mapping[str, str] = os.environ) -> Library:
    """The saved chains of the person and of the project (`project_folder`), read now, with the person's approvals of
    project files (`slashkit.adapters.approvals`)."""
    return library(_files(person_folder(env)), _files(project_folder(project, env)), approved(env))


def _files(folder: Path) -> Iterator[SavedFile | Problem]:
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".md"))
    except OSError:
        return  # no folder (the usual case), or one that cannot be listed: no saved chains from it
    for name in names[:MAX_FILES]:
        yield SavedFile(name, str(folder / name), _bytes(folder / name))
    if len(names) > MAX_FILES:
        yield Problem(str(folder), f"holds {len(names)} files; the ones after the first {MAX_FILES} were not read")


def _bytes(path: Path) -> bytes | None:
    try:
        return read_regular(path, MAX_FILE + 1)
    except OSError:
        return None
