"""The model's self-commands as the person meets them on every host (issue 27): one at a time, never a chain, shown
as what runs and no longer than a line, a line when one is queued and when it runs, and the person's `/slash-chain`
to see it, cancel it, and switch them off for every session."""

import pytest

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost, Prompt
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.chain import Step
from slashkit.core.chain_machine import ToolAnswered
from slashkit.core.policy import DEFAULT_RULE, Denied, Rule, rule_for
from slashkit.core.self_command import ControlQueued, SkillQueued
from slashkit.core.texts import Key

QUEUED = "/compact is queued and runs once this turn ends. End the turn now."
QUEUED_LINE = "the model queued /compact; it runs once this turn ends (/slash-chain stop cancels it)"
RUNS_LINE = "/compact runs now: the model queued it"


def host(held: bool = False, lang: str | None = None) -> MemoryHost:
    """A session inside lich (so every path is open: the tool, the Skill tool and lich's control tool) whose
    /compact resolves at once, or only when the test says (`held`)."""
    env = {"LICH_SESSION_ID": "lich-1"} | ({"LICH_PROMPT_LANG": lang} if lang else {})
    commands = {
        "compact": Command(Local(), builtin=True, held=held),
        "context": Command(Local(), builtin=True),
        "config": Command(Local(), builtin=True),
        "note": Command(Local("noted")),
        "review-pr": Command(Prompt("review the pull request")),
    }
    return MemoryHost(commands=commands, env=DictEnvironment(env), lich_control=lambda *_: ("no such command", True))


def answered(label: str) -> ToolAnswered:
    """The tool's answer to a call it queued."""
    return ToolAnswered(texts.text("en", Key.SKILL_QUEUED, queued=label))


def already(name: str, queued: str = "/compact") -> Denied:
    return Denied(texts.text("en", Key.DENY_ONE_QUEUED, name=name, queued=queued))


class TestOnePerTurn:
    def test_a_second_call_in_the_same_turn_is_told_the_first_is_queued_and_one_command_runs(self) -> None:
        h = host()

        first = h.builtin_call("compact", "keep the plan")
        second = h.builtin_call("context")
        h.end_turn()

        assert first == answered("/compact keep the plan")
        assert second == already("context", "/compact keep the plan")
        assert h.runs == [("compact", "keep the plan")]

    def test_the_limit_holds_across_the_tool_the_skill_tool_and_lichs_control_tool(self) -> None:
        h = host(held=True)

        assert h.skill_call("compact") == SkillQueued("compact", QUEUED)
        assert h.builtin_call("compact") == already("compact")
        assert h.skill_call("context") == already("context")
        assert h.control_call("lich-1", "command", "context") == already("context")
        h.end_turn()

        assert h.runs == [("compact", "")]

    def test_once_the_queued_command_ran_the_next_turn_may_queue_another(self) -> None:
        h = host(held=True)
        h.skill_call("compact")
        h.end_turn()
        h.resolve("compact")

        assert h.control_call("lich-1", "command", "context") == ControlQueued(
            texts.text("en", Key.CONTROL_QUEUED, queued="/context")
        )
        assert h.runs == [("compact", ""), ("context", "")]

    def test_a_refused_call_holds_nothing(self) -> None:
        h = host()

        assert isinstance(h.builtin_call("config"), Denied)
        assert h.builtin_call("compact") == answered("/compact")


class TestNeverAChain:
    @pytest.mark.parametrize("args", ["x && /config", "&& /note", "x || /note", "x ; /note", "x | /note"])
    def test_args_holding_a_chain_are_refused_and_nothing_runs(self, args: str) -> None:
        h = host()

        assert h.builtin_call("compact", args) == Denied(texts.text("en", Key.DENY_CHAINED, name="compact"))
        h.end_turn()

        assert h.runs == [] and h.outcomes == []

    def test_the_queued_command_runs_alone_and_starts_no_chain(self) -> None:
        h = host()

        h.builtin_call("/compact", "after the && sign")
        h.end_turn()

        assert h.runs == [("compact", "after the && sign")]
        assert h.outcomes == []
        assert h.ui.lines == [
            "the model queued /compact after the && sign; it runs once this turn ends (/slash-chain stop cancels it)",
            "/compact after the && sign runs now: the model queued it",
        ]


