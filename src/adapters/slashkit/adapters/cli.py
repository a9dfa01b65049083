"""The `slashkit` command: run a chain in a Claude Code session on the Agent SDK, lay out the plugins, or play
a chain through the in-memory host."""

import argparse
import math
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from slashkit.adapters import __version__
from slashkit.adapters.claude_code import plugins
from slashkit.adapters.gemini import install as gemini
from slashkit.adapters.memory import Local, MemoryHost, Prompt, Throws, host
from slashkit.adapters.opencode import install as opencode
from slashkit.adapters.pi import install as pi
from slashkit.core.grammar import starts_program
from slashkit.core.texts import CHAIN_COMMAND

#: What each command's exit status means; README.md, "Exit status", holds the same block, and
#: tests/adapters/test_cli.py runs each command to each status.
EXIT_STATUS = """\
exit status:
  run           0 the chain ended with success as its last status, as a shell's $?, or a command
                  alone ran; 1 the chain ended with a failure or was cancelled, or the command alone
                  failed; 2 bad usage, or the line was refused and nothing ran (it does not read, a
                  project chain to approve first, a command that may not run), or --resume names no
                  run cut off; 4 Claude Code (or Codex) could not start or exited first; 124 --timeout
                  passed, or a step showed no progress for --step-timeout and was ended
  play          0 the chain ended with success as its last status, or a command alone ran; 1 it ended
                  with a failure, or the command alone failed; 2 bad usage
  claude-code   0 done; 1 a file or folder could not be written; 2 bad usage
  opencode      0 done; 1 a file or folder could not be written or removed; 2 bad usage
  pi            0 done; 1 a file or folder could not be written or removed; 2 bad usage
  gemini        0 done; 1 a file could not be read, written or removed; 2 bad usage
  every command 130 interrupted (Ctrl-C); 141 its output was closed (| head)"""

_EPILOG = f"""\
{EXIT_STATUS}

examples:
  slashkit run "/cost && /context && /usage"
  slashkit run "/review the diff && /test" --model sonnet --json
  slashkit run "/greet Bob" --permission-mode acceptEdits -- --max-turns 3
  slashkit run --host codex "/greet Bob && /compact && /greet Carol" -- -c model=o3
  claude --plugin-dir "$(slashkit claude-code plugin-dir slash-chain)"
  claude plugin marketplace add "$(slashkit claude-code marketplace)"
  slashkit opencode install          (then start opencode in this project)
  slashkit pi install                (then start pi in this project)
  slashkit pi install --omp          (then start omp in this project)
  slashkit gemini install            (then start gemini in this project)
  slashkit play "/review x && /test || /rollback" --prompt review --fail test"""
