"""The slash-chain plugin in the real, interactive Claude Code 2.1.328 (tmux), offline, against a scripted model.

People type chains into the TUI, so these tests do too: each starts a fresh session with the plugin, types a chain
into the prompt box, acts as the person would (closes a pane with Escape, sends a prompt while a step's turn runs,
asks `/slash-chain` for the status) and reads what the person sees: the screen, and the session's transcript (the
plugin's lines, the commands that ran). The model server shows what the model was handed. Every expected line is
built with `slashkit.core.texts`, never typed here.

Measured on 2.1.328 while writing these:

- A plugin's `$.ui.log` line shows on screen as `● slash-chain: <line>` and is written to the transcript at once
  as a `system` entry (subtype `informational`) whose content is `slash-chain: <line>`.
- Typed, `/cost` is the usage pane's alias: the engine hands the hook the command `usage`, so the chain's first
  line is `1/2: /usage`. The pane takes the whole input (its last line reads `←/→ to switch · Esc to close`;
  text typed meanwhile goes nowhere) until Escape closes it. This built-in pane raises no `ui.open`/`ui.close`:
  the typed command's run (the hook's `next`) resolves only when it closes, which is what holds the chain.
- A pane a plugin opens with `$.ui.open({focus: true, closeOnEscape: true})` from its command is placed beside
  the conversation (a column after `│`) and raises `ui.open` and, on Escape, `ui.close`: the path the chain's
  own pane wait takes (`tests/engine` has no other host for it: `/diff`'s panel is placed without focus, so a
  chain goes on past it). The prompt still takes typed text while that pane is open, so `/slash-chain` can be
  asked, and Escape at the empty prompt closes the pane.
- `/context` (~1-2 s: it counts tokens) leaves a `system` `local_command` entry `<command-name>/context
  </command-name>` and prints `Context usage`.
- A prompt typed while a turn runs is queued (`Queued · ctrl+x ctrl+s to send now`), and `prompt.submit` fires
  when it is queued, not when it runs: the plugin's `cancelled` line shows while the step's turn still runs. The
  queued prompt runs as a turn of its own once that turn ends.
- `/slash-chain` (an immediate command) answers at once, as a `system` `local_command` entry
  `<local-command-stdout>slash-chain: <status></local-command-stdout>`, shown under the command. Typed while a
  turn runs, it is answered at once too (the engine's debug log says the hook settled) but written to the screen
  and the transcript only once the turn ended; so that test lets the held turn go only after the debug log shows
  the hook settled.
- The plugin's fail tool is called in the default (auto) permission mode without any safety check.
- A session with the plugin starts its Python helper as it starts, to read the project's saved chains: the helper's
  start is the debug log line `$.process.spawn (slash-chain): …`, and it runs as `python -m
  slashkit.adapters.claude_code.helper`; one helper serves the session's chains.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from slashkit.adapters.claude_code.plugins import plugin_dir
from slashkit.core.chain import Step
from slashkit.core.texts import (
    CHAIN_COMMAND,
    FAIL_STOPPED,
    FAIL_TOOL_ID,
    added_text,
    cancelled_text,
    done_text,
    dropped_text,
    fail_note,
    failed_why,
    status_text,
    step_text,
    stopped_text,
)
from tests.support.claude_cli import Isolation, cli_available, single_module_plugin, validate
from tests.support.model_server import ModelServer, RecordedRequest, Turn, text, tool_use
from tests.support.tmux_claude import TMUX, TmuxClaude, system_texts, transcript_texts

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed"),
    pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed"),
]

#: The project command a step hands the model: `.claude/commands/x.md`.
X_BODY: Final = "Do the x step: $ARGUMENTS"
X_GO: Final = Step("x", "go")
USAGE: Final = Step("usage", "")
CONTEXT: Final = Step("context", "")

#: The usage pane's last line while it is open (2.1.328).
PANE_OPEN: Final = "Esc to close"
#: The command of the test's own plugin that opens a focused pane (PANE_MOD), and what that pane shows.
PROBE: Final = Step("pane-probe", "")
PROBE_SHOWN: Final = "The probe pane is open"
#: What /context prints on screen (2.1.328).
CONTEXT_SHOWN: Final = "Context usage"
#: The debug log's line when the plugin starts its helper (2.1.328).
HELPER_SPAWNED: Final = f"$.process.spawn ({CHAIN_COMMAND})"
#: The debug log's line when the `command.run` hooks of the plugins, the chain's among them, finished (2.1.328:
#: `hooks module slash-chain@inline command.run settled in 41.0ms …`, other plugins named beside it).
COMMAND_SETTLED: Final = re.compile(
    rf"hooks module [^\n]*\b{re.escape(CHAIN_COMMAND)}@inline\b[^\n]* command\.run settled"
)
#: A plugin line on screen: `● slash-chain: 1/2: /usage`, cut where a pane beside the conversation starts.
SCREEN_LINE: Final = re.compile(
    rf"^\u25cf {re.escape(CHAIN_COMMAND)}: (?P<line>[^\u2502\n]*?)\s*(?:\u2502.*)?$", re.MULTILINE
)
#: A command that ran leaves an entry (user or system) holding `<command-name>/name</command-name>`.
COMMAND_NAME: Final = re.compile(r"<command-name>(/[^<]*)</command-name>")

#: Bounded waits: a session is ready in ~1 s, a chain of local steps ends in ~2 s, a scripted turn in < 1 s.
TIMEOUT: Final = 30.0
#: How long "nothing happens" is watched: a step run from a timer started ~20-100 ms after what it waited on.
QUIET: Final = 2.5


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slash-chain plugin, laid out with this interpreter, validated by the CLI."""
    folder = plugin_dir(CHAIN_COMMAND, tmp_path_factory.mktemp("marketplace"))
    checked = validate(folder)
    assert checked.ok, checked.describe()
    return folder