class TestWhatIsShown:
    @pytest.mark.parametrize("args", ["\n/model x", "keep\n/model x", "keep\r/model x", "a\u2028/model x"])
    def test_args_with_a_line_break_are_refused_so_no_second_command_is_shown(self, args: str) -> None:
        h = host()

        reply = h.builtin_call("compact", args)
        h.end_turn()

        assert reply == Denied(texts.text("en", Key.DENY_LINE_BREAK, name="compact"))
        assert h.runs == [] and h.ui.lines == []

    def test_a_line_break_at_the_end_goes_as_the_seeds_trim_does(self) -> None:
        h = host()

        assert h.skill_call("compact", "  keep the plan \n") == SkillQueued(
            "compact", "/compact keep the plan is queued and runs once this turn ends. End the turn now."
        )

    def test_a_long_argument_is_never_echoed_back_whole(self) -> None:
        h = host()
        long = "x" * texts.MAX_TOOL_TEXT

        reply = h.builtin_call("compact", long)
        h.end_turn()

        assert isinstance(reply, ToolAnswered)
        label = "/compact " + "x" * (texts.MAX_SHOWN - len("/compact ") - 1) + "…"
        assert reply.text == texts.text("en", Key.SKILL_QUEUED, queued=label)
        assert all(len(line) < 400 for line in h.ui.lines)
        assert h.runs == [("compact", long)]

    @pytest.mark.parametrize("name", ["y" * (1 << 20), "model " + "y" * (1 << 20), "deploy\n" + "z" * 5000])
    def test_a_huge_or_broken_name_is_refused_in_a_bounded_line(self, name: str) -> None:
        h = host()

        reply = h.builtin_call(name)

        assert isinstance(reply, Denied)
        assert len(reply.text) < 600 and "\n" not in reply.text


def calls(h: MemoryHost, name: str, args: str) -> list[object]:
    """The same call through every path the model has: the tool, the Skill tool and lich's control tool."""
    return [h.builtin_call(name, args), h.skill_call(name, args), h.control_call("lich-1", "command", name, args)]


class TestHostileCalls:
    """Attacks of issue 34 (part 5), refused by the core on every path the model has."""

    @pytest.mark.parametrize(
        ("name", "args"), [("compact", "keep \ud800 the plan"), ("compact", "\udfff"), ("com\udc80pact", "")]
    )
    def test_a_lone_surrogate_is_refused_as_no_text_and_nothing_runs(self, name: str, args: str) -> None:
        # It once ran as `/compact \ufffd`, and the U+FFFD reached the compaction as its instructions.
        h = host()

        replies = calls(h, name, args)
        h.end_turn()

        shown = name.replace("\udc80", "\\udc80")
        assert replies == [Denied(texts.text("en", Key.DENY_NOT_TEXT, name=shown))] * 3
        assert h.runs == [] and h.ui.lines == []

    def test_a_pair_of_surrogates_is_text_and_runs(self) -> None:
        h = host()

        h.builtin_call("compact", "keep \U0001f600")
        h.end_turn()

        assert h.runs == [("compact", "keep \U0001f600")]

    @pytest.mark.parametrize("size", [texts.MAX_TOOL_TEXT + 1, 1 << 20])
    def test_oversized_args_are_refused_whole_and_nothing_runs(self, size: int) -> None:
        # A 1 MiB call once left omp's chain stuck at its first step and omp spinning once its TUI closed.
        h = host()

        replies = calls(h, "compact", "x" * size)
        h.end_turn()

        text = texts.text("en", Key.DENY_TOO_LONG, name="compact", length=f"{size:,}", limit="4,000")
        assert replies == [Denied(text)] * 3
        assert h.runs == [] and h.ui.lines == []


class TestThePersonSeesIt:
    @pytest.mark.parametrize("lang", sorted(texts.CATALOGS))
    def test_a_line_says_it_was_queued_and_another_that_it_runs_in_the_sessions_language(self, lang: str) -> None:
        h = host(lang=lang)

        h.skill_call("compact")

        assert h.ui.lines == [
            texts.text(lang, Key.LOG_QUEUED, queued="/compact"),
            texts.text(lang, Key.LOG_RUNS, queued="/compact"),
        ]

    def test_the_status_names_the_queued_command_and_is_the_seeds_when_none_is(self) -> None:
        h = host(held=True)
        h.type("/slash-chain")
        h.builtin_call("compact")
        h.type("/slash-chain")
        h.end_turn()
        h.type("/slash-chain")
        h.resolve("compact")
        h.type("/slash-chain")

        assert h.answers == [
            "on · no chain runs",
            "on · no chain runs · the model queued /compact, to run once its turn ends",
            "on · no chain runs · the model queued /compact, which runs now",
            "on · no chain runs",
        ]

    def test_stop_cancels_the_queued_command_and_says_so(self) -> None:
        h = host()
        h.builtin_call("compact")

        h.type("/slash-chain stop")
        h.end_turn()
        h.type("/slash-chain stop")

        assert h.answers == ["cancelled /compact, which the model queued", "no chain runs"]
        assert h.runs == [("slash-chain", "stop"), ("slash-chain", "stop")]

    def test_stop_cancels_a_running_chain_and_the_queued_command_together(self) -> None:
        h = host()
        h.type("/review-pr && /note")
        h.builtin_call("compact")

        h.type("/slash-chain stop")
        h.end_turn()

        assert h.answers == ["cancelled; not run: /note · cancelled /compact, which the model queued"]
        assert [name for name, _ in h.runs] == ["review-pr", "slash-chain"]

    def test_stop_says_a_command_that_already_runs_cannot_be_stopped(self) -> None:
        h = host(held=True)
        h.builtin_call("compact")
        h.end_turn()

        h.type("/slash-chain stop")
        h.type("/slash-chain")

        assert h.answers == [
            "/compact, which the model queued, already runs and cannot be stopped",
            "on · no chain runs · the model queued /compact, which runs now",
        ]


