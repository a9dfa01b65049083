"""Editing a running program (`/slash-chain add` and `drop`, issue 35), as properties over generated programs stopped
at any step: the interpreter's `history` is what the run said as it went; a step dropped before it was reached
never runs and changes nothing of what ran; a step added runs last; and the replay of the edited program agrees
with the run so far, so its state stays one value a journal can keep."""

from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st

from slashkit.core.grammar import parse
from slashkit.core.interpreter import Asked, Finished, Napping, Passed, Run, advance, history
from slashkit.core.program import Command, Node, appended, commands, without
from tests.property.test_programs_bash import Scripts, programs


class Driver:
    """Runs programs by the scripts of their commands (a command's last outcome repeats; one with no script
    succeeds), counting each command's runs across the programs it drives, as one session would."""

    def __init__(self, scripts: Scripts) -> None:
        self.scripts = scripts
        self.runs = dict.fromkeys(scripts, 0)

    def status(self, command: str) -> Literal["success", "failure"]:
        script = self.scripts.get(command, [True])
        ok = script[min(self.runs.get(command, 0), len(script) - 1)]
        self.runs[command] = self.runs.get(command, 0) + 1
        return "success" if ok else "failure"

    def stopped(self, run: Run, moves: int) -> tuple[Run, list[tuple[int, str]]]:
        """The program run for at most `moves` moves, and what it said as it went (up to the next command)."""
        said: list[tuple[int, str]] = []
        for move in range(moves + 1):
            now = advance(run)
            said += [(line.number, "skipped") for line in now.lines if isinstance(line, Passed)]
            if move == moves or isinstance(now.next, Finished):
                break
            if isinstance(now.next, Napping):
                run = run.ended("success")
            elif isinstance(now.next, Asked):
                status = self.status(now.next.step.command)
                said.append((now.next.number, status))
                run = run.ended(status)
        return run, said

    def finish(self, run: Run) -> list[str]:
        """Runs the program on to its end; the commands it asked for."""
        asked = []
        while not isinstance((now := advance(run)).next, Finished):
            if isinstance(now.next, Asked):
                asked.append(now.next.step.command)
                run = run.ended(self.status(now.next.step.command))
            else:
                run = run.ended("success")
        return asked


def started(text: str, scripts: Scripts, moves: int) -> tuple[Driver, Run, list[tuple[int, str]]]:
    driver = Driver(scripts)
    run, said = driver.stopped(Run(parse(text).unwrap(), loop_cap=50), moves)
    return driver, run, said


@settings(max_examples=200, deadline=None)
@given(programs(), st.integers(0, 30))
def test_history_is_what_the_run_said_as_it_went(program: tuple[str, Scripts], moves: int) -> None:
    _, run, said = started(*program, moves)

    assert list(history(run)) == said


@settings(max_examples=200, deadline=None)
@given(programs(), st.integers(0, 30), st.data())
def test_a_step_dropped_before_it_was_reached_never_runs_and_what_ran_stays(
    program: tuple[str, Scripts], moves: int, data: st.DataObject
) -> None:
    driver, run, _ = started(*program, moves)
    now = advance(run)
    if not isinstance(now.next, Asked):
        return
    reached = {number for number, _ in history(run)} | {now.next.number}
    pending = [c for c in commands(run.program) if c.number > now.next.number and c.number not in reached]
    if not pending:
        return
    dropped = data.draw(st.sampled_from(pending))

    edited = without(run.program, dropped.number)

    if edited is None:
        return
    kept = Run(edited, run.statuses, loop_cap=run.loop_cap)
    assert advance(kept).next == now.next
    shifted = [(n - (n > dropped.number), outcome) for n, outcome in history(run)]
    assert list(history(kept)) == shifted
    assert [c.command for c in commands(edited)] == [c.command for c in commands(run.program) if c != dropped]
    assert [c.number for c in commands(edited)] == list(range(1, len(list(commands(run.program)))))
    assert dropped.command not in driver.finish(kept)


@settings(max_examples=200, deadline=None)
@given(programs(), st.integers(0, 30))
def test_a_step_added_runs_last_and_what_ran_stays(program: tuple[str, Scripts], moves: int) -> None:
    driver, run, _ = started(*program, moves)
    now = advance(run)
    if isinstance(now.next, Finished):
        return
    last: Node = Command("added", "")

    edited = Run(appended(run.program, last), run.statuses, loop_cap=run.loop_cap)

    assert advance(edited).next == now.next
    assert history(edited) == history(run)
    assert [c.number for c in commands(edited.program)] == list(range(1, len(list(commands(run.program))) + 2))
    assert driver.finish(edited)[-1] == "added"
