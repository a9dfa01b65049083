"""Saved chains in the real Claude Code 2.1.328 with the slash-chain plugin, offline, against a scripted model:
headless (`claude -p` fed through stream-json, as the chain tests are, and a plain `claude -p "/ship Bob"`) and
interactive (tmux). The project holds
`.slashkit/chains/*.md`; the person types a saved chain's name and sees it run as the chain its file holds.

Measured on 2.1.328 while writing these (docs/claude-code.md, "Saved chains"):

- The plugin registers each saved chain in `session.start`; `claude -p` announces it in `init.slash_commands` or in
  the `commands_changed` line after it, and the TUI's `/` menu lists it with its description.
- `$.ui.status(text)` shows `⚠ slash-chain: <text>` in the TUI's footer, under the prompt box, while a step's turn
  runs; `$.ui.status(undefined)` removes it. Headless, each call is a `ui_status` line (`"text": null` to clear).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest

from slashkit.adapters.claude_code.plugins import plugin_dir
from slashkit.core.chain import Step
from slashkit.core.texts import CHAIN_COMMAND, done_text, progress_text, step_text
from tests.engine.test_builtin_outside_lich import settings_files
from tests.support.claude_cli import (
    EventPredicate,
    Isolation,
    JsonObject,
    RunResult,
    StreamingRun,
    cli_available,
    results_seen,
    run_print,
    ui_log_texts,
    validate,
)
from tests.support.model_server import ModelServer, Turn, text
from tests.support.tmux_claude import PROMPT_MARK, TMUX, TmuxClaude, system_texts

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed"),
]
interactive = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")

#: The project command the steps hand the model (as in test_slash_chain_headless.py).
REVIEW_BODY: Final = "Review the change named here: $ARGUMENTS"
TIMEOUT: Final = 60.0
SHIP_DESCRIPTION: Final = "Reviews a name, then says done"
SHIP_HINT: Final = "<name>"
#: Two steps of the project's own command, the typed word filled in.
SHIP_FILE: Final = (
    f"---\ndescription: {SHIP_DESCRIPTION}\nargument-hint: {SHIP_HINT}\n---\n/review $1 && /review done\n"
)
#: A saved chain that calls another, and the one it calls.
NESTED_SHIP: Final = "/check $1 && /review done\n"
CHECK_FILE: Final = "/review $1 || /review fixed\n"


def review(args: str) -> str:
    return REVIEW_BODY.replace("$ARGUMENTS", args)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = plugin_dir(CHAIN_COMMAND, tmp_path_factory.mktemp("marketplace"))
    checked = validate(folder)
    assert checked.ok, checked.describe()
    return folder


def project_with(tmp_path: Path, chains: Mapping[str, str]) -> Path:
    """A project with `/review` (a command that hands the model a prompt) and these saved chains, by name."""
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / ".claude" / "commands" / "review.md").write_text(
        f"---\ndescription: Reviews a change\n---\n{REVIEW_BODY}\n"
    )
    (folder / ".slashkit" / "chains").mkdir(parents=True)
    for name, body in chains.items():
        (folder / ".slashkit" / "chains" / f"{name}.md").write_text(body)
    return folder


def chain_lines(events: Sequence[JsonObject]) -> list[str]:
    return ui_log_texts(events, CHAIN_COMMAND)


def statuses(result: RunResult) -> list[str | None]:
    """What the plugin set its status to (`ui_status` lines), in order; None clears it."""
    return [e.get("text") for e in result.of("system", "ui_status") if e.get("plugin") == CHAIN_COMMAND]


def ended_line(lines: Sequence[str]) -> bool:
    """One of the plugin's lines ends a chain (`all N command(s) ran`, `ended: ...`, `stopped ...`)."""
    return any(line.startswith(("all ", "ended: ", "stopped ")) for line in lines)


def ended(events: Sequence[JsonObject]) -> bool:
    """The chain's last line has arrived."""
    return ended_line(chain_lines(events))


def run(
    line: str, plugin: Path, project: Path, script: Sequence[Turn] = (), until: EventPredicate = ended
) -> tuple[RunResult, ModelServer]:
    """Types `line` into `claude -p --input-format stream-json` with the plugin, and waits until `until` holds (the
    chain's last line, by default)."""
    with ModelServer(script) as model, StreamingRun([plugin], project, model=model) as session:
        session.send(line)
        done = session.wait_until(until, timeout=TIMEOUT)
        result = session.finish()
    assert done, result.describe()
    return result, model


