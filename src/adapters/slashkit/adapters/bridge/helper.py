"""The resident helper (`python -m slashkit.adapters.bridge.helper`): it listens on a unix socket in a private
directory, prints `READY <socket path>`, serves the bridge there over HTTP/1.1 (`slashkit.adapters.bridge.server`).
This module is its composition root.

Two lifetimes. With `--shared` (what every host's client asks for unless `SLASHKIT_HELPER=session`), one helper
serves every session of the person: the process a client starts takes a lock, says READY at once if a helper of
this version already listens, else binds the socket, forks the helper off into its own session (stdio away from
the host's terminal) and says READY; the helper serves each session apart (`slashkit.adapters.bridge.sessions`)
and leaves once no session was open for `SLASHKIT_HELPER_IDLE` seconds (600) or on SIGTERM. Without it, the
helper serves the one session that started it, and ends with its parent (a helper per session, as before).

HTTP because Claude Code's mod can only reach it through `$.http.fetch` (measured on Claude Code 2.1.328: ~2 ms
a call over a unix socket, keep-alive reused), and every JavaScript host has an HTTP client.

The start is on the path of the first chain a session runs, so the helper says READY as soon as its socket
listens, before it imports the server, the wire format and the core; a request that comes first waits in the
socket's queue (docs/performance.md). This module imports nothing else, and not `tempfile`, which imports
`shutil` and with it every compression module (~40 ms, measured with `python -X importtime` on CPython 3.11.7).
"""

import contextlib
import fcntl
import gc
import os
import signal
import socket
import stat
import sys
import threading
import time

from slashkit.adapters import __version__

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
#: One helper for all of the person's sessions (the client's default), instead of one for this session.
SHARED_OPTION = "--shared"
#: `session` keeps a helper per session (the client reads it; docs/bridge.md, "Transport").
MODE_VARIABLE = "SLASHKIT_HELPER"
#: Seconds the shared helper stays with no session open before it leaves.
IDLE_VARIABLE = "SLASHKIT_HELPER_IDLE"
IDLE_S = 600.0
#: The hosts `--host` names (slashkit.core.allowlist.HOSTS, which this module does not import before READY).
HOSTS = ("claude-code", "opencode", "pi", "gemini")
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


#: The longest path a Unix socket may listen on (Linux's `sun_path` holds 108 bytes, the closing NUL included).
MAX_SOCKET_PATH = 107


def shared_directory(env: "os._Environ[str] | dict[str, str]" = os.environ) -> str:
    """The shared helper's directory: `$XDG_RUNTIME_DIR/slashkit`, else `slashkit-<uid>` under the temporary folder;
    `/tmp/slashkit-<uid>` when the socket's path would be too long there; made with mode 0700, and refused
    (PermissionError) unless it is a directory of this user's that no one else may enter. The bridge's client looks
    for the socket by the same rule (`sharedSocket` in node-host.ts), and else takes the path the start names."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        path = os.path.join(runtime, "slashkit")
    else:
        path = os.path.join(env.get("TMPDIR") or "/tmp", f"slashkit-{os.getuid()}")
    if len(os.fsencode(os.path.join(path, shared_socket_name()))) > MAX_SOCKET_PATH:
        # A deep folder leaves no room for the socket's name (the helper could not listen, and no chain would run):
        # the system's own temporary folder does, under the same checks.
        path = f"/tmp/slashkit-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    found = os.lstat(path)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise PermissionError(f"{path} is not a directory of this user's that only they may enter")
    return path


def shared_socket_name() -> str:
    """The shared socket's file name, which carries slashkit's version: an upgraded client never reaches an old
    helper, which leaves on its own once idle."""
    return f"helper-{__version__}.sock"


def main(args: list[str] | None = None) -> None:
    """Listens, says READY, then serves the bridge until the host ends the helper (or, shared, until idle)."""
    given = sys.argv[1:] if args is None else args
    if SHARED_OPTION in given:
        given = [arg for arg in given if arg != SHARED_OPTION]
        options(given)
        shared()
        return
    fail_tool, host = options(given)
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


def shared() -> None:
    """Says READY with the socket of the person's helper, starting it first when none listens. Under a lock, so
    that sessions starting at once start one helper; a socket file no helper listens on any more is replaced."""
    try:
        directory = shared_directory()
    except OSError as error:
        sys.exit(f"slashkit helper: no private directory for the shared helper: {error}")
    path = os.path.join(directory, shared_socket_name())
    locked = os.path.join(directory, f"helper-{__version__}.lock")
    with open(locked, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _listens(path):
            print(f"{READY} {path}", flush=True)
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(128)
    # Only this thread runs, so the fork copies no lock held by another; the helper leaves the host's session and
    # its terminal, and writes what goes wrong to a log beside its socket. SIGTERM waits, blocked, until the
    # helper's handler is in place: one sent just after READY would otherwise end it with its socket left behind.
    inode = os.stat(path).st_ino
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    if os.fork():
        print(f"{READY} {path}", flush=True)
        os._exit(0)
    signal.signal(signal.SIGTERM, lambda *_: leave_shared(path, inode, locked))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    os.setsid()
    _detach(os.path.join(directory, f"helper-{__version__}.log"))
    gc.disable()
    from slashkit.adapters.bridge.server import serve_shared

    gc.freeze()
    gc.enable()
    serve_shared(listener, _idle_seconds(), lambda: leave_shared(path, inode, locked))


def _listens(path: str) -> bool:
    """Tells whether a helper listens on `path` (a refused or missing socket is none)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def _detach(log: str) -> None:
    """Points stdin and stdout at /dev/null and stderr at `log`: the host's pipes end, its terminal is not held."""
    null = os.open(os.devnull, os.O_RDWR)
    errors = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    for descriptor, to in ((0, null), (1, null), (2, errors)):
        os.dup2(to, descriptor)
    os.close(null)
    os.close(errors)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the process's own stdout, kept for its lifetime
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115


def _idle_seconds() -> float:
    """`SLASHKIT_HELPER_IDLE` in seconds when it is a positive number, else 600."""
    try:
        idle = float(os.environ.get(IDLE_VARIABLE, ""))
    except ValueError:
        return IDLE_S
    return idle if 0 < idle < float("inf") else IDLE_S


def leave_shared(path: str, inode: int, locked: str) -> None:
    """Leaves at once, removing the socket unless another helper has since taken its name. Under the start's lock,
    so a start finds either this helper listening or its socket gone (a client that found it just before opens its
    session on a fresh one: bridge/client.ts, `joined`)."""
    with contextlib.suppress(OSError), open(locked, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    _end_shell_steps()
    os._exit(0)


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
    _end_shell_steps()
    os._exit(0)


def _end_shell_steps() -> None:
    """Ends the shell steps still running, with their process groups, before the helper leaves (they are not its
    to leave behind). The module is there once a session could have run one: this one imports nothing for it."""
    shell = sys.modules.get("slashkit.adapters.shell")
    if shell is not None:
        shell.end_all()


if __name__ == "__main__":
    main()
