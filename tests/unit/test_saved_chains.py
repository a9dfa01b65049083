"""Saved chains (issue 28): a chain written once in `.slashkit/chains/<name>.md` and typed by name, run as a shell runs
a function, on the in-memory host; every file step under the rule for text the person did not type."""

import pytest

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, Throws, host
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core.chain_machine import Log, Outcome, Tally
from slashkit.core.policy import DEFAULT_RULE
from slashkit.core.saved_chain import Library, SavedChain, SavedFile, library, program_of


def saved(**bodies: str) -> Library:
    """The saved chains of a project whose files hold these bodies, by name."""
    files = [SavedFile(f"{name}.md", f".slashkit/chains/{name}.md", body.encode()) for name, body in bodies.items()]
    return library(files)


def tiny_host(**bodies: str) -> MemoryHost:
    h = host(tiny=Local(), greet=Local(), bad=Throws("it broke"), ask=Prompt("do it"), config=Command(builtin=True))
    h.saved = saved(**bodies)
    return h


def test_a_saved_chain_typed_by_name_runs_its_steps_with_the_arguments_filled_in() -> None:
    h = tiny_host(ship="/greet $1 && /tiny done for $ARGUMENTS")

    h.type("/ship Bob Carol")

    assert h.runs == [("greet", "Bob"), ("tiny", "done for Bob Carol")]
    assert h.answers == ["/ship Bob Carol runs 2 command(s)"]
    assert h.ui.lines == ["1/2: /greet Bob", "2/2: /tiny done for Bob Carol", "all 2 command(s) ran"]
    assert h.outcomes == [Outcome("success", False, Tally(2))]


def test_a_saved_chain_and_a_typed_step_after_it() -> None:
    h = tiny_host(ship="/greet $1")

    h.type("/ship Bob && /tiny")

    assert h.runs == [("greet", "Bob"), ("tiny", "")]
    assert h.ui.lines[-1] == "all 2 command(s) ran"


def test_a_saved_chain_as_a_later_step_of_a_typed_chain() -> None:
    h = tiny_host(ship="/greet $1 && /tiny")

    h.type("/tiny first && /ship Bob")

    assert h.runs == [("tiny", "first"), ("greet", "Bob"), ("tiny", "")]


def test_a_saved_chain_inside_a_saved_chain_is_a_function_call_whose_last_status_is_the_steps() -> None:
    # check = `/bad $1 || /tiny fixed`: /bad fails, /tiny fixed runs, so check ended well and /tiny done runs.
    h = tiny_host(ship="/check $1 && /tiny done", check="/bad $1 || /tiny fixed")

    h.type("/ship Bob")

    assert h.runs == [("bad", "Bob"), ("tiny", "fixed"), ("tiny", "done")]
    assert h.outcomes[0].status == "success"


def test_a_call_its_operator_passes_over_is_passed_over_whole() -> None:
    # As bash skips a function's body: /tiny ran well, so `|| /ship` does not run, and neither does its `&& /greet`
    # (read flat, `/tiny || /greet x && /greet y` would run /greet y).
    h = tiny_host(ship="/greet x && /greet y")

    h.type("/tiny || /ship && /tiny after")

    assert h.runs == [("tiny", ""), ("tiny", "after")]
    assert h.ui.lines[1:3] == [
        "skipped 2/4: /greet x (the last command succeeded)",
        "skipped 3/4: /greet y (the last command succeeded)",
    ]


def test_a_cycle_runs_nothing_and_one_answer_names_it() -> None:
    h = tiny_host(spin="/tiny && /spin2", spin2="/spin")

    h.type("/spin")

    assert h.runs == []
    assert h.answers == ["saved chains call each other in a cycle (spin -> spin2 -> spin); nothing ran"]
    assert h.ui.lines == []


