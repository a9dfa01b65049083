"""What every host's installer needs to put a shim in place: how the shim starts the helper, how long it waits
for it, and how a generated file is written. A host's installer (`claude_code.plugins`, `opencode.install`,
`pi.install`) imports these from here and names nothing of another host."""

import errno
import json
import os
import secrets
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Final, get_args

from slashkit.adapters import shell
from slashkit.adapters.bridge import protocol, server
from slashkit.adapters.bridge.helper import (
    FAIL_TOOL_OPTION,
    HOST_OPTION,
    MODE_VARIABLE,
    READY,
    SHARED_OPTION,
    shared_socket_name,
)
from slashkit.adapters.bridge.sessions import SESSION_VARIABLES
from slashkit.adapters.files import read_regular
from slashkit.core import forecast, session, texts
from slashkit.core.chain import SEPARATOR_JS
from slashkit.core.chain_machine import STEP_OUTPUT
from slashkit.core.grammar import PROGRAM_START

#: The module a shim runs with the interpreter slashkit is installed in: `python -m HELPER_MODULE`.
HELPER_MODULE: Final = "slashkit.adapters.bridge.helper"
#: The helper's command that installing slashkit puts beside `slashkit` (pyproject.toml, `[project.scripts]`).
HELPER_SCRIPT: Final = "slashkit-helper"
#: A helper that has not said READY by then is taken as unavailable (a cold start measured ~0.1-0.3 s).
START_TIMEOUT_MS: Final = 5000
#: Longest wait for one answer. The helper answers from memory and waits on no other process (lich's whoami is the
#: client's to run, `Host.whoami`), so an answer takes milliseconds and a cold helper's first one ~0.1-0.4 s
#: (docs/performance.md); but on a loaded machine an answer waits for the CPU too: with 1000 ms, two whole test
#: runs side by side on 2 cores each lost an opencode chain to "did not answer TurnEnded within 1000 ms"
#: (measured on opencode 1.18.33). 3000 ms keeps that margin, well inside a hook's 10 s budget.
ANSWER_TIMEOUT_MS: Final = 3000
#: How long the client's host lets `$LICH_BIN whoami --json` run before it counts as no answer (lich-plugin's own
#: hook gives whoami the same 2 s), and the most it reads of its stdout: lich's answer is a few hundred bytes.
WHOAMI_TIMEOUT_MS: Final = 2000
WHOAMI_MAX_OUTPUT: Final = 64 * 1024
#: The files of the bridge's client an installer lays beside its shim: the client, and the wire's facts it imports.
CLIENT_FILES: Final = ("client.ts", "wire.ts")
#: The `Host` of every Node-based host (opencode, pi), laid beside the client by `node_files`.
NODE_HOST: Final = "node-host.ts"
NODE_FILES: Final = (*CLIENT_FILES, NODE_HOST)


def helper_facts(python: str | None, fail_tool: str | None = None, host: str | None = None) -> dict[str, object]:
    """The facts the bridge's client needs before Python runs: which interpreter (None when the shim finds one
    itself), which module with which arguments (the fail tool's name, for a host that gives the model the tool
    under another name than Claude Code's; the host, when it is not Claude Code), the command that starts the
    helper from PATH, how long to wait. An interpreter whose path is not UTF-8 is a ValueError."""
    if python is not None:
        try:
            python.encode()
        except UnicodeEncodeError:
            # A name the file system took as bytes (os.fsdecode): a generated module is UTF-8 text, so no host
            # could be told where it is.
            raise ValueError(f"the interpreter's path is not UTF-8, so no plugin can start it: {python!r}") from None
    options = [] if fail_tool is None else [FAIL_TOOL_OPTION, fail_tool]
    options += [] if host is None else [HOST_OPTION, host]
    return {
        "PYTHON": python,
        "HELPER_ARGS": ["-m", HELPER_MODULE, *options],
        "HELPER_SCRIPT": HELPER_SCRIPT,
        "HELPER_OPTIONS": options,
        "START_TIMEOUT_MS": START_TIMEOUT_MS,
        "ANSWER_TIMEOUT_MS": ANSWER_TIMEOUT_MS,
        "WHOAMI_TIMEOUT_MS": WHOAMI_TIMEOUT_MS,
        "WHOAMI_MAX_OUTPUT": WHOAMI_MAX_OUTPUT,
    }


