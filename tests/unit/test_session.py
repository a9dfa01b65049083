"""The application service every host drives (`slashkit.core.session`): tokens for what it waits on, reports that
move nothing, the question for lich, and a harness's own self-command tool."""

import attrs
import pytest

from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.chain import Step
from slashkit.core.chain_machine import (
    ChainEnded,
    ChainTyped,
    Log,
    Outcome,
    PromptHanded,
    PromptText,
    Tally,
    ToolAnswered,
)
from slashkit.core.policy import Denied, rule_for
from slashkit.core.self_command import ControlQueued, SkillQueued
from slashkit.core.texts import Key

BUILTINS = ("compact", "model", "config", "cost")


def moves(session: s.Session, *events: s.Event) -> s.Moved:
    """Moves the session by each event in turn; the last move."""
    moved = s.Moved(session)
    for event in events:
        moved = s.on_event(moved.session, event)
    return moved


def typed(text: str = "&& /b") -> ChainTyped:
    return ChainTyped("a", text, "composer", True)


# Tokens


def test_each_timer_and_run_is_named_by_a_token_the_host_sends_back() -> None:
    head = s.on_event(s.opened(), typed())
    assert head.reply == s.RunTyped("", 1)
    assert head.effects == (
        Log("1/2: /a"),
        s.StepStarted(1, 1, 2, Step("a", "")),
        s.Progress("chain 1/2: /a · next /b"),
    )

    timer = s.on_event(head.session, s.RunEnded(1))
    assert timer.effects == (
        Log("2/2: /b"),
        s.After(0, 2),
        s.StepStarted(1, 2, 2, Step("b", "", "&&")),
        s.Progress("chain 2/2: /b"),
    )

    run = s.on_event(timer.session, s.TimerFired(2))
    assert run.effects == (s.Run("b", "", 3),)

    ended = s.on_event(run.session, s.RunEnded(3))
    assert ended.effects == (
        Log("all 2 command(s) ran"),
        ChainEnded(1, Outcome("success", False, Tally(2))),
        s.Progress(None),
    )
    assert ended.session.pending == {}


@pytest.mark.parametrize(
    "report",
    [s.TimerFired(1), s.RunEnded(2), s.WhoamiAnswered(1, "x", "y"), s.WhoamiAnswered(2), s.TimerFired(9)],
    ids=["a timer's report for a run", "a run's report for a timer", "whoami for a run", "whoami for a timer", "none"],
)
def test_a_report_that_names_another_kind_of_token_changes_nothing(report: s.Event) -> None:
    # Token 1 is the head's run; token 2 the second step's timer.
    waiting = moves(s.opened(), typed("&& /b && /c"), s.RunEnded(1)).session
    assert set(waiting.pending) == {2}
    head = s.on_event(s.opened(), typed()).session

    for session in (waiting, head):
        assert s.on_event(session, report) == s.Moved(session)


def test_the_tokens_of_a_replaced_chain_are_forgotten() -> None:
    first = s.on_event(s.opened(), typed()).session

    replaced = s.on_event(first, ChainTyped("c", "&& /d", "plugin", True)).session

    assert list(replaced.pending) == [2]


def test_a_report_the_host_says_it_carried_out_is_told_apart() -> None:
    assert s.foreseen_token(s.TimerFired(3, applied=True)) == 3
    assert s.foreseen_token(s.RunEnded(4, applied=True)) == 4
    assert s.foreseen_token(s.RunEnded(4)) is None
    assert s.reported_token(s.RunEnded(4)) == 4
    assert s.reported_token(s.WhoamiAnswered(4)) is None


# Self-commands


def in_lich() -> s.Session:
    return s.on_event(s.opened(lich=("lich-1", None)), s.SessionStarted(True)).session


def test_a_session_starts_self_commands_only_inside_lich_and_interactive() -> None:
    assert s.on_event(s.opened(lich=("lich-1", None)), s.SessionStarted(True)).effects == (s.Invalidate(),)
    assert s.on_event(s.opened(lich=("lich-1", None)), s.SessionStarted(False)).session.lich is None
    assert s.on_event(s.opened(lich=(None, None)), s.SessionStarted(True)).session.lich is None
    assert s.wants(in_lich()) == s.ACTIVE_WANTS
    assert s.wants(s.opened()) == frozenset()


