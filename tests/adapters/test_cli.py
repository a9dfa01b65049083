"""The `slashkit` command as a person meets it: help, clear errors, and what each subcommand prints."""

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from slashkit.adapters.cli import EXIT_STATUS, main

ROOT = Path(__file__).resolve().parents[2]


def slashkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", *args], capture_output=True, text=True, env=env
    )


def test_help_names_every_command_and_the_exit_statuses() -> None:
    shown = slashkit("--help")
    assert shown.returncode == 0
    named = ("run", "play", "claude-code", "opencode", "exit status:", 'slashkit run "/cost && /context && /usage"')
    for word in named:
        assert word in shown.stdout


def exit_statuses(help_text: str) -> dict[str, set[int]]:
    """The exit statuses the help names for each command: `{"run": {0, 1, 2, 4, 124}, ..., "every command": {130,
    141}}`."""
    block = help_text.split("exit status:\n", 1)[1].split("\n\n", 1)[0]
    statuses: dict[str, set[int]] = {}
    command = ""
    for line in block.splitlines():
        named = re.match(r"  (\S+(?: command)?)\s+(.*)", line)
        if named:
            command, line = named[1], named[2]
        statuses.setdefault(command, set()).update(int(n) for n in re.findall(r"(?:^|; )(\d+) ", line.strip()))
    return statuses


def test_the_help_and_the_readme_name_the_same_exit_statuses() -> None:
    assert EXIT_STATUS in slashkit("--help").stdout
    assert EXIT_STATUS in (ROOT / "README.md").read_text()
    assert exit_statuses(EXIT_STATUS + "\n") == {
        "run": {0, 1, 2, 4, 124},
        "play": {0, 1, 2},
        "claude-code": {0, 1, 2},
        "opencode": {0, 1, 2},
        "pi": {0, 1, 2},
        "gemini": {0, 1, 2},
        "every command": {130, 141},
    }


#: A command line that ends with each status the help names, for the commands that need no Claude Code (`run`'s
#: statuses are checked against the real CLI in tests/engine/test_sdk_cli.py).
ENDS_WITH: dict[str, dict[int, list[str]]] = {
    "play": {0: ["play", "/a || /b"], 1: ["play", "/a && /b", "--fail", "a"], 2: ["play", "hi"]},
    "claude-code": {
        0: ["claude-code", "marketplace", "--root", "{tmp}/root"],
        1: ["claude-code", "marketplace", "--root", "/proc/nope"],
        2: ["claude-code", "plugin-dir", "nope"],
    },
    "opencode": {
        0: ["opencode", "install", "{tmp}"],
        1: ["opencode", "install", "/proc/1"],
        2: ["opencode", "install", "{tmp}", "--global"],
    },
    "pi": {
        0: ["pi", "install", "{tmp}"],
        1: ["pi", "install", "/proc/1"],
        2: ["pi", "install", "{tmp}", "--global"],
    },
    "gemini": {
        0: ["gemini", "install", "{tmp}"],
        1: ["gemini", "install", "/proc/1"],
        2: ["gemini", "install", "{tmp}", "--global"],
    },
}


@pytest.mark.parametrize("command", sorted(ENDS_WITH))
def test_each_exit_status_the_help_names_is_what_the_command_does(command: str, tmp_path: Path) -> None:
    named = exit_statuses(slashkit("--help").stdout)
    assert set(ENDS_WITH[command]) == named[command]
    for status, args in ENDS_WITH[command].items():
        ended = slashkit(*(a.replace("{tmp}", str(tmp_path)) for a in args))
        assert ended.returncode == status, (args, ended.stderr)
        assert "Traceback" not in ended.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["run"],
        ["play"],
        ["claude-code"],
        ["claude-code", "plugin-dir"],
        ["claude-code", "marketplace"],
        ["opencode"],
        ["opencode", "install"],
        ["opencode", "uninstall"],
    ],
)
def test_every_subcommand_has_help_that_says_what_it_does(args: list[str]) -> None:
    shown = slashkit(*args, "--help")
    assert shown.returncode == 0
    usage, described = shown.stdout.split("\n\n")[:2]
    assert usage.startswith(f"usage: slashkit {' '.join(args)} ")
    assert not described.startswith(("positional arguments:", "options:")) and len(described) > 40, shown.stdout


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["play", "hi"], "usage: slashkit play "),
        (["run", "cost", "--claude", "/bin/true"], "usage: slashkit run "),
        (["opencode", "install", ".", "--global"], "usage: slashkit opencode install "),
        (["opencode", "uninstall", "/nowhere/at/all"], "usage: slashkit opencode uninstall "),
    ],
)
def test_a_usage_error_prints_the_usage_of_the_subcommand_it_is_about(args: list[str], usage: str) -> None:
    refused = slashkit(*args)
    assert refused.returncode == 2
    assert refused.stderr.startswith(usage), refused.stderr


