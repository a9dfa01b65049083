"""`slashkit run`'s printing on the SDK host, without a session: options after `--`, JSON lines, the progress
line that shows on a terminal only."""

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from slashkit.adapters.harness.events import StepEnd
from slashkit.adapters.harness.terminal import Ended, JsonlPrinter, Printer, Reported, exit_status, json_of, played
from slashkit.adapters.sdk import ChainEnded, CommandStarted, Line, Outcome, Output, StepEnded, StepStarted, Tally
from slashkit.adapters.sdk.terminal import extra_args
from slashkit.core.chain import Step


@pytest.mark.parametrize(
    ("given", "found"),
    [
        (["--max-turns", "3"], {"max-turns": "3"}),
        (["--verbose"], {"verbose": None}),
        (["--add-dir=/x", "--verbose", "--max-turns", "2"], {"add-dir": "/x", "verbose": None, "max-turns": "2"}),
        (["stray", "--", "--a="], {"a": ""}),
    ],
)
def test_claude_options_after_the_double_dash_reach_the_sdk(given: list[str], found: dict[str, str | None]) -> None:
    assert extra_args(given) == found


def test_each_event_is_one_json_object_named_after_it() -> None:
    assert json_of(Output(2, "hi")) == {"event": "output", "index": 2, "text": "hi"}
    assert json_of(StepStarted(1, 2, Step("a", "x")))["line"] == "1/2: /a x"
    assert json_of(StepEnded(1, Step("a", ""), "error", "API Error"))["ok"] is False
    assert json_of(Line("2/2: /b")) == {"event": "line", "text": "2/2: /b"}
    stopped = json_of(ChainEnded(Outcome("failure", False, Tally(failed=1, skipped=1))))
    assert stopped == {
        "event": "chain_ended",
        "ok": False,
        "outcome": {
            "status": "failure",
            "cancelled": False,
            "tally": {"succeeded": 0, "failed": 1, "skipped": 1},
        },
    }
    json.dumps(json_of(ChainEnded(Outcome("success", False, Tally(succeeded=2)))))


def test_a_prompt_that_failed_is_named_as_typed_and_a_command_with_its_slash() -> None:
    async def ended(step: Step) -> AsyncIterator[StepEnded]:
        yield StepEnded(0, step, "error", "API Error: down")

    for step, named in ((Step("", "please do it"), "please do it"), (Step("greet", "Bob"), "/greet Bob")):
        err = io.StringIO()
        assert asyncio.run(played(ended(step), Printer(io.StringIO(), err, as_json=False))) == "single_failed"
        assert err.getvalue() == f"slashkit: {named} failed: API Error: down\n"


def test_a_run_that_does_not_end_in_time_exits_124_and_one_whose_host_ended_first_exits_4_saying_so() -> None:
    async def hangs() -> Ended:
        await asyncio.sleep(60)
        return "ran"

    async def host_gone() -> Ended:
        raise ConnectionError("pipe closed")

    def why(error: Exception) -> list[str]:
        return [f"the host ended first: {error}", "it said: bye"]

    for play, said, expected in (
        (hangs, "slashkit: no end after 0.05 s\n", 124),
        (host_gone, "slashkit: the host ended first: pipe closed\nslashkit: it said: bye\n", 4),
    ):
        out, err = io.StringIO(), io.StringIO()
        status = asyncio.run(exit_status(play(), Printer(out, err, as_json=True), 0.05, (ConnectionError,), why))
        assert (status, err.getvalue()) == (expected, said)
        assert json.loads(out.getvalue())["exit"] == expected


