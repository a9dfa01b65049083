"""Self-commands through lich's `control_session`: lich answers first; only its error answer to `command`
aimed at this session (by id, or by the label or name `lich whoami` prints) is taken
(docs/lich.md, "How the plugin behaves")."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Throws
from slashkit.core.policy import Denied
from slashkit.core.self_command import ControlQueued, Identity
from slashkit.core.session import ControlAnswered

CONTROL = "mcp__lich__control_session"
DESCRIPTION = "Controls another Claude Code session: Claude Code sessions only, and never your own."
CONTROL_NOTE = (
    "[lich] This session: action `command` is also accepted with this session itself as the target, named by its "
    "lich id lich-7f3a (LICH_SESSION_ID). The command is queued and runs once this turn ends."
)
SELF_REFUSAL = '"fix/x" is this session, and a session cannot control itself: ask another session'
DELIVERED = 'ran /compact on "peer"'


def queued(label: str) -> ControlQueued:
    return ControlQueued(f"{label} is queued on this session and runs once this turn ends. End the turn now.")


def in_lich(answer: tuple[str, bool] = (SELF_REFUSAL, True), **commands: Command) -> MemoryHost:
    made = {"compact": Command(does=Local(), builtin=True), **commands}
    h = MemoryHost(commands=made, env=DictEnvironment({"LICH_SESSION_ID": "lich-7f3a"}))
    h.lich_control = lambda *_: answer
    h.whoami.answer = Identity(label="fix/x", name="lich-plugin-a1b2")
    return h


def test_the_control_tool_description_names_this_sessions_id() -> None:
    h = in_lich()

    assert h.describe(CONTROL, DESCRIPTION) == f"{DESCRIPTION}\n\n{CONTROL_NOTE}"


def test_a_command_for_this_session_by_its_id_is_queued_without_asking_lich_who_it_is() -> None:
    h = in_lich()

    reply = h.control_call("lich-7f3a", "command", "/compact", " keep the plan ")

    assert reply == queued("/compact keep the plan")
    assert h.runs == [("compact", "keep the plan")]
    assert h.whoami.calls == 0


def test_the_queued_control_command_runs_only_after_the_call_was_answered() -> None:
    h = in_lich()

    reply = h.handle(ControlAnswered(True, tuple(h.builtins()), "lich-7f3a", "command", "compact"))

    assert reply == queued("/compact")
    assert h.runs == []
    assert h.clock.pending == 1
    h.settle()
    assert h.runs == [("compact", "")]


@pytest.mark.parametrize("target", ["fix/x", "FIX/X", "Fix/X"])
def test_a_command_for_this_session_by_its_label_in_any_case_is_queued(target: str) -> None:
    h = in_lich()

    assert h.control_call(target, "command", "compact") == queued("/compact")
    assert h.runs == [("compact", "")]
    assert h.whoami.calls == 1


@pytest.mark.parametrize("target", ["lich-plugin-a1b2", "LICH-PLUGIN-A1B2", "Lich-Plugin-A1b2"])
def test_a_command_for_this_session_by_its_name_in_any_case_is_queued(target: str) -> None:
    h = in_lich()

    assert h.control_call(target, "command", "/compact", "now") == queued("/compact now")
    assert h.runs == [("compact", "now")]
    assert h.whoami.calls == 1


def test_the_id_is_compared_exactly() -> None:
    h = in_lich()
    h.whoami.answer = None

    assert h.control_call("LICH-7F3A", "command", "/compact") == SELF_REFUSAL
    assert h.runs == []


def test_another_sessions_command_stays_lichs() -> None:
    h = in_lich(answer=('no session named "peer"', True))

    assert h.control_call("peer", "command", "/compact") == 'no session named "peer"'
    assert h.runs == []
    assert h.clock.pending == 0


def test_when_whoami_fails_only_the_id_counts() -> None:
    h = in_lich()
    h.whoami.answer = None

    assert h.control_call("fix/x", "command", "/compact") == SELF_REFUSAL
    assert h.runs == []
    assert h.whoami.calls == 1

    assert h.control_call("lich-7f3a", "command", "/compact") == queued("/compact")
    assert h.runs == [("compact", "")]
    assert h.whoami.calls == 1


def test_whoami_is_not_run_for_an_answer_that_is_not_an_error() -> None:
    h = in_lich(answer=(DELIVERED, False))

    assert h.control_call("fix/x", "command", "/compact") == DELIVERED
    assert h.control_call("lich-7f3a", "command", "/compact") == DELIVERED
    assert h.whoami.calls == 0
    assert h.runs == []


@pytest.mark.parametrize(
    ("action", "value"), [("prompt", "run /compact"), ("abort", None), ("model", "opus"), ("effort", "high")]
)
def test_whoami_is_not_run_for_other_actions(action: str, value: object) -> None:
    h = in_lich()

    assert h.control_call("fix/x", action, value) == SELF_REFUSAL
    assert h.whoami.calls == 0
    assert h.runs == []


@pytest.mark.parametrize("value", [None, 42, ["/compact"]])
def test_a_command_whose_value_is_not_a_string_stays_lichs(value: object) -> None:
    h = in_lich()

    assert h.control_call("fix/x", "command", value) == SELF_REFUSAL
    assert h.whoami.calls == 0
    assert h.runs == []


def test_a_command_that_is_not_built_in_stays_lichs() -> None:
    h = in_lich(deploy=Command(does=Local(), builtin=False))

    assert h.control_call("lich-7f3a", "command", "/deploy") == SELF_REFUSAL
    assert h.control_call("lich-7f3a", "command", "/nonexistent") == SELF_REFUSAL
    assert h.runs == []


@pytest.mark.parametrize(("value", "args", "name"), [("/model", "opus", "model"), ("effort", "high", "effort")])
def test_model_and_effort_are_denied_through_the_control_tool_and_never_run(value: str, args: str, name: str) -> None:
    h = in_lich(model=Command(builtin=True), effort=Command(builtin=True))

    reply = h.control_call("lich-7f3a", "command", value, args)

    assert reply == Denied(
        f"/{name} was not run: run from here, Claude Code would save it as the default for every new Claude Code "
        "session. Set it from lich instead, whose model and effort override applies to this session only."
    )
    h.settle()
    assert h.runs == []


def test_a_queued_control_command_that_fails_raises_a_toast() -> None:
    h = in_lich(compact=Command(does=Throws("the command queue is closed"), builtin=True))

    assert h.control_call("lich-7f3a", "command", "/compact") == queued("/compact")
    assert h.ui.toasts == ["/compact did not run: the command queue is closed"]
