"""The slash-chain plugin in the real Claude Code 2.1.328, headless and offline: every step of a chain as
the person sees it in the transcript (`ui_log` lines) and as the model is handed it (the model server)."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support import shared_helpers
from tests.support.claude_cli import (
    Isolation,
    JsonObject,
    RunResult,
    StreamingRun,
    claude_path,
    isolated_env,
    run_print,
    ui_log_texts,
)
from tests.support.model_server import ModelServer, Turn, http_error, text, tool_use

pytestmark = pytest.mark.engine

NOTE = (
    "[slash-chain] This is step 1/2 of a chain; after it: /context. If you could not do what this step asks, "
    "call the mcp__slash-chain__fail tool with the reason before you end your turn, and the steps after it "
    "do not run."
)
REVIEW_BODY = "Review the change named here: $ARGUMENTS"
ENDS = re.compile(r"^(all \d+ command\(s\) ran|stopped after|cancelled|unavailable|ended: )")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a command that hands the model a prompt: `.claude/commands/review.md`."""
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / ".claude" / "commands" / "review.md").write_text(
        f"---\ndescription: Reviews a change\n---\n{REVIEW_BODY}\n"
    )
    return folder


def chain_lines(events: Sequence[JsonObject]) -> list[str]:
    return ui_log_texts(events, "slash-chain")


def chain_ended(events: Sequence[JsonObject]) -> bool:
    return any(ENDS.match(line) for line in chain_lines(events))


def run(
    chain: str, plugin: Path | None, project: Path, script: Sequence[Turn] = (), tmp: Isolation | None = None
) -> RunResult:
    """Types `chain` into a stream-json session (with `plugin`, or with the installed plugins when None) and
    waits for the chain's last line."""
    plugins = [] if plugin is None else [plugin]
    with ModelServer(script) as model, StreamingRun(plugins, project, model=model, isolation=tmp) as session:
        session.send(chain)
        ended = session.wait_until(chain_ended, timeout=60)
        result = session.finish()
    assert ended, result.describe()
    return result


def handed(model: ModelServer) -> list[str]:
    """The last user text of every main-loop request the model server answered."""
    return [r.last_user_text() for r in model.requests if r.kind == "main"]


def test_a_chain_of_three_local_commands_runs_each_with_its_own_args(plugin: Path, project: Path) -> None:
    result = run("/cost && /context && /usage", plugin, project)
    assert chain_lines(result.events) == ["1/3: /usage", "2/3: /context", "3/3: /usage", "all 3 command(s) ran"]


def test_a_prompt_step_waits_for_its_answered_turn_then_the_next_step_runs(plugin: Path, project: Path) -> None:
    with ModelServer([text("Reviewed: looks fine.")]) as model:
        with StreamingRun([plugin], project, model=model) as session:
            session.send("/review the diff && /context")
            assert session.wait_until(chain_ended, timeout=60), session.finish().describe()
            result = session.finish()
        prompts = handed(model)
    assert chain_lines(result.events) == ["1/2: /review the diff", "2/2: /context", "all 2 command(s) ran"]
    assert len(prompts) == 1
    assert "Review the change named here: the diff" in prompts[0]
    assert prompts[0].rstrip().endswith(NOTE)


def test_the_last_step_and_a_command_outside_a_chain_get_no_note(plugin: Path, project: Path) -> None:
    with ModelServer([text("done"), text("done")]) as model:
        with StreamingRun([plugin], project, model=model) as session:
            session.send("/context && /review last")
            assert session.wait_until(chain_ended, timeout=60), session.finish().describe()
            result = session.finish()
        run_print("/review alone", [plugin], project, model=model)
        prompts = handed(model)
    assert chain_lines(result.events) == ["1/2: /context", "2/2: /review last", "all 2 command(s) ran"]
    assert len(prompts) == 2
    assert "Review the change named here: last" in prompts[0]
    assert "Review the change named here: alone" in prompts[1]
    assert not any("[slash-chain]" in p for p in prompts), prompts


def test_a_turn_that_ends_with_an_error_stops_the_chain(plugin: Path, project: Path) -> None:
    result = run("/review the diff && /context", plugin, project, script=[http_error(500, "overloaded for the test")])
    assert chain_lines(result.events) == [
        "1/2: /review the diff",
        "stopped after /review: its turn ended with error; not run: /context",
    ]


