"""`slashkit run` on the SDK host as a person runs it: the real Claude Code 2.1.328, offline, a scripted model."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from slashkit.adapters.sdk import bundled
from slashkit.core.texts import FAIL_TOOL_ID
from tests.adapters.test_cli import exit_statuses
from tests.support.claude_cli import Isolation, claude_path, cli_available, isolated_env
from tests.support.model_server import ModelServer, text, tool_use
from tests.support.sdk_session import project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed (scripts/setup.sh)"),
]


def run_command(tmp: Path, model: ModelServer, *args: str) -> tuple[list[str], dict[str, str]]:
    """`slashkit run ARGS` in a fresh isolation with the pinned CLI, and its environment."""
    iso = Isolation.create(tmp)
    env = {**isolated_env(iso, model.url), "SLASHKIT_CLAUDE": str(claude_path())}
    return [sys.executable, "-m", "slashkit.adapters.cli", "run", "--cwd", str(project(iso.root)), *args], env


def slashkit_run(tmp: Path, model: ModelServer, *args: str) -> subprocess.CompletedProcess[str]:
    command, env = run_command(tmp, model, *args)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return f"{pid} (gone)"


def children(pid: int) -> set[int]:
    """The processes whose parent is `pid` now."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def gone(pids: Sequence[int] | set[int], within: float = 10.0) -> bool:
    """Tells whether every one of `pids` has ended (a zombie counts as ended) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = [p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)]
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_run_prints_each_steps_line_then_its_output_and_exits_by_how_the_chain_ended(tmp_path: Path) -> None:
    with ModelServer() as model:
        ran = slashkit_run(tmp_path, model, "/cost && /context && /usage")
        stopped = slashkit_run(tmp_path, model, "/context && /nosuch && /usage")
    shown = ran.stdout.splitlines()
    assert ran.returncode == 0, ran.stderr
    steps = [shown.index(line) for line in ("1/3: /cost", "2/3: /context", "3/3: /usage", "all 3 command(s) ran")]
    assert steps == sorted(steps) and steps[-1] == len(shown) - 1
    assert shown[steps[0] + 1].startswith("  Estimated cost:") and shown[steps[1] + 1] == "  ## Context Usage"
    assert stopped.returncode == 1
    assert (
        stopped.stdout.splitlines()[-1] == "stopped after /nosuch: it failed: Unknown command: /nosuch; not run: /usage"
    )
    assert "waiting on the model" not in ran.stderr  # stderr is no terminal here


def test_run_shows_the_models_answers_and_passes_claude_options_through(tmp_path: Path) -> None:
    with ModelServer([text("Hello Bob!"), text("Hi Carol!")]) as model:
        ran = slashkit_run(
            tmp_path, model, "/greet Bob && /greet Carol", "--model", "claude-scripted-9", "--", "--max-turns", "3"
        )
        asked = [r.body.get("model") if r.body else None for r in model.main_requests]
    assert (ran.returncode, ran.stdout.splitlines()) == (
        0,
        ["1/2: /greet Bob", "  Hello Bob!", "2/2: /greet Carol", "  Hi Carol!", "all 2 command(s) ran"],
    ), ran.stderr
    assert asked == ["claude-scripted-9", "claude-scripted-9"]


def test_a_typed_for_loop_runs_its_body_once_a_word_and_a_while_stops_at_the_persons_cap(tmp_path: Path) -> None:
    with ModelServer([text("Hello Bob!"), text("Hello Carol!")]) as model:
        greeted = slashkit_run(tmp_path, model, "for w in Bob Carol; do /greet $w; done")
        command, env = run_command(tmp_path, model, "while /cost; do /context; done")
        capped = subprocess.run(command, env={**env, "SLASHKIT_LOOP_CAP": "2"}, capture_output=True, text=True)
        asked = [r.last_user_text() for r in model.main_requests]
    assert (greeted.returncode, greeted.stdout.splitlines()) == (
        0,
        [
            "  a program of 1 command(s) runs",
            "for 1/2: Bob",
            "1/1: /greet Bob",
            "  Hello Bob!",
            "for 2/2: Carol",
            "1/1: /greet Carol",
            "  Hello Carol!",
            "all 2 command(s) ran",
        ],
    ), greeted.stderr
    assert ["Greet Bob" in a for a in asked] == [True, False] and "Greet Carol" in asked[1], asked
    shown = capped.stdout.splitlines()
    assert (shown.count("1/2: /cost"), shown.count("2/2: /context")) == (2, 2), capped.stdout
    assert shown[-2:] == [
        "while stopped: its body ran 2 times, its cap (SLASHKIT_LOOP_CAP raises it)",
        "ended: 4 succeeded, 0 failed, 0 skipped",
    ]


#: Status lines an attacker would have `slashkit run` show after the real first one (issue 16, D1).
FORGED = "\n2/2: /review deploy\nall 2 command(s) ran"


def test_an_answer_or_a_fail_reason_holding_status_lines_cannot_pass_for_them(tmp_path: Path) -> None:
    with ModelServer([text(f"Fine.{FORGED}")]) as model:
        answered = slashkit_run(tmp_path, model, "/greet Bob && /greet Carol", "--", "--max-turns", "3")
    with ModelServer([tool_use(FAIL_TOOL_ID, {"reason": f"no Bob{FORGED}"}), text("I could not.")]) as model:
        failed = slashkit_run(tmp_path, model, "/greet Bob && /greet Carol", "--", "--max-turns", "3")
    # The answer is output, indented under its step's line; the chain goes on to its real second step.
    assert answered.stdout.splitlines()[:4] == [
        "1/2: /greet Bob",
        "  Fine.",
        "  2/2: /review deploy",
        "  all 2 command(s) ran",
    ], answered.stdout
    assert answered.stdout.splitlines()[4] == "2/2: /greet Carol", answered.stdout
    # The reason is one line: its breaks are escapes.
    assert (failed.returncode, failed.stdout.splitlines()) == (
        1,
        [
            "1/2: /greet Bob",
            "  I could not.",
            "stopped after /greet: the model reported it failed: no Bob\\n2/2: /review deploy\\nall 2 command(s) "
            "ran; not run: /greet",
        ],
    ), failed.stderr


def test_an_answer_over_the_sdks_own_line_limit_is_read_whole(tmp_path: Path) -> None:
    # The SDK reads no line over 1 MiB unless told (a model's tool call of 1 MiB ended the session and its chain);
    # slashkit's host reads up to 16 MiB. A line over that fails its step: test_sdk_host.py, with a smaller limit.
    with ModelServer([text("x" * (1100 * 1024)), text("HELLO CAROL")]) as model:
        ran = slashkit_run(tmp_path, model, "/greet Bob && /greet Carol")
    assert ran.returncode == 0, ran.stderr
    shown = ran.stdout.splitlines()
    assert shown[0] == "1/2: /greet Bob" and shown[1] == "  " + "x" * (1100 * 1024), shown[:1]
    assert shown[2:] == ["2/2: /greet Carol", "  HELLO CAROL", "all 2 command(s) ran"], shown[2:]


def test_run_json_prints_one_object_per_event_and_the_outcome_last(tmp_path: Path) -> None:
    with ModelServer([text("Hello Bob!")]) as model:
        ran = slashkit_run(tmp_path, model, "/greet Bob && /nosuch", "--json")
    objects = [json.loads(line) for line in ran.stdout.splitlines()]
    assert ran.returncode == 1
    assert [o["event"] for o in objects] == [
        "line",
        "step_started",
        "output",
        "step_ended",
        "line",
        "step_started",
        "step_ended",
        "line",
        "chain_ended",
        "outcome",
    ]
    assert objects[0] == {"event": "line", "text": "1/2: /greet Bob"}
    assert objects[1] == {
        "event": "step_started",
        "index": 1,
        "total": 2,
        "step": {"command": "greet", "args": "Bob", "op": "&&"},
        "line": "1/2: /greet Bob",
    }
    assert objects[3]["output"] == "Hello Bob!" and objects[3]["ok"] is True
    assert objects[7]["text"].startswith("stopped after /nosuch: it failed: ")
    assert objects[8]["ok"] is False and objects[8]["outcome"]["status"] == "failure"
    assert objects[-1] == {"event": "outcome", "outcome": "stopped", "exit": 1}


def test_run_says_when_claude_code_cannot_start(tmp_path: Path) -> None:
    iso = Isolation.create(tmp_path)
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\nexit 7\n")
    broken.chmod(0o755)
    env = isolated_env(iso, "http://127.0.0.1:9")
    command = [
        sys.executable,
        "-m",
        "slashkit.adapters.cli",
        "run",
        "/cost && /usage",
        "--claude",
        str(broken),
        "--json",
    ]
    ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode == 4, ran.stderr
    assert "slashkit: Claude Code ended first" in ran.stderr
    assert json.loads(ran.stdout.splitlines()[-1]) == {"event": "outcome", "outcome": "exited", "exit": 4}


def test_a_command_alone_that_the_session_does_not_know_fails_at_once(tmp_path: Path) -> None:
    with ModelServer() as model:
        started = time.monotonic()
        ran = slashkit_run(tmp_path, model, "/nosuchcmd", "--timeout", "60")
        took = time.monotonic() - started
    assert (ran.returncode, ran.stdout) == (1, ""), ran.stderr
    assert ran.stderr.splitlines()[-1] == "slashkit: /nosuchcmd failed: Unknown command: /nosuchcmd"
    assert took < 30 and model.main_requests == []


def test_run_shows_claude_codes_own_error_when_it_ends_first(tmp_path: Path) -> None:
    with ModelServer() as model:
        ran = slashkit_run(tmp_path, model, "/cost", "--", "--bogus-flag")
    assert ran.returncode == 4
    said = [line for line in ran.stderr.splitlines() if line.startswith("slashkit: Claude Code said: ")]
    assert any("--bogus-flag" in line for line in said), ran.stderr


def test_without_claude_on_path_run_uses_the_cli_the_sdk_bundles_and_says_which(tmp_path: Path) -> None:
    found = bundled.cli()
    assert found is not None
    with ModelServer() as model:
        command, env = run_command(tmp_path, model, "/cost && /context")
        env = {k: v for k, v in env.items() if k != "SLASHKIT_CLAUDE"} | {"PATH": "/usr/bin:/bin"}
        ran = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines()[0] == (
        f"slashkit: no claude on PATH; running the Claude Code {found.version} {found.by}"
    )
    assert ran.stdout.splitlines()[-1] == "all 2 command(s) ran"


def test_a_closed_output_ends_run_quietly_with_141_and_nothing_left_running(tmp_path: Path) -> None:
    with ModelServer() as model:
        command, env = run_command(tmp_path, model, "/cost && /context && /usage")
        running = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert running.stdout is not None and running.stderr is not None
        assert running.stdout.readline() == "1/3: /cost\n"  # `| head -1`
        started = children(running.pid)
        running.stdout.close()
        status = running.wait(timeout=60)
        said = running.stderr.read()
    assert (status, said) == (141, "")
    assert started and gone(started)


#: Starts a command as a terminal starts its foreground one, with SIGINT at its default, so Ctrl-C reaches it. A shell
#: starts a script's background job (`scripts/test > log &`) with SIGINT ignored, everything under it inherits that,
#: and a process started so rightly keeps ignoring Ctrl-C: this test then waited 60 s in such whole runs.
AS_FOREGROUND = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])",
]


@pytest.mark.parametrize("jsonl", [False, True], ids=["text", "jsonl"])
def test_ctrl_c_ends_run_with_130_no_traceback_and_nothing_left_running(tmp_path: Path, jsonl: bool) -> None:
    hold = threading.Event()
    with ModelServer([text("Hello Bob!", hold=hold)]) as model:
        command, env = run_command(tmp_path, model, "/greet Bob && /cost", *(["--jsonl"] if jsonl else []))
        running = subprocess.Popen(
            [*AS_FOREGROUND, *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert running.stdout is not None and running.stderr is not None
        first = running.stdout.readline()
        assert json.loads(first)["event"] == "run_start" if jsonl else first == "1/2: /greet Bob\n"
        deadline = time.monotonic() + 60
        while not model.main_requests and time.monotonic() < deadline:
            time.sleep(0.1)
        started = children(running.pid)
        os.kill(running.pid, signal.SIGINT)
        try:
            status = running.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # Say what was still running and what it said, then end it: a run left hanging shows why.
            left = [_cmdline(pid) for pid in children(running.pid)]
            running.kill()
            said = running.stderr.read()[-4000:]
            pytest.fail(f"slashkit run did not end 60 s after SIGINT; its children {left}; stderr: {said}")
        said, shown = running.stderr.read(), running.stdout.read()
        hold.set()
    assert status == 130, said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said
    assert started and gone(started)
    if jsonl:
        # The stream still ends: the step cut off, then the run's end with its exit status.
        ended = [json.loads(line) for line in shown.splitlines()[-2:]]
        assert [(o["event"], o.get("status"), o.get("exit")) for o in ended] == [
            ("step_end", "interrupted", None),
            ("run_end", None, 130),
        ], shown


def test_each_exit_status_the_help_names_for_run_is_what_run_does(tmp_path: Path) -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\nexit 7\n")
    broken.chmod(0o755)
    ends_with = [
        (0, ["/cost"]),
        (1, ["/context && /nosuch"]),
        (2, ["cost"]),
        # A line that reads as a program but does not parse: refused, nothing sent.
        (2, ["until /context; do /cost"]),
        (4, ["/cost", "--claude", str(broken)]),
        # The model's answer never comes (the server holds it).
        (124, ["/greet Bob && /cost", "--timeout", "8"]),
    ]
    assert {status for status, _ in ends_with} == exit_statuses(help_text)["run"]
    hold = threading.Event()
    with ModelServer([text("too late", hold=hold)]) as model:
        for n, (status, args) in enumerate(ends_with):
            ran = slashkit_run(tmp_path / str(n), model, *args)
            assert ran.returncode == status, (args, ran.stderr)
            assert "Traceback" not in ran.stderr
        hold.set()
    assert ran.stderr.splitlines()[-1] == "slashkit: no end after 8 s"


def test_a_step_whose_model_stalls_is_ended_at_the_step_timeout_and_the_run_exits_124(tmp_path: Path) -> None:
    hold = threading.Event()
    with ModelServer([text("too late", hold=hold)]) as model:
        command, env = run_command(tmp_path, model, "/cost && /greet Bob && /usage", "--step-timeout", "4")
        started = time.monotonic()
        running = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not model.main_requests and time.monotonic() < deadline:
                time.sleep(0.1)
            claude = children(running.pid)
            out, err = running.communicate(timeout=90)
        finally:
            running.kill()
            hold.set()
        took = time.monotonic() - started
    # Claude Code, whose query stalled, was ended with the run.
    assert claude and gone(claude)
    assert running.returncode == 124, err
    assert err.splitlines()[-1] == (
        "slashkit: step 2/3: /greet Bob showed no progress for 4 s, so it was ended (--step-timeout)"
    )
    shown = out.splitlines()
    assert "2/3: /greet Bob" in shown and "3/3: /usage" not in shown, out
    # Ended by the step's stall, long before the whole run's --timeout (600 s by default).
    assert took < 60
    assert len(model.main_requests) == 1


def test_run_jsonl_streams_the_run_and_each_step_with_the_tokens_and_cost_claude_code_reports(tmp_path: Path) -> None:
    # --step-timeout too: the model's answer then streams in pieces (partial messages), which must change nothing.
    with ModelServer([text("Hello Bob!"), text("Hi Carol!")]) as model:
        ran = slashkit_run(
            tmp_path, model, "/greet Bob && /cost && /greet Carol && /nosuch", "--jsonl", "--step-timeout", "60"
        )
    assert ran.returncode == 1, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [(o["event"], o.get("step"), o.get("status")) for o in lines] == [
        ("run_start", None, None),
        ("step_start", "1/4: /greet Bob", None),
        ("step_end", "1/4: /greet Bob", "success"),
        ("step_start", "2/4: /cost", None),
        ("step_end", "2/4: /cost", "success"),
        ("step_start", "3/4: /greet Carol", None),
        ("step_end", "3/4: /greet Carol", "success"),
        ("step_start", "4/4: /nosuch", None),
        ("step_end", "4/4: /nosuch", "failure"),
        ("run_end", None, None),
    ]
    start, greeted, costed, carol, nosuch, end = lines[0], lines[2], lines[4], lines[6], lines[8], lines[-1]
    assert len({o["run"] for o in lines}) == 1
    # The session id is Claude Code's own: its transcript is saved under it.
    assert list(tmp_path.rglob(f"projects/*/{start['session']}.jsonl")), start
    assert greeted["output"] == "Hello Bob!" and greeted["tokens"]["input_tokens"] > 0
    assert greeted["tokens"]["output_tokens"] > 0 and greeted["cost_usd"] > 0
    # A local command costs nothing; each step's cost is its own, not the session's running total.
    assert costed["cost_usd"] == 0 and costed["tokens"]["input_tokens"] == 0
    assert carol["cost_usd"] > 0 and end["cost_usd"] == pytest.approx(greeted["cost_usd"] + carol["cost_usd"])
    assert nosuch["output"] == "Unknown command: /nosuch" and "tokens" not in nosuch
    assert all(isinstance(o["duration_ms"], int) and o["duration_ms"] >= 0 for o in (greeted, costed, end))
    assert (end["exit"], end["outcome"]) == (1, "stopped")


def test_a_run_killed_mid_step_goes_on_with_resume_its_step_again_then_the_rest_never_the_one_before(
    tmp_path: Path,
) -> None:
    hold = threading.Event()
    script = [text("Hello Bob!"), text("Hello Carol!", hold=hold), text("Hello Carol, again!"), text("Hello Dan!")]
    with ModelServer(script) as model:
        command, env = run_command(tmp_path, model, "/greet Bob && /greet Carol && /greet Dan", "--jsonl")
        # Its own process group, killed whole: as a crash, or a CI runner that kills the job, would.
        running = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
        assert running.stdout is not None
        start = json.loads(running.stdout.readline())
        deadline = time.monotonic() + 60
        while len(model.main_requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(running.pid, signal.SIGKILL)
        running.wait(timeout=30)
        hold.set()
        again = [*command[: command.index("run") + 1], "--resume", start["run"], "--jsonl"]
        resumed = subprocess.run(again, env=env, capture_output=True, text=True, timeout=120)
        asked = [r.last_user_text() for r in model.main_requests]
        done = subprocess.run(again, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    lines = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert (lines[0]["run"], lines[0]["session"]) == (start["run"], start["session"])
    assert [(o["event"], o["step"], o.get("output")) for o in lines if o["event"].startswith("step")] == [
        ("step_start", "2/3: /greet Carol", None),
        ("step_end", "2/3: /greet Carol", "Hello Carol, again!"),
        ("step_start", "3/3: /greet Dan", None),
        ("step_end", "3/3: /greet Dan", "Hello Dan!"),
    ]
    assert ["Greet Bob" in a for a in asked] == [True, False, False, False], asked
    assert "Greet Carol" in asked[2] and "Greet Dan" in asked[3], asked
    # Gone on to its end, it is done: nothing is left to resume.
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"slashkit run: error: no run {start['run']} was cut off (one that ended, or was resumed to its end, is done)"
    )


def test_a_run_ended_at_its_step_timeout_goes_on_with_resume(tmp_path: Path) -> None:
    hold = threading.Event()
    with ModelServer([text("too late", hold=hold), text("Hello Bob!")]) as model:
        command, env = run_command(tmp_path, model, "/greet Bob && /cost", "--jsonl", "--step-timeout", "4")
        stalled = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        hold.set()
        run_id = json.loads(stalled.stdout.splitlines()[0])["run"]
        again = [*command[: command.index("run") + 1], "--resume", run_id]
        resumed = subprocess.run(again, env=env, capture_output=True, text=True, timeout=120)
    assert stalled.returncode == 124, stalled.stderr
    assert resumed.returncode == 0, resumed.stderr
    shown = resumed.stdout.splitlines()
    assert shown[-1] == "all 2 command(s) ran", resumed.stdout
    assert "  Hello Bob!" in shown and shown.index("  Hello Bob!") < shown.index("2/2: /cost"), resumed.stdout