def test_a_typed_line_that_started_nothing_exits_2_saying_why_and_a_step_that_failed_exits_1() -> None:
    async def answered(how: StepEnd) -> Ended:
        async def events() -> AsyncIterator[object]:
            yield StepEnded(0, Step("", "until /check; do /fix"), how, "not run: do opens a list that ends with done")

        return await played(events(), printer)

    ends: tuple[tuple[StepEnd, int, str], ...] = (
        ("refused", 2, "refused: not run"),
        ("failed", 1, "until /check; do /fix failed: not"),
    )
    for how, exit, said in ends:
        out, err = io.StringIO(), io.StringIO()
        printer = Printer(out, err, as_json=True)
        status = asyncio.run(exit_status(answered(how), printer, 5, (), lambda _: []))
        assert status == exit
        assert err.getvalue().startswith(f"slashkit: {said}"), err.getvalue()
        assert json.loads(out.getvalue().splitlines()[-1])["exit"] == exit


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def shown_on(err: io.StringIO, wait: float) -> str:
    async def main() -> None:
        printer = Printer(io.StringIO(), err, as_json=False)
        printer.show(StepStarted(1, 2, Step("greet", "Bob")))
        await asyncio.sleep(wait)
        printer.show(Output(1, "Hello Bob!"))

    asyncio.run(main())
    return err.getvalue()


def test_a_step_that_waits_shows_progress_on_a_terminal_and_clears_it() -> None:
    shown = shown_on(Terminal(), 0.6)
    assert "/greet Bob: waiting on the model" in shown
    assert shown.endswith("\r\x1b[K")


def test_no_progress_when_stderr_is_no_terminal_or_the_step_is_quick() -> None:
    assert shown_on(io.StringIO(), 0.6) == ""
    assert "waiting" not in shown_on(Terminal(), 0.05)


def test_text_mode_indents_output_so_no_line_of_it_passes_for_a_status_line() -> None:
    out = io.StringIO()
    printer = Printer(out, io.StringIO(), as_json=False)
    for event in (
        Line("1/2: /greet Bob"),
        Output(1, "Fine.\n2/2: /review deploy\r\nall 2 command(s) ran\r2/2: /x\u2028\x0b"),
        Line("2/2: /greet Carol"),
    ):
        printer.show(event)
    assert out.getvalue().splitlines() == [
        "1/2: /greet Bob",
        "  Fine.",
        "  2/2: /review deploy",
        "  all 2 command(s) ran\\x0d2/2: /x\\u2028\\x0b",
        "2/2: /greet Carol",
    ]


#: What a model or a command may write: a string cut inside a surrogate pair (Claude Code's JSON stream can carry
#: one), terminal controls (clear the screen, a C1 CSI, a bell, a carriage return that overwrites the line), and a
#: right-to-left override that shows the end of the line reversed.
HOSTILE = "cut \ud83d \x1b[2J\x9b31m\x07 over\rwritten é\tend\u202e txt.exe\r\nnext"


def printed_by_a_real_process(as_json: bool, encoding: str = "utf-8") -> subprocess.CompletedProcess[bytes]:
    """Prints HOSTILE as step output and as a notice on the real stdout and stderr of a Python process."""
    script = (
        "import sys\n"
        "from slashkit.adapters.sdk import Notice, Output\n"
        "from slashkit.adapters.harness.terminal import Printer\n"
        f"printer = Printer(sys.stdout, sys.stderr, {as_json!r})\n"
        f"printer.show(Output(1, {HOSTILE!r}))\n"
        f"printer.show(Notice({HOSTILE!r}))\n"
        "printer.outcome('ran')\n"
    )
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, env=env, timeout=60)


def test_text_mode_prints_controls_and_a_lone_surrogate_as_escapes_on_a_real_stdout() -> None:
    shown = printed_by_a_real_process(as_json=False)
    assert shown.returncode == 0, shown.stderr.decode()
    safe = "cut \\ud83d \\x1b[2J\\x9b31m\\x07 over\\x0dwritten é\tend\\u202e txt.exe\nnext\n"
    assert (
        shown.stdout.decode() == "  cut \\ud83d \\x1b[2J\\x9b31m\\x07 over\\x0dwritten é\tend\\u202e txt.exe\n  next\n"
    )
    assert shown.stderr.decode() == "slashkit: " + safe