def test_play_ends_as_a_shell_would_and_fail_makes_a_command_fail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "/deploy prod || /rollback prod"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "ended: 1 succeeded, 0 failed, 1 skipped"
    assert main(["play", "/deploy prod || /rollback prod", "--fail", "deploy"]) == 0
    assert main(["play", "/test ; /deploy", "--fail", "deploy"]) == 1
    assert main(["play", "/test", "--fail", "test"]) == 1


def test_a_closed_output_ends_the_command_quietly_with_141(tmp_path: Path) -> None:
    played = subprocess.Popen(
        [sys.executable, "-m", "slashkit.adapters.cli", "play", "/a && /b && /c"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert played.stdout is not None and played.stderr is not None
    played.stdout.close()  # `| head -1` that has read its line, before slashkit writes its first
    assert (played.wait(timeout=30), played.stderr.read()) == (141, "")


def test_run_refuses_what_it_cannot_pass_to_claude_code_after_the_double_dash() -> None:
    refused = slashkit("run", "/cost", "--claude", "/bin/true", "--", "stray", "--max-turns", "3", "-x")
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[0].startswith("usage: slashkit run ")
    assert refused.stderr.splitlines()[-1] == (
        "slashkit run: error: Claude Code takes options after --, not 'stray' '-x'"
    )


def test_no_command_prints_the_help_and_fails() -> None:
    shown = slashkit()
    assert shown.returncode == 2
    assert "usage: slashkit" in shown.stdout


def test_play_prints_the_transcript_of_a_chain_through_the_memory_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "/review x && /test && /deploy", "--prompt", "review"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "1/3: /review x",
        "2/3: /test",
        "3/3: /deploy",
        "all 3 command(s) ran",
    ]


def test_plugin_dir_prints_a_folder_ready_to_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claude-code", "plugin-dir", "slash-chain", "--root", str(tmp_path)]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert folder == tmp_path / "plugins" / "slash-chain"
    bundled = (folder / "hooks" / "register.js").read_text()
    assert f"var PYTHON = {json.dumps(sys.executable)};\n" in bundled
    assert (tmp_path / ".claude-plugin" / "marketplace.json").is_file()


def test_an_unknown_plugin_is_refused_with_the_choices() -> None:
    refused = slashkit("claude-code", "plugin-dir", "nope")
    assert refused.returncode == 2
    assert "invalid choice: 'nope' (choose from 'slash-chain', 'self-command')" in refused.stderr


def test_run_without_a_claude_cli_or_a_bundled_one_says_how_to_get_one(tmp_path: Path) -> None:
    # An SDK wheel for a platform it bundles no CLI for.
    unbundled = (
        "import sys; from slashkit.adapters.sdk import bundled; bundled.cli = lambda: None; "
        "from slashkit.adapters.cli import main; sys.exit(main())"
    )
    refused = subprocess.run(
        [sys.executable, "-c", unbundled, "run", "/cost && /context"],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
    )
    assert refused.returncode == 2
    assert "no Claude Code CLI: install @anthropic-ai/claude-code, or pass --claude PATH" in refused.stderr


def test_run_refuses_a_chain_longer_than_a_query_may_hold_in_one_line() -> None:
    # Typed into the session, Claude Code writes it back in one message the SDK could not read (issue 16, D6).
    refused = slashkit("run", "/cost " + "y" * 120_000 + " && /usage", "--claude", "/bin/true")
    assert (refused.returncode, refused.stdout) == (2, "")
    last = refused.stderr.splitlines()[-1]
    assert last == "slashkit run: error: a chain holds at most 100,000 characters, not 120,016"


@pytest.mark.parametrize("option", ["--timeout", "--step-timeout"])
@pytest.mark.parametrize("timeout", ["nan", "inf", "-5", "0", "five"])
def test_run_refuses_a_timeout_that_is_not_a_finite_number_above_zero(option: str, timeout: str) -> None:
    refused = slashkit("run", "/cost", "--claude", "/bin/true", option, timeout)
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[0].startswith("usage: slashkit run")
    assert refused.stderr.splitlines()[-1] == (
        f"slashkit run: error: argument {option}: must be a finite number of seconds above 0, not {timeout!r}"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["marketplace", "--root", "/proc/nope"],
            "slashkit claude-code marketplace: error: cannot write /proc/nope: No such file or directory",
        ),
        (
            ["plugin-dir", "slash-chain", "--root", "/etc/passwd"],
            "slashkit claude-code plugin-dir: error: cannot write /etc/passwd/.claude-plugin: Not a directory",
        ),
    ],
)
def test_a_root_that_cannot_be_written_is_one_line_naming_it_and_exit_1(args: list[str], line: str) -> None:
    refused = slashkit("claude-code", *args)
    assert (refused.returncode, refused.stderr, refused.stdout) == (1, line + "\n", "")


