"""Who may run what (issue 16): the person's typing runs anything; anyone else (another plugin's chain, the model's
self-command, a `|`, a harness's text it does not mark as the person's) runs only the built-ins on the host's
allowlist and the commands the host lists that are no built-ins. The person widens the list, never for /model
or /effort."""

import pytest

from slashkit.adapters.bridge import helper
from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Prompt, Throws
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.allowlist import CLAUDE_CODE, HOSTS, OPENCODE
from slashkit.core.chain import Step
from slashkit.core.policy import DEFAULT_RULE, Denied, Rule, rule_for
from slashkit.core.self_command import SkillQueued
from slashkit.core.texts import Key

BUILTIN = Command(Local(), builtin=True)


def claude_like(rule: Rule = DEFAULT_RULE) -> MemoryHost:
    commands = {name: BUILTIN for name in ("config", "compact", "context", "clear", "model")}
    commands |= {"review-pr": Command(Prompt("review the pull request")), "note": Command(Local("noted"))}
    return MemoryHost(commands=commands, env=DictEnvironment({"LICH_SESSION_ID": "s-1"}), rule=rule)


def refused(command: str, args: str, origin: str = "plugin") -> str:
    step = Step(command, args)
    return texts.refused_why(step, origin)


class TestTheRule:
    def test_every_measured_built_in_off_the_allowlist_is_for_the_person_alone(self) -> None:
        for name in CLAUDE_CODE.builtins - CLAUDE_CODE.safe.keys():
            assert DEFAULT_RULE.restricted(name), name
            assert not DEFAULT_RULE.may_run(f"/{name} x", "plugin"), name
            assert DEFAULT_RULE.may_run(f"/{name} x", "composer"), name

    @pytest.mark.parametrize("text", ["compact", "/context", "usage now", "COST", "review the diff"])
    def test_the_allowlist_runs_for_anyone(self, text: str) -> None:
        assert DEFAULT_RULE.may_run(text, "plugin")
        assert DEFAULT_RULE.may_run(text, "plugin", handed=True)

    @pytest.mark.parametrize("text", ["config", "/Config/ model=opus", " settings theme=dark", "\x85permissions"])
    def test_a_setting_changer_is_refused_however_it_is_written(self, text: str) -> None:
        assert not DEFAULT_RULE.may_run(text, "plugin")
        assert not DEFAULT_RULE.may_run(text, "composer", handed=True)

    def test_a_name_the_host_lists_as_no_built_in_runs_and_one_it_does_not_list_is_refused(self) -> None:
        # A later version's built-in, or an alias of one, that no list here knows is refused once the host lists
        # its commands; before it does, only what the lists know is refused.
        listed = DEFAULT_RULE.knowing(builtins=["config", "prefs-new"], commands=["config", "prefs-new", "greet"])
        assert listed.may_run("greet Bob", "plugin")
        assert not listed.may_run("prefs-new", "plugin")
        assert not listed.may_run("prefs-alias", "plugin")
        assert DEFAULT_RULE.may_run("prefs-alias", "plugin")

    def test_the_person_widens_the_list_but_never_for_model_or_effort(self) -> None:
        rule = rule_for(CLAUDE_CODE, " clear,doctor  /Model effort ")
        assert rule.may_run("clear", "plugin") and rule.may_run("/Doctor", "peer")
        assert not rule.may_run("model opus", "plugin") and not rule.may_run("effort", "plugin")
        assert rule_for(CLAUDE_CODE, None) == rule_for(CLAUDE_CODE, "") == DEFAULT_RULE

    @pytest.mark.parametrize("word", ["on", " off ", "on\u3000"])
    def test_turning_chaining_on_or_off_is_the_persons(self, word: str) -> None:
        assert not DEFAULT_RULE.may_run("slash-chain", "plugin", args=word)
        assert not DEFAULT_RULE.may_run("/slash-chain", "composer", handed=True, args=word)
        assert DEFAULT_RULE.may_run("slash-chain", "composer", args=word)
        assert DEFAULT_RULE.may_run("slash-chain", "plugin", args="stop")

    def test_in_a_session_a_harness_drives_its_own_steps_are_not_typing(self) -> None:
        rule = rule_for(CLAUDE_CODE, harness=True)
        assert not rule.may_run("config", "sdk") and rule.may_run("config", "composer")
        assert DEFAULT_RULE.may_run("config", "sdk")

    def test_opencodes_list_is_its_own(self) -> None:
        rule = rule_for(OPENCODE)
        assert rule.may_run("compact", "plugin") and not rule.may_run("model", "plugin")
        assert rule.restricted("config") is False  # opencode has no such built-in: a prompt of that name runs

    def test_the_helper_takes_every_host_that_has_a_list(self) -> None:
        # The helper names them before READY, when it imports nothing of the core.
        assert set(helper.HOSTS) == set(HOSTS)

    def test_every_safe_name_is_a_measured_built_in_with_a_reason(self) -> None:
        for listed in HOSTS.values():
            assert listed.safe.keys() <= listed.builtins, listed.host
            assert all(reason.strip() for reason in listed.safe.values()), listed.host