def test_saved_chains_nest_at_most_eight_deep() -> None:
    # Written out, not read from the module: a test that reads the bound holds for any bound.
    bodies = {f"n{i}": f"/n{i + 1}" for i in range(8)} | {"n8": "/tiny deepest"}
    h = tiny_host(**bodies)

    h.type("/n1")
    assert h.runs == [("tiny", "deepest")]  # n1 .. n8: eight deep

    h.type("/n0")
    assert h.runs == [("tiny", "deepest")]
    assert h.answers[-1].startswith("saved chains nest more than 8 deep (n0 -> n1 -> ")


def test_saved_chains_bring_at_most_256_steps_to_a_line() -> None:
    h = tiny_host(w1=" ; ".join(["/w2"] * 16), w2=" ; ".join(["/tiny"] * 16), over="/w1 ; /tiny")

    h.type("/w1")
    assert len(h.runs) == 256

    h.type("/over")
    assert len(h.runs) == 256
    assert h.answers[-1] == "the saved chains make more than 256 steps; nothing ran"


def test_a_restricted_built_in_from_a_file_is_refused_with_its_line_and_the_next_step_runs() -> None:
    h = tiny_host(ship="/config model=opus ; /model opus ; /tiny after")

    h.type("/ship")

    assert h.runs == [("tiny", "after")]
    assert h.ui.lines == [
        "skipped 1/3: /config model=opus (only the person may run /config, and this came from saved chain ship)",
        "skipped 2/3: /model opus (only the person may run /model, and this came from saved chain ship)",
        "3/3: /tiny after",
        "ended: 1 succeeded, 0 failed, 2 skipped",
    ]


def test_a_file_cannot_turn_slash_chains_off() -> None:
    h = tiny_host(ship="/slash-chain off ; /slash-chain builtin off ; /tiny")

    h.type("/ship")

    assert ("slash-chain", "off") not in h.runs
    assert h.store.data == {}
    assert h.runs == [("tiny", "")]


def test_a_typed_chain_step_of_the_person_still_runs_a_restricted_built_in() -> None:
    # The person's own `/config` beside a saved chain is typing; only the file's steps are held to the rule.
    h = tiny_host(ship="/tiny")

    h.type("/ship && /config theme=dark")

    assert h.runs == [("tiny", ""), ("config", "theme=dark")]


def test_a_name_the_host_has_is_the_hosts() -> None:
    h = tiny_host(greet="/tiny")

    h.type("/greet Bob && /tiny")

    assert h.runs == [("greet", "Bob"), ("tiny", "")]


def test_a_saved_chain_typed_while_chains_are_off_says_so_and_runs_nothing() -> None:
    h = tiny_host(ship="/tiny")
    h.type("/slash-chain off")

    h.type("/ship")

    assert h.runs == [("slash-chain", "off")]
    assert h.answers[-1] == "/ship is a saved chain, and slash chains are off: /slash-chain on runs it"


def test_the_status_area_shows_the_step_that_runs_and_the_next_then_clears() -> None:
    h = tiny_host(ship="/tiny a && /greet || /tiny c")

    h.type("/ship")

    assert h.ui.statuses == [
        "chain 1/3: /tiny a · next /greet",
        "chain 2/3: /greet · next || /tiny",
        None,
    ]


def test_a_prompt_step_of_a_saved_chain_waits_for_its_turn_and_the_status_names_it() -> None:
    h = tiny_host(ship="/ask $1 && /tiny")

    h.type("/ship now")
    assert h.runs == [("ask", "now")]
    assert h.ui.statuses == ["chain 1/2: /ask now · next /tiny"]

    h.end_turn("answer")
    assert h.runs == [("ask", "now"), ("tiny", "")]