def handed(model: ModelServer) -> list[str]:
    """The last user text of every main-loop request the model answered."""
    return [r.last_user_text() for r in model.main_requests]


# --- headless ----------------------------------------------------------------------------------------------------


def test_a_saved_chain_is_a_command_of_the_session_with_its_description(plugin: Path, tmp_path: Path) -> None:
    """The plugin registers `/ship` before the prompt runs: listed with its description and argument hint."""
    project = project_with(tmp_path, {"ship": SHIP_FILE})
    result, _ = run("/slash-chain", plugin, project, until=results_seen(1))
    init = result.init or {}
    announced = [c for e in result.of("system", "commands_changed") for c in e.get("commands", [])]
    listed = {str(c.get("name")): c for c in announced}
    assert "ship" in init.get("slash_commands", []) or "ship" in listed, result.describe()
    if "ship" in listed:
        assert listed["ship"].get("description") == SHIP_DESCRIPTION, listed["ship"]
        assert listed["ship"].get("argumentHint") == SHIP_HINT, listed["ship"]


def test_a_saved_chain_typed_by_name_runs_its_two_steps_with_the_arguments_filled_in(
    plugin: Path, tmp_path: Path
) -> None:
    project = project_with(tmp_path, {"ship": SHIP_FILE})
    result, model = run("/ship Bob", plugin, project, [text("Bob reviewed."), text("done reviewed.")])
    assert chain_lines(result.events) == [
        step_text(1, 2, Step("review", "Bob")),
        step_text(2, 2, Step("review", "done")),
        done_text(2),
    ], result.describe()
    prompts = handed(model)
    assert len(prompts) == 2, prompts
    assert review("Bob") in prompts[0], prompts[0]
    assert review("done") in prompts[1], prompts[1]
    # The footer follows the chain: each step with the next one, then cleared.
    shown = statuses(result)
    assert shown[-1] is None, shown
    assert progress_text(1, 2, Step("review", "Bob"), Step("review", "done")) in shown, shown


def test_a_saved_chain_that_calls_another_runs_it_as_a_function(plugin: Path, tmp_path: Path) -> None:
    """`ship = /check $1 && /review done`, `check = /review $1 || /review fixed`: /review Bob answers well, so
    `|| /review fixed` is passed over and `/review done` runs."""
    project = project_with(tmp_path, {"ship": NESTED_SHIP, "check": CHECK_FILE})
    result, model = run("/ship Bob", plugin, project, [text("Bob reviewed."), text("done reviewed.")])
    prompts = handed(model)
    assert len(prompts) == 2, (prompts, result.describe())
    assert review("Bob") in prompts[0], prompts[0]
    assert review("done") in prompts[1], prompts[1]
    assert not any(review("fixed") in p for p in prompts), prompts
    lines = chain_lines(result.events)
    assert lines[0] == step_text(1, 3, Step("review", "Bob")), lines
    assert step_text(3, 3, Step("review", "done", "&&")) in lines, lines


def test_saved_chains_that_call_each_other_run_nothing_and_ask_the_model_nothing(plugin: Path, tmp_path: Path) -> None:
    project = project_with(tmp_path, {"spin": "/spin2\n", "spin2": "/spin\n"})
    result, model = run("/spin", plugin, project, [text("must not be asked")], until=results_seen(1))
    assert [r.kind for r in model.requests if r.kind in ("main", "side", "title", "summary")] == [], model.describe()
    answers = " ".join(result.assistant_texts())
    assert "cycle" in answers and "spin -> spin2 -> spin" in answers, result.describe()
    assert chain_lines(result.events) == [], result.describe()


def test_a_config_step_from_a_file_is_refused_with_its_line_and_the_next_step_runs(
    plugin: Path, tmp_path: Path
) -> None:
    """Measured on 2.1.328 with the refusal undone: the step ran, and `claude -p` wrote `permissions.defaultMode`
    and `model` into the isolated `settings.json`."""
    project = project_with(tmp_path, {"prep": "/config permissionMode=acceptEdits model=opus ; /context\n"})
    iso = Isolation.create(tmp_path / "iso")
    before = settings_files(iso.home, project)
    with ModelServer() as model, StreamingRun([plugin], project, model=model, isolation=iso) as session:
        session.send("/prep")
        done = session.wait_until(ended, timeout=TIMEOUT)
        result = session.finish()
    assert done, result.describe()
    lines = chain_lines(result.events)
    assert lines[0].startswith("skipped 1/2: /config permissionMode=acceptEdits model=opus ("), lines
    assert "/config" in lines[0] and "prep" in lines[0], lines
    assert lines[1:] == [step_text(2, 2, Step("context", "", ";")), "ended: 1 succeeded, 0 failed, 1 skipped"], lines
    assert settings_files(iso.home, project) == before, result.describe()