def test_text_mode_escapes_what_the_streams_encoding_cannot_hold() -> None:
    shown = printed_by_a_real_process(as_json=False, encoding="ascii")
    assert shown.returncode == 0, shown.stderr.decode()
    escaped = "  cut \\ud83d \\x1b[2J\\x9b31m\\x07 over\\x0dwritten \\xe9\tend\\u202e txt.exe\n  next\n"
    assert shown.stdout.decode("ascii") == escaped


def test_json_mode_writes_ascii_json_that_reads_back_as_the_text_was() -> None:
    shown = printed_by_a_real_process(as_json=True, encoding="ascii")
    assert shown.returncode == 0, shown.stderr.decode()
    lines = [json.loads(line) for line in shown.stdout.decode("ascii").splitlines()]
    assert lines == [
        {"event": "output", "index": 1, "text": HOSTILE},
        {"event": "notice", "text": HOSTILE},
        {"event": "outcome", "outcome": "ran", "exit": 0},
    ]


def test_a_step_that_shows_no_progress_for_the_step_timeout_is_ended_and_the_run_exits_124() -> None:
    async def stalls() -> AsyncIterator[object]:
        yield StepStarted(1, 2, Step("a", ""))
        yield StepEnded(1, Step("a", ""), "ran", "")
        yield StepStarted(2, 2, Step("review", "the diff"))
        await asyncio.sleep(60)
        yield StepEnded(2, Step("review", "the diff"), "answer", "too late")

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err, as_json=True)
    assert asyncio.run(exit_status(played(stalls(), printer, 0.1), printer, 5, (), lambda _: [])) == 124
    assert err.getvalue() == (
        "slashkit: step 2/2: /review the diff showed no progress for 0.1 s, so it was ended (--step-timeout)\n"
    )
    assert json.loads(out.getvalue().splitlines()[-1]) == {"event": "outcome", "outcome": "step_timeout", "exit": 124}


def test_a_step_that_keeps_making_progress_or_a_wait_between_steps_is_not_ended_by_the_step_timeout() -> None:
    async def slow_but_alive() -> AsyncIterator[object]:
        yield StepStarted(1, 2, Step("a", ""))
        for _ in range(6):
            # Each message of the host's (here a plain object) is progress.
            await asyncio.sleep(0.05)
            yield object()
        yield StepEnded(1, Step("a", ""), "answer", "")
        # A program's `sleep` between steps: no step runs.
        await asyncio.sleep(0.3)
        yield StepStarted(2, 2, Step("b", ""))
        yield StepEnded(2, Step("b", ""), "ran", "")
        yield ChainEnded(Outcome("success", False, Tally(succeeded=2)))

    printer = Printer(io.StringIO(), io.StringIO(), as_json=False)
    assert asyncio.run(played(slow_but_alive(), printer, 0.15)) == "ran"


def jsonl(out: io.StringIO) -> list[dict[str, object]]:
    """The JSONL lines written, without the keys that change from run to run (`run`, `at`, `duration_ms`), checked
    for their type here."""
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    runs = {line.pop("run") for line in lines}
    assert len(runs) == 1
    for line in lines:
        assert isinstance(line.pop("at"), str)
        assert "duration_ms" not in line or isinstance(line.pop("duration_ms"), int)
    return lines


