"""Programs (issue 33) in the real Claude Code 2.1.328, offline: in `claude -p` (plain, or fed on stdin where a step
after a local one would race plain `-p`'s exit), a typed `until` decided by the model's fail tool, a saved `for` loop
over several lines with `/compact` in its body, a `while` stopped by its cap, `for ... || break`, and a prompt that
only starts with `while`; in the interactive TUI, the footer mid-loop. As the person sees them (the plugin's
transcript lines, the screen) and as the model is handed them (the scripted model server)."""

import contextlib
import threading
from pathlib import Path

import pytest

from slashkit.core.texts import CHAIN_COMMAND
from tests.engine.test_saved_chains_claude import footer
from tests.support.claude_cli import (
    Isolation,
    RunResult,
    run_print,
    run_streaming,
    ui_log_seen,
    ui_log_texts,
)
from tests.support.model_server import ModelServer, Turn, text, tool_use
from tests.support.tmux_claude import TMUX, TmuxClaude

pytestmark = pytest.mark.engine
interactive = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")

FAIL = tool_use("mcp__slash-chain__fail", {"reason": "the build is still red"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with two commands that hand the model a prompt (`/check`, `/fix`) and one saved chain, `each`, a
    `for` loop over its arguments written over several lines, with `/compact` in its body."""
    folder = tmp_path / "project"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "check.md").write_text("---\ndescription: Checks the build\n---\nCheck the build: $ARGUMENTS\n")
    (commands / "fix.md").write_text("---\ndescription: Fixes the build\n---\nFix the build: $ARGUMENTS\n")
    chains = folder / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    (chains / "each.md").write_text(
        "---\ndescription: Fixes each part with a fresh context\n---\n"
        "# a fresh context after each part\nfor part in $ARGUMENTS\ndo\n  /fix $part\n  /compact\ndone\n"
    )
    return folder


def lines(result: RunResult) -> list[str]:
    return ui_log_texts(result.events, "slash-chain")


def prompts(model: ModelServer) -> list[str]:
    return [r.last_user_text() for r in model.main_requests]


def run(line: str, plugin: Path, project: Path, tmp_path: Path, script: list[Turn]) -> tuple[RunResult, list[str]]:
    with ModelServer(script) as model:
        result = run_print(line, [plugin], project, model, isolation=tmp_path / "iso", timeout=150)
    return result, prompts(model)


def test_a_typed_until_runs_its_body_while_the_model_fails_the_condition(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    script: list[Turn] = [FAIL, text("Still red."), text("Fixed a."), FAIL, text("Still red."), text("Fixed b.")]
    script.append(text("Green."))

    result, handed = run("until /check; do /fix; done", plugin, project, tmp_path, script)

    assert lines(result) == [
        "until 1/10",
        "1/2: /check",
        "/check failed: the model reported it failed: the build is still red",
        "2/2: /fix",
        "until 2/10",
        "1/2: /check",
        "/check failed: the model reported it failed: the build is still red",
        "2/2: /fix",
        "until 3/10",
        "1/2: /check",
        "ended: 3 succeeded, 2 failed, 0 skipped",
    ], result.describe()
    assert ["Check the build" in p for p in handed] == [True, False, False, True, False, False, True], handed
    assert ["Fix the build" in p for p in handed] == [False, False, True, False, False, True, False], handed
    assert "after a failure /fix runs next" in handed[0]


def test_a_saved_for_loop_over_several_lines_compacts_once_per_iteration(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    # Fed on stdin (stream-json) and kept open until the end line: the step after a local one (`/compact`) is queued
    # once the engine ended it, which races plain `-p`'s exit (docs/claude-code.md, "Headless"). Under load (eight
    # at once) plain `-p` lost the loop after a `/compact` in 4 of 96 runs, and in 3 of 64 with the plugin of
    # 7f8ae2e; a whole run of the suite lost it so once.
    script: list[Turn] = [text("Fixed api."), text("Fixed ui."), text("All done.")]
    with ModelServer(script) as model:
        result = run_streaming(
            "/each api ui && /fix done",
            [plugin],
            project,
            model,
            until=ui_log_seen("all 5 command(s) ran", "slash-chain"),
            timeout=150,
            isolation=tmp_path / "iso",
        )
        handed = prompts(model)

    assert lines(result) == [
        "for 1/2: api",
        "1/3: /fix api",
        "2/3: /compact",
        "for 2/2: ui",
        "1/3: /fix ui",
        "2/3: /compact",
        "3/3: /fix done",
        "all 5 command(s) ran",
    ], result.describe()
    assert len(handed) == 3, handed
    assert "Fix the build: api" in handed[0], handed
    assert "Fix the build: ui" in handed[1], handed
    compactions = [e for e in result.events if e.get("subtype") == "compact_boundary"]
    assert len(compactions) == 2, result.describe()


def test_a_while_whose_condition_always_passes_stops_at_its_cap(plugin: Path, project: Path, tmp_path: Path) -> None:
    # Fed on stdin (stream-json) and kept open until the end line: a run of local commands alone races plain `-p`'s
    # exit (docs/claude-code.md, "Headless"; the seed's own plugin loses `/cost && /context`'s second step so), and a
    # whole run of the suite under load lost this loop in its third iteration twice.
    end = "ended: 20 succeeded, 0 failed, 0 skipped"
    with ModelServer([]) as model:
        result = run_streaming(
            "while /context; do /context; done",
            [plugin],
            project,
            model,
            until=ui_log_seen(end, "slash-chain"),
            timeout=150,
            isolation=tmp_path / "iso",
        )
        handed = prompts(model)
    assert result.until_met, result.describe()

    shown = lines(result)
    assert shown.count("1/2: /context") == 10, shown
    assert shown.count("2/2: /context") == 10
    assert shown[-2:] == [
        "while stopped: its body ran 10 times, its cap (SLASHKIT_LOOP_CAP raises it)",
        "ended: 20 succeeded, 0 failed, 0 skipped",
    ], result.describe()
    assert handed == []


def test_a_for_loop_breaks_at_the_first_word_whose_step_fails(plugin: Path, project: Path, tmp_path: Path) -> None:
    script: list[Turn] = [text("Fixed a."), FAIL, text("Could not fix b.")]

    result, handed = run("for w in a b c; do /fix $w || break; done", plugin, project, tmp_path, script)

    assert lines(result) == [
        "for 1/3: a",
        "1/1: /fix a",
        "for 2/3: b",
        "1/1: /fix b",
        "/fix failed: the model reported it failed: the build is still red",
        "ended: 1 succeeded, 1 failed, 0 skipped",
    ], result.describe()
    assert "Fix the build: a" in handed[0], handed
    assert "Fix the build: b" in handed[1], handed
    assert len(handed) == 3  # the third: the fail tool's answer, after which the model ends its turn


def test_a_prompt_that_only_starts_with_while_reaches_the_model_untouched(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    prompt = "while you are at it, fix the typo; do not touch the tests; done means green"

    result, handed = run(prompt, plugin, project, tmp_path, [text("Done.")])

    assert len(handed) == 1, result.describe()
    assert handed[0].split("</system-reminder>")[-1].strip() == prompt, handed
    assert lines(result) == []


@interactive
def test_the_tui_footer_shows_where_the_loop_is_while_a_step_works(plugin: Path, project: Path, tmp_path: Path) -> None:
    """`until /check; do /fix; done` typed in the interactive Claude Code: the model fails `/check` once, and while
    `/fix`'s turn is held the footer reads `⚠ slash-chain: until 1/10 · /fix · next /check`; once `/check` passes
    the footer is clear and the end line shows. The screens are kept beside the test's files (`screens/`)."""
    running = f"\u26a0 {CHAIN_COMMAND}: until 1/10 · /fix · next /check"
    screens = tmp_path / "screens"
    screens.mkdir()
    iso = Isolation.create(tmp_path / "iso")
    with contextlib.ExitStack() as stack:
        hold = threading.Event()
        stack.callback(hold.set)
        stack.callback(iso.cleanup)
        script: list[Turn] = [FAIL, text("Still red."), text("Fixed.", hold=hold), text("Green.")]
        model = stack.enter_context(ModelServer(script))
        cli = stack.enter_context(
            TmuxClaude(cwd=project, isolation=iso, model=model, plugin_dirs=[plugin], lifetime=180)
        )
        cli.send("until /check; do /fix; done")
        # Mid-loop: the model holds /fix's request, and the footer names the loop, the step and what comes next.
        mid = cli.wait_for(
            lambda s: running in footer(s) and "Fix the build" in model.main_requests[-1].last_user_text(),
            timeout=60,
            what=f"/fix's model request, and the footer showing {running!r}",
        )
        (screens / "mid-loop.txt").write_text(mid)
        hold.set()
        end = f"{CHAIN_COMMAND}: ended: 2 succeeded, 1 failed, 0 skipped"
        after = cli.wait_for(
            lambda s: end in s and f"{CHAIN_COMMAND}: until" not in footer(s),
            timeout=60,
            what="the program's end, and the footer without its progress",
        )
        (screens / "after.txt").write_text(after)
        # The dropped prompt does not stay in the prompt box, where Enter would start it again.
        assert cli.input_line() == "", cli.describe(after)