#: The status of a command interrupted by the person (Ctrl-C), and of one whose output was closed (`| head`): 128
#: and the signal's number, as a shell reports a process that signal ended.
INTERRUPTED: Final = 130
OUTPUT_CLOSED: Final = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status. Ctrl-C and a closed output end it quietly, no traceback."""
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        # Whatever is still buffered for the closed pipe goes nowhere, so the interpreter's exit does not fail on it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OUTPUT_CLOSED


def _main(given: list[str]) -> int:
    parser = _parser()
    # Everything after `--` goes to Claude Code as it is.
    ours, claude_args = (given[: given.index("--")], given[given.index("--") + 1 :]) if "--" in given else (given, [])
    args = parser.parse_args(ours)
    if claude_args and args.command != "run":
        args.usage.error("only run passes options after -- (to Claude Code, or Codex)")
    match args.command:
        case "run":
            return _run(args.usage, args, claude_args)
        case "play":
            return _play(args.usage, args)
        case "claude-code":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _claude_code(args))
        case "opencode":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _opencode(args.usage, args))
        case "pi":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _pi(args.usage, args))
        case "gemini":
            return _writing(f"{parser.prog} {args.command} {args.what}", lambda: _gemini(args.usage, args))
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
    """The --timeout and --step-timeout type: a finite number of seconds above 0 (float() alone takes nan, inf and
    -5)."""
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

    run = _command(
        commands,
        "run",
        help="run a chain in a Claude Code session (Agent SDK) and print each step and its output",
        description="Runs a chain in a fresh Claude Code session on the Agent SDK and prints each step's line, "
        "then its output (the command's text or the model's answer) as it comes. Options after `--` go to Claude "
        "Code as they are. Without `claude` on PATH, the Claude Code the SDK bundles runs, and a line says which.",
        epilog='example: slashkit run "/review the diff && /test" --model sonnet -- --max-turns 5',
    )
    run.add_argument(
        "chain",
        nargs="?",
        help='the commands, as typed: "/a x && /b y", one command alone, a saved chain by name ("/ship Bob", '
        "from the project's .slashkit/chains/ship.md), or a program that opens a loop or a group "
        '("for w in a b; do /x $w; done", "until /check; do /fix; done")',
    )
    run.add_argument(
        "--host",
        choices=("claude-code", "codex"),
        default="claude-code",
        help="the agent CLI: Claude Code on the Agent SDK (default), or Codex's app-server (docs/codex.md)",
    )
    run.add_argument("--codex", help="the Codex CLI (default: $SLASHKIT_CODEX, else `codex` on PATH)")
    run.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="go on with a run cut off by a crash or a timeout (its id: --jsonl's run_start): its interrupted step "
        "runs again, then the rest, in the same Claude Code session and project; no chain with it",
    )
    run.add_argument("--cwd", default=".", help="the project folder the session runs in (default: here)")
    run.add_argument(
        "--claude",
        help="the Claude Code CLI (default: $SLASHKIT_CLAUDE, else `claude` on PATH, else the one the SDK bundles)",
    )
    run.add_argument(
        "--timeout", type=_seconds, default=600.0, help="give up after this many seconds, above 0 (default 600)"
    )
    run.add_argument(
        "--step-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="end a step that shows no progress (no message from the host) for this many seconds, and exit 124",
    )
    shown = run.add_mutually_exclusive_group()
    shown.add_argument(
        "--json", action="store_true", help="print JSON lines: one object per event, the last the outcome"
    )
    shown.add_argument(
        "--jsonl",
        action="store_true",
        help="stream JSON lines for CI: run_start (run and session id), each step's step_start and step_end "
        "(status, duration, tokens and cost where the host reports them), run_end (the exit status); docs/ci.md",
    )
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

    play = _command(
        commands,
        "play",
        help="play a chain through the in-memory host (no Claude Code needed)",
        description="Plays a chain through slashkit's in-memory host and prints the lines a person would see. "
        "Every command named in the chain runs and returns at once, unless --prompt or --fail says otherwise; "
        "a shell step (!cmd) runs nothing and ends well, unless --fail !cmd names its first word.",
        epilog='example: slashkit play "/review x && /test || /rollback" --prompt review --fail test',
    )
    play.add_argument("chain", help='the commands, as typed: "/a x && /b y"')
    play.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="NAME",
        help="treat /NAME as a command that hands the model a prompt whose turn ends with an answer",
    )
    play.add_argument(
        "--fail",
        action="append",
        default=[],
        metavar="NAME",
        help="treat /NAME (or a shell step !NAME) as a command that fails",
    )

    code = _command(
        commands,
        "claude-code",
        help="lay out the Claude Code plugins and print where they are",
        description="Lays out slashkit's Claude Code marketplace (the slash-chain and self-command plugins), "
        "naming this interpreter as the helper's Python, and prints where it is.",
    )
    what = code.add_subparsers(dest="what", metavar="WHAT", required=True)
    one = _command(
        what,
        "plugin-dir",
        help="print one plugin's folder, for claude --plugin-dir",
        description="Lays out the marketplace and prints one plugin's folder, to load for one session: "
        'claude --plugin-dir "$(slashkit claude-code plugin-dir slash-chain)"',
    )
    one.add_argument("name", choices=plugins.PLUGINS, help="the plugin")
    market = _command(
        what,
        "marketplace",
        help="print the marketplace folder, for claude plugin marketplace add",
        description="Lays out the marketplace and prints its folder, to install from for good: "
        'claude plugin marketplace add "$(slashkit claude-code marketplace)"; '
        "claude plugin install slash-chain@slashkit",
    )
    for sub in (one, market):
        sub.add_argument("--root", help="lay out here instead of under $XDG_DATA_HOME/slashkit")
    _opencode_parser(commands)
    _pi_parser(commands)
    _gemini_parser(commands)
    return parser


def _command(
    commands: "argparse._SubParsersAction[argparse.ArgumentParser]",
    name: str,
    *,
    help: str,
    description: str,
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand whose usage errors print its own usage (`args.usage.error`)."""
    sub = commands.add_parser(name, help=help, description=description, epilog=epilog)
    sub.set_defaults(usage=sub)
    return sub


