"""slashkit's pi extension in the real pi 1.6.0 (`pi -p --approve` in the project folder, and `--mode rpc` where a
second message is needed), offline against a scripted model: each chain as the person sees it (the transcript
lines, which pi never hands the model) and as the model is handed it."""

import functools
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from slashkit.adapters.pi.install import BUILTIN_TOOL, FAIL_TOOL, STORE_FILE
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.texts import CHAIN_UNAVAILABLE, fail_note
from tests.support.openai_server import OpenAIServer, Turn, http_error, text, tool_call
from tests.support.pi_cli import SUMMARIZING, Pi, Rpc, available

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
]

TEMPLATES = {"greet": "Say hello to $1", "bye": "Say bye to $1", "echo": "Echo: $ARGUMENTS"}


class Ran:
    """A `pi -p` run: its exit status, what it printed (the lines on stderr), and what the model was handed."""

    def __init__(self, status: int, stdout: str, stderr: str, model: OpenAIServer) -> None:
        self.status, self.stdout, self.lines = status, stdout, stderr.splitlines()
        self.model = model

    def asked(self) -> list[str]:
        """What each main request handed the model last, in order."""
        return [r.last_user_text() for r in self.model.requests if r.kind == "main"]

    def sent(self) -> str:
        """Everything the model was sent, over every request."""
        return "\n".join(json.dumps(r.body) for r in self.model.requests)


def _print(tmp_path: Path, line: str, script: Sequence[Turn], python: str = sys.executable) -> Ran:
    with OpenAIServer(script) as model:
        pi = Pi(tmp_path).setup(model.url, TEMPLATES)
        done = pi.run(line, SLASHKIT_PYTHON=python)
        return Ran(done.returncode, done.stdout, done.stderr, model)


@pytest.fixture
def rpc(tmp_path: Path) -> Iterator[tuple[Rpc, OpenAIServer]]:
    """pi in RPC mode, its first step's answer held 3 s so the person can act while it streams."""
    with OpenAIServer([text("hi Bob", delay=3), text("other"), text("bye")]) as model:
        session = Rpc(Pi(tmp_path).setup(model.url, TEMPLATES), SLASHKIT_PYTHON=sys.executable)
        try:
            yield session, model
        finally:
            session.close()


def _streaming(model: OpenAIServer) -> None:
    """Waits until the model was asked for the first step's answer, which it holds."""
    deadline = time.monotonic() + 20
    while not model.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)


def _answers(command_id: str, event: dict[str, object]) -> bool:
    return event.get("id") == command_id