def test_the_model_calling_the_fail_tool_stops_the_chain_and_hears_it_stopped(plugin: Path, project: Path) -> None:
    fail = tool_use("mcp__slash-chain__fail", {"reason": "the diff is empty"})
    script: list[Turn] = [fail, text("Stopped the chain.")]
    with ModelServer(script) as model:
        with StreamingRun([plugin], project, model=model) as session:
            session.send("/review the diff && /context")
            assert session.wait_until(chain_ended, timeout=60), session.finish().describe()
            result = session.finish()
        first, second = [r for r in model.requests if r.kind == "main"]
    assert chain_lines(result.events) == [
        "1/2: /review the diff",
        "stopped after /review: the model reported it failed: the diff is empty; not run: /context",
    ]
    assert first.last_user_text().rstrip().endswith(NOTE)
    assert "mcp__slash-chain__fail" in first.tool_names
    assert "The chain stopped; the steps after this one do not run." in str(second.tool_results())


def test_an_unknown_later_command_stops_the_chain_with_the_engines_reason(plugin: Path, project: Path) -> None:
    result = run("/cost && /nosuch && /context", plugin, project)
    assert chain_lines(result.events) == [
        "1/3: /usage",
        "2/3: /nosuch",
        "stopped after /nosuch: it failed: $.command.run: no command named /nosuch in this session; not run: /context",
    ]


def test_plain_claude_p_runs_a_chain_of_three_prompts_to_its_end(plugin: Path, project: Path, tmp_path: Path) -> None:
    """`claude -p "/review a && /review b && /review c"`: all three steps and the end line. Measured on 2.1.328
    before the steps were handed on from the session start's hook: the third step was dropped (`-p` exited once
    its queue was empty)."""
    with ModelServer([text("a."), text("b."), text("c.")]) as model:
        result = run_print("/review a && /review b && /review c", [plugin], project, model, isolation=tmp_path)
    assert chain_lines(result.events) == ["1/3: /review a", "2/3: /review b", "3/3: /review c", "all 3 command(s) ran"]
    prompts = [r.last_user_text() for r in model.main_requests]
    assert len(prompts) == 3, prompts
    assert all(REVIEW_BODY.replace("$ARGUMENTS", w) in p for w, p in zip("abc", prompts, strict=True)), prompts


def test_slash_chain_off_leaves_a_chain_as_typed_and_on_brings_it_back(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    iso = Isolation.create(tmp_path)
    off = run_print("/slash-chain off", [plugin], project, isolation=iso)
    typed = run_print("/context && /usage", [plugin], project, isolation=iso)
    status = run_print("/slash-chain", [plugin], project, isolation=iso)
    on = run_print("/slash-chain on", [plugin], project, isolation=iso)
    chained = run_print("/context && /usage", [plugin], project, isolation=iso)
    assert any(
        "off: the engine runs the first command alone, as it does without the mod" in t for t in off.assistant_texts()
    )
    assert chain_lines(typed.events) == []
    assert any("off · no chain runs" in t for t in status.assistant_texts()), status.describe()
    assert any("on: /a && /b runs /b once /a ended well" in t for t in on.assistant_texts())
    assert chain_lines(chained.events)[:2] == ["1/2: /context", "2/2: /usage"]


def test_a_clear_inside_a_chain_does_not_lose_it(plugin: Path, project: Path) -> None:
    result = run("/cost && /clear && /context", plugin, project)
    assert chain_lines(result.events) == ["1/3: /usage", "2/3: /clear", "3/3: /context", "all 3 command(s) ran"]


# Operators beyond && (measured on 2.1.328: an unknown typed command reaches the chain hook, and its run throws
# `$.command.run: no command named /<name> in this session`; a turn's end carries the model's final `answer`).


def test_a_fallback_after_an_unknown_command_runs(plugin: Path, project: Path) -> None:
    result = run("/cost && /nosuch || /context", plugin, project)
    lines = chain_lines(result.events)
    assert lines[0] == "1/3: /usage"
    assert lines[1] == "2/3: /nosuch"
    assert lines[2].startswith("/nosuch failed: it failed: "), lines
    assert lines[3:] == ["3/3: /context", "ended: 2 succeeded, 1 failed, 0 skipped"]


def test_an_unknown_typed_command_is_the_engines_and_starts_no_chain(plugin: Path, project: Path) -> None:
    """Measured on 2.1.328: a typed `/nosuch || /cost` never runs as a command (no `command.run`, so no chain);
    the engine hands the whole text to the model. A fallback after an unknown command that is not the first
    runs: see the test above."""
    with ModelServer([text("There is no /nosuch command.")]) as model:
        with StreamingRun([plugin], project, model=model) as session:
            session.send("/nosuch || /cost")
            assert session.wait_until(lambda ev: any(e.get("type") == "result" for e in ev), timeout=60)
            result = session.finish()
        prompts = handed(model)
    assert chain_lines(result.events) == []
    assert len(prompts) == 1 and "/nosuch || /cost" in prompts[0], prompts


def test_a_semicolon_runs_the_next_command_and_a_clean_chain_ends_as_the_seeds(plugin: Path, project: Path) -> None:
    result = run("/cost ; /context", plugin, project)
    assert chain_lines(result.events) == ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]


