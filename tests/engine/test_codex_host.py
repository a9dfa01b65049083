"""The Codex host on the real Codex CLI (the pinned 0.169.0's `codex app-server`), offline against the scripted
Responses API: chains of skills and built-ins, a failing turn, an interrupt, the fail tool, a self-command and a
refused one, and a pipe, each as the harness sees it and as the model was asked."""

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import pytest

from slashkit.adapters.codex import CodexSession, Raw
from slashkit.adapters.harness.events import ChainEnded, CommandStarted, Event, Line, Notice, Output, StepEnded
from slashkit.core.texts import BUILTIN_TOOL_NAME, FAIL_TOOL
from tests.support.codex_cli import CodexHome, codex_binary, codex_home, gone_within
from tests.support.openai_server import OpenAIServer, Turn, http_error, text, tool_call

GREET = "Greet the person named in the arguments, in one line."


def run(go: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(go(), 180))


async def chain(session: CodexSession, typed: str, *, by_person: bool = True) -> list[Event]:
    """What the harness sees of `typed`, without Codex's own notifications."""
    return [event async for event in session.run(typed, by_person=by_person) if not isinstance(event, Raw)]


def lines(events: Sequence[Event]) -> list[str]:
    return [event.text for event in events if isinstance(event, Line)]


def ended(events: Sequence[Event]) -> ChainEnded:
    [last] = [event for event in events if isinstance(event, ChainEnded)]
    return last


def with_codex(
    script: Sequence[Turn],
    body: Callable[[CodexSession, OpenAIServer, CodexHome], Coroutine[Any, Any, None]],
    **kw: Any,
) -> None:
    binary = codex_binary()

    async def go() -> None:
        with OpenAIServer(script, summary="SUMMARY OF THE THREAD") as model, codex_home(model) as home:
            home.skill("greet", GREET)
            home.skill("shout", "Say the arguments in capitals.")
            async with CodexSession(binary, cwd=str(home.project), env=home.env, **kw) as session:
                await body(session, model, home)

    run(go)


def test_two_skill_steps_run_as_two_turns_of_one_thread_each_with_its_skill() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob && /greet Carol")
        assert lines(events) == ["1/2: /greet Bob", "2/2: /greet Carol", "all 2 command(s) ran"]
        outputs = [(e.index, e.text) for e in events if isinstance(e, Output)]
        assert outputs == [(1, "Hello Bob!"), (2, "Hello Carol!")]
        assert ended(events).ok
        first, second = model.main_requests
        assert {first.headers["thread-id"]} == {second.headers["thread-id"]} == {session.thread}
        assert "Bob" in first.all_text() and "<name>greet</name>" in first.all_text() and GREET in first.all_text()
        # Codex adds the skill's instructions as a user message after the turn's text (measured on 0.169.0)
        assert "Hello Bob!" in second.all_text() and second.user_texts()[-2].startswith("Carol")

    with_codex([text("Hello Bob!"), text("Hello Carol!")], body)


def test_three_steps_with_compact_between_run_in_order_and_the_summary_carries_on() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob && /compact && /greet Carol")
        assert lines(events) == ["1/3: /greet Bob", "2/3: /compact", "3/3: /greet Carol", "all 3 command(s) ran"]
        assert [r.kind for r in model.requests] == ["main", "summary", "main"]
        assert "SUMMARY OF THE THREAD" in model.requests[2].all_text()

    with_codex([text("Hello Bob!"), text("Hello Carol!")], body)


def test_a_failing_turn_stops_the_chain_with_codexs_reason() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob && /greet Carol")
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert step.how == "error" and "model is down" in step.output
        assert lines(events)[0] == "1/2: /greet Bob"
        assert lines(events)[-1].startswith("stopped after /greet")
        assert not ended(events).ok
        assert len(model.main_requests) == 1

    with_codex([http_error(400, "model is down")], body)


@pytest.mark.parametrize("typed", ["/greet Bob && /greet Carol", "/review look && /review again"])
def test_interrupt_cancels_the_running_step_and_the_chain(typed: str) -> None:
    """A review's running turn is not the one review/start answered with (measured on 0.169.0): it is
    interrupted all the same."""
    hold = threading.Event()

    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        async def interrupt_once_asked() -> None:
            while not model.main_requests:
                await asyncio.sleep(0.05)
            await session.interrupt()

        await session.interrupt()  # nothing runs yet: nothing happens
        interrupting = asyncio.create_task(interrupt_once_asked())
        events = await chain(session, typed)
        await interrupting
        hold.set()
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert step.how == "aborted"
        assert not ended(events).ok
        assert len(model.main_requests) == 1

    with_codex([text("never said", hold=hold)], body)