#: A plugin of the test's own whose command opens a focused pane that Escape closes, as a plugin's dialog does.
PANE_MOD: Final = """\
import type { Register } from 'claude-code'

export const register: Register = on => {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    await $.command.register({ name: 'pane-probe', description: 'Opens a focused pane (slashkit test)' })
    return started
  })
  on('command.run', { command: 'pane-probe' }, async $ => {
    const opened = await $.ui.open({ id: 'probe', title: 'Probe', focus: true, closeOnEscape: true, rows: 4 })
    return { text: opened.isPlaced ? 'pane placed' : `pane not placed: ${opened.reason}` }
  })
  on('ui.render', { component: 'Pane' }, () => ({ type: 'Text', children: ['PANE_TEXT'] }))
}
""".replace("PANE_TEXT", PROBE_SHOWN)


@pytest.fixture(scope="module")
def pane_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PANE_MOD as a plugin folder, validated by the CLI."""
    return single_module_plugin(tmp_path_factory.mktemp("pane-probe"), "pane-probe", PANE_MOD)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a command that hands the model a prompt: `/x <args>`."""
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / ".claude" / "commands" / "x.md").write_text(f"---\ndescription: A test step\n---\n{X_BODY}\n")
    return folder


# --- one session -------------------------------------------------------------------------------------


