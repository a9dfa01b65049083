"""slashkit's opencode plugin in the real opencode 1.18.33 (`opencode serve`, offline, a scripted model): each
chain as the person sees it (the transcript lines the model never sees) and as the model is handed it."""

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest

from slashkit.adapters.bridge.shim import ANSWER_TIMEOUT_MS
from slashkit.adapters.opencode.install import FAIL_TOOL, config_dir, install
from slashkit.core.chain import Step
from slashkit.core.texts import CHAIN_UNAVAILABLE, FAIL_NOTHING_WAITS, fail_note
from tests.support import helper_folders
from tests.support.openai_server import OpenAIServer, Turn, http_error, text, tool_call
from tests.support.opencode_cli import OpencodeServer, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

GREET = "Greet $1 warmly."
COMMANDS = {"greet": GREET, "review": "Review $ARGUMENTS carefully."}


class Run:
    """One opencode server with the plugin installed, its model, and one session."""

    def __init__(self, server: OpencodeServer, model: OpenAIServer) -> None:
        self.server = server
        self.model = model
        self.session = server.create_session()

    def lines(self) -> list[str]:
        return self.server.ignored_lines(self.session)

    def asked(self) -> list[str]:
        """What each main request handed the model last, in order."""
        return [r.last_user_text() for r in self.model.main_requests]

    def quiet(self) -> None:
        self.server.wait_quiet(self.session, quiet=2.5)


#: The opt-out of the shared helper: a helper per session, whose life the tests that name it follow. The tests that
#: an event starts no helper name it too: with the shared helper, the one the plugin's start opened for the menu of
#: saved chains stays its idle time, while which events go to the helper is the same either way.
OWN_HELPER: Final = {"SLASHKIT_HELPER": "session"}


def _start(
    tmp_path: Path, script: Sequence[Turn], python: str = sys.executable, env: Mapping[str, str] | None = None
) -> Iterator[Run]:
    with OpenAIServer(script) as model:
        project = write_project(tmp_path / "project", model.url, COMMANDS)
        install(config_dir(project), python)
        with OpencodeServer(project, tmp_path, env_extra=env or {}) as server:
            yield Run(server, model)


Start = Callable[..., Run]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """`start(script, python=...)` gives a Run; everything stops when the test ends."""
    runs: list[Iterator[Run]] = []

    def begin(script: Sequence[Turn], python: str = sys.executable, env: Mapping[str, str] | None = None) -> Run:
        made = _start(tmp_path / f"run{len(runs)}", script, python, env)
        runs.append(made)
        return next(made)

    yield begin
    for made in runs:
        for _ in made:
            pass


