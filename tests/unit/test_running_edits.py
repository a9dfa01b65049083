"""The running program, listed and edited by the person (issue 35, in-memory host): `/slash-chain steps` lists its
steps as written, each done, running or pending; `/slash-chain add /x` queues a step after the rest, which runs
whatever their status; `/slash-chain drop N` removes a step not reached yet. Only the person's typing edits."""

import hashlib
from collections.abc import Callable

import pytest

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, Throws, failing_first
from slashkit.core.allowlist import GEMINI
from slashkit.core.interpreter import MAX_STEPS
from slashkit.core.policy import Denied, rule_for
from slashkit.core.saved_chain import NO_SAVED, Library, SavedFile, library


def host(saved: Library = NO_SAVED) -> MemoryHost:
    return MemoryHost(
        saved=saved,
        commands={
            "a": Command(Local()),
            "b": Command(Prompt("do b")),
            "c": Command(Local()),
            "x": Command(Local()),
            "bad": Command(Throws("broke")),
            "check": Command(failing_first(1, "red")),
            "fix": Command(Prompt("fix it")),
        },
    )


def running(line: str) -> MemoryHost:
    """A host whose person typed `line`, settled where its first step waits."""
    h = host()
    h.type(line)
    h.settle()
    return h


def others(h: MemoryHost) -> list[tuple[str, str]]:
    """The commands the host ran, `/slash-chain` itself left out."""
    return [run for run in h.runs if run[0] != "slash-chain"]


def test_steps_lists_each_step_as_done_running_or_pending() -> None:
    h = running("/a && /b x && /c")

    h.type("/slash-chain steps")

    assert h.answers[-1] == "1. /a · done\n2. /b x · running\n3. /c · pending"


def test_a_chain_of_and_alone_keeps_the_references_one_line_status() -> None:
    h = running("/a && /b x && /c")

    h.type("/slash-chain")

    assert h.answers[-1] == "on · 2/3 /b x, waiting for its turn"


def test_steps_folds_a_loop_and_says_how_each_step_went_last() -> None:
    h = running("/a || /c ; until /check; do /fix; done")

    h.type("/slash-chain steps")

    assert h.answers[-1] == "1. /a · done\n2. /c · skipped\n3. /check · failed\n4. /fix · running"


def test_the_status_of_a_chain_at_its_last_step_lists_its_steps_with_no_next() -> None:
    h = running("/a ; /b x")

    h.type("/slash-chain")

    assert h.answers[-1] == "on · 2/2 /b x, waiting for its turn\n1. /a · done\n2. /b x · running"


def test_steps_during_a_sleep_lists_the_step_before_it_as_done() -> None:
    h = host()
    h.type("/a && sleep 1m && /x")

    h.type("/slash-chain steps")

    assert h.answers[-1] == "1. /a · done\n2. /x · pending"


def test_steps_says_a_step_a_loop_left_behind_was_not_run() -> None:
    h = host()
    h.type("while /a; do break; /x; done; /b y")
    h.settle()

    h.type("/slash-chain steps")

    assert h.answers[-1] == "1. /a · done\n2. /x · not run\n3. /b y · running"


def test_add_runs_the_step_after_the_rest_whatever_their_status() -> None:
    h = running("/a && /b x && /bad")

    h.type("/slash-chain add /x y z")
    h.type("/slash-chain")
    h.end_turn()
    h.settle()

    assert h.answers[-2:] == [
        "added 4. /x y z: it runs after the rest, whatever their status",
        "on · 2/4 /b x, waiting for its turn; next: && /bad\n1. /a · done\n2. /b x · running\n3. /bad · pending\n"
        "4. /x y z · pending",
    ]
    assert others(h) == [("a", ""), ("b", "x"), ("bad", ""), ("x", "y z")]
    assert h.ui.lines == [
        "1/3: /a",
        "2/3: /b x",
        "3/4: /bad",
        "/bad failed: it failed: broke",
        "4/4: /x y z",
        "ended: 3 succeeded, 1 failed, 0 skipped",
    ]


def test_steps_added_run_first_in_first_out_one_after_another() -> None:
    h = running("/a && /b x")

    h.type("/slash-chain add /c")
    h.type("/slash-chain add /x 2")
    h.end_turn()
    h.settle()

    assert others(h) == [("a", ""), ("b", "x"), ("c", ""), ("x", "2")]
    assert h.ui.lines[-3:] == ["3/4: /c", "4/4: /x 2", "all 4 command(s) ran"]