def test_a_failing_prompt_step_is_followed_by_its_fallback(plugin: Path, project: Path) -> None:
    result = run("/review the diff || /context", plugin, project, script=[http_error(400, "bad request for the test")])
    assert chain_lines(result.events) == [
        "1/2: /review the diff",
        "/review failed: its turn ended with error",
        "2/2: /context",
        "ended: 1 succeeded, 1 failed, 0 skipped",
    ]


def test_a_pipe_hands_the_models_answer_of_one_step_to_the_prompt_of_the_next(plugin: Path, project: Path) -> None:
    script = [text("ANSWER-ONE: rename the helper"), text("Second review done.")]
    with ModelServer(script) as model:
        with StreamingRun([plugin], project, model=model) as session:
            session.send("/review the diff | /review the follow-up")
            assert session.wait_until(chain_ended, timeout=60), session.finish().describe()
            result = session.finish()
        prompts = handed(model)
    assert chain_lines(result.events) == ["1/2: /review the diff", "2/2: /review the follow-up", "all 2 command(s) ran"]
    assert len(prompts) == 2
    assert "Review the change named here: the follow-up\n\nANSWER-ONE: rename the helper" in prompts[1], prompts[1]
    assert "ANSWER-ONE" not in prompts[0]


def test_the_shared_helper_killed_mid_chain_is_reported_once_and_the_next_chain_starts_a_new_one(
    plugin: Path, project: Path
) -> None:
    script = [text("Reviewed.", delay=3.0)]
    with ModelServer(script) as model, StreamingRun([plugin], project, model=model) as session:
        session.send("/review the diff && /context")
        assert session.wait_until(lambda ev: "1/2: /review the diff" in chain_lines(ev), timeout=60)
        started = shared_helpers(session.tmpdir)
        assert len(started) == 1, started
        killed = started.pop()
        os.kill(killed, signal.SIGKILL)
        # The chain waited on the helper for its turn's end: the turn's end finds it gone, and one line says so.
        assert session.wait_until(
            lambda ev: any(line.startswith("unavailable: ") for line in chain_lines(ev)), timeout=30
        )
        session.send("/cost && /context")
        assert session.wait_until(lambda ev: "all 2 command(s) ran" in chain_lines(ev), timeout=60)
        restarted = shared_helpers(session.tmpdir)
        result = session.finish()
    lines = chain_lines(result.events)
    assert lines[0] == "1/2: /review the diff"
    assert lines[1].startswith("unavailable: "), lines
    assert lines[1].endswith("; commands run as typed until it is back"), lines
    assert lines[2:] == ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"], lines
    assert len(restarted) == 1 and killed not in restarted


