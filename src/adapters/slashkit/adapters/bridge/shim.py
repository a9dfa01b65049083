"""What every host's installer needs to put a shim in place: how the shim starts the helper, how long it waits
for it, and how a generated file is written. A host's installer (`claude_code.plugins`, `opencode.install`)
imports these from here and names nothing of another host."""

import errno
import json
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from slashkit.adapters.bridge.helper import FAIL_TOOL_OPTION

#: The module a shim runs with the interpreter slashkit is installed in: `python -m HELPER_MODULE`.
HELPER_MODULE: Final = "slashkit.adapters.bridge.helper"
#: The helper's command that installing slashkit puts beside `slashkit` (pyproject.toml, `[project.scripts]`).
HELPER_SCRIPT: Final = "slashkit-helper"
#: A helper that has not said READY by then is taken as unavailable (a cold start measured ~0.1-0.3 s).
START_TIMEOUT_MS: Final = 5000
#: Longest wait for one answer; whoami, the slowest thing the helper does, gives up after 2 s.
ANSWER_TIMEOUT_MS: Final = 3000


def helper_facts(python: str | None, fail_tool: str | None = None) -> dict[str, object]:
    """The facts the bridge's client needs before Python runs: which interpreter (None when the shim finds one
    itself), which module with which arguments (the fail tool's name, for a host that gives the model the tool
    under another name than Claude Code's), the command that starts the helper from PATH, how long to wait. An
    interpreter whose path is not UTF-8 is a ValueError."""
    if python is not None:
        try:
            python.encode()
        except UnicodeEncodeError:
            # A name the file system took as bytes (os.fsdecode): a generated module is UTF-8 text, so no host
            # could be told where it is.
            raise ValueError(f"the interpreter's path is not UTF-8, so no plugin can start it: {python!r}") from None
    options = [] if fail_tool is None else [FAIL_TOOL_OPTION, fail_tool]
    return {
        "PYTHON": python,
        "HELPER_ARGS": ["-m", HELPER_MODULE, *options],
        "HELPER_SCRIPT": HELPER_SCRIPT,
        "HELPER_OPTIONS": options,
        "START_TIMEOUT_MS": START_TIMEOUT_MS,
        "ANSWER_TIMEOUT_MS": ANSWER_TIMEOUT_MS,
    }


def typescript_constants(head: str, values: Mapping[str, object]) -> str:
    """A generated TypeScript module exporting each value as a JSON literal, under a `head` comment line."""
    lines = [f"export const {key} = {json.dumps(value, ensure_ascii=False)}" for key, value in values.items()]
    return "\n".join([head, *lines, ""])


def write_file(path: Path, content: bytes) -> bool:
    """Writes `content` to `path`; returns False and leaves the file alone when it already holds those bytes.

    Otherwise the file is replaced whole, so a host loading it never reads half a file. Nothing is written
    through a symbolic link: the bytes go to a new file beside `path` that no existing name can stand for
    (a checked-out project may hold a link at any name, `slashkit.ts.tmp` included), which then takes the
    place of `path`, so a link at `path` is replaced, not followed. The new file is removed if anything fails.
    """
    if _holds(path, content):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    # O_EXCL with O_CREAT fails on any existing name, a link included, so the bytes land in a new file only.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(temporary, flags, 0o666)
    except OSError as failed:
        raise _named(failed, path) from failed
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
        os.replace(temporary, path)
    except BaseException as failed:
        temporary.unlink(missing_ok=True)
        if isinstance(failed, OSError):
            raise _named(failed, path) from failed
        raise
    return True


def _named(failed: OSError, path: Path) -> OSError:
    """The same failure named by the file the person asked for: the temporary name means nothing to them."""
    return OSError(failed.errno, failed.strerror, str(path))


def _holds(path: Path, content: bytes) -> bool:
    """Tells whether `path` is a regular file (not a link to one) holding exactly `content`; reads no more than
    that many bytes, and never waits on a pipe or a device standing at its name."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode) or found.st_size != len(content):
            return False
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            return file.read(len(content)) == content
    finally:
        os.close(descriptor)


def refuse_link(path: Path) -> None:
    """Refuses a symbolic link at `path` with an OSError naming it, so an installer never writes or removes files
    through a folder a checked-out project points elsewhere."""
    if path.is_symlink():
        raise OSError(errno.ELOOP, "a symbolic link, which slashkit does not follow (remove it yourself)", str(path))


def xdg_home(name: str, fallback: str, environ: Mapping[str, str] = os.environ) -> Path:
    """An XDG base folder (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`): the variable's value when it is an absolute path,
    or `fallback` under the home folder. A relative or empty value is ignored, as the XDG Base Directory
    specification asks, so it never names a folder under wherever the command happens to run.

    >>> str(xdg_home("XDG_DATA_HOME", ".local/share", {"XDG_DATA_HOME": "rel", "HOME": "/home/ann"}))
    '/home/ann/.local/share'
    """
    value = environ.get(name, "")
    if os.path.isabs(value):
        return Path(value)
    return Path(environ.get("HOME") or Path.home()) / fallback