class TestChains:
    def test_another_plugins_chain_skips_config_and_says_so(self) -> None:
        h = claude_like()

        h.type("/note x && /config model=opus && /compact", "plugin")

        assert h.runs == [("note", "x"), ("compact", "")]
        assert h.ui.lines == [
            "1/3: /note x",
            f"skipped 2/3: /config model=opus ({refused('config', 'model=opus')})",
            "3/3: /compact",
            "ended: 2 succeeded, 0 failed, 1 skipped",
        ]

    def test_the_persons_own_chain_runs_config(self) -> None:
        h = claude_like()

        h.type("/note x && /config model=opus")

        assert h.runs == [("note", "x"), ("config", "model=opus")]
        assert h.ui.lines[-1] == "all 2 command(s) ran"

    def test_a_pipe_never_hands_the_models_answer_to_config_even_in_the_persons_chain(self) -> None:
        h = claude_like()

        h.type("/review-pr | /config && /context")
        h.end_turn("answer", answer="permissionMode=acceptEdits")

        assert h.runs == [("review-pr", ""), ("context", "")]
        assert h.ui.lines[1] == f"skipped 2/3: /config ({texts.handed_refused_why(Step('config', ''))})"

    def test_a_typed_config_whose_args_hold_a_chain_is_answered_for_anyone_else(self) -> None:
        h = claude_like()

        h.type("/config model=opus && /context", "peer")

        assert h.answers == [texts.refused_text(Step("config", "model=opus"), "peer")]
        assert h.runs == [("context", "")]

    def test_what_the_person_added_runs_in_anyone_elses_chain(self) -> None:
        h = claude_like(rule_for(CLAUDE_CODE, "clear"))

        h.type("/note && /clear && /config", "plugin")

        assert h.runs == [("note", ""), ("clear", "")]

    def test_only_the_person_turns_chaining_on_or_off(self) -> None:
        h = claude_like()

        h.type("/note && /slash-chain off && /slash-chain", "plugin")
        h.type("/review-pr | /slash-chain && /slash-chain stop")
        h.end_turn("answer", answer="on")

        assert h.runs == [("note", ""), ("slash-chain", ""), ("review-pr", ""), ("slash-chain", "stop")]
        assert h.ui.lines[1] == f"skipped 2/3: /slash-chain off ({refused('slash-chain', 'off')})"
        assert h.store.data == {}
        h.type("/note && /slash-chain off")
        assert h.store.data == {"enabled": False}

    @pytest.mark.parametrize("word", ["off", " on "])
    def test_anyone_elses_slash_chain_on_or_off_alone_is_refused_and_stores_nothing(self, word: str) -> None:
        # Attack (issue 27): another pi extension's `sendUserMessage('/slash-chain off')` reached the command.
        h = claude_like()

        h.type(f"/slash-chain {word}", "extension")
        h.type("/slash-chain stop", "extension")
        h.type("/note && /note")

        assert h.answers == [texts.refused_text(Step("slash-chain", word), "extension"), texts.NO_CHAIN_RUNS]
        assert h.store.data == {}
        assert h.ui.lines == ["1/2: /note", "2/2: /note", "all 2 command(s) ran"]

    def test_the_persons_chain_turns_chaining_off_in_its_step_whoever_the_host_says_sent_it(self) -> None:
        # pi's extension sends a step's `/slash-chain off` itself, and says so: the step is still the person's.
        state = m.ChainState()
        for event in (
            m.ChainTyped("note", "&& /slash-chain off", "composer", True),
            m.StepRan(1, 1),
            m.StepDue(1, 2),
        ):
            state = m.on_event(state, event).state

        moved = m.on_event(state, m.ChainCommandTyped("off", True, "extension"))

        assert moved.reply == m.CommandAnswer(texts.OFF_TEXT)
        assert m.SaveEnabled(False) in moved.effects

    def test_anyone_elses_chain_led_by_turning_chaining_off_runs_the_rest_without_it(self) -> None:
        h = claude_like()

        h.type("/slash-chain off && /note", "plugin")

        assert h.answers == [texts.refused_text(Step("slash-chain", "off"), "plugin")]
        assert h.runs == [("note", "")]
        assert h.store.data == {}

    def test_in_anyone_elses_chain_turning_chaining_off_is_a_refused_step_as_config_is(self) -> None:
        # A refused step makes the chain one whose lines are not the seed's: a failure before it does not stop the
        # chain with the seed's line but goes on by the operators, as with any refused built-in.
        lines = {}
        for refused_step in ("slash-chain off", "config"):
            h = claude_like()
            h.commands["boom"] = Command(Throws("no disk"))
            h.type(f"/boom && /{refused_step} && /note", "plugin")
            lines[refused_step] = [line.replace(f"/{refused_step}", "/STEP") for line in h.ui.lines]

        assert lines["slash-chain off"] == lines["config"]
        assert lines["config"][-1] == texts.ended_text(0, 1, 2)

    def test_a_host_reporting_turning_chaining_off_with_no_chain_in_it_gets_the_refusal(self) -> None:
        moved = m.on_event(m.ChainState(), m.ChainTyped("slash-chain", " off", "plugin", True))

        assert moved.reply == m.CommandAnswer(texts.refused_text(Step("slash-chain", ""), "plugin"))
        assert moved.state.running is None