# --- plain `claude -p LINE` -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chains", "lines"),
    [
        ({"ship": SHIP_FILE}, ["1/2: /review Bob", "2/2: /review done", "all 2 command(s) ran"]),
        (
            {"ship": NESTED_SHIP, "check": CHECK_FILE},
            ["1/3: /review Bob", "skipped 2/3: /review fixed (", "3/3: /review done", "ended: 2 succeeded, 0 failed"],
        ),
    ],
    ids=["two-steps", "nested"],
)
def test_plain_claude_p_runs_every_step_of_a_saved_chain(
    plugin: Path, tmp_path: Path, chains: Mapping[str, str], lines: list[str]
) -> None:
    """`claude -p "/ship Bob"`, nothing fed on stdin: every step runs before the process exits. Measured on 2.1.328
    before the steps were handed on from the session start's hook: `-p` exited once its queue was empty, and ran
    none of a saved chain's steps in 2 runs of 3 (bridge.ts, serveRuns)."""
    project = project_with(tmp_path, chains)
    with ModelServer([text("Bob reviewed."), text("done reviewed.")]) as model:
        result = run_print("/ship Bob", [plugin], project, model, isolation=tmp_path / "iso", timeout=TIMEOUT)
    shown = chain_lines(result.events)
    assert len(shown) == len(lines) and all(s.startswith(w) for s, w in zip(shown, lines, strict=True)), (
        result.describe()
    )
    prompts = handed(model)
    assert len(prompts) == 2 and review("Bob") in prompts[0] and review("done") in prompts[1], prompts
    assert result.exit_code == 0, result.describe()


# --- interactive ---------------------------------------------------------------------------------------------------


def footer(screen: str) -> str:
    """What the TUI shows under its prompt box: the lines after the last one that starts with the prompt's mark."""
    lines = screen.splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith(PROMPT_MARK)]
    return "\n".join(lines[marks[-1] + 1 :]) if marks else ""


#: The menu's line for the saved chain (2.1.328: `/ship` then its description, after spaces).
MENU_LINE: Final = re.compile(rf"/ship\s+{re.escape(SHIP_DESCRIPTION)}")


@interactive
def test_the_footer_shows_the_running_step_and_the_next_one_and_clears_once_the_chain_ended(
    plugin: Path, tmp_path: Path
) -> None:
    """`/ship` is in the TUI's `/` menu with its description. `/ship Bob` typed, its first step's turn held: the
    footer reads `⚠ slash-chain: chain 1/2: /review Bob · next /context` while the model works; once the chain
    ended it is gone. The screens are kept beside the test's files (`screens/`)."""
    project = project_with(tmp_path, {"ship": f"---\ndescription: {SHIP_DESCRIPTION}\n---\n/review $1 && /context\n"})
    running = f"\u26a0 {CHAIN_COMMAND}: {progress_text(1, 2, Step('review', 'Bob'), Step('context', ''))}"
    screens = tmp_path / "screens"
    screens.mkdir()
    iso = Isolation.create(tmp_path / "iso")
    with contextlib.ExitStack() as stack:
        hold = threading.Event()
        stack.callback(hold.set)
        stack.callback(iso.cleanup)
        model = stack.enter_context(ModelServer([text("Bob reviewed.", hold=hold)]))
        cli = stack.enter_context(
            TmuxClaude(cwd=project, isolation=iso, model=model, plugin_dirs=[plugin], lifetime=180)
        )
        # The `/` menu lists the saved chain with its file's description.
        cli.type_text("/shi")
        menu = cli.wait_for(MENU_LINE, timeout=TIMEOUT, what="/ship and its description in the menu")
        (screens / "menu.txt").write_text(menu)
        cli.send_keys("C-u")
        cli.wait_for(lambda _s: cli.input_line() == "", timeout=TIMEOUT, what="an empty prompt")
        cli.send("/ship Bob")
        # Mid-step: the model holds the step's request, and the footer still names the step.
        mid = cli.wait_for(
            lambda s: bool(model.main_requests) and running in footer(s),
            timeout=TIMEOUT,
            what=f"the step's model request, and the footer showing {running!r}",
        )
        (screens / "mid-step.txt").write_text(mid)
        assert model.main_requests and review("Bob") in model.main_requests[-1].last_user_text(), cli.describe(mid)
        hold.set()
        end = f"{CHAIN_COMMAND}: {done_text(2)}"
        after = cli.wait_for(
            lambda s: end in s and f"{CHAIN_COMMAND}: chain " not in footer(s),
            timeout=TIMEOUT,
            what="the chain's end, and the footer without its progress",
        )
        (screens / "after.txt").write_text(after)
        assert f"{CHAIN_COMMAND}: chain " not in footer(after), cli.describe(after)


