"""The SDK host in the real Claude Code 2.1.328 (`cli_path`), offline against a scripted model: what a harness
iterating `SlashSession.run` sees, and what the model is handed."""

import asyncio
import dataclasses
import gc
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from slashkit.adapters.sdk import (
    ChainEnded,
    CommandStarted,
    Event,
    Line,
    Outcome,
    Output,
    SlashSession,
    StepEnded,
    Tally,
)
from slashkit.adapters.sdk.session import MAX_TYPED
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.texts import BUILTIN_TOOL_ID, FAIL_TOOL_ID, Key
from tests.support.claude_cli import cli_available
from tests.support.model_server import ModelServer, RecordedRequest, Turn, http_error, text, tool_use
from tests.support.sdk_session import options, visible

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed (scripts/setup.sh)"),
]

T = TypeVar("T")


def play(
    tmp: Path, script: Sequence[Turn], typed: Sequence[str], *, self_commands: bool = False, buffer: int | None = None
) -> tuple[list[list[Event]], ModelServer]:
    """Types each text into one session and returns what each `run` yielded (the SDK's messages left out)."""

    async def scenario(session: SlashSession) -> list[list[Event]]:
        return [visible([e async for e in session.run(t)]) for t in typed]

    return in_session(tmp, script, scenario, self_commands=self_commands, buffer=buffer)


def in_session(
    tmp: Path,
    script: Sequence[Turn],
    scenario: Callable[[SlashSession], Awaitable[T]],
    *,
    self_commands: bool = False,
    buffer: int | None = None,
) -> tuple[T, ModelServer]:
    """`buffer`: the harness's own `max_buffer_size`, the longest line the SDK reads (None: slashkit's)."""
    with ModelServer(script, idle_timeout=60) as model:

        async def main() -> T:
            given = dataclasses.replace(options(tmp, model), max_buffer_size=buffer)
            async with SlashSession(given, self_commands=self_commands) as session:
                return await asyncio.wait_for(scenario(session), timeout=60)

        return asyncio.run(main()), model


def lines(events: Sequence[Event]) -> list[str]:
    """The transcript lines a person reads: each step's line and the chain's last one."""
    return [e.text for e in events if isinstance(e, Line)]


def ran(total: int) -> Outcome:
    return Outcome("success", False, Tally(succeeded=total))


#: A first step that did not end well, with one step after it: the chain stopped.
STOPPED_FIRST = Outcome("failure", False, Tally(failed=1, skipped=1))


def tool_answer(request: RecordedRequest) -> tuple[str, bool]:
    """The text of the last tool result the model was handed, and whether it was an error."""
    result = request.tool_results()[-1]
    content = result.get("content")
    blocks = content if isinstance(content, list) else [{"text": content}]
    return "".join(str(b.get("text")) for b in blocks), result.get("is_error") is True


def outcome(events: Sequence[Event]) -> Outcome:
    ended = [e.outcome for e in events if isinstance(e, ChainEnded)]
    assert len(ended) == 1, events
    return ended[0]


def test_a_chain_of_local_commands_shows_each_step_then_its_output(tmp_path: Path) -> None:
    (events,), model = play(tmp_path, [], ["/cost && /context && /usage"])
    assert lines(events) == ["1/3: /cost", "2/3: /context", "3/3: /usage", "all 3 command(s) ran"]
    assert outcome(events) == ran(3)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Line", "StepStarted", "Output", "StepEnded"] * 3 + ["Line", "ChainEnded"]
    ended = [e for e in events if isinstance(e, StepEnded)]
    assert [e.how for e in ended] == ["ran"] * 3
    assert "Estimated cost" in ended[0].output and "Context Usage" in ended[1].output
    assert model.main_requests == []