class TestThePersonsSwitch:
    def test_builtin_off_refuses_the_models_commands_in_every_session_until_builtin_on(self) -> None:
        h = host()
        h.type("/slash-chain builtin off")
        other = host()
        other.store = h.store  # another window of the same host shares the store

        off = other.builtin_call("compact")
        skill = other.skill_call("compact")
        other.end_turn()
        h.type("/slash-chain  builtin\ton ")
        on = other.builtin_call("compact")

        assert h.answers == [texts.BUILTIN_OFF_TEXT, texts.BUILTIN_ON_TEXT]
        assert off == skill == Denied(texts.text("en", Key.DENY_SWITCHED_OFF, name="compact"))
        assert other.runs == []
        assert on == answered("/compact")
        assert h.store.data == {"builtin": True}

    def test_switching_off_cancels_the_queued_command(self) -> None:
        h = host()
        h.builtin_call("compact")

        h.type("/slash-chain builtin off")
        h.end_turn()

        assert h.answers == [f"{texts.BUILTIN_OFF_TEXT} · cancelled /compact, which the model queued"]
        assert h.runs == [("slash-chain", "builtin off")]

    def test_turning_chaining_off_leaves_the_queued_command_to_run(self) -> None:
        h = host()
        h.builtin_call("compact")

        h.type("/slash-chain off")
        h.end_turn()

        assert h.answers == [texts.OFF_TEXT]
        assert h.runs == [("slash-chain", "off"), ("compact", "")]

    def test_chaining_and_the_models_commands_are_two_switches(self) -> None:
        h = host()
        h.type("/slash-chain off")
        h.type("/slash-chain builtin off")

        assert h.store.data == {"enabled": False, "builtin": False}
        h.type("/slash-chain on")
        assert h.store.data == {"enabled": True, "builtin": False}

    @pytest.mark.parametrize("args", ["builtin", "builtin maybe", "builtin on now", "builtins off"])
    def test_anything_else_gets_the_usage_naming_the_new_words(self, args: str) -> None:
        h = host()

        h.type(f"/slash-chain {args}")

        assert h.answers == [
            "expects nothing (the status), stop, on, off, list, steps, add /CMD, drop N, allow NAME, resume, "
            "forget, builtin on or builtin off"
        ]
        assert h.store.data == {}


class TestOnlyThePersonSwitches:
    @pytest.mark.parametrize("words", ["builtin off", "builtin on", " builtin\u3000off ", "builtin\toff"])
    def test_the_rule_keeps_the_switch_for_the_persons_typing(self, words: str) -> None:
        assert not DEFAULT_RULE.may_run("slash-chain", "plugin", args=words)
        assert not DEFAULT_RULE.may_run("slash-chain", "composer", handed=True, args=words)
        assert not rule_for(CLAUDE_CODE, harness=True).may_run("slash-chain", "sdk", args=words)
        assert DEFAULT_RULE.may_run("slash-chain", "composer", args=words)

    def test_another_plugins_chain_cannot_switch_it(self) -> None:
        h = host()

        h.type("/note && /slash-chain builtin off && /note", "plugin")

        why = texts.refused_why(Step("slash-chain", "builtin off"), "plugin")
        assert h.ui.lines[1] == f"skipped 2/3: /slash-chain builtin off ({why})"
        assert h.store.data == {}

    def test_a_chain_led_by_the_switch_from_anyone_else_runs_without_it(self) -> None:
        h = host()

        h.type("/slash-chain builtin off && /note", "plugin")

        assert h.answers == [texts.refused_text(Step("slash-chain", "builtin off"), "plugin")]
        assert h.store.data == {}

    def test_text_a_pipe_hands_on_cannot_switch_it(self) -> None:
        h = host()

        h.type("/review-pr | /slash-chain")
        h.end_turn("answer", answer="builtin off")

        assert h.store.data == {}

    def test_a_harness_step_cannot_switch_it(self) -> None:
        h = MemoryHost(commands={"note": Command(Local())}, rule=rule_for(CLAUDE_CODE, harness=True))

        h.type("/note && /slash-chain builtin off", "sdk")

        assert h.store.data == {}

    def test_the_persons_own_chain_may(self) -> None:
        h = host()

        h.type("/note && /slash-chain builtin off")

        assert h.store.data == {"builtin": False}


