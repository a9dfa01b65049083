"""A host that runs a built-in only from the person's own prompt (Gemini CLI: no hook runs one, docs/gemini.md)
refuses a chain holding one, whole and naming it, whoever typed it; the core decides it, not the host's hooks."""

import pytest

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt
from slashkit.core.allowlist import CLAUDE_CODE, GEMINI
from slashkit.core.policy import rule_for
from slashkit.core.saved_chain import SavedFile, library


def gemini(**saved: str) -> MemoryHost:
    commands = {"greet": Command(Prompt("greet them")), "compress": Command(Local(), builtin=True)}
    h = MemoryHost(commands=commands, rule=rule_for(GEMINI))
    h.saved = library(SavedFile(f"{n}.md", f"{n}.md", body.encode()) for n, body in saved.items())
    return h


@pytest.mark.parametrize("typed", ["/greet Bob && /compress", "/greet Bob ; /Compress now", "/compress && /greet"])
def test_a_chain_holding_a_built_in_runs_nothing_and_says_which(typed: str) -> None:
    h = gemini()

    h.type(typed)

    assert h.runs == []
    name = "Compress" if "Compress" in typed else "compress"
    assert h.answers == [f"/{name} is a built-in that no chain can run on this host, so nothing of this chain ran"]
    assert h.ui.lines == []


def test_a_saved_chain_holding_a_built_in_runs_nothing_either() -> None:
    h = gemini(ship="/greet $1 && /compress")

    h.type("/ship Bob")

    assert h.runs == []
    assert h.answers == ["/compress is a built-in that no chain can run on this host, so nothing of this chain ran"]


def test_a_host_whose_chains_run_built_ins_runs_it() -> None:
    commands = {"greet": Command(Local()), "compact": Command(Local(), builtin=True)}
    h = MemoryHost(commands=commands, rule=rule_for(CLAUDE_CODE))

    h.type("/greet Bob && /compact")

    assert h.runs == [("greet", "Bob"), ("compact", "")]


def test_a_chain_without_a_built_in_runs_there() -> None:
    h = gemini()

    h.type("/greet Bob && /greet Carol")
    h.end_turn()
    h.settle()

    assert h.runs == [("greet", "Bob"), ("greet", "Carol")]