def client_files() -> dict[str, str]:
    """The bridge's client, shared by every JavaScript host, and the generated module of the wire's facts it
    imports (`wire.ts`), by file name: an installer lays them beside its shim, so the client reads every fact the
    helper also holds from the one place the helper does."""
    facts: dict[str, object] = {
        "VERSION": protocol.VERSION,
        "READY": READY,
        "EVENT_PATH": server.EVENT_PATH.decode(),
        "EXIT_PATH": server.EXIT_PATH.decode(),
        "OPEN_PATH": server.OPEN_PATH.decode(),
        "SHELL_PATH": server.SHELL_PATH.decode(),
        # The helper ends a shell step by its timeout and answers; this bounds the wait for a helper that cannot.
        "SHELL_WAIT_MS": (shell.MAX_TIMEOUT_S + 2 * shell.GRACE_S + 60) * 1000,
        "SHARED_OPTION": SHARED_OPTION,
        "SHARED_SOCKET": shared_socket_name(),
        "MODE_VARIABLE": MODE_VARIABLE,
        "SESSION_VARIABLES": sorted(SESSION_VARIABLES),
        "STEP_OUTPUT": STEP_OUTPUT,
        "MAX_TEXT": protocol.MAX_TEXT,
        "MAX_BODY": protocol.MAX_BODY,
        "MAX_FORECAST_DEPTH": forecast.MAX_AHEAD,
        "PROGRAM_START": PROGRAM_START,
    }
    head = "// Generated by slashkit (slashkit.adapters.bridge.shim) from its bridge; do not edit."
    client = (resources.files("slashkit.adapters.bridge") / "client.ts").read_text()
    wire = typescript_constants(head, facts) + _names(wire_names())
    return dict(zip(CLIENT_FILES, (client, wire), strict=True))


def wire_names() -> dict[str, list[str]]:
    """The names the wire uses, from the helper's own tables: every event, and every kind of effect and of reply
    (`protocol.EVENTS`, `protocol.KINDS`). The client types what it sends and reads by them, so a name one side
    does not know fails tsc."""
    effects = set(get_args(session.Effect))
    kinds = protocol.KINDS.items()
    return {
        "EVENTS": sorted(protocol.EVENTS),
        "EFFECT_KINDS": sorted({kind for type_, kind in kinds if type_ in effects}),
        "REPLY_KINDS": sorted({kind for type_, kind in kinds if type_ not in effects}),
    }


def _names(lists: Mapping[str, list[str]]) -> str:
    return "".join(f"export const {key} = {json.dumps(names)} as const\n" for key, names in lists.items())


def node_files() -> dict[str, str]:
    """What a Node-based host's installer lays beside its shim: the client and its wire's facts (`client_files`),
    and the one `Host` every Node host builds from Node's own modules (`node-host.ts`: the helper's process, HTTP
    over its socket, timers, lich's whoami, the JSON store of the on/off setting). It imports the host's own
    generated `host.ts` (`helper_facts`, and `UNAVAILABLE`)."""
    node_host = (resources.files("slashkit.adapters.bridge") / NODE_HOST).read_text()
    return {**client_files(), NODE_HOST: node_host}


def node_host_module(
    head: str, python: str | None, host: str, fail_tool: str, store_file: str, more: Mapping[str, object]
) -> str:
    """A Node-based host's generated `host.ts`: how it starts the helper (`helper_facts`), what `node-host.ts` and
    `/slash-chain` need (the line without a helper, the on/off setting's key and file, the command's name), its fail
    tool, the self-command tool's name and description, the chain separator, and `more` of its own (each host
    writes the tools' arguments in its own form)."""
    values: dict[str, object] = {
        # The helper hears the tool's name with its arguments, so the core's fail note names it as it is.
        **helper_facts(python, fail_tool, host),
        "UNAVAILABLE": texts.CHAIN_UNAVAILABLE,
        "ENABLED_KEY": session.ENABLED_KEY,
        "BUILTIN_KEY": session.BUILTIN_KEY,
        "STORE_FILE": store_file,
        "CHAIN_COMMAND": texts.CHAIN_COMMAND,
        "COMMAND_DESCRIPTION": texts.CHAIN_COMMAND_DESCRIPTION,
        "FAIL_TOOL": fail_tool,
        "FAIL_DESCRIPTION": texts.FAIL_DESCRIPTION,
        "FAIL_NOTHING_WAITS": texts.FAIL_NOTHING_WAITS,
        "BUILTIN_TOOL": texts.BUILTIN_TOOL_NAME,
        "BUILTIN_DESCRIPTION": texts.text(texts.ENGLISH, texts.Key.SELF_TOOL_NOTE),
        **more,
    }
    return typescript_constants(head, values) + f"export const SEPARATOR = {SEPARATOR_JS}\n"


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
        return read_regular(path, len(content) + 1) == content
    except OSError:
        return False


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