class TestOutsideLichInTheSessionsLanguage:
    """The session service as a host outside lich drives it (Claude Code's slash-chain plugin, a harness): the
    Skill tool's refusals and the tool's calls are answered in the session's language, under the session's rule."""

    BUILTINS = ("compact", "config", "model", "clear")

    def reply(self, event: s.Event, rule: Rule = DEFAULT_RULE, lang: str = "pt-BR") -> object:
        return s.on_event(s.opened(rule, language=lang), event).reply

    def test_skill_model_is_the_persons_alone_in_portuguese(self) -> None:
        refused = self.reply(s.SkillAnswered("model", True, self.BUILTINS, "opus"))
        assert refused == Denied(texts.text("pt-BR", Key.DENY_PERSON_ONLY, name="model"))

    def test_skill_config_is_not_allowed_in_portuguese(self) -> None:
        refused = self.reply(s.SkillAnswered("config", True, self.BUILTINS, None))
        assert refused == Denied(texts.text("pt-BR", Key.DENY_NOT_ALLOWED, name="config"))

    def test_the_persons_widened_rule_lets_the_skill_tool_queue_what_it_names(self) -> None:
        widened = rule_for(CLAUDE_CODE, "clear")
        assert isinstance(self.reply(s.SkillAnswered("clear", True, self.BUILTINS, None), widened), SkillQueued)
        assert isinstance(self.reply(s.SkillAnswered("clear", True, self.BUILTINS, None)), Denied)

    @pytest.mark.parametrize("lang", sorted(texts.CATALOGS))
    @pytest.mark.parametrize("name", ["permissions", "/Permissions", "login"])
    def test_a_built_in_the_host_did_not_list_is_the_persons_alone_in_every_language(
        self, lang: str, name: str
    ) -> None:
        # Attack of issue 34: an SDK session lists no /permissions (the interactive session's), and the tool said it
        # was "not one of this session's built-ins", as if it did not exist.
        refused = self.reply(s.BuiltinAsked(name, None, self.BUILTINS), lang=lang)
        assert refused == Denied(texts.text(lang, Key.DENY_NOT_ALLOWED, name=name.removeprefix("/")))

    @pytest.mark.parametrize("lang", sorted(texts.CATALOGS))
    def test_no_text_and_oversized_args_are_refused_in_every_language(self, lang: str) -> None:
        not_text = self.reply(s.BuiltinAsked("compact", "\ud800", self.BUILTINS), lang=lang)
        assert not_text == Denied(texts.text(lang, Key.DENY_NOT_TEXT, name="compact"))
        too_long = self.reply(s.BuiltinAsked("compact", "x" * 4001, self.BUILTINS), lang=lang)
        assert too_long == Denied(texts.text(lang, Key.DENY_TOO_LONG, name="compact", length="4,001", limit="4,000"))

    def test_a_name_no_list_knows_is_still_no_built_in(self) -> None:
        refused = self.reply(s.BuiltinAsked("deploy", None, self.BUILTINS), lang="es")
        assert refused == Denied(texts.text("es", Key.NOT_BUILTIN, name="deploy"))

    def test_a_line_break_switched_off_and_one_already_queued_are_refused_in_portuguese(self) -> None:
        broken = self.reply(s.BuiltinAsked("compact", "keep\n/model x", self.BUILTINS))
        assert broken == Denied(texts.text("pt-BR", Key.DENY_LINE_BREAK, name="compact"))
        off = self.reply(s.BuiltinAsked("compact", None, self.BUILTINS, switched_on=False))
        assert off == Denied(texts.text("pt-BR", Key.DENY_SWITCHED_OFF, name="compact"))
        session = s.on_event(s.opened(language="pt-BR"), s.BuiltinAsked("compact", None, self.BUILTINS)).session
        second = s.on_event(session, s.BuiltinAsked("compact", None, self.BUILTINS)).reply
        assert second == Denied(texts.text("pt-BR", Key.DENY_ONE_QUEUED, name="compact", queued="/compact"))