def test_prompt_steps_show_the_models_answers_and_the_note_reaches_the_model(tmp_path: Path) -> None:
    (events, alone), model = play(
        tmp_path,
        [text("Hello Bob!"), text("Hi Carol!"), text("Hi Dave!")],
        ["/greet Bob && /greet Carol", "/greet Dave"],
    )
    assert [e for e in events if isinstance(e, Output)] == [Output(1, "Hello Bob!"), Output(2, "Hi Carol!")]
    assert [(e.how, e.output) for e in events if isinstance(e, StepEnded)] == [
        ("answer", "Hello Bob!"),
        ("answer", "Hi Carol!"),
    ]
    assert outcome(events) == ran(2)
    assert alone == [
        CommandStarted(Step("greet", "Dave")),
        Output(0, "Hi Dave!"),
        StepEnded(0, Step("greet", "Dave"), "answer", "Hi Dave!"),
    ]
    first, second, third = model.main_requests
    note = texts.fail_note(1, 2, [Step("greet", "Carol")])
    # The note comes after the step's own prompt, as the plugin's does; the last step and a lone command get none.
    assert "Greet Bob warmly." in first.all_text() and note in first.all_text()
    assert first.all_text().index("Greet Bob warmly.") < first.all_text().rindex(note)
    assert "[slash-chain]" not in second.last_user_text() and second.all_text().count("[slash-chain] This is step") == 1
    assert third.all_text().count("[slash-chain] This is step") == 1


def test_an_api_error_stops_the_chain(tmp_path: Path) -> None:
    (events,), _ = play(tmp_path, [http_error(500, "scripted outage")], ["/greet Bob && /cost"])
    ended = [e for e in events if isinstance(e, StepEnded)]
    assert [e.how for e in ended] == ["error"]
    assert "scripted outage" in ended[0].output
    assert outcome(events) == STOPPED_FIRST
    assert lines(events)[-1] == "stopped after /greet: its turn ended with error; not run: /cost"


def test_the_fail_tool_stops_the_chain_and_refuses_when_no_step_waits(tmp_path: Path) -> None:
    script: list[Turn] = [
        tool_use(FAIL_TOOL_ID, {"reason": "there is no Bob"}),
        text("I could not."),
        tool_use(FAIL_TOOL_ID, {"reason": "nothing"}),
        text("ok"),
    ]
    (events, _), model = play(tmp_path, script, ["/greet Bob && /cost", "/greet Carol"])
    assert outcome(events) == STOPPED_FIRST
    assert lines(events)[-1] == texts.stopped_text(
        Step("greet", "Bob"), "the model reported it failed: there is no Bob", [Step("cost", "")]
    )
    assert [e.how for e in events if isinstance(e, StepEnded)] == ["failed"]
    requests = model.main_requests
    assert [tool_answer(requests[1]), tool_answer(requests[3])] == [
        (texts.FAIL_STOPPED, False),
        (texts.FAIL_NOTHING_WAITS, True),
    ]
    assert FAIL_TOOL_ID in model.main_requests[0].tool_names


#: The SDK's reader takes no line over its max_buffer_size (measured on claude-agent-sdk 0.2.184), here the
#: SDK's own default, 1 MiB, which a harness may pass.
UNREADABLE = r"Claude Code sent a message the SDK cannot read \(Buffer size \d+ exceeds limit 1048576\)"


def test_an_answer_over_the_sdks_buffer_fails_its_step_with_a_line_and_every_later_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [text("x" * (1100 * 1024))]
    left: list[str] = []
    monkeypatch.setattr(
        sys, "unraisablehook", lambda leftover: left.append(f"{leftover.object!r}: {leftover.exc_value!r}")
    )
    (events, after), _ = play(tmp_path, script, ["/greet Bob && /cost", "/cost"], buffer=1 << 20)
    gc.collect()  # what the session left is collected now, its loop closed, not in some later test
    # The session closed the CLI's pipe on its own loop: nothing of it is left to close once the loop is gone.
    assert left == []
    assert outcome(events) == STOPPED_FIRST
    assert re.fullmatch(f"stopped after /greet: it failed: {UNREADABLE}; not run: /cost", lines(events)[-1])
    # The SDK reads nothing more of the session: the next query fails at once, saying why.
    ended = [e for e in after if isinstance(e, StepEnded)]
    assert [e.how for e in ended] == ["failed"] and re.fullmatch(UNREADABLE, ended[0].output)