def test_drop_removes_a_pending_step_and_it_never_runs() -> None:
    h = running("/a && /b x && /c && /x")

    h.type("/slash-chain drop 3")
    h.type("/slash-chain steps")
    h.end_turn()
    h.settle()

    assert h.answers[-2:] == ["dropped 3. /c: it will not run", "1. /a · done\n2. /b x · running\n3. /x · pending"]
    assert others(h) == [("a", ""), ("b", "x"), ("x", "")]
    assert h.ui.lines[-2:] == ["3/3: /x", "all 3 command(s) ran"]


@pytest.mark.parametrize(
    ("line", "drop", "answer"),
    [
        ("/a && /b x && /c", "1", "1. /a is not pending (it runs or ran): only a step not reached yet is dropped"),
        ("/a && /b x && /c", "2", "2. /b x is not pending (it runs or ran): only a step not reached yet is dropped"),
        ("/a && /b x && /c", "4", "drop takes the number of a pending step, as /slash-chain steps lists it"),
        ("/a && /b x && /c", "0", "drop takes the number of a pending step, as /slash-chain steps lists it"),
        ("/a && /b x && /c", "x", "drop takes the number of a pending step, as /slash-chain steps lists it"),
        ("/a && /b x && /c", "3 3", "drop takes the number of a pending step, as /slash-chain steps lists it"),
        ("/a && /b x && /c", "\uff13", "drop takes the number of a pending step, as /slash-chain steps lists it"),
        (
            "/a && /b x ; while /c; do /x; done",
            "4",
            "4. /x is all of a loop's condition or body: stop the chain instead",
        ),
    ],
)
def test_drop_refuses_what_is_not_a_pending_step_and_changes_nothing(line: str, drop: str, answer: str) -> None:
    h = running(line)
    before = h.session.chains.running

    h.type(f"/slash-chain drop {drop}")

    assert h.answers[-1] == answer
    assert h.session.chains.running == before


def test_a_step_a_loop_ran_in_an_earlier_iteration_is_not_pending() -> None:
    h = MemoryHost(commands={"check": Command(failing_first(5, "red")), "fix": Command(Prompt("fix it"))})
    h.type("until /check; do /fix; done")
    h.settle()
    h.end_turn()  # iteration 2: /check runs again, then /fix waits on its turn

    h.type("/slash-chain drop 2")

    assert h.answers[-1] == "2. /fix is not pending (it runs or ran): only a step not reached yet is dropped"


@pytest.mark.parametrize("words", ["add /x", "drop 3"])
def test_only_the_persons_typing_edits_the_running_program(words: str) -> None:
    h = running("/a && /b x && /c")
    before = h.session.chains.running

    h.run_command("slash-chain", words, "plugin")

    assert h.answers[-1] == "/slash-chain was not run: only the person may run /slash-chain, and this came from plugin"
    assert h.session.chains.running == before


# (`/slash-chain add /x && /c` is a chain of two the person typed, whose first step adds `/x` to it.)
@pytest.mark.parametrize("text", ["", "x", "{ /x; }", "while /c; do /x; done", "sleep 5"])
def test_add_takes_one_slash_command(text: str) -> None:
    h = running("/a && /b x")
    before = h.session.chains.running

    h.type(f"/slash-chain add {text}")

    assert h.answers[-1] == "add takes one slash command or shell step to run after the rest: /slash-chain add /review"
    assert h.session.chains.running == before


@pytest.mark.parametrize("words", ["add /x", "drop 1", "steps"])
def test_with_no_chain_running_there_is_nothing_to_edit_or_list(words: str) -> None:
    h = host()

    h.type(f"/slash-chain {words}")

    assert h.answers == ["no chain runs" + (": add and drop change a running chain" if words != "steps" else "")]


# Attacks: who else might try to edit the person's running program, and through what.


def test_the_models_self_command_cannot_add_a_step() -> None:
    h = running("/a && /b x")
    before = h.session.chains.running

    answer = h.builtin_call("slash-chain", "add !touch owned")

    assert h.session.chains.running == before
    assert answer == Denied("/slash-chain was not run: it is not one of this session's built-in slash commands.")


def test_a_saved_chain_cannot_add_a_step_to_the_program_running_it() -> None:
    # Even the person's own file: a saved chain is text from a file, not the person's typing.
    own = SavedFile("sneaky.md", "/home/me/.config/slashkit/chains/sneaky.md", b"/a && /slash-chain add /x planted\n")
    h = host(library([own], []))
    h.type("/sneaky && /b x")
    h.settle()

    h.end_turn()
    h.settle()

    assert ("x", "planted") not in h.runs
    assert any("only the person may run /slash-chain" in line for line in h.ui.lines), h.ui.lines