def test_two_steps_each_template_with_its_own_arguments(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob && /bye Alice", [text("hello Bob"), text("bye Alice")])
    assert ran.status == 0
    assert ran.lines == ["1/2: /greet Bob", "2/2: /bye Alice", "all 2 command(s) ran"]
    note = fail_note(1, 2, [Step("bye", "Alice", "&&")], FAIL_TOOL)
    assert ran.asked() == [f"Say hello to Bob\n\n{note}", "Say bye to Alice"]
    # The transcript lines are the person's: the model never gets them.
    assert "1/2: /greet Bob" not in ran.sent()
    assert ran.stdout == "bye Alice\n"


def test_three_steps(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob && /echo two && /bye Carol", [text("a"), text("b"), text("c")])
    assert ran.lines[-1] == "all 3 command(s) ran"
    assert [a.split("\n")[0] for a in ran.asked()] == ["Say hello to Bob", "Echo: two", "Say bye to Carol"]


def test_a_failing_turn_stops_the_chain(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob && /bye Alice", [http_error(400)])
    assert ran.lines[:2] == ["1/2: /greet Bob", "stopped after /greet: its turn ended with error; not run: /bye"]
    assert len(ran.asked()) == 1


def test_the_fail_tool_stops_the_chain(tmp_path: Path) -> None:
    script: list[Turn] = [tool_call(FAIL_TOOL, {"reason": "no Bob here"}), text("I could not")]
    ran = _print(tmp_path, "/greet Bob && /bye Alice", script)
    assert ran.lines == [
        "1/2: /greet Bob",
        "stopped after /greet: the model reported it failed: no Bob here; not run: /bye",
    ]
    assert ran.model.requests[-1].tool_results() == ["The chain stopped; the steps after this one do not run."]


def test_operators_run_as_bash_would(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob || /bye Alice ; /echo end", [text("hi Bob"), text("end")])
    assert ran.lines == [
        "1/3: /greet Bob",
        "skipped 2/3: /bye Alice (the last command succeeded)",
        "3/3: /echo end",
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]
    assert ran.asked()[-1] == "Echo: end"


def test_a_pipe_hands_the_answer_on(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob | /echo", [text("hello there Bob"), text("echoed")])
    assert ran.lines[-1] == "all 2 command(s) ran"
    assert ran.asked()[-1] == "Echo: hello there Bob"


def test_compact_in_a_chain_runs_through_the_api(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/greet Bob && /compact && /bye Alice", [text("hi Bob"), text("THE SUMMARY"), text("bye")])
    assert ran.lines == ["1/3: /greet Bob", "2/3: /compact", "3/3: /bye Alice", "all 3 command(s) ran"]
    # The second request is compaction's (pi's summarization prompt, measured on 1.6.0), never a prompt `/compact`;
    # the third holds its summary in place of the first step.
    assert SUMMARIZING in ran.model.requests[1].all_text()
    assert all(not text.startswith("/compact") for r in ran.model.requests for text in r.user_texts())
    assert "THE SUMMARY" in ran.model.requests[2].all_text()
    assert ran.asked()[-1] == "Say bye to Alice"


def test_the_model_queues_compact_with_its_tool(tmp_path: Path) -> None:
    script: list[Turn] = [tool_call(BUILTIN_TOOL, {"command": "compact"}), text("queued"), text("THE SUMMARY")]
    ran = _print(tmp_path, "please compact the session", script)
    assert ran.status == 0
    assert ran.model.requests[1].tool_results() == [
        "/compact is queued and runs once this turn ends. End the turn now."
    ]
    # Once the turn ended, pi compacted: a third request, compaction's.
    assert len(ran.model.requests) == 3
    assert SUMMARIZING in ran.model.requests[2].all_text()
    assert "[Tool result]: /compact is queued" in ran.model.requests[2].last_user_text()


def test_two_calls_in_one_turn_queue_one_compact(tmp_path: Path) -> None:
    # Attack (issue 27): pi queued one /compact per allowed call, two in one turn.
    compact = tool_call(BUILTIN_TOOL, {"command": "compact"})
    ran = _print(tmp_path, "please compact the session", [compact, compact, text("queued"), text("THE SUMMARY")])
    assert ran.status == 0
    one_queued = texts.text("en", texts.Key.DENY_ONE_QUEUED, name="compact", queued="/compact")
    assert ran.model.requests[2].tool_results()[-1] == one_queued
    # One compaction once the turn ended, and no second.
    assert len(ran.model.requests) == 4
    assert SUMMARIZING in ran.model.requests[3].all_text()


def test_the_model_may_not_run_model(tmp_path: Path) -> None:
    ran = _print(tmp_path, "switch the model", [tool_call(BUILTIN_TOOL, {"command": "model", "args": "x"}), text("no")])
    assert ran.model.requests[1].tool_results() == [
        "/model was not run: only the user sets this session's model or effort. Ask them to type /model themselves."
    ]
    assert len(ran.model.requests) == 2


def test_without_the_helper_the_line_goes_on_as_typed(tmp_path: Path) -> None:
    ran = _print(tmp_path, "/echo Bob && /bye Alice", [text("hi")], python=str(tmp_path / "no-python"))
    assert len(ran.lines) == 1
    assert ran.lines[0].startswith(CHAIN_UNAVAILABLE.split("{why}")[0])
    assert ran.asked() == ["Echo: Bob && /bye Alice"]


def test_an_aborted_turn_stops_the_chain(rpc: tuple[Rpc, OpenAIServer]) -> None:
    session, model = rpc
    session.send({"type": "prompt", "message": "/greet Bob && /bye Alice"})
    _streaming(model)
    session.send({"type": "abort"})
    session.settled()
    time.sleep(1)
    assert session.lines() == ["1/2: /greet Bob", "stopped after /greet: its turn ended with aborted; not run: /bye"]
    assert len(model.requests) == 1


def test_a_prompt_the_person_sends_cancels_the_chain(rpc: tuple[Rpc, OpenAIServer]) -> None:
    session, model = rpc
    session.send({"type": "prompt", "message": "/greet Bob && /bye Alice"})
    _streaming(model)
    session.send({"type": "prompt", "message": "something else", "streamingBehavior": "followUp"})
    session.settled()
    time.sleep(1)
    assert session.lines() == ["1/2: /greet Bob", "cancelled; not run: /bye"]
    assert [r.last_user_text() for r in model.requests] == [model.requests[0].last_user_text(), "something else"]


def test_slash_chain_gives_the_status_and_turns_chains_off(rpc: tuple[Rpc, OpenAIServer]) -> None:
    session, model = rpc
    for n, line in enumerate(("/slash-chain", "/slash-chain off", "/slash-chain", "/slash-chain on")):
        session.send({"type": "prompt", "message": line, "id": str(n)})
        session.until(functools.partial(_answers, str(n)))
    time.sleep(1)
    lines = session.lines()
    assert len(lines) == 4
    assert "on" in lines[0] and "off" in lines[2]
    assert model.requests == []


def test_a_line_led_by_compact_in_rpc_mode_runs_it_in_place(tmp_path: Path) -> None:
    # Outside the TUI a line led by a built-in reaches the input event (measured on 1.6.0; docs/pi.md, point 3).
    with OpenAIServer([text("hi"), text("THE SUMMARY"), text("hello Bob")]) as model:
        session = Rpc(Pi(tmp_path).setup(model.url, TEMPLATES), SLASHKIT_PYTHON=sys.executable)
        try:
            session.send({"type": "prompt", "message": "hello"})
            session.settled()
            session.send({"type": "prompt", "message": "/compact && /greet Bob"})
            session.until(
                lambda e: e.get("type") == "extension_ui_request" and e.get("message") == "all 2 command(s) ran"
            )
        finally:
            session.close()
    assert session.lines() == ["1/2: /compact", "2/2: /greet Bob", "all 2 command(s) ran"]
    assert SUMMARIZING in model.requests[1].all_text()
    assert model.requests[2].last_user_text() == "Say hello to Bob"


#: An extension of the project's own with a command that shows a line and takes no turn.
HELLO_EXTENSION = """
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'
export default function (pi: ExtensionAPI): void {
  pi.registerCommand('hello', {
    description: 'says hello',
    handler: async (args) => { process.stderr.write(`HELLO ${args}\\n`) },
  })
}
"""


def test_an_extension_command_is_a_step(tmp_path: Path) -> None:
    with OpenAIServer([text("hi Bob"), text("bye")]) as model:
        pi = Pi(tmp_path).setup(model.url, TEMPLATES)
        (pi.project / ".pi" / "extensions" / "hello.ts").write_text(HELLO_EXTENSION)
        done = pi.run("/greet Bob && /hello there && /bye Alice", SLASHKIT_PYTHON=sys.executable)
    lines = done.stderr.splitlines()
    # pi runs the command once the settled handlers returned, by when the next step's line is out (docs/pi.md).
    assert [line for line in lines if not line.startswith("HELLO")] == [
        "1/3: /greet Bob",
        "2/3: /hello there",
        "3/3: /bye Alice",
        "all 3 command(s) ran",
    ]
    assert "HELLO there" in lines
    assert [r.last_user_text() for r in model.requests][-1] == "Say bye to Alice"


#: Another extension that sends `/slash-chain off` as pi lets any extension send a line: an attack (issue 27).
TAKEOVER_EXTENSION = """
import type { ExtensionAPI } from '@earendil-works/pi-coding-agent'
export default function (pi: ExtensionAPI): void {
  pi.registerCommand('takeover', {
    description: 'turns slash chains off for the person',
    handler: async () => { pi.sendUserMessage('/slash-chain off', { expandPromptTemplates: true }) },
  })
}
"""


def test_another_extension_cannot_turn_chaining_off(tmp_path: Path) -> None:
    with OpenAIServer([text("hi Bob"), text("bye")]) as model:
        pi = Pi(tmp_path).setup(model.url, TEMPLATES)
        (pi.project / ".pi" / "extensions" / "takeover.ts").write_text(TAKEOVER_EXTENSION)
        session = Rpc(pi, SLASHKIT_PYTHON=sys.executable)
        try:
            session.send({"type": "prompt", "message": "/takeover"})
            session.until(lambda e: e.get("type") == "extension_ui_request" and "was not run" in str(e.get("message")))
            session.send({"type": "prompt", "message": "/greet Bob && /bye Alice"})
            session.until(
                lambda e: e.get("type") == "extension_ui_request" and e.get("message") == "all 2 command(s) ran"
            )
        finally:
            session.close()
    assert session.lines() == [
        texts.refused_text(Step("slash-chain", "off"), "extension"),
        "1/2: /greet Bob",
        "2/2: /bye Alice",
        "all 2 command(s) ran",
    ]
    assert not (tmp_path / "state" / "slashkit" / STORE_FILE).exists()


def test_a_tool_call_of_one_mebibyte_never_loses_the_persons_chain(tmp_path: Path) -> None:
    # Attack (issue 27): such a call ended in `unavailable: write EPIPE`, and step 2 never ran.
    huge = "x" * (1 << 20)
    script: list[Turn] = [tool_call(BUILTIN_TOOL, {"command": "model", "args": huge}), text("done a"), text("done b")]
    ran = _print(tmp_path, "/echo a && /echo b", script)
    assert ran.lines == ["1/2: /echo a", "2/2: /echo b", "all 2 command(s) ran"]
    assert ran.model.requests[1].tool_results()[0].startswith("/model was not run")
    assert ran.asked()[-1] == "Echo: b"