def test_the_fail_tool_fails_the_step_and_the_model_reads_the_answer() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob && /greet Carol")
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert step.how == "failed"
        assert not ended(events).ok and "/greet Carol" not in " ".join(lines(events))
        first = model.main_requests[0]
        assert FAIL_TOOL in first.tool_names
        assert "stopped" in model.main_requests[1].function_outputs()[0].lower()

    with_codex([tool_call(FAIL_TOOL, {"reason": "no Bob here"}), text("I reported it.")], body)


def test_a_self_command_queues_compact_which_runs_once_the_turn_ended() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "please compact the thread")
        started = [e for e in events if isinstance(e, CommandStarted)]
        assert [(e.step.command, e.queued) for e in started] == [("compact", True)]
        assert [r.kind for r in model.requests] == ["main", "main", "summary"]
        assert "compact" in model.requests[1].function_outputs()[0]
        assert not [e for e in events if isinstance(e, Notice)]

    with_codex([tool_call(BUILTIN_TOOL_NAME, {"command": "compact"}), text("Queued.")], body, self_commands=True)


def test_a_self_command_for_model_is_refused_and_nothing_is_queued() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "switch to another model")
        assert not [e for e in events if isinstance(e, CommandStarted)]
        answer = model.main_requests[1].function_outputs()[0]
        assert "/model" in answer and "user" in answer
        assert [r.kind for r in model.requests] == ["main", "main"]

    script: list[Turn] = [tool_call(BUILTIN_TOOL_NAME, {"command": "model", "args": "o3"}), text("I may not.")]
    with_codex(script, body, self_commands=True)


def test_a_self_command_of_a_mebibyte_is_refused_unechoed_and_the_running_chain_goes_on() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob && /greet Carol")
        assert ended(events).ok and lines(events)[-1] == "all 2 command(s) ran"
        assert not [e for e in events if isinstance(e, CommandStarted)]
        answer = model.main_requests[1].function_outputs()[0]
        assert len(answer) < 200 and answer.startswith("args is 1,048,576 characters"), answer[:300]
        assert [r.kind for r in model.requests] == ["main", "main", "main"]

    label = {"command": "compact", "args": "x" * (1 << 20)}
    script: list[Turn] = [tool_call(BUILTIN_TOOL_NAME, label), text("Hello Bob!"), text("Hello Carol!")]
    with_codex(script, body, self_commands=True)


def test_a_pipe_hands_the_first_steps_answer_to_the_next() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob | /shout")
        assert ended(events).ok
        assert "Hello Bob!" in model.main_requests[1].user_texts()[-2]

    with_codex([text("Hello Bob!"), text("HELLO BOB!")], body)


def test_an_unknown_command_fails_its_step_with_a_line_and_sends_nothing() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/nosuch x && /greet Bob")
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert step.how == "failed" and step.output.startswith("/nosuch is neither a Codex built-in")
        assert not ended(events).ok and model.requests == []

    with_codex([], body)


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/new", "/new was not run: only the person may run /new, and this came from harness"),
        ("/compact && /new", "skipped 2/2: /new (only the person may run /new, and this came from harness)"),
        (
            "/compact && /model o3",
            "skipped 2/2: /model o3 (only the person may run /model, and this came from harness)",
        ),
    ],
)
def test_a_chain_from_outside_the_person_runs_no_restricted_built_in(typed: str, said: str) -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        thread = session.thread
        events = await chain(session, typed, by_person=False)
        assert session.thread == thread
        shown = [*lines(events), *(e.text for e in events if isinstance(e, Output))]
        assert said in shown
        assert [r.kind for r in model.requests] == (["summary"] if typed.startswith("/compact") else [])

    with_codex([], body)


def test_review_runs_as_a_review_turn_and_new_starts_a_fresh_thread_for_the_steps_after_it() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        first = session.thread
        events = await chain(session, "/greet Bob && /review check the greeting && /new && /greet Carol")
        assert ended(events).ok
        outputs = [e.text for e in events if isinstance(e, Output)]
        assert outputs[:2] == ["Hello Bob!", "No issues found."]
        greet, review, after = model.main_requests
        # measured on 0.169.0: the review runs in a thread of its own, holding the instructions alone
        assert review.last_user_text() == "check the greeting" and review.headers["thread-id"] != first
        assert greet.headers["thread-id"] == first != session.thread == after.headers["thread-id"]
        assert "Hello Bob!" not in after.all_text()

    with_codex([text("Hello Bob!"), text("No issues found."), text("Hello Carol!")], body)