def test_text_a_pipe_hands_on_cannot_add_a_step() -> None:
    h = MemoryHost(commands={"say": Command(Local(output="add !touch owned")), "b": Command(Prompt("do b"))})
    h.type("/say | /slash-chain && /b x")
    h.settle()

    assert not any(run[0] == "!" for run in h.runs)
    assert h.session.chains.running is not None and h.session.chains.running.total == 3


def test_a_program_holds_a_bounded_number_of_steps() -> None:
    h = running("/a && /b x")
    for n in range(MAX_STEPS - 2):
        h.type(f"/slash-chain add /x {n}")

    h.type("/slash-chain add /x more")

    running_now = h.session.chains.running
    assert running_now is not None and running_now.total == MAX_STEPS
    assert h.answers[-1] == f"the chain holds {MAX_STEPS} steps, as many as one may: nothing was added"


# `add` and saved chains: a name added is read as it would be typed, with the same refusals.

SHIP = b"/a ship && !touch made.txt\n"
PROJECT_SHIP = SavedFile("ship.md", "/work/p/.slashkit/chains/ship.md", SHIP)


def test_add_a_project_chain_the_person_approved_since_the_chain_started_runs_its_shell_step_after_the_rest() -> None:
    h = host(library([], [PROJECT_SHIP]))
    h.type("/b x && /c")
    h.settle()
    h.saved = library([], [PROJECT_SHIP], [(PROJECT_SHIP.source, hashlib.sha256(SHIP).hexdigest())])

    h.type("/slash-chain add /ship")
    h.end_turn()
    h.settle()
    h.shell.finish()
    h.settle()

    assert h.answers[-1] == "added 3. /a ship: it runs after the rest, whatever their status"
    assert [text for _, text in h.shell.started] == ["touch made.txt"]
    assert h.ui.lines[-3:] == ["3/4: /a ship", "4/4: !touch made.txt", "all 4 command(s) ran"]


@pytest.mark.parametrize("name", ["x", "compact"])  # a command the host listed; a built-in it did not
def test_add_a_name_the_host_has_runs_the_hosts_command_not_a_saved_chain_of_that_name(name: str) -> None:
    own = SavedFile(f"{name}.md", f"/home/me/.config/slashkit/chains/{name}.md", b"!touch planted\n")
    h = host(library([own]))
    h.type("/b x && /c")
    h.settle()

    h.type(f"/slash-chain add /{name} y")
    h.end_turn()
    h.settle()

    assert h.answers[-1] == f"added 3. /{name} y: it runs after the rest, whatever their status"
    assert others(h)[-1] == (name, "y")
    assert h.shell.started == []


def gemini() -> MemoryHost:
    """A host whose chains run no built-in (Gemini CLI's rule)."""
    return MemoryHost(
        commands={"b": Command(Prompt("do b")), "compress": Command(Local(), builtin=True)}, rule=rule_for(GEMINI)
    )


AGAIN = SavedFile("again.md", "/home/me/.config/slashkit/chains/again.md", b"/a && /again\n")


@pytest.mark.parametrize(
    ("made", "added", "answer"),
    [
        (
            lambda: host(library([], [PROJECT_SHIP])),
            "/ship",
            "/ship was not run: /work/p/.slashkit/chains/ship.md comes with the project and holds shell steps, so "
            "nothing of it runs until you approve its content as it is now: type /slash-chain allow ship",
        ),
        (
            lambda: host(library([AGAIN])),
            "/again",
            "saved chains call each other in a cycle (again -> again); nothing ran",
        ),
        (
            gemini,
            "/compress",
            "/compress is a built-in that no chain can run on this host, so nothing of this chain ran",
        ),
    ],
    ids=["an unapproved project chain", "a saved chain that calls itself", "a built-in no chain runs here"],
)
def test_add_refuses_what_a_typed_chain_would_refuse_and_changes_nothing(
    made: Callable[[], MemoryHost], added: str, answer: str
) -> None:
    h = made()
    h.type("/b x && /b y")
    h.settle()
    before = h.session.chains.running

    h.type(f"/slash-chain add {added}")

    assert h.answers[-1] == answer
    assert h.session.chains.running == before
