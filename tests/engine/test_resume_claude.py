"""A chain cut off by a crash, resumed only by the person (issue 35), in the real Claude Code 2.1.328 offline: the CLI
is SIGKILLed while step 2 of 3 waits on the model; `claude -p --continue "/slash-chain resume"` says what was cut off,
runs step 2 again and then step 3, never step 1; a new session in the same project resumes nothing. As the person sees
it (the plugin's lines) and as the model is handed it (the scripted model server). A loop cut off in its third
iteration resumes in its third iteration. In the TUI, `claude --continue` shows the line as the session opens."""

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from tests.support import shared_helpers
from tests.support.claude_cli import Isolation, _cli_argv, isolated_env, run_print, ui_log_texts
from tests.support.model_server import ModelServer, TextTurn, Turn, text, tool_use
from tests.support.tmux_claude import TMUX, TmuxClaude, system_texts

pytestmark = pytest.mark.engine

FAIL = tool_use("mcp__slash-chain__fail", {"reason": "the build is still red"})
CUT = (
    "the chain stopped at 2/3 /tiny b when the session ended; /slash-chain resume runs the rest, "
    "/slash-chain forget forgets it"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with commands that hand the model a prompt: `/tiny`, `/check` and `/fix`."""
    folder = tmp_path / "project"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "tiny.md").write_text("---\ndescription: Tiny\n---\nSay something tiny: $ARGUMENTS\n")
    (commands / "check.md").write_text("---\ndescription: Checks the build\n---\nCheck the build: $ARGUMENTS\n")
    (commands / "fix.md").write_text("---\ndescription: Fixes the build\n---\nFix the build: $ARGUMENTS\n")
    return folder


def _end_helpers(tmp: Path) -> None:
    for pid in shared_helpers(tmp):
        os.kill(pid, signal.SIGTERM)


def _kill_group(process: "subprocess.Popen[bytes]") -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def killed_at(
    line: str, requests: int, script: Sequence[Turn], plugin: Path, project: Path, tmp_path: Path
) -> Iterator[tuple[Isolation, ModelServer]]:
    """`claude -p LINE` SIGKILLed (with its process group) once the model was asked `requests` times, the last
    turn held (`script`'s held turn); yields the person's isolation and the model, both kept for what follows."""
    person = Isolation.create(tmp_path)
    with contextlib.ExitStack() as stack:
        stack.callback(person.cleanup)
        stack.callback(_end_helpers, person.tmp)
        for turn in script:
            if isinstance(turn, TextTurn) and turn.hold is not None:
                stack.callback(turn.hold.set)
        model = stack.enter_context(ModelServer(script))
        killed = subprocess.Popen(
            _cli_argv(line, [plugin], person.root / "debug-killed.log", []),
            cwd=project,
            env=isolated_env(person, model.url),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        stack.callback(_kill_group, killed)
        model.wait_for(lambda asked: sum(r.kind == "main" for r in asked) == requests, timeout=60)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(10)
        yield person, model


def test_a_chain_killed_mid_step_resumes_its_step_and_the_rest_on_the_persons_word(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    script = [text("A."), text("B, never heard.", hold=threading.Event()), text("B."), text("C.")]
    with killed_at("/tiny a && /tiny b && /tiny c", 2, script, plugin, project, tmp_path) as (person, model):
        assert "Say something tiny: b" in model.main_requests[-1].last_user_text()
        asked_before = len(model.main_requests)

        resumed = run_print("/slash-chain resume", [plugin], project, model, isolation=person, args=["--continue"])
        asked = [r.last_user_text() for r in model.main_requests[asked_before:]]
        lines = ui_log_texts(resumed.events, "slash-chain")
        assert lines and lines[0] == CUT, resumed.describe()
        assert lines[1:] == [
            "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
            "2/3: /tiny b",
            "3/3: /tiny c",
            "all 3 command(s) ran",
        ], resumed.describe()
        told = [[word for word in ("a", "b", "c") if f"Say something tiny: {word}" in a] for a in asked]
        assert told == [["b"], ["c"]], asked

        fresh = run_print("/slash-chain resume", [plugin], project, model, isolation=person)
        assert "no chain was cut off in this session: nothing to resume" in fresh.stdout, fresh.describe()
        assert CUT not in fresh.stdout
        assert len(model.main_requests) == asked_before + len(asked)


def test_a_loop_cut_off_in_its_third_iteration_resumes_in_its_third_iteration(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    """`until /check; do /fix; done`, the model failing /check three times, SIGKILLed while /fix of the third
    iteration waits on the model: resumed, /fix runs again, then iteration 4 asks /check (which passes)."""
    iteration: list[Turn] = [FAIL, text("Still red."), text("Fixed.")]
    script = [*iteration, *iteration, FAIL, text("Still red."), text("Never heard.", hold=threading.Event())]
    script += [text("Fixed at last."), text("Green.")]
    with killed_at("until /check; do /fix; done", 9, script, plugin, project, tmp_path) as (person, model):
        assert "Fix the build" in model.main_requests[-1].last_user_text()
        asked_before = len(model.main_requests)

        resumed = run_print("/slash-chain resume", [plugin], project, model, isolation=person, args=["--continue"])

        asked = [r.last_user_text() for r in model.main_requests[asked_before:]]
        assert ui_log_texts(resumed.events, "slash-chain") == [
            "the chain stopped at 2/2 /fix when the session ended; /slash-chain resume runs the rest, "
            "/slash-chain forget forgets it",
            "resumed: 2/2 /fix was interrupted and runs again, then the rest",
            "2/2: /fix",
            "until 4/10",
            "1/2: /check",
            "ended: 4 succeeded, 3 failed, 0 skipped",
        ], resumed.describe()
        assert [("Fix the build" in a, "Check the build" in a) for a in asked] == [(True, False), (False, True)]


def test_a_chain_that_ran_to_its_end_leaves_nothing_to_resume(plugin: Path, project: Path, tmp_path: Path) -> None:
    """`claude -p "/cost && /context"` runs both local steps from the helper's forecasts, and `-p` exits as the last
    one ends. Each step's report reaches the helper as it happens, so its journal has the chain ended: a continued
    session finds nothing cut off. (The reports once waited for the session's next event, which never came: the
    journal kept step 1 running, and `--continue` offered to run the finished chain again.)"""
    person = Isolation.create(tmp_path)
    try:
        with ModelServer() as model:
            ran = run_print("/cost && /context", [plugin], project, model, isolation=person)
            assert ui_log_texts(ran.events, "slash-chain") == ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]
            continued = run_print(
                "/slash-chain resume", [plugin], project, model, isolation=person, args=["--continue"]
            )
        assert ui_log_texts(continued.events, "slash-chain") == [], continued.describe()
        assert "no chain was cut off in this session: nothing to resume" in continued.stdout, continued.describe()
    finally:
        _end_helpers(person.tmp)
        person.cleanup()


def _chain_lines(cli: TmuxClaude) -> list[str]:
    """The plugin's lines in the session's transcript, in order."""
    prefix = "slash-chain: "
    return [t.removeprefix(prefix) for t in system_texts(cli.transcript_entries()) if t.startswith(prefix)]


def _until(condition: Callable[[], bool], what: str, cli: TmuxClaude, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{cli.describe()}")
        time.sleep(0.1)


@pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")
def test_in_the_tui_a_continued_session_says_what_was_cut_off_and_resumes_on_the_persons_word(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    """The interactive CLI, its process SIGKILLed while step 2 of 3 waits on the model: `claude --continue` shows the
    line as the session opens, before anything is typed, and the person's `/slash-chain resume` runs step 2 again
    and then step 3."""
    person = Isolation.create(tmp_path)
    hold = threading.Event()
    script = [text("A."), text("B, never heard.", hold=hold), text("B."), text("C.")]
    try:
        with ModelServer(script) as model:
            with TmuxClaude(cwd=project, isolation=person, model=model, plugin_dirs=[plugin], lifetime=180) as first:
                first.send("/tiny a && /tiny b && /tiny c")
                model.wait_for(lambda asked: sum(r.kind == "main" for r in asked) == 2, timeout=60)
                # A crash: the CLI and everything of its terminal die at once.
                for pid in first.pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                before = _chain_lines(first)
            asked_before = len(model.main_requests)

            with TmuxClaude(
                cwd=project, isolation=person, model=model, plugin_dirs=[plugin], args=["--continue"], lifetime=180
            ) as second:
                _until(lambda: _chain_lines(second)[len(before) :] == [CUT], "the line of the cut-off chain", second)
                assert len(model.main_requests) == asked_before, "nothing runs before the person says so"
                second.send("/slash-chain resume")
                _until(lambda: "all 3 command(s) ran" in _chain_lines(second), "the end of the chain", second)
                assert _chain_lines(second)[len(before) :] == [
                    CUT,
                    "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
                    "2/3: /tiny b",
                    "3/3: /tiny c",
                    "all 3 command(s) ran",
                ], second.describe()
                asked = [r.last_user_text() for r in model.main_requests[asked_before:]]
                told = [[word for word in ("a", "b", "c") if f"Say something tiny: {word}" in a] for a in asked]
                assert told == [["b"], ["c"]], asked
    finally:
        hold.set()
        _end_helpers(person.tmp)
        person.cleanup()
