"""The `slashkit` command: run a chain in a Claude Code session on the Agent SDK, lay out the plugins, or play
a chain through the in-memory host."""

import argparse
import math
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from slashkit.adapters import __version__
from slashkit.adapters.claude_code import plugins
from slashkit.adapters.memory import Local, MemoryHost, Prompt, host
from slashkit.adapters.opencode import install as opencode

_EPILOG = """\
exit status of `run`: 0 every step ran (or a single command ran alone), 1 the chain stopped or was
cancelled, 4 Claude Code could not start or exited first, or the timeout passed, 2 bad usage.

examples:
  slashkit run "/cost && /context && /usage"
  slashkit run "/review the diff && /test" --model sonnet --json
  slashkit run "/greet Bob" --permission-mode acceptEdits -- --max-turns 3
  claude --plugin-dir "$(slashkit claude-code plugin-dir slash-chain)"
  claude plugin marketplace add "$(slashkit claude-code marketplace)"
  slashkit opencode install          (then start opencode in this project)
  slashkit play "/review x && /test && /deploy" --prompt review"""


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = _parser()
    given = list(sys.argv[1:] if argv is None else argv)
    # Everything after `--` goes to Claude Code as it is.
    ours, claude_args = (given[: given.index("--")], given[given.index("--") + 1 :]) if "--" in given else (given, [])
    args = parser.parse_args(ours)
    match args.command:
        case "run":
            return _run(parser, args, claude_args)
        case "play":
            return _play(args)
        case "claude-code":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _claude_code(args))
        case "opencode":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _opencode(parser, args))
    parser.print_help()
    return 2


def _writing(prog: str, write: Callable[[], int]) -> int:
    """Runs a command that writes files; a folder it cannot write, or an interpreter it cannot name (a path that is
    not UTF-8), is one line on stderr and exit 1, no traceback.

    The line has argparse's shape (`prog: error: ...`), as the CLI's usage errors do, without their usage line:
    the arguments were well formed, and the file system refused them.
    """
    try:
        return write()
    except OSError as refused:
        print(f"{prog}: error: {_os_why(refused)}", file=sys.stderr)
    except ValueError as refused:
        print(f"{prog}: error: {refused}", file=sys.stderr)
    return 1


def _os_why(error: OSError) -> str:
    """Names the path the system refused and why, without Python's `[Errno N]`.

    >>> _os_why(NotADirectoryError(20, "Not a directory", "/etc/passwd/.claude-plugin"))
    'cannot write /etc/passwd/.claude-plugin: Not a directory'
    """
    path = error.filename if error.filename is not None else "a file"
    why = error.strerror or str(error)
    return (
        f"cannot write {path}: {why}" if error.filename2 is None else f"cannot write {path} ({error.filename2}): {why}"
    )


def _claude_code(args: argparse.Namespace) -> int:
    root = Path(args.root) if args.root else None
    if args.what == "marketplace":
        print(plugins.lay_out(root or plugins.default_root()))
    else:
        print(plugins.plugin_dir(args.name, root))
    return 0