def test_the_approval_policy_is_passed_through_and_slashkit_answers_no_approval_with_yes() -> None:
    """With Codex's `untrusted` policy a command of the model's asks for approval: slashkit has no person to ask,
    so it declines, and the command does not run."""

    async def body(session: CodexSession, model: OpenAIServer, home: CodexHome) -> None:
        model.add(tool_call("exec_command", {"cmd": f"touch {home.root / 'marker'}"}), text("done"))
        events = await chain(session, "/greet Bob")
        assert [e.how for e in events if isinstance(e, StepEnded)] == ["answer"]
        assert not (home.root / "marker").exists()
        assert "rejected by user" in model.main_requests[1].function_outputs()[0]

    with_codex([], body, approval_policy="untrusted", sandbox="workspace-write")


def test_or_and_semicolon_decide_as_bash_after_a_failed_turn() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "/greet Bob || /greet Carol ; /shout done")
        assert [e.how for e in events if isinstance(e, StepEnded)] == ["error", "answer", "answer"]
        assert ended(events).ok and len(model.main_requests) == 3

    with_codex([http_error(400, "down"), text("Hello Carol!"), text("DONE")], body)


def test_codex_dying_mid_turn_fails_the_step_with_one_line_and_leaves_nothing_running() -> None:
    hold = threading.Event()

    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        server = session._server
        assert server is not None

        async def kill_once_asked() -> None:
            while not model.main_requests:
                await asyncio.sleep(0.05)
            os.killpg(server.pid, signal.SIGKILL)  # the node launcher and the native server it runs

        killing = asyncio.create_task(kill_once_asked())
        events = await chain(session, "/greet Bob && /greet Carol")
        await killing
        hold.set()
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert step.how == "failed" and "\\n" not in step.output
        assert step.output == "codex app-server was killed by signal 9"
        assert not ended(events).ok
        assert gone_within(server.pid)
        again = await chain(session, "/greet Dan")
        assert [e.how for e in again if isinstance(e, StepEnded)] == ["failed"]

    with_codex([text("never said", hold=hold)], body)


def test_a_prompt_alone_ends_as_a_step_shown_as_its_text_not_as_a_slash_command() -> None:
    async def body(session: CodexSession, model: OpenAIServer, _: CodexHome) -> None:
        events = await chain(session, "please do it")
        [step] = [e for e in events if isinstance(e, StepEnded)]
        assert (step.label, step.how, step.output) == ("please do it", "answer", "Done.")
        assert not [e for e in events if isinstance(e, CommandStarted)]

    with_codex([text("Done.")], body)


def test_a_saved_chain_of_the_project_runs_by_name_and_a_restricted_step_from_it_is_refused() -> None:
    async def body(session: CodexSession, model: OpenAIServer, home: CodexHome) -> None:
        folder = home.project / ".slashkit" / "chains"
        folder.mkdir(parents=True)
        (folder / "ship.md").write_text("/greet $1 ; /model o3 ; /greet $2\n")
        events = await chain(session, "/ship Bob Carol")
        assert lines(events) == [
            "1/3: /greet Bob",
            "skipped 2/3: /model o3 (only the person may run /model, and this came from saved chain ship)",
            "3/3: /greet Carol",
            "ended: 2 succeeded, 0 failed, 1 skipped",
        ]
        first, second = model.main_requests
        assert "Bob" in first.all_text() and second.user_texts()[-2].startswith("Carol")

    with_codex([text("Hello Bob!"), text("Hello Carol!")], body)


def test_a_shell_step_the_person_typed_runs_in_the_project_and_its_status_decides() -> None:
    """`!cmd` on the Codex host (issue 34): run by the harness in-process, in the session's folder, not through
    Codex's tools (so no approval is asked); a failing one goes on by its operators, and one from outside the
    person's typing runs nothing."""

    async def body(session: CodexSession, model: OpenAIServer, home: CodexHome) -> None:
        events = await chain(session, "/greet Bob && !touch made.txt && !sh -c 'echo oops; exit 3' || /greet Carol")
        assert (home.project / "made.txt").exists()
        assert lines(events) == [
            "1/4: /greet Bob",
            "2/4: !touch made.txt",
            "3/4: !sh -c 'echo oops; exit 3'",
            "oops",
            "!sh failed: it exited with status 3",
            "4/4: /greet Carol",
            "ended: 3 succeeded, 1 failed, 0 skipped",
        ]
        assert [(e.index, e.text) for e in events if isinstance(e, Output)] == [(1, "Hello Bob!"), (4, "Hello Carol!")]
        assert len(model.main_requests) == 2

        refused = await chain(session, "/greet Dan && !touch theirs.txt", by_person=False)
        assert not (home.project / "theirs.txt").exists()
        assert any("a shell step runs only on the person's word" in line for line in lines(refused)), refused

    with_codex([text("Hello Bob!"), text("Hello Carol!"), text("Hello Dan!")], body)
