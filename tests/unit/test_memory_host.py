"""The in-memory host: its manual clock, recording UI, dict store, scripted whoami and scripted commands, which
harness authors embed in their own tests (issue 2, "Deliver" 3)."""

from slashkit.adapters.memory import (
    Command,
    DictEnvironment,
    DictStore,
    Local,
    ManualClock,
    Pane,
    Prompt,
    RecordingUi,
    ScriptedWhoami,
    Throws,
    host,
)
from slashkit.core.ports import Clock, Environment, Store, UiLog, Whoami
from slashkit.core.self_command import Identity


def test_the_manual_clock_fires_nothing_until_it_is_moved() -> None:
    clock = ManualClock()
    fired: list[str] = []

    clock.after(0, lambda: fired.append("now"))

    assert fired == []
    assert clock.pending == 1
    clock.advance()
    assert fired == ["now"]
    assert clock.pending == 0


def test_the_manual_clock_fires_due_timers_in_order_including_ones_they_start() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.after(20, lambda: fired.append("late"))
    clock.after(5, lambda: fired.append("second"))
    clock.after(5, lambda: clock.after(0, lambda: fired.append("started by second")))
    clock.after(1, lambda: fired.append("first"))

    clock.advance(10)
    assert fired == ["first", "second", "started by second"]
    assert clock.pending == 1

    clock.advance(10)
    assert fired == ["first", "second", "started by second", "late"]


def test_the_recording_ui_keeps_lines_and_toasts_apart_in_order() -> None:
    ui = RecordingUi()

    ui.log("one")
    ui.toast("careful")
    ui.log("two")

    assert ui.lines == ["one", "two"]
    assert ui.toasts == ["careful"]


def test_the_dict_store_reads_what_another_window_wrote() -> None:
    store = DictStore()
    assert store.get("enabled") is None

    store.set("enabled", False)
    assert store.get("enabled") is False
    store.data["enabled"] = True
    assert store.get("enabled") is True


def test_the_scripted_whoami_prints_nothing_by_default_and_counts_its_calls() -> None:
    whoami = ScriptedWhoami()

    assert whoami.whoami() is None
    whoami.answer = Identity("fix/x", "repo-a1b2")
    assert whoami.whoami() == Identity("fix/x", "repo-a1b2")
    assert whoami.calls == 2


def test_each_host_gets_its_own_whoami_answer() -> None:
    first, second = host(), host()

    first.whoami.answer = Identity("a", "b")

    assert second.whoami.whoami() is None


def test_the_adapters_fit_the_ports() -> None:
    # mypy checks the assignments: each fake fits its Protocol without inheriting from it.
    clock: Clock = ManualClock()
    ui: UiLog = RecordingUi()
    stored = DictStore()
    store: Store = stored
    env: Environment = DictEnvironment({"LICH_SESSION_ID": "x"})
    whoami: Whoami = ScriptedWhoami()

    clock.after(0, lambda: ui.log("fired"))
    store.set("k", 1)
    assert whoami.whoami() is None
    assert (env.get("LICH_SESSION_ID"), env.get("LICH_PROMPT_LANG"), stored.data["k"]) == ("x", None, 1)


def test_host_wraps_a_bare_script_in_a_command() -> None:
    h = host(a=Local(), b=Command(does=Prompt("do b"), builtin=True, held=True))

    assert h.commands == {"a": Command(does=Local()), "b": Command(does=Prompt("do b"), builtin=True, held=True)}
    assert h.session.lich is None


def test_a_typed_command_runs_with_everything_after_its_name() -> None:
    h = host(a=Local())

    h.type("/a x  y ")

    assert h.runs == [("a", "x  y ")]


def test_a_typed_prompt_command_hands_the_model_its_prompt() -> None:
    h = host(a=Prompt("do a"))

    h.type("/a")

    assert h.prompts == ["do a"]


def test_a_typed_unknown_or_throwing_command_logs_nothing_outside_a_chain() -> None:
    h = host(a=Throws("boom"), b=Pane("p"))

    h.type("/a")
    h.type("/nope")
    h.type("/b")
    h.close_pane("p")

    assert h.runs == [("a", ""), ("nope", ""), ("b", "")]
    assert h.ui.lines == []
    assert h.ui.toasts == []


def test_a_held_command_resolves_when_the_test_says() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a && /b")
    assert h.runs == [("a", "")]

    h.resolve("a")

    assert h.runs == [("a", ""), ("b", "")]


def test_describe_returns_the_hosts_description_when_slashkit_leaves_it() -> None:
    assert host().describe("Skill", "Runs a skill.") == "Runs a skill."
