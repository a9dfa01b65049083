"""Self-commands in the real opencode 1.18.33. Inside lich: the model asks lich's control tool (opencode names it
`lich_control_session`) to run a command in its own session, lich refuses (a session cannot control itself,
tests/support/lich_mcp_stub.py), and slashkit's core decides what becomes of the refusal: a built-in is queued
and runs once the turn ended; /model is refused; the model reads the core's reply in lich's refusal's place (the
transcript keeps lich's text); outside lich that refusal stays lich's. In any session, inside lich or not: the
plugin's own tool `slash-chain_builtin` asks the core, which queues /compact to run once the turn ended and refuses
what the person alone may run."""

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final

import pytest

from slashkit.adapters.opencode.install import BUILTIN_TOOL, config_dir, install
from slashkit.core import texts
from slashkit.core.texts import BUILTIN_SCHEMA, Key
from tests.support import helper_folders, lich_mcp_stub
from tests.support.openai_server import OpenAIServer, Turn, text, tool_call
from tests.support.opencode_cli import OpencodeServer, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

SESSION_ID: Final = "lich-7"
ROSTER: Final = {
    "self": {"id": SESSION_ID, "label": "oc/fix", "name": "opencode-a1"},
    "peer": {"id": "lich-8", "label": "other", "name": "claude-b2"},
}
#: lich's tool as opencode names an MCP server `lich`'s `control_session` (measured on 1.18.33).
CONTROL: Final = "lich_control_session"


class Run:
    def __init__(self, server: OpencodeServer, model: OpenAIServer, calls: Path) -> None:
        self.server = server
        self.model = model
        self.calls = calls
        self.session = server.create_session()

    def lich_saw(self) -> list[Mapping[str, object]]:
        return [json.loads(line) for line in self.calls.read_text().splitlines()] if self.calls.exists() else []

    def kinds(self) -> list[str]:
        return [r.kind for r in self.model.requests if r.kind not in ("title", "other")]

    def stored_results(self) -> list[str]:
        """What the session's store (the person's transcript) holds as the control call's result or error."""
        states = [p.get("state") or {} for m in self.server.messages(self.session) for p in m.get("parts", [])]
        return [str(s.get("output") or s.get("error")) for s in states if s.get("input", {}).get("action")]


#: lich's refusal of a call aimed at the caller's own session.
REFUSAL: Final = lich_mcp_stub.SELF_REFUSAL.format(label="oc/fix")


def core_text(key: Key, **slots: str) -> str:
    return texts.text(texts.language(None), key, **slots)


def _start(tmp_path: Path, script: list[Turn], in_lich: bool) -> Iterator[Run]:
    with OpenAIServer(script) as model:
        project = write_project(tmp_path / "project", model.url, {"greet": "Greet $1 warmly."})
        roster, calls = tmp_path / "roster.json", tmp_path / "calls.jsonl"
        roster.write_text(json.dumps(ROSTER))
        config = json.loads((project / "opencode.json").read_text())
        stub = str(Path(lich_mcp_stub.__file__).resolve())
        config["mcp"] = {"lich": {"type": "local", "command": [sys.executable, stub, str(roster), str(calls)]}}
        (project / "opencode.json").write_text(json.dumps(config, indent=2))
        install(config_dir(project))
        env = {"LICH_SESSION_ID": SESSION_ID} if in_lich else {}
        with OpencodeServer(project, tmp_path, env_extra=env) as server:
            yield Run(server, model, calls)


Start = Callable[..., Run]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    made: list[Iterator[Run]] = []

    def begin(script: list[Turn], in_lich: bool = True) -> Run:
        run = _start(tmp_path, script, in_lich)
        made.append(run)
        return next(run)

    yield begin
    for run in made:
        for _ in run:
            pass


def ask_lich(value: str) -> Turn:
    return tool_call(CONTROL, {"session": SESSION_ID, "action": "command", "value": value})


def test_compact_the_model_asked_lich_for_runs_once_its_turn_ended(start: Start) -> None:
    run = start([ask_lich("compact"), text("It will compact after this turn.")])
    run.server.prompt(run.session, "please compact yourself").wait()
    run.server.wait_event("session.compacted", run.session, timeout=60)
    run.server.wait_quiet(run.session, quiet=2.5)
    # lich refused (this is its own session); the next request held the core's reply for that call in lich's
    # text's place; then the queued /compact ran. The transcript keeps lich's text.
    [call] = run.lich_saw()
    assert call["name"] == "control_session"
    assert run.kinds() == ["main", "main", "summary"]
    assert run.model.main_requests[1].tool_results() == [core_text(Key.CONTROL_QUEUED, queued="/compact")]
    assert run.stored_results() == [REFUSAL]