def test_a_default_root_that_cannot_be_written_is_one_line_naming_it_and_exit_1() -> None:
    env = {**os.environ, "HOME": "/proc/nope", "XDG_DATA_HOME": ""}
    refused = slashkit("claude-code", "plugin-dir", "self-command", env=env)
    assert refused.returncode == 1
    assert (
        refused.stderr == "slashkit claude-code plugin-dir: error: cannot write /proc/nope: No such file or directory\n"
    )


def test_a_relative_xdg_data_home_is_ignored_as_the_xdg_spec_asks(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": "rel"}
    shown = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", "claude-code", "plugin-dir", "slash-chain"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert shown.returncode == 0, shown.stderr
    assert Path(shown.stdout.strip()).is_relative_to(tmp_path / "home" / ".local" / "share" / "slashkit")
    assert not (tmp_path / "rel").exists()


def test_laying_out_replaces_a_link_at_a_plugin_file_and_leaves_what_it_points_at(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    hooks = tmp_path / "root" / "plugins" / "slash-chain" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "register.js").symlink_to(victim)
    (hooks / "register.js.tmp").symlink_to(victim)
    shown = slashkit("claude-code", "plugin-dir", "slash-chain", "--root", str(tmp_path / "root"))
    assert shown.returncode == 0, shown.stderr
    assert victim.read_text() == "the user's own file\n"
    assert not (hooks / "register.js").is_symlink()
    assert "var PYTHON = " in (hooks / "register.js").read_text()


def test_run_refuses_a_chain_that_is_not_a_slash_command() -> None:
    refused = slashkit("run", "cost && /context", "--claude", "/bin/true")
    assert refused.returncode == 2
    said = "a chain starts with a slash command or opens a loop or a group, as typed: 'cost && /context'"
    assert said in refused.stderr


def test_run_refuses_a_missing_project_folder(tmp_path: Path) -> None:
    refused = slashkit("run", "/cost", "--claude", "/bin/true", "--cwd", str(tmp_path / "nowhere"))
    assert refused.returncode == 2
    assert "is not a folder" in refused.stderr


def test_run_without_the_sdk_extra_says_how_to_get_it(tmp_path: Path) -> None:
    hide = (
        "import sys; sys.modules['claude_agent_sdk'] = None; from slashkit.adapters.cli import main; sys.exit(main())"
    )
    refused = subprocess.run(
        [sys.executable, "-c", hide, "run", "/cost && /usage", "--claude", "/bin/true", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2
    assert "run needs the Claude Agent SDK: pip install 'slashkit[sdk]'" in refused.stderr


@pytest.mark.parametrize("linked", ["plugins/slash-chain", "plugins/slash-chain/hooks", "plugins"])
def test_laying_out_refuses_a_folder_that_is_a_link_and_writes_nothing(tmp_path: Path, linked: str) -> None:
    # A marketplace root may be shared or checked out; a link at one of its folders would be written through.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "host.ts").write_text("// the user's own file\n")
    root = tmp_path / "root"
    (root / linked).parent.mkdir(parents=True)
    (root / linked).symlink_to(elsewhere)
    for what in (["marketplace"], ["plugin-dir", "self-command"]):
        refused = slashkit("claude-code", *what, "--root", str(root))
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr == (
            f"slashkit claude-code {what[0]}: error: cannot write {root / linked}: "
            "a symbolic link, which slashkit does not follow (remove it yourself)\n"
        )
        assert [p.name for p in elsewhere.iterdir()] == ["host.ts"]
        assert not (root / ".claude-plugin").exists()


def not_utf8_python(tmp_path: Path) -> Path:
    """This interpreter under a name that is not UTF-8 (`py\\xff`), as a file system may hold one."""
    folder = tmp_path / "bin"
    folder.mkdir()
    python = Path(os.fsdecode(bytes(folder) + b"/py\xff"))
    python.symlink_to(sys.executable)
    return python


@pytest.mark.parametrize(
    ("args", "written"),
    [
        (["claude-code", "marketplace", "--root", "{tmp}/root"], "root"),
        (["claude-code", "plugin-dir", "slash-chain", "--root", "{tmp}/root"], "root"),
        (["opencode", "install", "{tmp}/project", "--this-python"], "project/.opencode"),
    ],
)
def test_an_interpreter_path_that_is_not_utf8_is_one_line_and_nothing_half_written(
    tmp_path: Path, args: list[str], written: str
) -> None:
    (tmp_path / "project").mkdir()
    python = not_utf8_python(tmp_path)
    # The interpreter runs from a folder that is no venv, so it finds slashkit and its dependencies by path.
    paths = [str(ROOT / "src" / "core"), str(ROOT / "src" / "adapters"), sysconfig.get_paths()["purelib"]]
    refused = subprocess.run(
        [python, "-m", "slashkit.adapters.cli", *(a.replace("{tmp}", str(tmp_path)) for a in args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
    )
    assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
    assert refused.stderr == (
        f"slashkit {' '.join(args[:2])}: error: the interpreter's path is not UTF-8, so no plugin can start it: "
        f"{str(python)!r}\n"
    )
    assert not (tmp_path / written).exists()


def test_play_runs_no_shell_a_shell_step_ends_well_unless_fail_names_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    made = tmp_path / "made"
    assert main(["play", f"/a && !touch {made} && /b"]) == 0
    assert capsys.readouterr().out.splitlines() == ["1/3: /a", f"2/3: !touch {made}", "3/3: /b", "all 3 command(s) ran"]
    assert not made.exists()
    assert main(["play", "/a && !npm test && /b", "--fail", "!npm"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "stopped after !npm: --fail said so; not run: /b"


def test_run_takes_json_or_jsonl_not_both() -> None:
    refused = slashkit("run", "/cost", "--claude", "/bin/true", "--json", "--jsonl")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.splitlines()[-1] == "slashkit run: error: argument --jsonl: not allowed with argument --json"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run"], "the chain is required, unless --resume RUN_ID goes on with a run"),
        (["run", "/cost", "--resume", "r1"], "--resume goes on with a run as it was: give no chain with it"),
        (["run", "--resume", "r1", "--host", "codex"], "--resume goes on with a run on Claude Code, not Codex"),
    ],
)
def test_run_takes_a_chain_or_resume_not_both(args: list[str], said: str) -> None:
    refused = slashkit(*args, "--claude", "/bin/true")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr.splitlines()[-1] == f"slashkit run: error: {said}"


def test_resuming_a_run_the_journal_does_not_hold_cut_off_exits_2_saying_so(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    refused = slashkit("run", "--resume", "nosuch-run", "--claude", "/bin/true", env=env)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "slashkit run: error: no run nosuch-run was cut off (one that ended, or was resumed to its end, is done)\n"
    )
