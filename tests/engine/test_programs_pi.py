"""Programs (issue 33) in the real pi 1.6.0 (`pi -p --approve` and RPC mode) and omp 18.2.3's TUI, offline against a
scripted model: a typed `for ... || break` decided by the fail tool, a saved `for` loop over several lines run by
name, a group with `||` whose step fails, and a prompt that only starts with `while`, as the person sees them (the
extension's lines) and as the model is handed them."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from slashkit.adapters.pi.install import FAIL_TOOL
from tests.engine.test_pi_chain import Ran
from tests.support.omp_cli import Omp
from tests.support.omp_cli import available as omp_available
from tests.support.openai_server import OpenAIServer, Turn, text, tool_call
from tests.support.pi_cli import Pi, Rpc, available
from tests.support.tui import tui_on

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
]

TEMPLATES = {"check": "Check the build: $ARGUMENTS", "fix": "Fix the build: $ARGUMENTS", "bye": "Say bye to $1"}
#: A saved chain over several lines: a `for` loop over its arguments, one step a line, and a comment.
CHAINS = {
    "each": "# check each part once it is fixed\nfor part in $ARGUMENTS\ndo\n  /fix $part\n  /check $part\ndone\n"
}
FAIL = tool_call(FAIL_TOOL, {"reason": "the build is still red"})
LOOP = "for w in a b c; do /fix $w || break; done"
#: What the person sees of LOOP when the step for `b` fails. The first step's lines come from the timer the core's
#: answer started, before the extension shows that answer, as for a saved chain (docs/pi.md).
LOOP_LINES = [
    "for 1/3: a",
    "1/1: /fix a",
    "a program of 1 command(s) runs",
    "for 2/3: b",
    "1/1: /fix b",
    "/fix failed: the model reported it failed: the build is still red",
    "ended: 1 succeeded, 1 failed, 0 skipped",
]
#: What the model is handed for LOOP, request by request (each one's first line): the third is the fail tool's answer,
#: after which the model ends its turn; `c` is never asked for.
LOOP_ASKED = ["Fix the build: a", "Fix the build: b", "Fix the build: b"]


def _print(tmp_path: Path, line: str, script: list[Turn]) -> Ran:
    with OpenAIServer(script) as model:
        done = Pi(tmp_path).setup(model.url, TEMPLATES, CHAINS).run(line, SLASHKIT_PYTHON=sys.executable)
        return Ran(done.returncode, done.stdout, done.stderr, model)


def _firsts(asked: list[str]) -> list[str]:
    return [a.split("\n")[0] for a in asked]


def test_a_typed_for_loop_breaks_at_the_first_word_whose_step_fails(tmp_path: Path) -> None:
    ran = _print(tmp_path, LOOP, [text("Fixed a."), FAIL, text("Could not fix b.")])
    assert ran.status == 0, ran.lines
    assert ran.lines == LOOP_LINES, ran.lines
    assert _firsts(ran.asked()) == LOOP_ASKED
    # The typed program itself never reaches the model.
    assert "for w in" not in ran.sent()


def test_a_typed_for_loop_in_rpc_mode(tmp_path: Path) -> None:
    with OpenAIServer([text("Fixed a."), FAIL, text("Could not fix b.")]) as model:
        session = Rpc(Pi(tmp_path).setup(model.url, TEMPLATES), SLASHKIT_PYTHON=sys.executable)
        try:
            session.send({"id": "typed", "type": "prompt", "message": LOOP})
            session.until(lambda e: str(e.get("message", "")).startswith("ended:"))
        finally:
            session.close()
    assert session.lines() == LOOP_LINES, session.lines()
    assert _firsts([r.last_user_text() for r in model.requests]) == LOOP_ASKED
    assert "for w in" not in "\n".join(json.dumps(r.body) for r in model.requests)


def test_a_saved_for_loop_over_several_lines_runs_by_name(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/each api ui", [text("a"), text("b"), text("c"), text("d")])
    assert ran.status == 0, ran.lines
    assert ran.lines == [
        "for 1/2: api",
        "1/2: /fix api",
        "/each api ui runs 2 command(s)",
        "2/2: /check api",
        "for 2/2: ui",
        "1/2: /fix ui",
        "2/2: /check ui",
        "all 4 command(s) ran",
    ], ran.lines
    assert _firsts(ran.asked()) == [f"{verb} the build: {part}" for part in ("api", "ui") for verb in ("Fix", "Check")]


def test_a_typed_group_whose_step_fails_runs_what_follows_its_or(tmp_path: Path) -> None:
    ran = _print(tmp_path, "{ /check && /fix; } || /bye Bob", [FAIL, text("Still red."), text("Bye Bob.")])
    assert ran.status == 0, ran.lines
    assert ran.lines == [
        "1/3: /check",
        "a program of 3 command(s) runs",
        "/check failed: the model reported it failed: the build is still red",
        "skipped 2/3: /fix (the last command failed)",
        "3/3: /bye Bob",
        "ended: 1 succeeded, 1 failed, 1 skipped",
    ], ran.lines
    # The second request: the fail tool's answer, after which the model ends its turn.
    assert _firsts(ran.asked()) == ["Check the build:", "Check the build:", "Say bye to Bob"]


def test_a_prompt_that_only_starts_with_while_reaches_the_model_untouched(tmp_path: Path) -> None:
    prompt = "while you are at it, fix the typo; done means green"
    ran = _print(tmp_path, prompt, [text("Done.")])
    assert ran.status == 0
    assert ran.asked() == [prompt]
    assert ran.lines == []
    assert ran.stdout == "Done.\n"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it")
def test_a_typed_for_loop_in_pis_tui(tmp_path: Path) -> None:
    with tui_on(Pi(tmp_path), [text("Fixed a."), FAIL, text("Could not fix b.")], TEMPLATES) as (tui, model, _):
        tui.wait(lambda s: "slashkit" in s)
        tui.type(LOOP)
        screen = tui.wait(lambda s: LOOP_LINES[-1] in s)
    _loop_shown(screen)
    assert _firsts([r.last_user_text() for r in model.requests]) == LOOP_ASKED
    assert "for w in" not in "\n".join(r.all_text() for r in model.requests)


@pytest.mark.skipif(not omp_available(), reason="no omp: scripts/setup.sh installs @oh-my-pi/pi-coding-agent 18.2.3")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it")
def test_a_typed_for_loop_in_omps_tui(tmp_path: Path) -> None:
    # omp offers an extension's tools as devices the model writes JSON to (`xd://<tool>`), measured on 18.2.3.
    reason = json.dumps({"reason": "the build is still red"})
    fail = tool_call("write", {"path": f"xd://{FAIL_TOOL}", "content": reason, "i": "Failing the step"})
    with tui_on(Omp(tmp_path), [text("Fixed a."), fail, text("Could not fix b.")], TEMPLATES) as (tui, model, _):
        tui.wait(lambda s: "fake-model" in s)
        tui.type(LOOP)
        screen = tui.wait(lambda s: LOOP_LINES[-1] in s)
    _loop_shown(screen)
    # omp puts a system reminder (the date, the folder) before the first prompt of a session.
    asked = [r.last_user_text().rsplit("</system-reminder>\n", 1)[-1].split("\n")[0] for r in model.requests]
    assert asked == LOOP_ASKED, asked
    assert "for w in" not in "\n".join(r.all_text() for r in model.requests)


def _loop_shown(screen: str) -> None:
    """LOOP's lines on a TUI's screen. pi's and omp's TUIs show a notice in place of the one before it when nothing came
    between (pi's `showStatus`, measured on pi 1.6.0 and omp 18.2.3): of `for 1/3: a`, `1/1: /fix a` and the core's
    answer, the answer stays; `1/1: /fix b` replaces `for 2/3: b`, and the chain's end the step's failure."""
    shown = [line.strip() for line in screen.splitlines() if line.strip()]
    seen = ["a program of 1 command(s) runs", "Fixed a.", "1/1: /fix b", "Could not fix b.", LOOP_LINES[-1]]
    assert [shown.index(line) for line in seen] == sorted(shown.index(line) for line in seen), screen


def test_a_typed_until_is_decided_by_a_shell_steps_exit_status(tmp_path: Path) -> None:
    # issue 34: the shared helper runs the step in the session's folder; pi -p returns once the program ended.
    pi = Pi(tmp_path)
    with OpenAIServer([text("Fixed it.")]) as model:
        pi.setup(model.url, TEMPLATES)
        (pi.project / "flaky.sh").write_text(
            'n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 1 ]\n'
        )
        done = pi.run("until !sh flaky.sh; do /fix it; done", SLASHKIT_PYTHON=sys.executable)
        ran = Ran(done.returncode, done.stdout, done.stderr, model)
    assert (pi.project / "runs").read_text() == "2\n", ran.lines
    assert ran.lines[-1] == "ended: 2 succeeded, 1 failed, 0 skipped", ran.lines
    assert _firsts(ran.asked()) == ["Fix the build: it"]


def test_an_unapproved_project_chain_holding_a_shell_step_runs_nothing(tmp_path: Path) -> None:
    pi = Pi(tmp_path)
    with OpenAIServer([text("Fixed it.")]) as model:
        pi.setup(model.url, TEMPLATES, {"ship": "/fix a && !touch shipped.txt\n"})
        done = pi.run("/ship", SLASHKIT_PYTHON=sys.executable)
        ran = Ran(done.returncode, done.stdout, done.stderr, model)
    assert not (pi.project / "shipped.txt").exists()
    assert ran.asked() == []
    assert any("/slash-chain allow ship" in line for line in ran.lines), ran.lines