def test_list_names_each_saved_chain_where_it_comes_from_and_the_files_that_are_none() -> None:
    h = host(greet=Local())
    h.saved = library(
        [
            SavedFile("ship.md", "/p/.slashkit/chains/ship.md", b"---\ndescription: Ships it\n---\n/greet"),
            SavedFile("greet.md", "/p/.slashkit/chains/greet.md", b"/x"),
            SavedFile("two.md", "/p/.slashkit/chains/two.md", b"/a\ndone"),
        ]
    )

    h.type("/slash-chain list")

    assert h.answers == [
        "/greet [/p/.slashkit/chains/greet.md] (shadowed: the host has its own /greet)\n"
        "/ship - Ships it [/p/.slashkit/chains/ship.md]\n"
        "saved chain /p/.slashkit/chains/two.md:2: a command was expected, not 'done'; nothing of it runs"
    ]


def test_list_says_how_to_write_one_when_there_is_none() -> None:
    h = host()

    h.type("/slash-chain list")

    assert h.answers == ["no saved chains: write one as .slashkit/chains/<name>.md (a chain line, or a program)"]


@pytest.mark.parametrize("origin", ["plugin", "harness"])
def test_a_saved_chain_started_by_someone_else_runs_under_the_same_rule(origin: str) -> None:
    h = tiny_host(ship="/tiny ; /config x")

    h.type("/ship", origin=origin)

    assert h.runs == [("tiny", "")]


@pytest.mark.parametrize("name", ["slash-chain", "model", "Effort", "config", "compact"])
def test_no_file_stands_in_for_slashkits_own_command_or_a_built_in_even_when_the_host_lists_nothing(
    name: str,
) -> None:
    # An attack: a project file named like /slash-chain would take the person's `/slash-chain off` (or stop), and
    # one named like a built-in the person's own /model or /config; the built-ins are known as measured.
    h = MemoryHost(rule=DEFAULT_RULE)
    h.saved = saved(**{name: "/tiny from the file"})

    h.type(f"/{name} off")

    assert ("tiny", "from the file") not in h.runs
    assert h.runs == [(name, "off")]


def test_list_marks_a_file_named_like_a_built_in_as_the_hosts() -> None:
    h = host()
    h.saved = saved(compact="/tiny")

    h.type("/slash-chain list")

    assert h.answers == ["/compact [.slashkit/chains/compact.md] (shadowed: the host has its own /compact)"]


def test_a_host_that_lists_nothing_is_still_offered_no_file_named_like_slash_chain_model_or_effort() -> None:
    offered = saved(**{"slash-chain": "/tiny", "model": "/tiny", "Effort": "/tiny", "ship": "/tiny"})

    assert [c.name for c in offered.leaving([], []).chains] == ["ship"]


def test_a_host_is_offered_each_saved_chain_described_by_its_file_or_else_by_its_chain_line() -> None:
    files = saved(ship="---\ndescription: Ships\nargument-hint: <who>\n---\n/greet $1", check="/tiny $1 || /tiny")

    offered = s.on_event(s.opened(), s.SavedAsked(("greet",), files)).reply

    assert offered == s.SavedListed(
        (s.Offered("check", "/tiny $1 || /tiny", ""), s.Offered("ship", "Ships", "<who>")), ()
    )


#: Escapes that clear the screen, home the cursor, retitle the window, colour (8-bit CSI), reset the terminal, and C0,
#: DEL and C1 characters (U+0085 and U+2028 would end the file's line, so they stay out).
ESCAPES = "\x1b[2J\x1b[H\x1b]0;owned\x07\x9b31m\x1bc\x00\x7f\x80"


