"""Programs (issue 33) in the real Gemini CLI 0.61.0 (`gemini -p LINE`, offline against a scripted Gemini API): a
typed `for` and a typed `until` decided by the fail tool, a saved chain over several lines with a loop, and a prompt
that only starts with `while`, as the person sees them (the hooks' lines) and as the model is handed them. The
project and its commands (`/greet`, `/bye`) are test_gemini_chain.py's."""

from pathlib import Path

import pytest

from slashkit.adapters.gemini.resident import FAIL_TOOL
from tests.engine.test_gemini_chain import _run
from tests.support.gemini_cli import available
from tests.support.gemini_server import Turn, call, text

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not available(), reason="no Gemini CLI: scripts/setup.sh installs @google/gemini-cli 0.61.0"),
]


def test_a_typed_for_loop_runs_its_body_once_a_word_in_place_of_the_typed_line(tmp_path: Path) -> None:
    ran = _run(tmp_path, "for w in Bob Alice; do /greet $w; done", [text("Hello Bob"), text("Hello Alice")])
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 2
    assert [ran.last_user(i).split("\n")[0] for i in range(2)] == ["Greet Bob warmly.", "Greet Alice warmly."]
    assert "for w in" not in ran.everything()
    # A hook's message of several lines is one "Hook system message: " on stderr (measured on 0.61.0).
    assert "Hook system message: a program of 1 command(s) runs\nfor 1/2: Bob\n1/1: /greet Bob\n" in ran.stderr
    assert "Hook system message: for 2/2: Alice\n1/1: /greet Alice\n" in ran.stderr
    assert ran.lines[-1] == "all 2 command(s) ran"


def test_a_typed_until_runs_its_body_while_the_model_fails_the_condition(tmp_path: Path) -> None:
    script: list[Turn] = [call(FAIL_TOOL, {"reason": "no Bob yet"}), text("could not"), text("Bye now"), text("Hi Bob")]
    ran = _run(tmp_path, "until /greet Bob; do /bye; done", script)
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 4
    assert [ran.last_user(i).split("\n")[0] for i in (0, 2, 3)] == [
        "Greet Bob warmly.",
        "Say goodbye.",
        "Greet Bob warmly.",
    ]
    assert "until /greet" not in ran.everything()
    assert "/greet failed: the model reported it failed: no Bob yet" in ran.stderr
    assert ran.lines[-1] == "ended: 2 succeeded, 1 failed, 0 skipped"


def test_a_saved_chain_over_several_lines_runs_its_loop_by_name(tmp_path: Path) -> None:
    chains = tmp_path / "project" / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    (chains / "each.md").write_text("# greet each, then leave\nfor who in $ARGUMENTS\ndo\n  /greet $who\ndone\n/bye\n")
    ran = _run(tmp_path, "/each Bob Alice", [text("Hello Bob"), text("Hello Alice"), text("Bye now")])
    assert ran.status == 0, ran.stderr
    assert [ran.last_user(i).split("\n")[0] for i in range(3)] == [
        "Greet Bob warmly.",
        "Greet Alice warmly.",
        "Say goodbye.",
    ]
    assert "/each" not in ran.everything()
    assert "Hook system message: /each Bob Alice runs 2 command(s)\nfor 1/2: Bob\n1/2: /greet Bob\n" in ran.stderr
    assert ran.lines[-1] == "all 3 command(s) ran"


def test_a_prompt_that_only_starts_with_while_reaches_the_model_untouched(tmp_path: Path) -> None:
    prompt = "while you are at it, fix the typo; do not touch the tests; done means green"
    ran = _run(tmp_path, prompt, [text("Done.")])
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 1
    assert ran.last_user(0) == prompt
    assert ran.lines == []


def test_a_typed_until_is_decided_by_a_shell_steps_exit_status(tmp_path: Path) -> None:
    # issue 34: the shared helper runs the step in the project; the hook waits for its end.
    flaky = 'n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 1 ]'
    ran = _run(tmp_path, f"until !sh -c '{flaky}'; do /bye; done", [text("Bye now")])
    assert ran.status == 0, ran.stderr
    assert (tmp_path / "project" / "runs").read_text() == "2\n", ran.stderr
    assert [ran.last_user(i).split("\n")[0] for i in range(len(ran.requests))] == ["Say goodbye."]
    assert "until 2/10\n1/2: !sh -c" in ran.stderr
    assert ran.stderr.rstrip().endswith("ended: 2 succeeded, 1 failed, 0 skipped"), ran.stderr


def test_an_unapproved_project_chain_holding_a_shell_step_runs_nothing(tmp_path: Path) -> None:
    chains = tmp_path / "project" / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    (chains / "ship.md").write_text("/bye && !touch shipped.txt\n")
    ran = _run(tmp_path, "/ship", [text("Bye now")])
    assert not (tmp_path / "project" / "shipped.txt").exists(), ran.stderr
    assert "Say goodbye." not in ran.everything()
    assert "/slash-chain allow ship" in ran.stderr + ran.stdout, ran.stderr