def test_a_text_over_the_bound_is_refused_before_it_is_sent_and_one_at_it_runs(tmp_path: Path) -> None:
    async def scenario(session: SlashSession) -> list[Event]:
        with pytest.raises(
            ValueError, match=r"^the text is 10,000,016 characters, over the 100,000 one query may hold$"
        ):
            [e async for e in session.run("/cost " + "y" * 10_000_000 + " && /usage")]
        # Control characters, which JSON writes in 6 bytes each: Claude Code's echo of the text still fits the SDK.
        at_bound = "/cost " + "\x01" * (MAX_TYPED - 16) + " && /usage"
        return visible([e async for e in session.run(at_bound)])

    events, model = in_session(tmp_path, [], scenario)
    assert lines(events)[1:] == ["2/2: /usage", "all 2 command(s) ran"]
    assert model.main_requests == []


def test_an_interrupt_stops_the_chain_at_its_step(tmp_path: Path) -> None:
    async def scenario(session: SlashSession) -> list[Event]:
        async def interrupt_once_asked() -> None:
            while not model.main_requests:
                await asyncio.sleep(0.02)
            await session.interrupt()

        interrupting = asyncio.create_task(interrupt_once_asked())
        events = visible([e async for e in session.run("/greet Bob && /cost")])
        await interrupting
        return events

    with ModelServer([text("Hello ... Bob", delay=5)], idle_timeout=60) as model:

        async def main() -> list[Event]:
            async with SlashSession(options(tmp_path, model)) as session:
                return await asyncio.wait_for(scenario(session), timeout=60)

        events = asyncio.run(main())
    assert outcome(events) == STOPPED_FIRST
    assert lines(events)[-1] == "stopped after /greet: its turn ended with aborted; not run: /cost"


def test_a_prompt_the_harness_sends_while_a_chain_runs_cancels_it(tmp_path: Path) -> None:
    async def scenario(session: SlashSession) -> tuple[list[Event], list[Event]]:
        async def chain() -> list[Event]:
            return visible([e async for e in session.run("/greet Bob && /cost && /context")])

        running = asyncio.create_task(chain())
        # The model is asked once the step's prompt hook fired: the step waits on its turn.
        while not model.main_requests:
            await asyncio.sleep(0.02)
        prompt = visible([e async for e in session.run("never mind")])
        return await running, prompt

    with ModelServer([text("Hello Bob!", delay=1), text("Fine.")], idle_timeout=60) as model:

        async def main() -> tuple[list[Event], list[Event]]:
            async with SlashSession(options(tmp_path, model)) as session:
                return await asyncio.wait_for(scenario(session), timeout=60)

        events, prompt = asyncio.run(main())
    assert outcome(events) == Outcome("failure", True, Tally(skipped=2))
    assert lines(events) == ["1/3: /greet Bob", "cancelled; not run: /cost, /context"]
    assert [e.output for e in prompt if isinstance(e, StepEnded)] == ["Fine."]


def test_an_unknown_command_stops_the_chain_before_it_reaches_the_model(tmp_path: Path) -> None:
    (events,), model = play(tmp_path, [], ["/cost && /nosuch x && /usage"])
    assert lines(events)[-1] == "stopped after /nosuch: it failed: Unknown command: /nosuch; not run: /usage"
    assert model.main_requests == []


def test_an_alias_is_a_known_command(tmp_path: Path) -> None:
    (events,), _ = play(tmp_path, [], ["/stats && /cost"])
    assert outcome(events) == ran(2)


def test_a_clear_inside_a_chain_does_not_lose_it(tmp_path: Path) -> None:
    (events,), model = play(tmp_path, [text("Hello Bob!"), text("Hi Carol!")], ["/greet Bob && /clear && /greet Carol"])
    assert outcome(events) == ran(3)
    assert [e.text for e in events if isinstance(e, Output) and e.index == 3] == ["Hi Carol!"]
    assert "Greet Bob" not in model.main_requests[1].all_text()