def tui_lines(cli: TmuxClaude) -> list[str]:
    """The plugin's lines in the interactive session's transcript, in order."""
    prefix = f"{CHAIN_COMMAND}: "
    return [t.removeprefix(prefix) for t in system_texts(cli.transcript_entries()) if t.startswith(prefix)]


@interactive
def test_typed_in_the_tui_a_nested_chain_runs_a_cycle_runs_nothing_and_a_config_step_is_refused(
    plugin: Path, tmp_path: Path
) -> None:
    """One interactive session, as a person would type them one after another:
    - `/ship Bob` (`ship = /check $1 && /review done`, `check = /review $1 || /review fixed`) runs /check as a
      function: `/review Bob`, then `/review done`, never the fallback;
    - `/spin` (`spin -> spin2 -> spin`) answers with the cycle and asks the model nothing;
    - `/prep` (`/config ... ; /context`) skips the `/config` step with its line, runs /context after the `;`, and
      leaves every settings file as it was."""
    project = project_with(
        tmp_path,
        {
            "ship": NESTED_SHIP,
            "check": CHECK_FILE,
            "spin": "/spin2\n",
            "spin2": "/spin\n",
            "prep": "/config permissionMode=acceptEdits model=opus ; /context\n",
        },
    )
    iso = Isolation.create(tmp_path / "iso")
    before = settings_files(iso.home, project)
    screens = tmp_path / "screens"
    screens.mkdir()
    with contextlib.ExitStack() as stack:
        stack.callback(iso.cleanup)
        model = stack.enter_context(ModelServer([text("Bob reviewed."), text("done reviewed.")]))
        cli = stack.enter_context(
            TmuxClaude(cwd=project, isolation=iso, model=model, plugin_dirs=[plugin], lifetime=240)
        )

        def until_ended(after: int, what: str) -> list[str]:
            """The plugin's lines from the `after`th on, once one of them ends a chain."""
            cli.wait_for(lambda _s: ended_line(tui_lines(cli)[after:]), timeout=TIMEOUT, what=what)
            return tui_lines(cli)[after:]

        cli.send("/ship Bob")
        nested = until_ended(0, "the nested chain's end")
        (screens / "nested.txt").write_text(cli.screen(history=True))
        assert nested == [
            step_text(1, 3, Step("review", "Bob")),
            nested[1],
            step_text(3, 3, Step("review", "done", "&&")),
            nested[3],
        ], nested
        assert nested[1].startswith("skipped 2/3: /review fixed ("), nested
        prompts = handed(model)
        assert len(prompts) == 2 and review("Bob") in prompts[0] and review("done") in prompts[1], prompts

        asked = len(model.requests)
        cli.send("/spin")
        cycle = cli.wait_for("spin -> spin2 -> spin", timeout=TIMEOUT, what="the cycle's answer")
        (screens / "cycle.txt").write_text(cycle)
        assert "cycle" in cycle, cli.describe(cycle)

        cli.send("/prep")
        refused = until_ended(len(nested), "the refused /config step, /context and the chain's end")
        (screens / "config-refused.txt").write_text(cli.screen(history=True))
        assert refused[0].startswith("skipped 1/2: /config permissionMode=acceptEdits model=opus ("), refused
        assert "prep" in refused[0], refused
        assert refused[1:] == [step_text(2, 2, Step("context", "", ";")), "ended: 1 succeeded, 0 failed, 1 skipped"]
        # The cycle and the refused chain asked the model nothing (a side request such as a title aside).
        assert [r for r in model.requests[asked:] if r.kind == "main"] == [], model.describe()
        assert settings_files(iso.home, project) == before
