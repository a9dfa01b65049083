"""The refusal policy: /model and /effort are never queued, whatever the path (the Skill tool or lich's
control_session) and whatever the casing, slashes, whitespace or args around the name
(docs/lich.md, "How the plugin behaves")."""

import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from slashkit.adapters.memory import Command, DictEnvironment, Local, MemoryHost
from slashkit.core.js_text import JS_WHITESPACE
from slashkit.core.policy import DEFAULT_RULE, Denied
from slashkit.core.self_command import ControlQueued, Identity, SkillQueued

#: Whitespace as the core means it everywhere else (JavaScript's `\s` and trim, `slashkit.core.js_text`). U+001C
#: and U+0085 are left out: to JavaScript they are name characters, not space, so they make another name.
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u1680", "\u2028", "\u2029", "\u3000", "\ufeff"]


@st.composite
def refused_names(draw: st.DrawFn) -> str:
    """`model` or `effort` in any casing, with slashes, whitespace and args around it."""
    word = draw(st.sampled_from(["model", "effort"]))
    cased = "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in word)
    space = st.text(alphabet=st.sampled_from(SPACES), max_size=3)
    slashes = draw(st.sampled_from(["", "/", "//", "/ "]))
    args = draw(st.sampled_from(["", "opus", "high", "claude-opus-4 --default", "/model"]))
    tail = draw(space.filter(bool)) + args if args else draw(space)
    return draw(space) + slashes + draw(space) + cased + tail


#: Every character either language calls whitespace: JavaScript's `\s` and Python's `str.isspace()`, which adds
#: U+001C-U+001F and U+0085 and lacks U+FEFF. The refusal rule reads a name as either language would.
EVERY_SPACE = sorted(set(JS_WHITESPACE) | {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()})

args_values = st.one_of(st.none(), st.sampled_from(["", "opus", " high ", "max"]), st.integers())


def session() -> MemoryHost:
    commands = {
        "model": Command(does=Local(), builtin=True),
        "effort": Command(does=Local(), builtin=True),
        "compact": Command(does=Local(), builtin=True),
    }
    h = MemoryHost(commands=commands, env=DictEnvironment({"LICH_SESSION_ID": "lich-1"}))
    h.lich_control = lambda *_: ("refused", True)
    h.whoami.answer = Identity(label="fix/x", name="repo-a1b2")
    return h


def ran_model_or_effort(h: MemoryHost) -> list[tuple[str, str]]:
    return [run for run in h.runs if run[0].strip("/ ").casefold() in ("model", "effort")]


@settings(max_examples=200)
@given(
    refused_names(),
    args_values,
    st.sampled_from(["skill", "control"]),
    st.sampled_from(["lich-1", "fix/x", "FIX/X", "Repo-A1B2"]),
)
@example("/\ufeffmodel", "opus", "skill", "lich-1")
@example("model\ufeffopus", None, "control", "lich-1")
def test_model_and_effort_are_never_queued_or_run_whatever_the_path(
    name: str, args: object, path: str, target: str
) -> None:
    h = session()

    reply = h.skill_call(name, args) if path == "skill" else h.control_call(target, "command", name, args)
    h.settle()

    assert ran_model_or_effort(h) == []
    assert not isinstance(reply, SkillQueued | ControlQueued)
    assert h.clock.pending == 0


@settings(max_examples=150)
@given(refused_names(), args_values)
@example("/model", "opus")
@example("EFFORT", None)
@example("  //Model  high", None)
@example("/\ufeffmodel", None)
@example("model\ufeffopus", None)
def test_model_and_effort_are_denied_through_the_skill_tool_and_never_run(name: str, args: object) -> None:
    h = session()

    reply = h.skill_call(name, args)
    h.settle()

    assert ran_model_or_effort(h) == []
    assert isinstance(reply, Denied)


@settings(max_examples=150)
@given(refused_names(), args_values, st.sampled_from(["lich-1", "fix/x", "FIX/X", "Repo-A1B2"]))
@example("/model", "opus", "lich-1")
@example("/\ufeffeffort", None, "lich-1")
def test_model_and_effort_are_denied_through_the_control_tool_and_never_run(
    name: str, args: object, target: str
) -> None:
    h = session()

    reply = h.control_call(target, "command", name, args)
    h.settle()

    assert ran_model_or_effort(h) == []
    assert isinstance(reply, Denied)


@given(st.sampled_from(["model", "effort"]), st.sampled_from(["skill", "control"]))
def test_the_denial_names_the_command_and_points_at_lich(word: str, path: str) -> None:
    h = session()

    reply = h.skill_call(word) if path == "skill" else h.control_call("lich-1", "command", f"/{word}")

    assert isinstance(reply, Denied)
    assert reply.text.startswith(f"/{word} was not run")
    assert "lich" in reply.text
    assert h.clock.pending == 0


@pytest.mark.parametrize("space", EVERY_SPACE, ids=lambda c: f"U+{ord(c):04X}")
@settings(max_examples=25)
@given(
    word=st.sampled_from(["model", "effort", "Model", "EFFORT"]),
    where=st.sampled_from(["before", "after the slash", "before the args", "after a trailing slash"]),
    args=st.sampled_from(["", "opus", "high", "max --default"]),
    origin=st.sampled_from(["plugin", "peer", "channel", "unclassified"]),
)
@example(word="model", where="before", args="", origin="plugin")
@example(word="model", where="before the args", args="opus", origin="plugin")
@example(word="effort", where="after a trailing slash", args="high", origin="plugin")
def test_no_whitespace_of_either_language_lets_model_or_effort_run_for_anyone_but_the_person(
    space: str, word: str, where: str, args: str, origin: str
) -> None:
    command = {
        "before": f"{space}/{word} {args}",
        "after the slash": f"/{space}{word} {args}",
        "before the args": f"/{word}{space}{args}",
        "after a trailing slash": f"/{word}/{space}{args}",
    }[where]

    assert not DEFAULT_RULE.may_run(command, origin)
    assert DEFAULT_RULE.may_run(command, "composer")