def _opencode_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    code = _command(
        commands,
        "opencode",
        help="put the slash-chain plugin where opencode loads it, or take it out",
        description="Puts slashkit's opencode plugin in a project's .opencode/plugins (or, with --global, the "
        "user's opencode config), or takes it out.",
    )
    _install_and_uninstall(
        code,
        "plugin",
        "Writes the plugin into PROJECT_DIR/.opencode/plugins, or with --global into "
        "$XDG_CONFIG_HOME/opencode/plugins; a second run changes nothing. The files name no path of this machine, "
        "so a team can commit them: the plugin starts $SLASHKIT_PYTHON, else slashkit-helper on PATH.",
        "Removes the plugin's files, and the folders install made once they are empty; nothing else.",
        "the user's opencode config",
        this_python=True,
    )


def _install_and_uninstall(
    code: argparse.ArgumentParser,
    thing: str,
    install: str,
    uninstall: str,
    everywhere: str,
    *,
    this_python: bool = False,
) -> tuple["argparse._SubParsersAction[argparse.ArgumentParser]", argparse.ArgumentParser, argparse.ArgumentParser]:
    """A host's `install` and `uninstall` (PROJECT_DIR or --global, `everywhere` saying where that is), worded for
    the `thing` it lays out; `this_python` adds `--this-python` to install. Returns the subcommands' action, for
    more, and both."""
    what = code.add_subparsers(dest="what", metavar="WHAT", required=True)
    put = _command(
        what, "install", help=f"install the {thing} for a project (default: here), or --global", description=install
    )
    if this_python:
        put.add_argument(
            "--this-python",
            action="store_true",
            help=f"name this interpreter in the {thing} instead, for this machine only (not to commit)",
        )
    out = _command(
        what, "uninstall", help=f"take the {thing} out of a project (default: here), or --global", description=uninstall
    )
    for sub in (put, out):
        sub.add_argument("project", nargs="?", metavar="PROJECT_DIR", help="the project folder (default: here)")
        sub.add_argument("--global", dest="everywhere", action="store_true", help=everywhere)
    return what, put, out


def _project(usage: argparse.ArgumentParser, args: argparse.Namespace) -> Path | None:
    """The project folder an install or uninstall names (None: `--global`), or the usage error that says why not."""
    if args.everywhere and args.project is not None:
        usage.error("takes a PROJECT_DIR or --global, not both")
    project = None if args.everywhere else Path(args.project or ".")
    if project is not None and not project.is_dir():
        usage.error(f"{project} is not a folder")
    return project


