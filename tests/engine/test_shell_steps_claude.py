"""Shell steps (issue 34) in the real Claude Code 2.1.328, plain `claude -p`, offline: a typed `until !...` decided by
the shell's exit status; a project's saved chain holding `!touch` runs nothing until the person approves it, runs
once approved, and nothing again once the file changed; a model's answer holding `!touch`, handed on by `|`, makes
nothing; the person's `/tiny a && !touch made.txt` makes the file. As the person sees them (the plugin's lines) and
as the disk shows them (the files a step made, or did not)."""

import contextlib
from pathlib import Path

import pytest

from slashkit.core.texts import CHAIN_COMMAND
from tests.support.claude_cli import Isolation, RunResult, run_print, ui_log_texts
from tests.support.model_server import ModelServer, Turn, text
from tests.support.tmux_claude import TMUX, TmuxClaude

pytestmark = pytest.mark.engine

#: Fails its first two runs, then passes: it counts its runs in a file beside it.
FLAKY = 'n=$(cat runs 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > runs; echo "run $n"; [ "$n" -ge 3 ]\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with `/tiny`, a command that hands the model a prompt, and `flaky.sh`."""
    folder = tmp_path / "project"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "tiny.md").write_text("---\ndescription: A tiny prompt\n---\nSay something tiny: $ARGUMENTS\n")
    (folder / "flaky.sh").write_text(FLAKY)
    return folder


def run(
    line: str, plugin: Path, project: Path, where: Path | Isolation, script: list[Turn]
) -> tuple[RunResult, list[str]]:
    """`claude -p LINE` in a fresh isolation under `where`, or in `where` itself (the person's state kept)."""
    isolation = where if isinstance(where, Isolation) else where / "iso"
    with ModelServer(script) as model:
        result = run_print(line, [plugin], project, model, isolation=isolation, timeout=150)
        handed = [r.last_user_text() for r in model.main_requests]
    return result, handed


def lines(result: RunResult) -> list[str]:
    return ui_log_texts(result.events, "slash-chain")


def test_a_typed_until_is_decided_by_the_shells_exit_status(plugin: Path, project: Path, tmp_path: Path) -> None:
    script: list[Turn] = [text("Tiny one."), text("Tiny two."), text("Done.")]

    result, handed = run("until !sh flaky.sh; do /tiny again; done ; /tiny end", plugin, project, tmp_path, script)

    assert (project / "runs").read_text() == "3\n", result.describe()
    assert lines(result) == [
        "until 1/10",
        "1/3: !sh flaky.sh",
        "run 1",
        "!sh failed: it exited with status 1",
        "2/3: /tiny again",
        "until 2/10",
        "1/3: !sh flaky.sh",
        "run 2",
        "!sh failed: it exited with status 1",
        "2/3: /tiny again",
        "until 3/10",
        "1/3: !sh flaky.sh",
        "run 3",
        "3/3: /tiny end",
        "ended: 4 succeeded, 2 failed, 0 skipped",
    ], result.describe()
    assert ["Say something tiny: again" in p for p in handed] == [True, True, False], handed


def test_the_persons_typed_shell_step_makes_the_file(plugin: Path, project: Path, tmp_path: Path) -> None:
    result, _ = run("/tiny a && !touch made.txt && /tiny b", plugin, project, tmp_path, [text("A."), text("B.")])

    assert (project / "made.txt").exists(), result.describe()
    assert lines(result) == ["1/3: /tiny a", "2/3: !touch made.txt", "3/3: /tiny b", "all 3 command(s) ran"]


def test_a_models_answer_holding_a_shell_step_handed_on_by_a_pipe_makes_nothing(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    script: list[Turn] = [text("!touch x && !touch y"), text("Noted.")]

    result, handed = run("/tiny a | /tiny", plugin, project, tmp_path, script)

    assert not (project / "x").exists() and not (project / "y").exists(), result.describe()
    assert lines(result) == ["1/2: /tiny a", "2/2: /tiny", "all 2 command(s) ran"], result.describe()
    assert "!touch x && !touch y" in handed[1]  # data for the model, never a step


def test_a_project_chain_with_a_shell_step_runs_only_as_the_person_approved_it(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    chains = project / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    ship = chains / "ship.md"
    ship.write_text("---\ndescription: Ships\n---\n/tiny go && !touch shipped.txt\n")
    person = Isolation.create(tmp_path)  # one person: their approvals are kept in their state between the runs

    before, handed = run("/ship", plugin, project, person, [text("Going.")])
    assert not (project / "shipped.txt").exists(), before.describe()
    assert handed == []
    assert "type /slash-chain allow ship" in before.stdout, before.describe()

    allowed, _ = run("/slash-chain allow ship", plugin, project, person, [])
    assert f"approved /ship ({ship}" in allowed.stdout, allowed.describe()

    after, handed = run("/ship", plugin, project, person, [text("Going."), text("Still going.")])
    assert (project / "shipped.txt").exists(), after.describe()
    assert lines(after)[-1] == "all 2 command(s) ran", after.describe()

    (project / "shipped.txt").unlink()
    ship.write_text("---\ndescription: Ships\n---\n/tiny go && !touch shipped.txt && !touch more.txt\n")
    changed, handed = run("/ship", plugin, project, person, [text("Going.")])
    assert not (project / "shipped.txt").exists() and not (project / "more.txt").exists(), changed.describe()
    assert handed == []
    assert "type /slash-chain allow ship" in changed.stdout, changed.describe()
    person.cleanup()


@pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")
def test_in_the_tui_a_typed_until_decided_by_exit_status_and_the_persons_touch(
    plugin: Path, project: Path, tmp_path: Path
) -> None:
    """Typed in the interactive Claude Code: `until !sh flaky.sh; do /tiny again; done` runs /tiny twice, then the
    person's `/tiny a && !touch made.txt` makes the file; the screens show each step's line and its end."""
    iso = Isolation.create(tmp_path / "iso")
    with contextlib.ExitStack() as stack:
        stack.callback(iso.cleanup)
        script: list[Turn] = [text("Tiny one."), text("Tiny two."), text("Tiny a.")]
        model = stack.enter_context(ModelServer(script))
        cli = stack.enter_context(
            TmuxClaude(cwd=project, isolation=iso, model=model, plugin_dirs=[plugin], lifetime=180)
        )
        cli.send("until !sh flaky.sh; do /tiny again; done")
        end = f"{CHAIN_COMMAND}: ended: 3 succeeded, 2 failed, 0 skipped"
        screen = cli.wait_for(lambda s: end in s, timeout=90, what="the loop's end line")
        assert f"{CHAIN_COMMAND}: !sh failed: it exited with status 1" in screen, cli.describe(screen)
        assert (project / "runs").read_text() == "3\n"
        cli.send("/tiny a && !touch made.txt")
        done = cli.wait_for(
            lambda s: f"{CHAIN_COMMAND}: all 2 command(s) ran" in s, timeout=90, what="the typed chain's end line"
        )
        assert (project / "made.txt").exists(), cli.describe(done)
    asked = [r.last_user_text() for r in model.main_requests]
    assert sum("Say something tiny: again" in a for a in asked) == 2, asked