def _seconds(text: str) -> float:
    """The --timeout type: a finite number of seconds above 0 (float() alone takes nan, inf and -5)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text!r}")
    return seconds


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slashkit",
        description="Lets an agent CLI session run its own slash commands: /a && /b runs /b once /a ended well.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"slashkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run a chain in a Claude Code session (Agent SDK) and print each step and its output",
        description="Runs a chain in a Claude Code session on the Agent SDK: each step's line, then its output "
        "(the command's text or the model's answer) as it comes. Options after `--` go to Claude Code.",
    )
    run.add_argument("chain", help='the commands, as typed: "/a x && /b y"')
    run.add_argument("--cwd", default=".", help="the project folder the session runs in (default: here)")
    run.add_argument("--claude", help="the Claude Code CLI (default: $SLASHKIT_CLAUDE, else `claude` on PATH)")
    run.add_argument(
        "--timeout", type=_seconds, default=600.0, help="give up after this many seconds, above 0 (default 600)"
    )
    run.add_argument("--json", action="store_true", help="print JSON lines: one object per event, the last the outcome")
    run.add_argument("--model", help="the model for the session (Claude Code's --model)")
    run.add_argument(
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"),
        help="Claude Code's permission mode",
    )
    run.add_argument(
        "--allowed-tools",
        default="",
        metavar="TOOLS",
        help='tools allowed without asking, comma-separated: "Read,Bash(git:*)"',
    )

    play = commands.add_parser("play", help="play a chain through the in-memory host (no Claude Code needed)")
    play.add_argument("chain", help='the commands, as typed: "/a x && /b y"')
    play.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="NAME",
        help="treat /NAME as a command that hands the model a prompt whose turn ends with an answer",
    )

    code = commands.add_parser("claude-code", help="lay out the Claude Code plugins and print where they are")
    what = code.add_subparsers(dest="what", metavar="WHAT", required=True)
    one = what.add_parser("plugin-dir", help="print one plugin's folder, for claude --plugin-dir")
    one.add_argument("name", choices=plugins.PLUGINS)
    market = what.add_parser("marketplace", help="print the marketplace folder, for claude plugin marketplace add")
    for sub in (one, market):
        sub.add_argument("--root", help="lay out here instead of under $XDG_DATA_HOME/slashkit")
    _opencode_parser(commands)
    return parser


def _opencode_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    code = commands.add_parser("opencode", help="put the slash-chain plugin where opencode loads it, or take it out")
    what = code.add_subparsers(dest="what", metavar="WHAT", required=True)
    put = what.add_parser("install", help="install the plugin for a project (default: here), or --global")
    out = what.add_parser("uninstall", help="take the plugin out of a project (default: here), or --global")
    for sub in (put, out):
        sub.add_argument("project", nargs="?", default=".", metavar="PROJECT_DIR", help="the project folder")
        sub.add_argument("--global", dest="everywhere", action="store_true", help="the user's opencode config")


def _opencode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    project = None if args.everywhere else Path(args.project)
    if project is not None and not project.is_dir():
        parser.error(f"{project} is not a folder")
    target = opencode.config_dir(project)
    if args.what == "install":
        paths = opencode.install(target)
        print(f"slashkit plugin {'installed' if paths else 'already up to date'} in {target / 'plugins'}")
    else:
        paths = opencode.uninstall(target)
        print(f"slashkit plugin {'removed' if paths else 'was not installed'} from {target / 'plugins'}")
    for path in paths:
        print(f"  {path}")
    return 0


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, claude_args: Sequence[str]) -> int:
    claude = args.claude or os.environ.get("SLASHKIT_CLAUDE") or shutil.which("claude")
    if claude is None:
        parser.error("no Claude Code CLI: install @anthropic-ai/claude-code, or pass --claude PATH")
    cwd = Path(args.cwd)
    if not cwd.is_dir():
        parser.error(f"--cwd {cwd} is not a folder")
    if not args.chain.startswith("/"):
        parser.error(f"a chain starts with a slash command, as typed: {args.chain!r}")
    # The SDK's import costs ~0.7 s (measured on claude-agent-sdk 0.2.184): only `run` pays it.
    try:
        from slashkit.adapters.sdk import terminal
    except ModuleNotFoundError as missing:
        if missing.name != "claude_agent_sdk":
            raise
        parser.error("run needs the Claude Agent SDK: pip install 'slashkit[sdk]'")

    settings = terminal.Settings(
        chain=args.chain,
        cwd=cwd,
        claude=claude,
        timeout=args.timeout,
        json=args.json,
        model=args.model,
        permission_mode=args.permission_mode,
        allowed_tools=tuple(t.strip() for t in args.allowed_tools.split(",") if t.strip()),
        claude_args=tuple(claude_args),
    )
    return terminal.run(settings)


def _play(args: argparse.Namespace) -> int:
    session = _playground(args.chain, set(args.prompt))
    session.type(args.chain)
    while session.chains.state.running is not None:
        before = len(session.ui.lines)
        session.end_turn("answer")
        if len(session.ui.lines) == before:
            break
    for line in session.ui.lines:
        print(line)
    return 0 if session.ui.lines and session.ui.lines[-1].startswith("all ") else 1


def _playground(chain: str, prompts: set[str]) -> MemoryHost:
    names = [word[1:] for word in chain.split() if word.startswith("/") and len(word) > 1]
    return host(**{name: Prompt(f"do {name}") if name in prompts else Local() for name in names})


if __name__ == "__main__":
    sys.exit(main())