def _opencode(usage: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    project = _project(usage, args)
    target = opencode.config_dir(project)
    if args.what == "install":
        paths = opencode.install(target, sys.executable if args.this_python else None)
        print(f"slashkit plugin {'installed' if paths else 'already up to date'} in {target / 'plugins'}")
    else:
        paths = opencode.uninstall(target)
        print(f"slashkit plugin {'removed' if paths else 'was not installed'} from {target / 'plugins'}")
    for path in paths:
        print(f"  {path}")
    return 0


def _pi_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    code = _command(
        commands,
        "pi",
        help="put the slash-chain extension where pi loads it, or take it out",
        description="Puts slashkit's pi extension in a project's .pi/extensions (or, with --global, the user's pi "
        "agent folder), or takes it out; with --omp, the same for omp (oh-my-pi): .omp/extensions, ~/.omp/agent.",
    )
    _, put, out = _install_and_uninstall(
        code,
        "extension",
        "Writes the extension into PROJECT_DIR/.pi/extensions/slashkit, or with --global into "
        "$PI_CODING_AGENT_DIR/extensions/slashkit (default ~/.pi/agent); with --omp, into .omp/extensions/slashkit "
        "(default ~/.omp/agent) with omp's entry beside it. A second run changes nothing. The files "
        "name no path of this machine, so a team can commit them: the extension starts $SLASHKIT_PYTHON, else "
        "slashkit-helper on PATH.",
        "Removes the extension's files, and the folders install made once they are empty; nothing else.",
        "the user's pi agent folder",
        this_python=True,
    )
    for sub in (put, out):
        sub.add_argument("--omp", action="store_true", help="for omp (oh-my-pi) instead of pi")


def _pi(usage: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    project = _project(usage, args)
    target = pi.extensions_dir(project, omp=args.omp)
    if args.what == "install":
        paths = pi.install(target, sys.executable if args.this_python else None, omp=args.omp)
        print(f"slashkit extension {'installed' if paths else 'already up to date'} in {target / pi.FOLDER}")
    else:
        paths = pi.uninstall(target)
        print(f"slashkit extension {'removed' if paths else 'was not installed'} from {target / pi.FOLDER}")
    for path in paths:
        print(f"  {path}")
    return 0


def _gemini_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    code = _command(
        commands,
        "gemini",
        help="put the slash-chain hooks where Gemini CLI reads them, or take them out",
        description="Adds slashkit's hooks and fail tool to a project's .gemini/settings.json (or, with --global, "
        "the user's ~/.gemini/settings.json), or takes them out; every other setting stays as it was.",
    )
    what, _, _ = _install_and_uninstall(
        code,
        "hooks",
        "Adds the hooks and the fail tool's server to PROJECT_DIR/.gemini/settings.json, or with "
        "--global to ~/.gemini/settings.json; a second run changes nothing. They name no path of this machine, so "
        "a team can commit them: they run $SLASHKIT_PYTHON, else the Python of slashkit-helper on PATH.",
        "Removes slashkit's entries from the settings file (the file, when nothing else is left).",
        "the user's Gemini settings",
    )
    lay = _command(
        what,
        "extension",
        help="lay slashkit out as a Gemini extension, for gemini extensions link DIR",
        description="Writes DIR/gemini-extension.json and DIR/hooks/hooks.json; then gemini extensions link DIR "
        "(or install) runs the hooks in every project. Gemini does not take an extension's MCP server as trusted, so "
        "in gemini -p the fail tool is not offered that way (docs/gemini.md).",
    )
    lay.add_argument("folder", metavar="DIR", help="the folder to lay the extension out in")


def _gemini(usage: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.what == "extension":
        paths = gemini.extension(Path(args.folder))
        print(f"slashkit extension {'laid out' if paths else 'already up to date'} in {args.folder}")
        return 0
    project = _project(usage, args)
    path = gemini.settings_file(project, Path(os.environ.get("HOME") or Path.home()))
    if args.what == "install":
        paths = gemini.install(path)
        print(f"slashkit hooks {'installed' if paths else 'already up to date'} in {path}")
    else:
        paths = gemini.uninstall(path)
        print(f"slashkit hooks {'removed' if paths else 'were not installed'} from {path}")
    return 0


def _run(usage: argparse.ArgumentParser, args: argparse.Namespace, claude_args: Sequence[str]) -> int:
    cwd = Path(args.cwd)
    if not cwd.is_dir():
        usage.error(f"--cwd {cwd} is not a folder")
    if args.resume is not None:
        return _resume(usage, args, claude_args)
    if args.chain is None:
        usage.error("the chain is required, unless --resume RUN_ID goes on with a run")
    if not (args.chain.startswith("/") or starts_program(args.chain)):
        usage.error(f"a chain starts with a slash command or opens a loop or a group, as typed: {args.chain[:200]!r}")
    if args.host == "codex":
        return _run_codex(usage, args, cwd, claude_args)
    if args.codex is not None:
        usage.error("--codex is for --host codex")
    _need_sdk(usage)
    from slashkit.adapters.sdk import terminal
    from slashkit.adapters.sdk.session import MAX_TYPED

    if len(args.chain) > MAX_TYPED:
        usage.error(f"a chain holds at most {MAX_TYPED:,} characters, not {len(args.chain):,}")
    return terminal.run(terminal.Settings(**_every_host(args, cwd), **_claude_settings(usage, args, claude_args)))


def _resume(usage: argparse.ArgumentParser, args: argparse.Namespace, claude_args: Sequence[str]) -> int:
    """`run --resume RUN_ID`: the run's program goes on in its own session and project."""
    if args.chain is not None:
        usage.error("--resume goes on with a run as it was: give no chain with it")
    if args.host != "claude-code":
        usage.error("--resume goes on with a run on Claude Code, not Codex")
    _need_sdk(usage)
    from slashkit.adapters.sdk import terminal

    found = terminal.resumed(args.resume, os.environ)
    if isinstance(found, str):
        # Nothing to go on with: the caller's mistake or a journal that cannot be read, as a refused line is.
        print(f"slashkit run: error: {found}", file=sys.stderr)
        return 2
    resumed, project = found
    every = {**_every_host(args, project), "chain": f"/{CHAIN_COMMAND} resume"}
    return terminal.run(terminal.Settings(**every, **_claude_settings(usage, args, claude_args), resume=resumed))


def _need_sdk(usage: argparse.ArgumentParser) -> None:
    """Imports the SDK host, or says how to get the SDK (a usage error)."""
    # The SDK's import costs ~0.7 s (measured on claude-agent-sdk 0.2.184): only `run` pays it.
    try:
        from slashkit.adapters.sdk import terminal  # noqa: F401
    except ModuleNotFoundError as missing:
        if missing.name != "claude_agent_sdk":
            raise
        usage.error("run needs the Claude Agent SDK: pip install 'slashkit[sdk]'")


def _claude_settings(
    usage: argparse.ArgumentParser, args: argparse.Namespace, claude_args: Sequence[str]
) -> dict[str, Any]:
    """The settings of `run` on Claude Code alone: the CLI, and what goes to it."""
    from slashkit.adapters.sdk import bundled, terminal

    refused = terminal.refused_args(claude_args)
    if refused:
        usage.error(f"Claude Code takes options after --, not {' '.join(map(repr, refused))}")
    claude = args.claude or os.environ.get("SLASHKIT_CLAUDE") or shutil.which("claude")
    if claude is None:
        found = bundled.cli()
        if found is None:
            usage.error("no Claude Code CLI: install @anthropic-ai/claude-code, or pass --claude PATH")
        claude = str(found.path)
        print(f"slashkit: no claude on PATH; running the Claude Code {found.version} {found.by}", file=sys.stderr)

    return {
        "claude": claude,
        "model": args.model,
        "permission_mode": args.permission_mode,
        "allowed_tools": tuple(t.strip() for t in args.allowed_tools.split(",") if t.strip()),
        "claude_args": tuple(claude_args),
    }


def _run_codex(usage: argparse.ArgumentParser, args: argparse.Namespace, cwd: Path, codex_args: Sequence[str]) -> int:
    from slashkit.adapters.codex import terminal
    from slashkit.adapters.harness.loop import Harness

    claude_only = {"--claude": args.claude, "--model": args.model, "--permission-mode": args.permission_mode}
    given = [name for name, value in claude_only.items() if value] + (["--allowed-tools"] if args.allowed_tools else [])
    if given:
        usage.error(f"{', '.join(given)}: Claude Code's options; to configure Codex, pass -- -c KEY=VALUE")
    if len(args.chain) > Harness.max_typed:
        usage.error(f"a chain holds at most {Harness.max_typed:,} characters, not {len(args.chain):,}")
    codex = args.codex or os.environ.get("SLASHKIT_CODEX") or shutil.which("codex")
    if codex is None:
        usage.error("no Codex CLI: install @openai/codex, or pass --codex PATH")
    return terminal.run(terminal.Settings(**_every_host(args, cwd), codex=codex, codex_args=tuple(codex_args)))


def _every_host(args: argparse.Namespace, cwd: Path) -> dict[str, Any]:
    """The settings of `run` that every host's `Settings` takes alike."""
    return {
        "chain": args.chain,
        "cwd": cwd,
        "timeout": args.timeout,
        "json": args.json,
        "jsonl": args.jsonl,
        "step_timeout": args.step_timeout,
    }


def _play(usage: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if not args.chain.startswith("/"):
        usage.error(f"a chain starts with a slash command, as typed: {args.chain!r}")
    session = _playground(args.chain, set(args.prompt), set(args.fail))
    session.type(args.chain)
    while session.session.chains.running is not None:
        before = len(session.ui.lines)
        if session.shell.running:
            # A rehearsal runs no shell: a shell step ends well, unless `--fail !word` names its first word.
            _, text = session.shell.started[-1]
            session.shell.finish("--fail said so" if f"!{text.split()[0]}" in args.fail else None)
            session.settle()
            continue
        session.end_turn("answer")
        if len(session.ui.lines) == before:
            break
    for line in session.ui.lines:
        print(line)
    if session.outcomes:
        return 0 if session.outcomes[-1].ended_well else 1
    # A command alone: no chain, no line; its status is its own.
    return 1 if args.chain[1:].split(" ", 1)[0] in args.fail else 0


def _playground(chain: str, prompts: set[str], fails: set[str]) -> MemoryHost:
    names = [word[1:] for word in chain.split() if word.startswith("/") and len(word) > 1]
    return host(**{name: _played(name, prompts, fails) for name in names})


def _played(name: str, prompts: set[str], fails: set[str]) -> Local | Prompt | Throws:
    if name in fails:
        return Throws("--fail said so")
    return Prompt(f"do {name}") if name in prompts else Local()


if __name__ == "__main__":
    sys.exit(main())
