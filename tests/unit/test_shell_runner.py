"""The shell steps' runner (issue 34) with a real `/bin/sh`: its exit status, its output bounded and in the order
written, its timeout and stop ending the whole process group (SIGTERM, then SIGKILL for one that ignores it), a command
that closes its output early or leaves a child holding it, and bytes that are not UTF-8."""

import os
import threading
import time
from pathlib import Path

import pytest

from slashkit.adapters.shell import GRACE_S, MAX_BYTES, MAX_LINES, ShellSteps, end_all, run_shell, timeout_of


def run(text: str, cwd: Path, timeout_s: float = 10, stop: threading.Event | None = None) -> tuple[str | None, str]:
    ended = run_shell(text, str(cwd), os.environ, timeout_s, stop or threading.Event())
    return ended.error, ended.output


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"


def gone(pid: int, within_s: float = 3.0) -> bool:
    """Tells whether the process ends within a little while (a SIGKILL is delivered, not awaited)."""
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_the_exit_status_decides_and_the_output_keeps_the_order_it_was_written_in(tmp_path: Path) -> None:
    assert run("echo one; echo two >&2; echo three", tmp_path) == (None, "one\ntwo\nthree")
    assert run("echo no; exit 3", tmp_path) == ("it exited with status 3", "no")
    assert run("kill -9 $$", tmp_path) == ("it was ended by SIGKILL", "")


def test_it_runs_in_the_working_directory_with_the_persons_environment_and_no_stdin(tmp_path: Path) -> None:
    os.environ["SLASHKIT_TEST_SEEN"] = "yes"
    try:
        assert run("pwd; echo $SLASHKIT_TEST_SEEN; cat; echo read-nothing", tmp_path) == (
            None,
            f"{tmp_path}\nyes\nread-nothing",
        )
    finally:
        del os.environ["SLASHKIT_TEST_SEEN"]


def test_gigabytes_of_output_keep_only_the_last_lines_and_bytes(tmp_path: Path) -> None:
    error, output = run("yes 0123456789 | head -c 200000000; echo; echo last", tmp_path, timeout_s=60)

    assert error is None
    lines = output.split("\n")
    assert lines[0] == f"[slash-chain: only the last {MAX_LINES} lines of the output are shown]"
    assert lines[-1] == "last"
    assert len(lines) == MAX_LINES + 1
    assert len(output.encode()) <= MAX_BYTES + 100


def test_bytes_that_are_not_utf8_are_shown_with_replacement_characters(tmp_path: Path) -> None:
    assert run(r"printf 'a\377b\n'", tmp_path) == (None, "a\ufffdb")


def test_the_timeout_ends_the_whole_group_children_that_ignore_sigterm_included(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"trap '' TERM; (trap '' TERM; sleep 300) & echo $! > {pids}; echo started; sleep 300"
    started = time.monotonic()

    error, output = run(script, tmp_path, timeout_s=3)

    took = time.monotonic() - started
    assert error == "it ran past its timeout of 3s and was ended"
    assert output == "started"
    assert 3 <= took < 3 + GRACE_S + 5  # SIGTERM ignored: SIGKILL after the grace
    assert gone(int(pids.read_text()))


def test_a_stop_ends_the_step_at_once(tmp_path: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()

    assert run("sleep 300", tmp_path, stop=stop) == ("it was stopped", "")
    assert time.monotonic() - started < 3


def test_a_command_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    assert run("echo before; exec >&- 2>&-; sleep 0.5; exit 4", tmp_path) == ("it exited with status 4", "before")


def test_a_child_that_keeps_the_output_open_does_not_hold_the_step(tmp_path: Path) -> None:
    started = time.monotonic()

    assert run("sleep 300 & echo parent done", tmp_path) == (None, "parent done")
    assert time.monotonic() - started < 3


def test_a_shell_that_cannot_start_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    error, output = run("true", tmp_path / "no-such-folder")

    assert error is not None and error.startswith("it could not start")
    assert output == ""


@pytest.mark.parametrize(("written", "seconds"), [("30", 30), ("", 600), ("0", 600), ("-5", 600), ("1e3", 600)])
def test_the_person_sets_the_timeout_within_bounds(written: str, seconds: int) -> None:
    assert timeout_of({"SLASHKIT_SHELL_TIMEOUT": written}) == seconds


def test_the_steps_of_a_session_are_waited_for_and_stopped_by_token(tmp_path: Path) -> None:
    steps = ShellSteps(lambda: str(tmp_path), os.environ, 30)
    heard: list[tuple[str | None, str]] = []

    steps.start(1, "echo hi", lambda error, output: heard.append((error, output)))
    steps.start(2, "sleep 300")
    first = steps.ended(1, 10)
    steps.keep(lambda token: token != 2)

    assert first is not None and (first.error, first.output) == (None, "hi")
    assert heard == [(None, "hi")]
    assert steps.ended(2, 1) is None  # no longer the session's: forgotten, and its process is ended
    assert steps.ended(3, 1) is None


def test_a_leaving_helper_ends_every_step_still_running(tmp_path: Path) -> None:
    pids = tmp_path / "pid"
    steps = ShellSteps(lambda: str(tmp_path), os.environ, 300)
    steps.start(1, f"echo $$ > {pids}; exec sleep 300")
    deadline = time.monotonic() + 10
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)

    end_all()

    assert gone(int(pids.read_text()))