def test_a_control_call_by_label_asks_lich_and_is_queued_once_lich_says_it_is_this_session() -> None:
    call = s.ControlAnswered(True, BUILTINS, "fix/x", "command", "compact")

    asked = s.on_event(in_lich(), call)
    assert (asked.reply, asked.effects) == (s.AskWhoami(1), ())

    answered = s.on_event(asked.session, s.WhoamiAnswered(1, "FIX/X", "repo-a1b2"))
    assert isinstance(answered.reply, ControlQueued)
    assert answered.effects == (Log(texts.text("en", Key.LOG_QUEUED, queued="/compact")), s.After(0, 2))
    runs = Log(texts.text("en", Key.LOG_RUNS, queued="/compact"))
    assert s.on_event(answered.session, s.TimerFired(2)).effects == (runs, s.Run("compact", "", 3))


@pytest.mark.parametrize(("label", "name"), [(None, None), ("other", "other-9"), ("fix/x", None)])
def test_a_control_call_by_label_stays_lichs_when_lich_does_not_say_it_is_this_session(
    label: str | None, name: str | None
) -> None:
    asked = s.on_event(in_lich(), s.ControlAnswered(True, BUILTINS, "fix/x", "command", "compact"))

    answered = s.on_event(asked.session, s.WhoamiAnswered(1, label, name))

    assert (answered.reply, answered.effects, answered.session.pending) == (None, (), {})


def test_no_question_is_asked_outside_lich_or_for_a_call_that_cannot_be_taken() -> None:
    by_label = s.ControlAnswered(True, BUILTINS, "fix/x", "command", "compact")
    delivered = s.ControlAnswered(False, BUILTINS, "fix/x", "command", "compact")

    assert s.on_event(s.opened(), by_label) == s.Moved(s.opened())
    assert s.on_event(in_lich(), delivered) == s.Moved(in_lich())


def test_outside_lich_the_skill_tools_refusal_of_a_built_in_is_queued_in_the_sessions_language() -> None:
    """The slash-chain plugin's path: no lich variable, no SessionStarted (that plugin sends none)."""
    moved = s.on_event(s.opened(language="pt-BR"), s.SkillAnswered("compact", True, BUILTINS, " keep it "))

    assert moved.reply == SkillQueued("compact", texts.text("pt-BR", Key.SKILL_QUEUED, queued="/compact keep it"))
    assert s.After(0, 1) in moved.effects
    assert s.Run("compact", "keep it", 2) in s.on_event(moved.session, s.TimerFired(1)).effects


@pytest.mark.parametrize(("skill", "key"), [("model", Key.DENY_PERSON_ONLY), ("config", Key.DENY_NOT_ALLOWED)])
def test_outside_lich_a_skill_call_naming_what_only_the_person_may_run_is_denied(skill: str, key: Key) -> None:
    moved = s.on_event(s.opened(), s.SkillAnswered(skill, True, BUILTINS, "opus"))

    assert (moved.reply, moved.effects, moved.session.pending) == (Denied(texts.text("en", key, name=skill)), (), {})


def test_outside_lich_a_skill_the_tool_served_or_no_built_in_keeps_its_answer() -> None:
    for event in (s.SkillAnswered("compact", False, BUILTINS), s.SkillAnswered("deploy", True, BUILTINS)):
        assert s.on_event(s.opened(), event) == s.Moved(s.opened())


@pytest.mark.parametrize("interactive", [True, False])
def test_inside_lich_a_session_lich_did_not_start_leaves_the_skill_tool_alone(interactive: bool) -> None:
    """With both plugins loaded, each has its helper: the slash-chain plugin's session (which lich's gate never
    started) stands aside for the self-command plugin's, so one call queues one command; and a `claude -p`
    inside lich takes none."""
    plain = s.opened(lich=("lich-1", None))
    not_started = s.on_event(plain, s.SessionStarted(False)).session if not interactive else plain

    assert s.on_event(not_started, s.SkillAnswered("compact", True, BUILTINS)) == s.Moved(not_started)
    assert s.After(0, 1) in s.on_event(in_lich(), s.SkillAnswered("compact", True, BUILTINS)).effects


def test_a_queued_command_that_fails_is_a_toast() -> None:
    queued = moves(in_lich(), s.SkillAnswered("compact", True, BUILTINS), s.TimerFired(1)).session

    failed = s.on_event(queued, s.RunEnded(2, "Error: No messages to compact"))

    assert failed.effects == (s.Toast(texts.queued_failed_toast("compact", "Error: No messages to compact")),)
    assert s.on_event(queued, s.RunEnded(2)).effects == ()


# A harness's own self-command tool


