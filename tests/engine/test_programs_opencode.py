"""Programs (issue 33) in the real opencode 1.18.33 (`opencode serve`, offline, a scripted model): a saved chain over
several lines with a `for` loop run by its name, a typed `until` decided by the model's fail tool, and a prompt that
only starts with `while`, as the person sees them (the transcript lines the model never sees) and as the model is
handed them. The server, its project (the command `/greet`) and its session are test_opencode_saved.py's."""

import time
from pathlib import Path

import pytest

from slashkit.adapters.opencode.install import FAIL_TOOL
from tests.engine.test_opencode_saved import Run, Start, start  # noqa: F401 (the fixture)
from tests.support.openai_server import text, tool_call
from tests.support.opencode_cli import opencode_path

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

#: A saved chain over several lines: a comment, a `for` loop over its arguments, and a step after it.
EACH = "---\ndescription: Greets each\n---\n# each one\nfor who in $ARGUMENTS\ndo\n  /greet $who\ndone\n/greet done\n"
FAIL = tool_call(FAIL_TOOL, {"reason": "Bob is not here yet"})


def ended(run: Run, end: str, timeout: float = 90.0) -> None:
    """Waits until the transcript shows the program's end line, then until the session went quiet: a program's
    first step starts from a timer after the typed prompt was answered, which on a loaded machine can come later
    than a quiet spell (seen once: nothing asked after 2.5 quiet seconds)."""
    deadline = time.monotonic() + timeout
    while end not in run.lines():
        assert time.monotonic() < deadline, f"no {end!r} within {timeout:g} s: {run.lines()}"
        time.sleep(0.2)
    run.server.wait_quiet(run.session, quiet=2.5)


def test_a_saved_chain_over_several_lines_runs_its_for_loop_by_name(start: Start) -> None:  # noqa: F811
    run = start([text("Hello api"), text("Hello ui"), text("Hello done")], {"each": EACH})
    # Answered without a turn of its own (the plugin's hook throws, opencode's only way: HTTP 500 to the caller).
    assert run.typed("each", "api ui") == 500
    ended(run, "all 3 command(s) ran")
    assert run.asked() == ["Greet api warmly.", "Greet ui warmly.", "Greet done warmly."]
    assert run.lines() == [
        "for 1/2: api",
        "1/2: /greet api",
        "/each api ui runs 2 command(s)",
        "for 2/2: ui",
        "1/2: /greet ui",
        "2/2: /greet done",
        "all 3 command(s) ran",
    ]


def test_a_typed_until_runs_its_body_while_the_model_fails_the_condition(start: Start) -> None:  # noqa: F811
    run = start([FAIL, text("Not yet."), text("Hello Carol"), text("Hello Bob")], {})
    # The prompt is answered by throwing (HTTP 500 to the caller), so no turn of its own reaches the model.
    assert run.server.prompt(run.session, "until /greet Bob; do /greet Carol; done").wait().status == 500
    ended(run, "ended: 2 succeeded, 1 failed, 0 skipped")
    # The first check's turn: the fail tool's call, then the model's answer after the tool's result.
    assert run.asked() == ["Greet Bob warmly.", "Greet Bob warmly.", "Greet Carol warmly.", "Greet Bob warmly."]
    assert run.lines() == [
        "until 1/10",
        "1/2: /greet Bob",
        "a program of 2 command(s) runs",
        "/greet failed: the model reported it failed: Bob is not here yet",
        "2/2: /greet Carol",
        "until 2/10",
        "1/2: /greet Bob",
        "ended: 2 succeeded, 1 failed, 0 skipped",
    ]
    assert all("until /greet" not in r.all_text() for r in run.model.requests)


def test_a_prompt_that_only_starts_with_while_reaches_the_model_untouched(start: Start) -> None:  # noqa: F811
    prompt = "while you are at it, fix the typo; do not touch the tests; done means green"
    run = start([text("Done.")], {})
    assert run.server.prompt(run.session, prompt).wait().status == 200
    run.server.wait_quiet(run.session, quiet=2.5)
    assert run.asked() == [prompt]
    assert run.lines() == []


FLAKY = 'n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 1 ]'


def test_shell_steps_decide_a_typed_until_and_an_unapproved_file_runs_nothing(start: Start, tmp_path: Path) -> None:  # noqa: F811
    # issue 34: the shared helper runs each step in the session's folder, the project.
    run = start([text("Hello Carol")], {"ship": "/greet Bob && !touch shipped.txt\n"})
    project = tmp_path / "project"
    assert run.server.prompt(run.session, f"until !sh -c '{FLAKY}'; do /greet Carol; done").wait().status == 500
    ended(run, "ended: 2 succeeded, 1 failed, 0 skipped")
    assert (project / "runs").read_text() == "2\n", run.lines()
    assert run.asked() == ["Greet Carol warmly."]
    assert run.lines()[-1] == "ended: 2 succeeded, 1 failed, 0 skipped", run.lines()

    run.typed("ship", "")
    run.server.wait_quiet(run.session, quiet=2.5)
    assert not (project / "shipped.txt").exists()
    assert run.asked() == ["Greet Carol warmly."]