def test_the_shared_helper_killed_under_three_sessions_loses_no_chain(plugin: Path, project: Path) -> None:
    # Three sessions share one helper (one XDG_RUNTIME_DIR); it is killed as their chains of local commands run.
    # Whatever each had by then, its chain runs to its end (the steps' forecasts are the client's, or the typed
    # chain goes to a helper started afresh), and the next chain of each runs on one new helper.
    runtime = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    shared = {"XDG_RUNTIME_DIR": str(runtime)}
    first = ["1/3: /usage", "2/3: /context", "3/3: /usage", "all 3 command(s) ran"]
    second = ["1/2: /context", "2/2: /cost", "all 2 command(s) ran"]
    try:
        with contextlib.ExitStack() as stack:
            sessions = [stack.enter_context(StreamingRun([plugin], project, extra_env=shared)) for _ in range(3)]
            for session in sessions:
                session.send("/cost && /context && /usage")
            assert sessions[0].wait_until(lambda ev: "1/3: /usage" in chain_lines(ev), timeout=60)
            killed = shared_helpers(runtime, "XDG_RUNTIME_DIR")
            assert len(killed) == 1, killed
            os.kill(killed.pop(), signal.SIGKILL)
            for session in sessions:
                assert session.wait_until(lambda ev: first[-1] in chain_lines(ev), timeout=60)
                session.send("/context && /cost")
            for session in sessions:
                assert session.wait_until(lambda ev: second[-1] in chain_lines(ev), timeout=60)
            restarted = shared_helpers(runtime, "XDG_RUNTIME_DIR")
            results = [session.finish() for session in sessions]
    finally:
        for pid in shared_helpers(runtime, "XDG_RUNTIME_DIR"):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(runtime, ignore_errors=True)
    for result in results:
        assert chain_lines(result.events) == first + second
    assert len(restarted) == 1


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory, seed_003: Path) -> Path:
    """The seed's TypeScript mod, laid out from seed 003 at test time (never committed as a copy)."""
    folder = tmp_path_factory.mktemp("seed") / "slash-chain"
    script = Path(__file__).parents[2] / "scripts" / "seed_plugin.py"
    subprocess.run([sys.executable, str(script), str(folder), str(seed_003)], check=True)
    return folder


def test_the_same_lines_as_the_seeds_mod_in_a_session_that_stays_open(plugin: Path, seed: Path, project: Path) -> None:
    ours = run("/cost && /context && /nosuch && /usage", plugin, project)
    theirs = run("/cost && /context && /nosuch && /usage", seed, project)
    assert chain_lines(ours.events) == chain_lines(theirs.events)


def test_claude_p_prints_the_same_lines_as_with_the_seeds_mod(plugin: Path, seed: Path, project: Path) -> None:
    # `claude -p` exits as soon as the session is idle, and on a loaded machine that can come before the
    # second step's timer fires, for the seed's in-process mod as for this one (measured on 2.1.328: the
    # step is never queued). So every run must print a beginning of the reference's lines, and one pair of
    # runs out of at most five must print all of them on both sides.
    expected = ["1/2: /usage", "2/2: /context", "all 2 command(s) ran"]
    pairs = []
    for _ in range(5):
        pair = [chain_lines(run_print("/cost && /context", [folder], project).events) for folder in (plugin, seed)]
        pairs.append(pair)
        assert all(len(lines) >= 2 and lines == expected[: len(lines)] for lines in pair), pairs
        if pair == [expected, expected]:
            break
    assert pairs[-1] == [expected, expected], pairs


def test_the_marketplace_installs_the_plugin_for_good(project: Path, tmp_path: Path) -> None:
    iso = Isolation.create(tmp_path)
    env_cli = [
        sys.executable,
        "-m",
        "slashkit.adapters.cli",
        "claude-code",
        "marketplace",
        "--root",
        str(tmp_path / "m"),
    ]
    marketplace = subprocess.run(env_cli, capture_output=True, text=True, check=True).stdout.strip()
    with ModelServer() as model:
        env = isolated_env(iso, model.url)
        for argv in (["marketplace", "add", marketplace], ["install", "slash-chain@slashkit"]):
            added = subprocess.run(
                [str(claude_path()), "plugin", *argv], cwd=project, env=env, capture_output=True, text=True
            )
            assert added.returncode == 0, added.stdout + added.stderr
    installed = run("/context && /usage", plugin=None, project=project, tmp=iso)
    assert chain_lines(installed.events) == ["1/2: /context", "2/2: /usage", "all 2 command(s) ran"]