@dataclass
class Run:
    """One interactive session with the plugin, and the scripted model it talks to."""

    cli: TmuxClaude
    model: ModelServer

    def describe(self) -> str:
        return f"transcript lines: {self.lines()}\n{self.cli.describe(self.cli.screen(history=True))}"

    # what the person sees

    def lines(self) -> list[str]:
        """The plugin's lines in the transcript, in order."""
        prefix = f"{CHAIN_COMMAND}: "
        return [t.removeprefix(prefix) for t in system_texts(self.cli.transcript_entries()) if t.startswith(prefix)]

    def screen(self) -> str:
        return self.cli.screen(history=True)

    def screen_lines(self) -> list[str]:
        """The plugin's lines on screen and in the scrollback, each once (the TUI redraws after a pane)."""
        return list(dict.fromkeys(m["line"] for m in SCREEN_LINE.finditer(self.screen())))

    def ran(self) -> list[str]:
        """The commands that ran, in order (`/x`, `/context`, `/slash-chain`)."""
        found: list[str] = []
        for entry in self.cli.transcript_entries():
            content = entry.get("content") if entry.get("type") == "system" else None
            if entry.get("type") == "user":
                content = (entry.get("message") or {}).get("content")
            if isinstance(content, str):
                found += COMMAND_NAME.findall(content)
        return found

    def until(self, condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{self.describe()}")
            time.sleep(0.1)

    def wait_lines(self, expected: Sequence[str]) -> None:
        """Waits until the transcript holds exactly `expected` and the screen shows each of them."""
        wanted = list(expected)
        self.until(
            lambda: self.lines() == wanted and self.screen_lines() == wanted,
            f"the plugin's lines {wanted} in the transcript and on screen",
        )

    def stays(self, expected: Sequence[str], also: Callable[[str], bool] = lambda _s: True) -> None:
        """For QUIET seconds, the transcript holds exactly `expected`, the screen shows no other line, and
        `also` holds for the screen."""
        wanted = list(expected)
        deadline = time.monotonic() + QUIET
        while time.monotonic() < deadline:
            lines, screen = self.lines(), self.screen()
            shown = list(dict.fromkeys(m["line"] for m in SCREEN_LINE.finditer(screen)))
            assert lines == wanted and shown == wanted and also(screen), (
                f"expected only {wanted}; transcript {lines}, screen {shown}\n{self.describe()}"
            )
            time.sleep(0.2)

    # the model's side

    def mains(self, count: int) -> list[RecordedRequest]:
        """Waits for `count` main-loop requests and returns them."""
        self.until(lambda: len(self.model.main_requests) >= count, f"{count} main request(s)")
        return self.model.main_requests[:count]

    def answered(self, answer: str) -> None:
        """Waits until the model's `answer` is in the transcript and its turn ended."""

        def ended() -> bool:
            entries = self.cli.transcript_entries()
            after = [i for i, e in enumerate(entries) if answer in transcript_texts([e], "assistant")]
            return bool(after) and any(e.get("subtype") == "turn_duration" for e in entries[after[0] :])

        self.until(ended, f"the answer {answer!r} and the end of its turn")

    # processes

    def helpers(self) -> list[int]:
        """The slashkit helpers running for the CLI (tests.support.tmux_claude)."""
        return self.cli.helpers()

    def settled_commands(self) -> int:
        """How many of the plugin's `command.run` hooks finished, by the engine's debug log."""
        return len(COMMAND_SETTLED.findall(self.cli.debug_log()))

    def status_answers(self) -> list[str]:
        """What `/slash-chain` answered, from the transcript."""
        prefix, suffix = f"<local-command-stdout>{CHAIN_COMMAND}: ", "</local-command-stdout>"
        texts = system_texts(self.cli.transcript_entries())
        return [t.removeprefix(prefix).removesuffix(suffix) for t in texts if t.startswith(prefix)]


@contextlib.contextmanager
def session(
    tmp_path: Path, project: Path, plugin: Path, script: Sequence[Turn] = (), *, more: Sequence[Path] = ()
) -> Iterator[Run]:
    """A fresh interactive CLI with the plugin (and `more` plugins); its tmux server and the model server stop on
    the way out."""
    iso = Isolation.create(tmp_path)
    plugins = [plugin, *more]
    try:
        with (
            ModelServer(script) as model,
            TmuxClaude(cwd=project, isolation=iso, model=model, plugin_dirs=plugins, lifetime=180) as cli,
        ):
            yield Run(cli, model)
    finally:
        iso.cleanup()


@contextlib.contextmanager
def held() -> Iterator[threading.Event]:
    """A turn the model answers only once the test lets go; let go on the way out, whatever happened."""
    hold = threading.Event()
    try:
        yield hold
    finally:
        hold.set()


# --- a step that opens a pane ------------------------------------------------------------------------


def test_a_step_that_opens_a_pane_waits_until_the_person_closes_it(tmp_path: Path, project: Path, plugin: Path) -> None:
    """`/cost && /context`: the usage pane opens, `1/2: /usage` is the only line for as long as it stays open
    (screen and transcript), /context does not run; Escape closes it, then /context runs and the chain ends."""
    first = step_text(1, 2, USAGE)
    with session(tmp_path, project, plugin) as run:
        run.cli.send("/cost && /context")
        run.wait_lines([first])
        run.cli.wait_for(PANE_OPEN, timeout=TIMEOUT)
        run.stays([first], also=lambda screen: PANE_OPEN in screen)
        assert "/context" not in run.ran(), run.describe()
        assert len(run.helpers()) == 1, f"a chain runs one helper: {run.helpers()}\n{run.describe()}"
        assert HELPER_SPAWNED in run.cli.debug_log(), run.describe()

        run.cli.send_keys("Escape")
        run.wait_lines([first, step_text(2, 2, CONTEXT), done_text(2)])
        assert run.ran() == ["/context"], run.describe()
        assert CONTEXT_SHOWN in run.screen(), run.describe()


def test_a_step_whose_command_opens_a_focused_pane_waits_for_it_and_the_status_says_so(
    tmp_path: Path, project: Path, plugin: Path, pane_plugin: Path
) -> None:
    """`/pane-probe && /context`, where /pane-probe opens another plugin's focused pane: `1/2: /pane-probe` is the
    only line while the pane is open; `/slash-chain` typed meanwhile answers `on · 1/2 /pane-probe, waiting for its
    pane to close` and cancels nothing; Escape closes the pane, then /context runs and the chain ends."""
    first = step_text(1, 2, PROBE)
    status = status_text(True, (1, 2, PROBE, "pane"))
    with session(tmp_path, project, plugin, more=[pane_plugin]) as run:
        run.cli.send("/pane-probe && /context")
        run.wait_lines([first])
        run.cli.wait_for(PROBE_SHOWN, timeout=TIMEOUT)
        run.cli.send(f"/{CHAIN_COMMAND}")
        run.until(lambda: run.status_answers() == [status], f"the status {status!r} in the transcript")
        run.stays([first], also=lambda screen: PROBE_SHOWN in screen and status in screen)
        assert "/context" not in run.ran(), run.describe()

        run.cli.send_keys("Escape")
        run.wait_lines([first, step_text(2, 2, CONTEXT), done_text(2)])
        assert PROBE_SHOWN not in run.cli.screen(), run.describe()
        assert run.ran() == ["/pane-probe", f"/{CHAIN_COMMAND}", "/context"], run.describe()
        assert run.status_answers() == [status], run.describe()


# --- a step whose turn runs --------------------------------------------------------------------------


def test_a_prompt_the_person_sends_while_a_steps_turn_runs_cancels_the_rest(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """`/x go && /context` while the model still works on /x: the person's prompt is queued, the chain says
    `cancelled; not run: /context` at once (the turn still runs), the prompt gets its own turn, and /context
    never runs."""
    first = step_text(1, 2, X_GO)
    cancelled = cancelled_text([CONTEXT])
    with held() as hold, session(tmp_path, project, plugin, [text("x done", hold=hold), text("Hello back.")]) as run:
        run.cli.send("/x go && /context")
        run.wait_lines([first])
        run.mains(1)
        run.cli.send("hello there")
        run.wait_lines([first, cancelled])
        assert len(run.model.main_requests) == 1, f"the step's turn ended before the cancel\n{run.describe()}"

        hold.set()
        run.answered("Hello back.")
        run.stays([first, cancelled])
        assert run.ran() == ["/x"], run.describe()
        _, prompt = run.mains(2)
        assert "hello there" in prompt.last_user_text(), run.describe()
        assert run.model.unscripted == 0, run.describe()


def test_a_step_whose_turn_ends_with_an_answer_runs_the_next_and_the_model_read_the_steps_note(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """`/x go && /context` answered: /context runs and the chain ends; the prompt /x handed the model ends with
    the step's note, and the model was offered the fail tool."""
    with session(tmp_path, project, plugin, [text("x done")]) as run:
        run.cli.send("/x go && /context")
        run.wait_lines([step_text(1, 2, X_GO), step_text(2, 2, CONTEXT), done_text(2)])
        (request,) = run.mains(1)
        handed = request.last_user_text()
        assert X_BODY.replace("$ARGUMENTS", X_GO.args) in handed, handed
        assert handed.rstrip().endswith(fail_note(1, 2, [CONTEXT])), handed
        assert FAIL_TOOL_ID in request.tool_names, request.tool_names
        assert run.ran() == ["/x", "/context"], run.describe()
        assert run.model.unscripted == 0, run.describe()


def test_the_models_fail_call_stops_the_chain(tmp_path: Path, project: Path, plugin: Path) -> None:
    """The model calls the fail tool during /x's turn: the chain stops there, the model reads that it stopped,
    and /context never runs."""
    reason = "the diff is empty"
    script: list[Turn] = [tool_use(FAIL_TOOL_ID, {"reason": reason}), text("Stopped the chain.")]
    expected = [step_text(1, 2, X_GO), stopped_text(X_GO, failed_why(reason), [CONTEXT])]
    with session(tmp_path, project, plugin, script) as run:
        run.cli.send("/x go && /context")
        run.wait_lines(expected)
        run.answered("Stopped the chain.")
        run.stays(expected)
        _, after = run.mains(2)
        results = after.tool_results()
        assert [r.get("content") for r in results] == [FAIL_STOPPED], results
        assert results[0].get("is_error") is not True, results
        assert run.ran() == ["/x"], run.describe()


def test_slash_chain_typed_while_a_chain_waits_shows_the_status_and_the_chain_goes_on(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """`/slash-chain` while /x's turn runs answers `on · 1/2 /x go, waiting for its turn` (shown once the turn
    ended), and the chain is not cancelled: /context runs after the answer."""
    status = status_text(True, (1, 2, X_GO, "turn"))
    with held() as hold, session(tmp_path, project, plugin, [text("x done", hold=hold)]) as run:
        run.cli.send("/x go && /context")
        run.wait_lines([step_text(1, 2, X_GO)])
        run.mains(1)
        settled = run.settled_commands()
        run.cli.send(f"/{CHAIN_COMMAND}")
        run.until(lambda: run.settled_commands() > settled, f"the /{CHAIN_COMMAND} hook to settle (debug log)")

        hold.set()
        run.wait_lines([step_text(1, 2, X_GO), step_text(2, 2, CONTEXT), done_text(2)])
        assert run.status_answers() == [status], run.describe()
        assert f"{CHAIN_COMMAND}: {status}" in run.screen(), run.describe()
        assert run.ran() == ["/x", f"/{CHAIN_COMMAND}", "/context"], run.describe()


def test_the_person_queues_a_step_and_drops_another_while_a_steps_turn_runs(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """While /x's turn runs, `/slash-chain add /x again` queues a step after the rest and `/slash-chain drop 2`
    takes /context out: the chain runs /x go, then /x again, and never /context (issue 35)."""
    again = Step("x", "again")
    with held() as hold, session(tmp_path, project, plugin, [text("x done", hold=hold), text("again")]) as run:
        run.cli.send("/x go && /context")
        run.wait_lines([step_text(1, 2, X_GO)])
        run.mains(1)

        def edit(words: str) -> None:
            # Its answer is shown once the turn ended: the turn goes on only after its hook settled (debug log).
            before = run.settled_commands()
            run.cli.send(f"/{CHAIN_COMMAND} {words}")
            run.until(lambda: run.settled_commands() > before, f"the /{CHAIN_COMMAND} {words} hook to settle")

        edit(f"add {again.name}")
        edit("drop 2")

        hold.set()
        run.wait_lines([step_text(1, 2, X_GO), step_text(2, 2, again), done_text(2)])
        assert run.status_answers() == [added_text(3, again), dropped_text(2, CONTEXT)], run.describe()
        assert run.ran() == ["/x", f"/{CHAIN_COMMAND}", f"/{CHAIN_COMMAND}", "/x"], run.describe()
        assert "Do the x step: again" in run.mains(2)[1].last_user_text(), run.describe()


# --- no chain ----------------------------------------------------------------------------------------


def test_single_commands_are_untouched(tmp_path: Path, project: Path, plugin: Path) -> None:
    """`/context`, then `/x go`, each alone: both run as without the plugin (no line, no note in the prompt), and
    no helper starts: the project and the person have no folder of saved chains, so the session's start asks the
    helper nothing, and a single command never reaches it."""
    with session(tmp_path, project, plugin, [text("x done")]) as run:
        run.cli.send("/context")
        run.until(lambda: run.ran() == ["/context"] and CONTEXT_SHOWN in run.screen(), "/context to run")
        run.cli.send("/x go")
        run.answered("x done")
        run.stays([])
        (request,) = run.mains(1)
        handed = request.last_user_text()
        assert handed.rstrip().endswith(X_BODY.replace("$ARGUMENTS", X_GO.args)), handed
        assert f"[{CHAIN_COMMAND}]" not in request.all_text(), handed
        assert run.ran() == ["/context", "/x"], run.describe()
        assert run.helpers() == [], run.describe()
        started = [line for line in run.cli.debug_log().splitlines() if HELPER_SPAWNED in line and " with " in line]
        assert started == [], run.describe()