def test_a_two_step_chain_runs_the_second_command_once_the_first_turn_ended(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello Carol")])
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    note = fail_note(1, 2, [Step("greet", "Carol")], FAIL_TOOL)
    assert run.asked() == [f"Greet Bob warmly.\n\n{note}", "Greet Carol warmly."]
    # The note names the fail tool as opencode gives it to the model.
    assert FAIL_TOOL in run.model.main_requests[0].tool_names
    assert f"call the {FAIL_TOOL} tool" in note
    assert run.lines() == ["1/2: /greet Bob", "2/2: /greet Carol", "all 2 command(s) ran"]


def test_a_three_step_chain_runs_every_step_in_order(start: Start) -> None:
    run = start([text("Hello Bob"), text("Review done"), text("Hello Dan")])
    run.server.command(run.session, "greet", "Bob && /review the diff && /greet Dan").wait()
    run.quiet()
    assert [a.split("\n\n")[0] for a in run.asked()] == [
        "Greet Bob warmly.",
        "Review the diff carefully.",
        "Greet Dan warmly.",
    ]
    assert run.lines() == [
        "1/3: /greet Bob",
        "2/3: /review the diff",
        "3/3: /greet Dan",
        "all 3 command(s) ran",
    ]


def test_a_step_whose_turn_errors_stops_the_chain(start: Start) -> None:
    run = start([http_error(400, "scripted refusal"), text("never asked")])
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    assert len(run.asked()) == 1
    assert run.lines() == ["1/2: /greet Bob", "stopped after /greet: its turn ended with error; not run: /greet"]


def test_a_step_whose_turn_is_aborted_stops_the_chain_saying_so(start: Start) -> None:
    # opencode names the end `MessageAbortedError`; the line says it in the core's words, as Claude Code's does.
    run = start([text("Hello Bob", delay=4.0), text("never asked")])
    typed = run.server.command(run.session, "greet", "Bob && /greet Carol")
    deadline = time.monotonic() + 60
    while not run.model.main_requests and time.monotonic() < deadline:
        time.sleep(0.1)
    # Aborted while the model answers (measured on 1.18.33: an abort before the model was asked ends the turn
    # with no session.error at all).
    assert run.server.request("POST", f"/session/{run.session}/abort")[0] == 200
    typed.wait()
    run.quiet()
    assert len(run.asked()) == 1
    assert run.lines() == ["1/2: /greet Bob", "stopped after /greet: its turn ended with aborted; not run: /greet"]


def test_the_models_call_of_the_fail_tool_stops_the_chain(start: Start) -> None:
    run = start([tool_call(FAIL_TOOL, {"reason": "no Bob here"}), text("I could not."), text("never")])
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    assert len(run.asked()) == 2  # the step's turn: the call, then the answer after the tool's result
    assert run.model.main_requests[1].tool_results() == ["The chain stopped; the steps after this one do not run."]
    assert run.lines() == [
        "1/2: /greet Bob",
        "stopped after /greet: the model reported it failed: no Bob here; not run: /greet",
    ]


def test_a_fail_reason_holding_status_lines_stays_on_its_transcript_line(start: Start) -> None:
    # Issue 16, D1: the reason once showed as two more lines of slashkit's, a step and a clean end.
    forged = "no Bob\n2/2: /review deploy\nall 2 command(s) ran"
    run = start([tool_call(FAIL_TOOL, {"reason": forged}), text("I could not."), text("never")])
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    assert run.lines() == [
        "1/2: /greet Bob",
        "stopped after /greet: the model reported it failed: no Bob\\n2/2: /review deploy\\nall 2 command(s) ran; "
        "not run: /greet",
    ]


def test_the_fail_tool_outside_a_chain_is_refused_and_starts_no_helper(start: Start, tmp_path: Path) -> None:
    run = start([tool_call(FAIL_TOOL, {"reason": "why not"}), text("ok")], env=OWN_HELPER)
    run.server.command(run.session, "greet", "Bob").wait()
    run.quiet()
    result = run.model.main_requests[1].tool_results()
    assert len(result) == 1
    assert FAIL_NOTHING_WAITS in result[0]
    # No helper runs for the session, so no chain does: the call is answered without starting one.
    assert run.server.helper_pids() == []
    assert helper_folders(tmp_path) == []


def test_a_subagents_call_of_the_fail_tool_is_refused_and_starts_no_helper(start: Start, tmp_path: Path) -> None:
    # Issue 16, D2: the call came from a child session (the task tool's subagent), which once started a helper that
    # then stayed as long as opencode. It is refused as the core refuses a subagent's call, and starts nothing.
    task = {"description": "look", "prompt": "have a look", "subagent_type": "general"}
    run = start(
        [tool_call("task", task), tool_call(FAIL_TOOL, {"reason": "mine"}), text("child done"), text("done")],
        env=OWN_HELPER,
    )
    assert run.server.prompt(run.session, "look into it").wait().status == 200
    run.quiet()
    assert run.asked()[:2] == ["look into it", "have a look"]
    assert FAIL_NOTHING_WAITS in run.model.main_requests[2].tool_results()[0]
    assert run.server.helper_pids() == []
    assert helper_folders(tmp_path) == []


def test_a_prompt_the_person_sends_while_a_step_runs_cancels_the_rest(start: Start) -> None:
    run = start([text("Hello Bob", delay=4.0), text("Sure.")])
    typed = run.server.command(run.session, "greet", "Bob && /greet Carol")
    run.server.wait_event("session.status", run.session)
    run.server.prompt(run.session, "never mind, tell me a joke").wait()
    typed.wait()
    run.quiet()
    assert run.asked()[-1] == "never mind, tell me a joke"
    assert "Greet Carol warmly." not in run.asked()
    assert run.lines() == ["1/2: /greet Bob", "cancelled; not run: /greet"]


def test_slash_chain_gives_the_status_and_turns_chains_off_and_on(start: Start) -> None:
    run = start([text("Hello Bob")])
    for word in ("", "off"):
        run.server.command(run.session, "slash-chain", word).wait()
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    run.server.command(run.session, "slash-chain", "on").wait()
    assert run.lines() == [
        "on · no chain runs",
        "off: the engine runs the first command alone, as it does without the mod",
        "on: /a && /b runs /b once /a ended well",
    ]
    # Off: the command runs exactly as typed (the last placeholder takes the rest), and no model turn answered
    # /slash-chain itself.
    assert run.asked() == ["Greet Bob && /greet Carol warmly."]


def test_slash_chain_stop_cancels_the_running_chain(start: Start) -> None:
    run = start([text("Hello Bob", delay=4.0)])
    typed = run.server.command(run.session, "greet", "Bob && /greet Carol")
    run.server.wait_event("session.status", run.session)
    stop = run.server.command(run.session, "slash-chain", "stop").wait()
    typed.wait()
    run.quiet()
    assert run.asked() == [f"Greet Bob warmly.\n\n{fail_note(1, 2, [Step('greet', 'Carol')], FAIL_TOOL)}"]
    # Claude Code shows the core's log line and the command's answer, the same text, in two places; opencode has
    # one place for both: the line is written once.
    assert run.lines() == ["1/2: /greet Bob", "cancelled; not run: /greet"]
    # Measured on 1.18.33: a command answered without a model turn can only throw, and its caller gets a 500
    # (opencode issue #25916); the TUI sends commands without looking at the answer.
    assert stop.status == 500


def test_a_single_command_is_untouched_and_starts_no_python(start: Start, tmp_path: Path) -> None:
    run = start([text("Hello Bob")], env=OWN_HELPER)
    run.server.command(run.session, "greet", "Bob").wait()
    run.quiet()
    assert run.asked() == ["Greet Bob warmly."]
    assert run.lines() == []
    assert helper_folders(tmp_path) == []  # the helper's socket folder, under the isolated TMPDIR


def test_without_its_helper_the_typed_command_runs_as_typed_with_one_line_saying_why(start: Start) -> None:
    run = start([text("Hello")], python="/nonexistent/python3")
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    assert run.asked() == ["Greet Bob && /greet Carol warmly."]
    [line] = run.lines()
    assert line.startswith("unavailable: the helper did not start: ")
    assert line.endswith("; commands run as typed until it is back")


def unavailable(why: str) -> str:
    """The one line the plugin writes when its helper cannot answer."""
    return CHAIN_UNAVAILABLE.replace("{why}", why)


#: A stand-in for the helper's interpreter: it writes down its pid, then either never says READY (`mute`), or says
#: READY on a socket of its own, takes the first connection, and is killed there (`killed`) or never answers
#: (`slow`); it leaves after 30 s, whoever waits.
FAKE_HELPER = """#!{python}
import os, signal, socket, sys, tempfile, time
with open({pid_file!r}, "w") as written:
    written.write(str(os.getpid()))
if {mode!r} == "mute":
    time.sleep(30)
    sys.exit(0)
folder = tempfile.mkdtemp(prefix="fake-helper-")
path = os.path.join(folder, "s")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(8)
print("READY " + path, flush=True)
connection, _ = listener.accept()
if {mode!r} == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(30)
"""


def ends_soon(pid: int) -> bool:
    """Tells whether the process is gone (or a zombie) within 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("mode", ["killed", "slow", "mute"])
def test_a_helper_killed_silent_or_mute_lets_the_typed_command_run_as_typed_with_one_line_and_is_ended(
    start: Start, tmp_path: Path, mode: str
) -> None:
    fake = tmp_path / "fake-python"
    pid_file = tmp_path / "fake.pid"
    fake.write_text(FAKE_HELPER.format(python=sys.executable, pid_file=str(pid_file), mode=mode))
    fake.chmod(0o755)
    run = start([text("Hello")], python=str(fake), env=OWN_HELPER)
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    assert run.asked() == ["Greet Bob && /greet Carol warmly."]
    [line] = run.lines()
    if mode == "killed":
        # Whatever the transport said first (measured on opencode 1.18.33: Bun's "The socket connection was closed
        # unexpectedly", or ECONNREFUSED when its client connects again), in one line with no developer's hint.
        assert line.startswith("unavailable: ") and line.endswith(unavailable("").split(":", 1)[1].lstrip()), line
        assert "verbose" not in line and line.count("unavailable") == 1, line
    elif mode == "slow":
        # The bridge's bound on an answer (docs/bridge.md, "Errors").
        assert line == unavailable(f"the helper did not answer ChainTyped within {ANSWER_TIMEOUT_MS} ms")
    else:
        assert line == unavailable("the helper did not start within 5000 ms")
    # Given up, it is ended, READY or not (it would otherwise sleep on for 30 s, or as long as opencode runs).
    assert ends_soon(int(pid_file.read_text()))


@contextlib.contextmanager
def stopped_helper(run: Run) -> Iterator[int]:
    """The session's helper, after a chain ran, stopped with SIGSTOP (it then acts on no SIGTERM, and its parent
    watch is frozen too); killed when the test ends, whatever it asserted."""
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    [pid] = run.server.helper_pids()
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_stopped_helper_the_plugin_gives_up_on_is_killed_after_a_grace(start: Start) -> None:
    # Issue 16, D3: SIGTERM alone left it stopped for as long as opencode ran.
    run = start([text("ok") for _ in range(4)], env=OWN_HELPER)
    with stopped_helper(run) as pid:
        run.server.command(run.session, "greet", "Dan && /greet Eve").wait()
        assert unavailable(f"the helper did not answer ChainTyped within {ANSWER_TIMEOUT_MS} ms") in run.lines()
        assert ends_soon(pid)


def test_a_stopped_helper_does_not_outlive_opencode(start: Start, tmp_path: Path) -> None:
    # Issue 16, D3: opencode ended, and its stopped helper stayed, stopped, for good.
    run = start([text("ok") for _ in range(2)], env=OWN_HELPER)
    opencode = run.server._process
    assert opencode is not None
    with stopped_helper(run) as pid:
        run.server.stop()
        assert ends_soon(pid)
    # opencode still ends on SIGTERM as it does without the plugin: by the signal, at once.
    assert opencode.returncode == -signal.SIGTERM
    # It left as a helper leaves: its socket's folder, under the isolated TMPDIR, is gone too.
    assert helper_folders(tmp_path) == []


def test_compact_as_a_step_compacts_the_session_then_the_chain_goes_on(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello Carol")])
    run.server.command(run.session, "greet", "Bob && /compact && /greet Carol").wait()
    run.quiet()
    assert [r.kind for r in run.model.requests if r.kind != "title"] == ["main", "summary", "main"]
    assert run.server.of_type("session.compacted", run.session) != []
    assert run.lines() == ["1/3: /greet Bob", "2/3: /compact", "3/3: /greet Carol", "all 3 command(s) ran"]


def test_a_fallback_after_a_failed_step_runs_and_a_semicolon_goes_on_either_way(start: Start) -> None:
    # Every landed host runs the operators (README, "Operators"): `||` runs its step only after a failure, `;`
    # runs its step whatever the last status was.
    run = start([http_error(400, "scripted refusal"), text("Hello Carol"), text("Hello Dan")])
    run.server.command(run.session, "greet", "Bob || /greet Carol ; /greet Dan").wait()
    run.quiet()
    asked = [a.split("\n\n")[0] for a in run.asked()]
    assert asked == ["Greet Bob warmly.", "Greet Carol warmly.", "Greet Dan warmly."]
    assert run.lines() == [
        "1/3: /greet Bob",
        "/greet failed: its turn ended with error",
        "2/3: /greet Carol",
        "3/3: /greet Dan",
        "ended: 2 succeeded, 1 failed, 0 skipped",
    ]


def test_a_fallback_after_a_step_that_ended_well_is_skipped(start: Start) -> None:
    run = start([text("Hello Bob"), text("never asked")])
    run.server.command(run.session, "greet", "Bob || /greet Carol").wait()
    run.quiet()
    assert [a.split("\n\n")[0] for a in run.asked()] == ["Greet Bob warmly."]
    assert run.lines() == [
        "1/2: /greet Bob",
        "skipped 2/2: /greet Carol (the last command succeeded)",
        "ended: 1 succeeded, 0 failed, 1 skipped",
    ]


def test_a_pipe_hands_the_models_answer_to_the_next_steps_prompt(start: Start) -> None:
    # The typed command's answer comes with its turn's end; a later step's with the turn its run waited on.
    run = start([text("Hello Bob, nice to meet you"), text("Bob is greeted"), text("All good")])
    run.server.command(run.session, "greet", "Bob | /review the greeting | /review").wait()
    run.quiet()
    asked = run.asked()
    assert len(asked) == 3
    assert asked[1].startswith("Review the greeting\n\nHello Bob, nice to meet you carefully.")
    assert asked[2].startswith("Review Bob is greeted carefully.")
    assert run.lines() == ["1/3: /greet Bob", "2/3: /review the greeting", "3/3: /review", "all 3 command(s) ran"]


def test_two_sessions_of_one_opencode_run_their_chains_side_by_side(start: Start) -> None:
    # One opencode serves many sessions: each has its own link in the bridge's client, and its own session in the
    # person's one shared helper. Were the two sessions one there, the second chain would replace the first.
    run = start([text("ok", delay=1.5) for _ in range(4)])
    other = run.server.create_session()
    first = run.server.command(run.session, "greet", "Bob && /greet Carol")
    second = run.server.command(other, "greet", "Dan && /greet Eve")
    first.wait()
    second.wait()
    run.quiet()
    run.server.wait_quiet(other, quiet=2.5)
    assert sorted(a.split("\n\n")[0] for a in run.asked()) == [
        "Greet Bob warmly.",
        "Greet Carol warmly.",
        "Greet Dan warmly.",
        "Greet Eve warmly.",
    ]
    assert run.lines() == ["1/2: /greet Bob", "2/2: /greet Carol", "all 2 command(s) ran"]
    assert run.server.ignored_lines(other) == ["1/2: /greet Dan", "2/2: /greet Eve", "all 2 command(s) ran"]
    assert len(run.server.helper_pids()) == 1


def test_a_typed_line_led_by_compact_compacts_then_runs_the_next_command(start: Start) -> None:
    # The TUI sends `/compact && /greet Carol` as a plain prompt (its built-ins are no server commands): the prompt
    # becomes the compaction the TUI's /compact asks for, and the model never gets the line's text.
    run = start([text("Hello Bob"), text("Hello Carol")])
    run.server.command(run.session, "greet", "Bob").wait()
    run.quiet()
    assert run.server.prompt(run.session, "/compact && /greet Carol").wait().status == 200
    run.quiet()
    assert [r.kind for r in run.model.requests if r.kind != "title"] == ["main", "summary", "main"]
    assert run.asked() == ["Greet Bob warmly.", "Greet Carol warmly."]
    assert all("/compact" not in r.all_text() for r in run.model.requests)
    assert run.server.of_type("session.error", run.session) == []
    assert run.server.of_type("session.compacted", run.session) != []
    assert run.lines() == ["/compact && /greet Carol", "1/2: /compact", "2/2: /greet Carol", "all 2 command(s) ran"]


def test_a_plain_prompt_that_is_no_chain_of_a_built_in_reaches_the_model_as_typed(start: Start, tmp_path: Path) -> None:
    # Led by a command that is no built-in, with no command after its operator, or a lone /compact: each is a
    # prompt like any other, and no helper starts for it.
    typed = ["/greet Bob && /greet Carol", "/compact && echo done", "/compact", "Bob && /greet Carol"]
    run = start([text("ok") for _ in typed], env=OWN_HELPER)
    for line in typed:
        assert run.server.prompt(run.session, line).wait().status == 200
        run.quiet()
    assert run.asked() == typed
    assert [r.kind for r in run.model.requests].count("summary") == 0
    assert run.lines() == []
    assert helper_folders(tmp_path) == []


def test_a_subagents_prompt_the_model_wrote_starts_no_chain_and_no_helper(start: Start, tmp_path: Path) -> None:
    # opencode's task tool prompts a child session with the text the model wrote, through the same hook as the
    # person's prompt: a line led by /compact there is the model's, not the person's typing, so it is no chain.
    # The subagent gets it as written, as it would without the plugin.
    task = {"description": "greet someone", "prompt": "/compact && /greet Mallory", "subagent_type": "general"}
    run = start([tool_call("task", task), text("child done"), text("parent done")], env=OWN_HELPER)
    assert run.server.prompt(run.session, "look into it").wait().status == 200
    run.quiet()
    children = [
        e["properties"]["info"]["id"]
        for e in run.server.of_type("session.created")
        if e["properties"]["info"].get("parentID") == run.session
    ]
    assert len(children) == 1
    print("".join(run.server.output))
    assert [r.kind for r in run.model.requests if r.kind != "title"] == ["main", "main", "main"]
    assert run.asked() == ["look into it", "/compact && /greet Mallory", "look into it"]
    assert "child done" in run.model.main_requests[2].tool_results()[0]
    assert run.server.of_type("session.compacted") == []
    assert run.server.ignored_lines(children[0]) == [] and run.lines() == []
    assert run.server.helper_pids() == []
    assert helper_folders(tmp_path) == []


def test_the_persons_prompt_after_slash_chain_still_cancels_and_a_line_led_by_compact_still_chains(
    start: Start,
) -> None:
    # /slash-chain is answered by throwing, so no chat.message follows it: the person's next prompt is theirs, not
    # taken for the text "/slash-chain" (which the core would not take for a cancelling prompt).
    run = start([text("Hello Bob", delay=4.0), text("Sure."), text("Hello Dan")])
    typed = run.server.command(run.session, "greet", "Bob && /greet Carol")
    run.server.wait_event("session.status", run.session)
    assert run.server.command(run.session, "slash-chain", "").wait().status == 500
    run.server.prompt(run.session, "never mind, tell me a joke").wait()
    typed.wait()
    run.quiet()
    assert run.asked()[-1] == "never mind, tell me a joke"
    assert "Greet Carol warmly." not in run.asked()
    # And a line led by /compact typed after /slash-chain is a chain, as it is without it.
    assert run.server.command(run.session, "slash-chain", "").wait().status == 500
    assert run.server.prompt(run.session, "/compact && /greet Dan").wait().status == 200
    run.quiet()
    assert [r.kind for r in run.model.requests if r.kind != "title"] == ["main", "main", "summary", "main"]
    assert run.asked()[-1] == "Greet Dan warmly."
    assert run.lines() == [
        "1/2: /greet Bob",
        "on · 1/2 /greet Bob, waiting for its turn",
        "cancelled; not run: /greet",
        "on · no chain runs",
        "/compact && /greet Dan",
        "1/2: /compact",
        "2/2: /greet Dan",
        "all 2 command(s) ran",
    ]


def test_with_a_helper_per_session_a_deleted_session_ends_its_helper_and_no_other(start: Start) -> None:
    # With SLASHKIT_HELPER=session each session has its own helper; opencode deleting the session ends it (the
    # plugin asks it to exit), and leaves the other session's helper running.
    run = start([text("ok") for _ in range(4)], env=OWN_HELPER)
    other = run.server.create_session()
    for session in (run.session, other):
        run.server.command(session, "greet", "Bob && /greet Carol").wait()
        run.server.wait_quiet(session, quiet=2.5)
    both = run.server.helper_pids()
    assert len(both) == 2
    assert run.server.request("DELETE", f"/session/{run.session}")[0] == 200
    deadline = time.monotonic() + 10
    while len(run.server.helper_pids()) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    [left] = run.server.helper_pids()
    assert left in both
    assert run.server.request("DELETE", f"/session/{other}")[0] == 200
    deadline = time.monotonic() + 10
    while run.server.helper_pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.server.helper_pids() == []


def test_a_session_made_before_opencode_started_is_still_the_persons(tmp_path: Path) -> None:
    # A new opencode tells the plugin of no session it did not create: whether the session has a parent is read
    # from the stored session, and the person's own session still runs a line led by /compact as a chain.
    with OpenAIServer([text("Hello Bob"), text("Hello Carol")]) as model:
        project = write_project(tmp_path / "project", model.url, COMMANDS)
        install(config_dir(project), sys.executable)
        with OpencodeServer(project, tmp_path) as server:
            session = server.create_session()
            server.command(session, "greet", "Bob").wait()
            server.wait_quiet(session)
        with OpencodeServer(project, tmp_path) as server:
            assert server.prompt(session, "/compact && /greet Carol").wait().status == 200
            server.wait_quiet(session, quiet=2.5)
            assert [r.kind for r in model.requests if r.kind != "title"] == ["main", "summary", "main"]
            assert [r.last_user_text() for r in model.main_requests] == ["Greet Bob warmly.", "Greet Carol warmly."]
            assert server.ignored_lines(session)[-1] == "all 2 command(s) ran"


@pytest.mark.parametrize("helper_on_path", [True, False])
def test_a_plugin_that_names_no_interpreter_starts_slashkit_helper_from_path(
    tmp_path: Path, helper_on_path: bool
) -> None:
    # What `slashkit opencode install` writes by default, for a team to commit.
    folders = [os.path.dirname(sys.executable)] if helper_on_path else []
    with OpenAIServer([text("Hello Bob"), text("Hello Carol")]) as model:
        project = write_project(tmp_path / "project", model.url, COMMANDS)
        install(config_dir(project), None)
        env = {"PATH": os.pathsep.join([*folders, "/usr/bin", "/bin"])}
        with OpencodeServer(project, tmp_path, env_extra=env) as server:
            run = Run(server, model)
            run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
            run.quiet()
            lines = run.lines()
    if helper_on_path:
        assert lines == ["1/2: /greet Bob", "2/2: /greet Carol", "all 2 command(s) ran"]
    else:
        why = "no slashkit-helper on PATH: install slashkit there, or set SLASHKIT_PYTHON to a Python with it"
        assert lines == [unavailable(why)]
