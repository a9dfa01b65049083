"""A program cut off when its session ended (issue 35), resumed only by the person (in-memory host): a continued
session says what was cut off and where; `/slash-chain resume` runs the interrupted step again, then the rest, with
its loop counters as they were; `forget` forgets it; anyone else's `resume` is refused."""

from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt, failing_first
from slashkit.core.chain_machine import Continued, Cut, cut_of


def cut_at_step_two() -> Cut:
    """Where `/a && /b x && /c` stood while `/b x` waited on its turn, as a journal kept it."""
    h = MemoryHost(commands={"a": Command(Local()), "b": Command(Prompt("do b")), "c": Command(Local())})
    h.type("/a && /b x && /c")
    h.settle()
    running = h.session.chains.running
    assert running is not None and running.step.command == "b"
    return cut_of(running)


def fresh() -> MemoryHost:
    return MemoryHost(commands={"a": Command(Local()), "b": Command(Prompt("do b")), "c": Command(Local())})


def test_a_continued_session_says_what_was_cut_off_and_runs_nothing_by_itself() -> None:
    h = fresh()

    h.handle(Continued(cut_at_step_two()))
    h.settle()

    assert h.ui.lines == [
        "the chain stopped at 2/3 /b x when the session ended; /slash-chain resume runs the rest, "
        "/slash-chain forget forgets it"
    ]
    assert h.runs == []


def test_resume_runs_the_interrupted_step_again_then_the_rest_never_the_step_before() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.type("/slash-chain resume")
    h.settle()
    h.end_turn()

    assert [r for r in h.runs if r[0] != "slash-chain"] == [("b", "x"), ("c", "")]
    assert h.ui.lines[1:] == [
        "resumed: 2/3 /b x was interrupted and runs again, then the rest",
        "2/3: /b x",
        "3/3: /c",
        "all 3 command(s) ran",
    ]


def test_a_loop_cut_off_in_its_third_iteration_resumes_in_its_third_iteration() -> None:
    commands = {"check": Command(failing_first(5, "red")), "fix": Command(Prompt("fix it"))}
    first = MemoryHost(commands=dict(commands))
    first.type("until /check; do /fix; done")
    first.settle()
    for _ in range(2):
        first.end_turn()
    running = first.session.chains.running
    assert running is not None and running.where.loops[-1].iteration == 3 and running.step.command == "fix"

    h = MemoryHost(commands=dict(commands))
    h.handle(Continued(cut_of(running)))
    h.type("/slash-chain resume")
    h.settle()

    assert h.ui.lines[1:] == ["resumed: 2/2 /fix was interrupted and runs again, then the rest", "2/2: /fix"]
    assert h.ui.statuses[-1] == "until 3/10 · /fix · next /check"
    assert h.runs[1:] == [("fix", "")]  # the condition that failed in iteration 3 is not asked again


def test_forget_forgets_and_nothing_is_left_to_resume() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.type("/slash-chain forget")
    h.type("/slash-chain resume")

    assert h.answers == [
        "forgot the chain cut off at 2/3 /b x",
        "no chain was cut off in this session: nothing to resume",
    ]
    assert [r for r in h.runs if r[0] != "slash-chain"] == []


def test_only_the_persons_typing_resumes() -> None:
    h = fresh()
    h.handle(Continued(cut_at_step_two()))

    h.run_command("slash-chain", "resume", "plugin")
    h.settle()

    assert [r for r in h.runs if r[0] != "slash-chain"] == []
    assert h.answers == ["/slash-chain was not run: only the person may run /slash-chain, and this came from plugin"]
