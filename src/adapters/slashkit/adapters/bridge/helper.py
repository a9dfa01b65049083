"""The resident helper a host's shim starts once per session (`python -m slashkit.adapters.bridge.helper`): it
listens on a unix socket in a private directory, prints `READY <socket path>`, serves the bridge there over
HTTP/1.1 (`slashkit.adapters.bridge.server`), and ends with its parent. This module is its composition root.

HTTP because Claude Code's mod can only reach it through `$.http.fetch` (measured on Claude Code 2.1.328: ~2 ms
a call over a unix socket, keep-alive reused), and every JavaScript host has an HTTP client.

The start is on the path of the first chain a session runs, so the helper says READY as soon as its socket
listens, before it imports the server, the wire format and the core; a request that comes first waits in the
socket's queue (docs/performance.md). This module imports nothing else, and not `tempfile`, which imports
`shutil` and with it every compression module (~40 ms, measured with `python -X importtime` on CPython 3.11.7).
"""

import contextlib
import gc
import os
import signal
import socket
import sys
import threading
import time

#: The socket's file name in the private directory.
SOCKET_NAME = "s"
#: The word the helper's first line of output starts with, before the socket's path (the client reads that line).
READY = "READY"
#: The options, which a shim's installer writes into the helper's arguments (slashkit.adapters.bridge.shim
#: .helper_facts): the name the host gives the model for the fail tool, when it is not Claude Code's
#: (`mcp__slash-chain__fail`), so that the core's fail note names it so; and the host, whose allowlist of
#: built-ins the refusal rule applies (`slashkit.core.allowlist.HOSTS`), when it is not Claude Code.
FAIL_TOOL_OPTION = "--fail-tool"
HOST_OPTION = "--host"
#: The hosts `--host` names (slashkit.core.allowlist.HOSTS, which this module does not import before READY).
HOSTS = ("claude-code", "opencode", "pi")
#: The longest tool name the model APIs take (function names of 1 to 64 letters, digits, `_` and `-`).
MAX_TOOL_NAME = 64


def private_directory() -> str:
    """Makes a directory only this user can enter (mode 0700), under the temporary folder."""
    base = os.environ.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(base, "slashkit-" + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue


def main(args: list[str] | None = None) -> None:
    """Listens, says READY, then serves the bridge until the host ends the helper."""
    fail_tool, host = options(sys.argv[1:] if args is None else args)
    directory = private_directory()
    path = os.path.join(directory, SOCKET_NAME)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    # The host ends the helper with SIGTERM when the session exits (measured on Claude Code 2.1.328). The helper
    # leaves the terminal's process group, so a hangup or an interrupt meant for the host does not end it first;
    # when the host goes, the parent watch below ends it.
    with contextlib.suppress(PermissionError):  # already a group leader: started on its own, not by a host
        os.setsid()
    for ending in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(ending, lambda *_: leave(directory))
    threading.Thread(target=_watch_parent, args=(directory, os.getppid()), daemon=True).start()
    print(f"{READY} {path}", flush=True)

    # The imports below make tens of thousands of objects that live as long as the helper; collecting while they
    # are made finds nothing to free and was a fifth of the imports' time (measured on CPython 3.11.7). They are
    # frozen out of later collections, which then look only at what events make.
    gc.disable()
    from slashkit.adapters.bridge.bridge import Bridge
    from slashkit.adapters.bridge.server import serve
    from slashkit.adapters.saved_chains import load

    gc.freeze()
    gc.enable()
    serve(directory, listener, Bridge(os.environ, fail_tool, host, load))


def options(args: list[str]) -> tuple[str | None, str]:
    """Reads the helper's arguments, `[--fail-tool NAME] [--host HOST]`: the fail tool's name (None for Claude
    Code's) and the host (Claude Code's unless named). Anything else ends the helper with one line saying why,
    before it says READY, and the host's shim shows it as unavailable."""
    named = args[::2]
    given = dict(zip(named, args[1::2], strict=False))
    fail_tool, host = given.get(FAIL_TOOL_OPTION), given.get(HOST_OPTION, HOSTS[0])
    sound = len(args) % 2 == 0 and len(set(named)) == len(named) and set(named) <= {FAIL_TOOL_OPTION, HOST_OPTION}
    if sound and (fail_tool is None or _is_tool_name(fail_tool)) and host in HOSTS:
        return fail_tool, host
    expected = (
        f"{FAIL_TOOL_OPTION} NAME (1 to {MAX_TOOL_NAME} letters, digits, _ or -) and {HOST_OPTION} "
        f"({' or '.join(HOSTS)}), each at most once, or nothing"
    )
    sys.exit(f"slashkit helper: expected {expected}, got {' '.join(args)[:200]!r}")


def _is_tool_name(name: str) -> bool:
    return 0 < len(name) <= MAX_TOOL_NAME and name.isascii() and name.replace("_", "a").replace("-", "a").isalnum()


def _watch_parent(directory: str, parent: int) -> None:
    # If the host itself dies (no SIGTERM), the helper is re-parented, and goes too.
    while os.getppid() == parent:
        time.sleep(1)
    leave(directory)


def leave(directory: str) -> None:
    """Leaves at once: the session that ends waits for its children, so a slow exit is its exit time."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(directory, SOCKET_NAME))
        os.rmdir(directory)
    os._exit(0)


if __name__ == "__main__":
    main()