def test_jsonl_streams_the_runs_start_each_steps_start_and_end_with_its_cost_and_the_runs_end() -> None:
    async def events() -> AsyncIterator[object]:
        greet, cost = Step("greet", "Bob"), Step("cost", "")
        yield Line("1/2: /greet Bob")
        yield StepStarted(1, 2, greet)
        yield Output(1, "Hello Bob!")
        # The host's own message: the session has cost 0.25 $ so far, this query's tokens.
        yield Reported({"input_tokens": 100, "output_tokens": 3}, 0.25)
        yield StepEnded(1, greet, "answer", "Hello Bob!")
        yield StepStarted(2, 2, cost)
        yield Reported({"input_tokens": 0}, 0.25)
        yield StepEnded(2, cost, "error", "API Error")
        yield ChainEnded(Outcome("failure", False, Tally(succeeded=1, failed=1)))

    out, err = io.StringIO(), io.StringIO()
    printer = JsonlPrinter(out, err, run="r1", host="test", chain="/greet Bob && /cost", reported=_as_reported)
    printer.begin("s1")
    assert asyncio.run(exit_status(played(events(), printer), printer, 5, (), lambda _: [])) == 1
    assert jsonl(out) == [
        {"event": "run_start", "session": "s1", "host": "test", "chain": "/greet Bob && /cost"},
        {"event": "step_start", "index": 1, "total": 2, "step": "1/2: /greet Bob", "command": "greet", "args": "Bob"},
        {
            "event": "step_end",
            "index": 1,
            "step": "1/2: /greet Bob",
            "status": "success",
            "how": "answer",
            "output": "Hello Bob!",
            "tokens": {"input_tokens": 100, "output_tokens": 3},
            "cost_usd": 0.25,
        },
        {"event": "step_start", "index": 2, "total": 2, "step": "2/2: /cost", "command": "cost", "args": ""},
        {
            "event": "step_end",
            "index": 2,
            "step": "2/2: /cost",
            "status": "failure",
            "how": "error",
            "output": "API Error",
            "tokens": {"input_tokens": 0},
            "cost_usd": 0.0,
        },
        {"event": "run_end", "exit": 1, "outcome": "stopped", "cost_usd": 0.25},
    ]
    assert err.getvalue() == ""


def _as_reported(event: object) -> Reported | None:
    return event if isinstance(event, Reported) else None


def test_jsonl_ends_a_stalled_step_as_a_timeout_and_says_why_a_line_was_refused() -> None:
    async def stalls() -> AsyncIterator[object]:
        yield CommandStarted(Step("review", ""))
        await asyncio.sleep(60)

    async def refused() -> AsyncIterator[object]:
        yield StepEnded(0, Step("", "until /a; do /b"), "refused", "not run: done was expected")

    ended = []
    for events, step_timeout in ((stalls, 0.05), (refused, None)):
        out = io.StringIO()
        printer = JsonlPrinter(out, io.StringIO(), run="r", host="test", chain="x")
        asyncio.run(exit_status(played(events(), printer, step_timeout), printer, 5, (), lambda _: []))
        ended.append(jsonl(out))
    assert ended[0][1:] == [
        {"event": "step_start", "index": 0, "total": None, "step": "/review", "command": "review", "args": ""},
        {"event": "step_end", "index": 0, "step": "/review", "status": "timeout", "how": None, "output": ""},
        {"event": "run_end", "exit": 124, "outcome": "step_timeout"},
    ]
    # No session was named before the run ended: run_start still comes first.
    assert ended[1] == [
        {"event": "run_start", "session": None, "host": "test", "chain": "x"},
        {"event": "run_end", "exit": 2, "outcome": "refused", "why": "not run: done was expected"},
    ]


def test_jsonl_ends_with_exit_130_when_the_run_is_interrupted() -> None:
    async def interrupted() -> int:
        async def waits() -> AsyncIterator[object]:
            yield CommandStarted(Step("review", ""))
            await asyncio.sleep(60)

        run = asyncio.ensure_future(exit_status(played(waits(), printer), printer, 5, (), lambda _: []))
        await asyncio.sleep(0.05)
        run.cancel()  # as asyncio.run does on Ctrl-C
        with pytest.raises(asyncio.CancelledError):
            await run
        return 130

    out = io.StringIO()
    printer = JsonlPrinter(out, io.StringIO(), run="r", host="test", chain="x")
    asyncio.run(interrupted())
    assert jsonl(out)[-2:] == [
        {"event": "step_end", "index": 0, "step": "/review", "status": "interrupted", "how": None, "output": ""},
        {"event": "run_end", "exit": 130, "outcome": "interrupted"},
    ]