def test_model_the_model_asked_lich_for_is_refused_by_the_core(start: Start) -> None:
    run = start([ask_lich("model"), text("I may not.")])
    run.server.prompt(run.session, "switch your model").wait()
    run.server.wait_quiet(run.session, quiet=4.0)
    assert len(run.lich_saw()) == 1
    assert run.kinds() == ["main", "main"]
    # The model read the core's refusal, not lich's.
    assert run.model.main_requests[1].tool_results() == [core_text(Key.DENY_DEFAULT_SAVED, name="model")]
    assert run.stored_results() == [REFUSAL]
    assert run.server.of_type("session.compacted", run.session) == []
    # Nothing was queued: a queued /model would have run and failed, which a toast says.
    assert run.server.of_type("tui.toast.show") == []


def test_outside_lich_a_refused_compact_stays_refused(start: Start, tmp_path: Path) -> None:
    run = start([ask_lich("compact"), text("lich said no.")], in_lich=False)
    run.server.prompt(run.session, "please compact yourself").wait()
    run.server.wait_quiet(run.session, quiet=4.0)
    assert len(run.lich_saw()) == 1
    assert run.kinds() == ["main", "main"]
    assert run.model.main_requests[1].tool_results() == [REFUSAL]
    # No helper of a session's own started (its socket folder, under the isolated TMPDIR): the shared helper's folder
    # is there from opencode's start, where the plugin asked for the saved chains of its menu.
    own = [found for found in helper_folders(tmp_path) if found.name != f"slashkit-{os.getuid()}"]
    assert own == []
    assert run.server.of_type("session.compacted", run.session) == []


def ask_tool(command: str, args: str | None = None) -> Turn:
    return tool_call(BUILTIN_TOOL, {"command": command} if args is None else {"command": command, "args": args})


def test_outside_lich_the_self_command_tool_compacts_the_session_once_its_turn_ended(start: Start) -> None:
    run = start([ask_tool("compact"), text("It will compact after this turn.")], in_lich=False)
    run.server.prompt(run.session, "please compact yourself").wait()
    run.server.wait_event("session.compacted", run.session, timeout=60)
    run.server.wait_quiet(run.session, quiet=2.5)
    # The tool is offered as the core describes it; the model read the core's answer; then the queued /compact
    # summarized the session, after the turn that asked for it.
    offered = run.model.main_requests[0].tool(BUILTIN_TOOL) or {}
    assert offered.get("description") == texts.text(texts.ENGLISH, Key.SELF_TOOL_NOTE)
    # Its arguments are the core's; opencode 1.18.33 marks every one of a plugin tool's plain properties required.
    assert offered.get("parameters") == {**BUILTIN_SCHEMA, "required": ["command", "args"]}
    assert run.kinds() == ["main", "main", "summary"]
    assert run.model.main_requests[1].tool_results() == [texts.text(texts.ENGLISH, Key.SKILL_QUEUED, queued="/compact")]
    assert run.lich_saw() == []


@pytest.mark.parametrize(
    ("command", "refusal"),
    [("config", Key.NOT_BUILTIN), ("model", Key.DENY_PERSON_ONLY)],
    ids=["config", "model"],
)
def test_outside_lich_config_and_model_asked_through_the_tool_are_refused_naming_them(
    start: Start, command: str, refusal: Key
) -> None:
    run = start([ask_tool(command, "x"), text("I may not."), text("never")], in_lich=False)
    run.server.prompt(run.session, f"run /{command} x yourself").wait()
    run.server.wait_quiet(run.session, quiet=4.0)
    [result] = run.model.main_requests[1].tool_results()
    assert texts.text(texts.ENGLISH, refusal, name=command) in result
    # Nothing ran: no more model turns, no compaction, no toast of a queued command that failed.
    assert run.kinds() == ["main", "main"]
    assert run.server.of_type("session.compacted", run.session) == []
    assert run.server.of_type("tui.toast.show") == []


def test_an_oversized_call_of_the_tool_during_a_chain_is_answered_and_the_chain_goes_on(start: Start) -> None:
    # Attack: the model hands the tool 1 MiB of args while the person's chain runs. Cut to what the core reads, the
    # call is refused in the core's words (not "unavailable"), and the chain's next step still runs.
    huge = "x" * (1 << 20)
    script = [ask_tool("model", huge), text("Hello Bob"), text("Hello Carol")]
    run = start(script, in_lich=False)
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.server.wait_quiet(run.session, quiet=4.0)
    [result] = run.model.main_requests[1].tool_results()
    assert texts.text(texts.ENGLISH, Key.DENY_PERSON_ONLY, name="model") in result
    assert run.kinds() == ["main", "main", "main"]
    assert run.model.main_requests[2].last_user_text() == "Greet Carol warmly."
