"""`slashkit run --host codex` on the real Codex 0.169.0, offline against the scripted Responses API: the issue's
chain runs three steps, JSON lines, and each exit status."""

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from tests.support.codex_cli import CodexHome, codex_binary, codex_home
from tests.support.openai_server import OpenAIServer, Turn, http_error, text


def slashkit(home: CodexHome, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **home.env}
    command = [sys.executable, "-m", "slashkit.adapters.cli", "run", "--host", "codex", "--cwd", str(home.project)]
    return subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=180)


def ran(script: Sequence[Turn], *args: str) -> tuple[subprocess.CompletedProcess[str], OpenAIServer]:
    codex_binary()
    with OpenAIServer(script) as model, codex_home(model) as home:
        home.skill("greet", "Greet the person named in the arguments.")
        return slashkit(home, *args), model


def test_the_issues_chain_runs_three_steps_in_the_real_codex() -> None:
    done, model = ran([text("Hello Bob!"), text("Hello Carol!")], "/greet Bob && /compact && /greet Carol")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "1/3: /greet Bob",
        "  Hello Bob!",
        "2/3: /compact",
        "3/3: /greet Carol",
        "  Hello Carol!",
        "all 3 command(s) ran",
    ]
    assert [r.kind for r in model.requests] == ["main", "summary", "main"]


def test_json_lines_end_with_the_outcome_and_a_failing_step_exits_1() -> None:
    done, _ = ran([http_error(400, "down")], "/greet Bob && /greet Carol", "--json")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events][-3:] == ["line", "chain_ended", "outcome"]
    assert events[-1] == {"event": "outcome", "outcome": "stopped", "exit": 1}
    [step] = [e for e in events if e["event"] == "step_ended"]
    assert step["how"] == "error" and "down" in step["output"]


def test_a_command_alone_that_is_no_skill_fails_with_a_line_and_exit_1() -> None:
    done, model = ran([], "/nosuch x")
    assert done.returncode == 1
    assert "slashkit: /nosuch x failed: /nosuch is neither a Codex built-in" in done.stderr
    assert model.requests == []


def test_a_slash_then_a_space_is_a_prompt_shown_as_typed_never_a_step_named_slash() -> None:
    # Attack (issue 34): `/ please review && /greet x` ran as a chain whose first step was `/ please review` (a
    # command named ``), which failed as no skill and ended `stopped after /: ...`; Codex reads the line as text.
    done, model = ran([text("Reviewed.")], "/ please review && /greet x", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["output", "step_ended", "outcome"]
    assert events[1]["step"] == {"command": "", "args": "/ please review && /greet x", "op": "&&"}
    assert [r.last_user_text() for r in model.requests] == ["/ please review && /greet x"]
    failed, _ = ran([http_error(400, "down")], "/ please review")
    assert failed.returncode == 1
    assert failed.stderr.startswith("slashkit: / please review failed: ")


def test_a_codex_that_cannot_start_is_exit_4_with_one_line() -> None:
    done, _ = ran([], "/greet Bob", "--codex", "/nonexistent/codex")
    assert done.returncode == 4
    assert (
        done.stderr.strip()
        == "slashkit: Codex ended first: could not start /nonexistent/codex: No such file or directory"
    )


def test_claude_codes_options_are_bad_usage_for_codex() -> None:
    done, _ = ran([], "/greet Bob", "--model", "x")
    assert done.returncode == 2
    assert "--model: Claude Code's options; to configure Codex, pass -- -c KEY=VALUE" in done.stderr


def test_config_after_the_double_dash_reaches_codex() -> None:
    done, model = ran([text("Hi")], "/greet Bob", "--", "-c", 'model="another-model"')
    assert done.returncode == 0, done.stderr
    assert model.main_requests[0].body is not None
    assert model.main_requests[0].body["model"] == "another-model"


def test_a_typed_for_loop_runs_its_body_once_a_word_in_the_real_codex() -> None:
    done, model = ran([text("Hello Bob!"), text("Hello Carol!")], "for w in Bob Carol; do /greet $w; done")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "  a program of 1 command(s) runs",
        "for 1/2: Bob",
        "1/1: /greet Bob",
        "  Hello Bob!",
        "for 2/2: Carol",
        "1/1: /greet Carol",
        "  Hello Carol!",
        "all 2 command(s) ran",
    ]
    first, second = model.requests
    assert first.user_texts()[-2].startswith("Bob") and second.user_texts()[-2].startswith("Carol")