def test_a_menu_is_offered_a_files_texts_without_escapes_or_control_characters_and_bounded() -> None:
    # Attack of issue 34: 60,000 characters of terminal escapes in a description reached a host's menu whole.
    description = "Ships " + ESCAPES * 1_000 + "it" + "x" * 30_000
    hint = "<who>" + ESCAPES + "\t<when>"
    file = f"---\ndescription: {description}\nargument-hint: {hint}\n---\n/greet $1"
    files = saved(ship=file, check="/tiny \x1b[31m$1\x1b[0m " + "y" * 30_000)

    offered = s.on_event(s.opened(), s.SavedAsked(("greet",), files)).reply

    assert isinstance(offered, s.SavedListed)
    check, ship = offered.chains
    assert ship.description == "Ships it" + "x" * 191 + "…" and ship.argument_hint == "<who> <when>"
    assert check.description == "/tiny $1 " + "y" * 190 + "…"
    texts = [ship.description, ship.argument_hint, check.description]
    assert all(len(t) <= 200 and not any(c < " " or "\x7f" <= c <= "\x9f" for c in t) for t in texts)


def test_the_host_is_told_each_file_that_is_no_saved_chain_and_offered_none_of_its_own_names() -> None:
    files = library(
        [
            SavedFile("bad.md", "/p/bad.md", b"no chain"),
            SavedFile("greet.md", "/p/greet.md", b"/tiny"),
            SavedFile("compact.md", "/p/compact.md", b"/tiny"),
            SavedFile("ship.md", "/p/ship.md", b"/tiny"),
        ]
    )

    moved = s.on_event(s.opened(), s.SavedAsked(("greet",), files))

    assert moved.effects == (Log("saved chain /p/bad.md:1: a command was expected, not 'no'; nothing of it runs"),)
    assert moved.reply == s.SavedListed((s.Offered("ship", "/tiny", ""),), ("compact", "greet"))


def test_the_machine_leaves_a_saved_chain_named_like_a_built_in_to_the_host_even_unlisted() -> None:
    typed = m.ChainTyped("compact", "", "composer", True, (), ("greet",), saved(compact="/greet"))

    moved = m.on_event(m.ChainState(), typed)

    assert (moved.state.running, moved.reply, moved.effects) == (None, None, ())


def test_each_saved_chain_typed_is_a_chain_of_its_own_number() -> None:
    files = saved(ship="/greet a && /greet b")
    first = m.on_event(m.ChainState(), m.ChainTyped("ship", "", "composer", True, (), ("greet",), files))
    assert first.state.started == 1 and first.state.running is not None and first.state.running.chain == 1

    second = m.on_event(first.state, m.ChainTyped("ship", "", "composer", True, (), ("greet",), files))
    assert second.state.started == 2 and second.state.running is not None and second.state.running.chain == 2


@pytest.mark.parametrize("origin", ["plugin", "peer"])
def test_a_saved_chain_someone_else_types_keeps_their_origin_and_the_hosts_rule_for_typed_steps(origin: str) -> None:
    h = tiny_host(ship="/tiny")

    h.type("/ship ; /config theme=dark ; /mystery x ; /greet", origin=origin)

    assert h.runs == [("tiny", ""), ("greet", "")]
    assert h.ui.lines[1:3] == [
        f"skipped 2/4: /config theme=dark (only the person may run /config, and this came from {origin})",
        f"skipped 3/4: /mystery x (only the person may run /mystery, and this came from {origin})",
    ]


def test_a_saved_chain_sleeps_as_a_typed_program_does() -> None:
    h = tiny_host(wait="/greet $1 && sleep 1m && /tiny")

    h.type("/wait Bob")

    assert h.runs == [("greet", "Bob")]
    assert h.ui.statuses[-1] == "sleep 1m left · then /tiny"
    h.clock.advance(60_000)
    assert h.runs == [("greet", "Bob"), ("tiny", "")]
    assert h.ui.lines == ["1/2: /greet Bob", "2/2: /tiny", "all 2 command(s) ran"]


def test_a_saved_chain_built_by_hand_whose_body_is_no_program_is_refused_naming_its_file() -> None:
    # `read` gives no such chain; an embedder building one by hand learns which.
    with pytest.raises(ValueError) as raised:
        program_of(SavedChain("bad", "done", "/p/bad.md"))

    assert str(raised.value) == "/p/bad.md holds no program: a command was expected, not 'done'"