def test_the_harness_tool_queues_a_built_in_anyone_may_run() -> None:
    moved = s.on_event(s.opened(), s.BuiltinAsked("/compact", " keep it ", BUILTINS))

    assert moved.reply == ToolAnswered(texts.text("en", Key.SKILL_QUEUED, queued="/compact keep it"))
    assert moved.effects == (Log(texts.text("en", Key.LOG_QUEUED, queued="/compact keep it")), s.After(0, 1))
    runs = Log(texts.text("en", Key.LOG_RUNS, queued="/compact keep it"))
    assert s.on_event(moved.session, s.TimerFired(1)).effects == (runs, s.Run("compact", "keep it", 2))


@pytest.mark.parametrize(
    ("command", "key"),
    [("model", Key.DENY_PERSON_ONLY), ("Effort", Key.DENY_PERSON_ONLY), ("config", Key.DENY_NOT_ALLOWED)],
)
def test_the_harness_tool_refuses_what_only_the_person_may_run(command: str, key: Key) -> None:
    moved = s.on_event(s.opened(language="es"), s.BuiltinAsked(command, "", BUILTINS))

    assert moved.reply == Denied(texts.text("es", key, name=command))
    assert moved.effects == ()


@pytest.mark.parametrize("command", ["deploy", 42, None])
def test_the_harness_tool_refuses_a_name_that_is_no_built_in(command: object) -> None:
    moved = s.on_event(s.opened(language="zh-CN"), s.BuiltinAsked(command, None, BUILTINS))

    name = command if isinstance(command, str) else ""
    assert moved.reply == Denied(texts.text("zh-CN", Key.NOT_BUILTIN, name=name))


def test_the_harness_tool_refuses_a_chain_in_the_arguments() -> None:
    moved = s.on_event(s.opened(), s.BuiltinAsked("compact", "now && /config x", BUILTINS))

    assert moved.reply == Denied(texts.text("en", Key.DENY_CHAINED, name="compact"))


def test_the_stored_setting_is_on_unless_it_is_false() -> None:
    assert [s.enabled(v) for v in (None, True, False, "false", 0)] == [True, True, False, True, True]


# What the composition root gave the session reaches each decision


def test_the_fail_note_names_the_fail_tool_the_host_gives_the_model() -> None:
    head = s.on_event(s.opened(fail_tool="slash-chain_fail"), ChainTyped("review", "x && /b", "composer", True))

    prompted = s.on_event(head.session, PromptHanded("review x"))

    assert isinstance(prompted.reply, PromptText)
    assert "slash-chain_fail" in prompted.reply.text
    assert texts.FAIL_TOOL_ID not in prompted.reply.text


def test_the_person_widens_the_allowlist_for_every_self_command_path() -> None:
    widened = rule_for(CLAUDE_CODE, "config")
    lich = s.on_event(s.opened(widened, lich=("lich-1", None)), s.SessionStarted(True)).session
    control = s.ControlAnswered(True, BUILTINS, "lich-1", "command", "config")

    assert isinstance(s.on_event(lich, control).reply, ControlQueued)
    assert isinstance(s.on_event(s.opened(widened), s.BuiltinAsked("config", "", BUILTINS)).reply, ToolAnswered)
    assert isinstance(s.on_event(in_lich(), control).reply, Denied)


def test_an_answer_to_a_question_never_asked_leaves_an_active_session_as_it_was() -> None:
    assert s.on_event(in_lich(), s.WhoamiAnswered(1, "fix/x", "repo-a1b2")) == s.Moved(in_lich())


@pytest.mark.parametrize("command", ["model", "config", "deploy"])
def test_a_refused_built_in_leaves_the_session_as_it_was(command: str) -> None:
    assert s.on_event(s.opened(), s.BuiltinAsked(command, "", BUILTINS)).session == s.opened()


def test_the_harness_tool_answers_a_queued_built_in_in_its_language() -> None:
    moved = s.on_event(s.opened(language="pt-BR"), s.BuiltinAsked("compact", "", BUILTINS))

    assert moved.reply == ToolAnswered(texts.text("pt-BR", Key.SKILL_QUEUED, queued="/compact"))


def test_a_failed_queued_command_changes_nothing_but_the_notice() -> None:
    queued = moves(in_lich(), s.SkillAnswered("compact", True, BUILTINS), s.TimerFired(1)).session

    assert s.on_event(queued, s.RunEnded(2, "boom")).session == attrs.evolve(queued, pending={})
