"""The events a chain needs next (events the state does not care about must not
start Python, docs/claude-code.md): the state names them, and an event it does not name changes nothing."""

from slashkit.adapters.memory import Command, Local, Pane, Prompt, host
from slashkit.core.chain_machine import (
    ChainState,
    Event,
    PaneClosed,
    PaneOpened,
    PromptHanded,
    PromptSubmitted,
    Transition,
    TurnEnded,
    on_event,
)

#: One event of each kind a host may skip, by the name the host gives it.
OPTIONAL: dict[str, list[Event]] = {
    "PromptHanded": [PromptHanded("do it")],
    "PaneOpened": [PaneOpened("pane-1", focus=True, placed=True)],
    "PaneClosed": [PaneClosed("pane-1")],
    "TurnEnded": [TurnEnded("answer"), TurnEnded("error")],
    "PromptSubmitted": [PromptSubmitted("never mind", "composer")],
}


def assert_unwanted_events_change_nothing(state: ChainState, wanted: frozenset[str]) -> None:
    for name, events in OPTIONAL.items():
        if name in wanted:
            continue
        for event in events:
            assert on_event(state, event) == Transition(state), (name, event)


def test_with_no_chain_running_no_optional_event_is_wanted() -> None:
    h = host(a=Local())
    h.type("/a")

    assert h.wants() == frozenset()
    assert_unwanted_events_change_nothing(h.session.chains, h.wants())


def test_a_running_step_wants_its_prompt_its_pane_and_the_persons_prompts() -> None:
    h = host(a=Command(does=Local(), held=True), b=Local())
    h.type("/a && /b")

    assert h.wants() == frozenset({"PromptHanded", "PaneOpened", "PromptSubmitted"})
    assert_unwanted_events_change_nothing(h.session.chains, h.wants())


def test_a_prompt_step_waiting_for_its_turn_wants_the_turn_end() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b")

    assert h.wants() == frozenset({"TurnEnded", "PromptSubmitted"})
    assert_unwanted_events_change_nothing(h.session.chains, h.wants())


def test_a_held_prompt_step_wants_a_turn_end_before_its_run_resolved() -> None:
    h = host(a=Command(does=Prompt("do a"), held=True), b=Local())
    h.type("/a && /b")

    assert h.wants() == frozenset({"PromptHanded", "PaneOpened", "TurnEnded", "PromptSubmitted"})


def test_a_pane_step_waiting_for_its_pane_wants_the_close() -> None:
    h = host(a=Pane("pane-1"), b=Local())
    h.type("/a && /b")

    assert h.wants() == frozenset({"PaneClosed", "PromptSubmitted"})
    assert_unwanted_events_change_nothing(h.session.chains, h.wants())


def test_a_sleep_wants_only_the_persons_prompts_which_end_it() -> None:
    h = host(a=Local(), b=Local())
    h.type("/a && sleep 1m && /b")

    assert h.wants() == frozenset({"PromptSubmitted"})
    assert_unwanted_events_change_nothing(h.session.chains, h.wants())


def test_the_checker_sees_a_wanted_event_change_the_state() -> None:
    h = host(a=Pane("pane-1"), b=Local())
    h.type("/a && /b")

    assert on_event(h.session.chains, PaneClosed("pane-1")) != Transition(h.session.chains)