def test_the_status_and_off_answer_as_every_host_does(tmp_path: Path) -> None:
    async def scenario(session: SlashSession) -> tuple[str, str, list[Event], str]:
        status = session.status()
        off = session.off()
        typed = visible([e async for e in session.run("/cost && /usage")])
        return status, off, typed, session.on()

    (status, off, typed, on), _ = in_session(tmp_path, [], scenario)
    assert (status, off, on) == ("on · no chain runs", texts.OFF_TEXT, texts.ON_TEXT)
    # Off: the command runs as typed, one command with the rest as its arguments.
    assert [type(e).__name__ for e in typed] == ["CommandStarted", "Output", "StepEnded"]


def test_a_self_command_queues_compact_and_runs_it_once_the_turn_ended(tmp_path: Path) -> None:
    script: list[Turn] = [tool_use(BUILTIN_TOOL_ID, {"command": "/compact"}), text("It is queued.")]
    (events,), model = play(tmp_path, script, ["please compact the conversation"], self_commands=True)
    assert [e for e in events if not isinstance(e, Output)] == [
        StepEnded(0, Step("", "please compact the conversation"), "answer", "It is queued."),
        Line(texts.text("en", Key.LOG_QUEUED, queued="/compact")),
        Line(texts.text("en", Key.LOG_RUNS, queued="/compact")),
        CommandStarted(Step("compact", ""), queued=True),
        StepEnded(0, Step("compact", ""), "ran", ""),
    ]
    queued = texts.text("en", Key.SKILL_QUEUED, queued="/compact")
    assert tool_answer(model.main_requests[1]) == (queued, False)
    assert model.of_kind("summary"), model.describe()
    offered = model.main_requests[0].tool_names
    assert (offered.count(BUILTIN_TOOL_ID), offered.count(FAIL_TOOL_ID)) == (1, 1), offered


def test_an_oversized_self_command_is_refused_unechoed_and_the_running_chain_goes_on(tmp_path: Path) -> None:
    asked = {"command": "compact", "args": "x" * (1 << 20)}
    script: list[Turn] = [tool_use(BUILTIN_TOOL_ID, asked), text("Hello Bob!")]
    (events,), model = play(tmp_path, script, ["/greet Bob && /cost"], self_commands=True)
    assert outcome(events) == ran(2), model.describe()
    assert not [e for e in events if isinstance(e, CommandStarted)]
    answer, refused = tool_answer(model.main_requests[1])
    assert refused and answer.startswith("args is 1,048,576 characters") and len(answer) < 200, answer[:300]


def test_a_self_command_never_runs_model_and_the_tool_is_off_by_default(tmp_path: Path) -> None:
    script: list[Turn] = [tool_use(BUILTIN_TOOL_ID, {"command": "model", "args": "opus"}), text("You set it.")]
    (events,), model = play(tmp_path, script, ["switch to opus"], self_commands=True)
    assert not [e for e in events if isinstance(e, CommandStarted)]
    refusal = texts.text("en", Key.DENY_PERSON_ONLY, name="model")
    assert tool_answer(model.main_requests[1]) == (refusal, True)
    (_,), plain = play(tmp_path, [text("ok")], ["hello"])
    assert BUILTIN_TOOL_ID not in plain.main_requests[0].tool_names
    assert FAIL_TOOL_ID in plain.main_requests[0].tool_names


def test_operators_decide_as_in_every_host_and_a_pipe_hands_the_answer_to_the_next_query(tmp_path: Path) -> None:
    (fallback, piped), model = play(
        tmp_path,
        [text("Hello Bob!"), text("Said hello to the greeting.")],
        ["/nosuch || /cost ; /context", "/greet Bob | /greet"],
    )
    assert lines(fallback) == [
        "1/3: /nosuch",
        "/nosuch failed: it failed: Unknown command: /nosuch",
        "2/3: /cost",
        "3/3: /context",
        "ended: 2 succeeded, 1 failed, 0 skipped",
    ]
    assert outcome(fallback) == Outcome("success", False, Tally(succeeded=2, failed=1))
    assert lines(piped) == ["1/2: /greet Bob", "2/2: /greet", "all 2 command(s) ran"]
    assert "Hello Bob!" in model.main_requests[1].last_user_text()