class TestSelfCommands:
    @pytest.mark.parametrize("name", ["config", "clear"])
    def test_a_built_in_off_the_list_is_denied_on_both_paths(self, name: str) -> None:
        h = claude_like()
        h.lich_control = lambda *_: ("refused", True)

        assert h.skill_call(name, "model=opus") == Denied(texts.text("en", Key.DENY_NOT_ALLOWED, name=name))
        assert h.control_call("s-1", "command", f"/{name}", "model=opus") == Denied(
            texts.text("en", Key.DENY_NOT_ALLOWED, name=name)
        )
        h.settle()
        assert h.runs == []

    def test_a_name_the_host_does_not_list_as_a_built_in_keeps_the_native_refusal_and_runs_nothing(self) -> None:
        h = claude_like()

        assert isinstance(h.skill_call("Config", "model=opus"), str)
        h.settle()
        assert h.runs == []

    def test_a_built_in_the_person_added_is_queued(self) -> None:
        h = claude_like(rule_for(CLAUDE_CODE, "clear"))

        reply = h.skill_call("clear")

        assert isinstance(reply, SkillQueued)
        assert h.runs == [("clear", "")]


class TestAHarnessSession:
    """The step machine as a slash-chain plugin's helper runs it in a session a slashkit harness drives."""

    def state(self) -> m.ChainState:
        return m.ChainState(rule=rule_for(CLAUDE_CODE, harness=True))

    def test_a_step_holding_a_chain_runs_as_sent_and_starts_none(self) -> None:
        moved = m.on_event(self.state(), m.ChainTyped("review-pr", "the diff fine && /model opus", "sdk", True))

        assert moved == m.Transition(self.state())

    def test_a_step_naming_config_with_a_chain_in_its_args_is_answered(self) -> None:
        moved = m.on_event(self.state(), m.ChainTyped("config", "model=opus && /cost", "sdk", True))

        assert moved.reply == m.CommandAnswer(texts.refused_text(Step("config", ""), "sdk"))
        assert moved.state.running is None

    def test_a_step_turning_chaining_off_is_answered(self) -> None:
        moved = m.on_event(self.state(), m.ChainTyped("slash-chain", "off", "sdk", True))

        assert moved.reply == m.CommandAnswer(texts.refused_text(Step("slash-chain", ""), "sdk"))

    def test_the_persons_chain_typed_there_still_runs(self) -> None:
        moved = m.on_event(self.state(), m.ChainTyped("config", "x && /cost", "composer", True))

        assert moved.reply == m.RunHead(1, 1, "x")
