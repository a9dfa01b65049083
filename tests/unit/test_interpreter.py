"""The interpreter's moves read directly (slashkit.core.interpreter): what each command it asks for is told about the
output it is handed and hands on, the operator it stands after, a saved chain's arguments around a nested call, and
the history `/slash-chain steps` lists. The in-memory host's view of the same is tests/unit/test_programs.py."""

from collections.abc import Sequence as Seq

from slashkit.core.grammar import parse
from slashkit.core.interpreter import (
    MAX_STEPS,
    Asked,
    Bounded,
    Capped,
    Finished,
    Mark,
    Passed,
    Run,
    Status,
    advance,
    history,
)
from slashkit.core.program import AndOr, Call, Command, Node, Pipeline, Sequence, Sleep, numbered


def asked(program: Node, statuses: Seq[Status | None]) -> list[Asked]:
    """Every command the program asks for while its commands end as `statuses` say, in order (the one asked after
    the last status included)."""
    seen: list[Asked] = []
    for n in range(len(statuses) + 1):
        move = advance(Run(program, tuple(statuses[:n]))).next
        if isinstance(move, Asked):
            seen.append(move)
    return seen


def passed(program: Node, statuses: Seq[Status | None]) -> list[Passed]:
    """The commands the program passed over once its commands ended as `statuses` say."""
    lines = [advance(Run(program, tuple(statuses[:n]))).lines for n in range(len(statuses) + 1)]
    return [line for said in lines for line in said if isinstance(line, Passed)]


def test_each_part_of_a_pipeline_is_told_what_it_is_handed_and_what_it_hands_on() -> None:
    said = asked(parse("/a | /b | /c ; /d").unwrap(), ["success", "success", "success"])

    assert [(a.step.command, a.handed, a.hands_on) for a in said] == [
        ("a", False, True),
        ("b", True, True),
        ("c", True, False),
        ("d", False, False),
    ]


def test_a_pipeline_keeps_the_operator_before_it_on_its_first_command() -> None:
    said = asked(parse("/x && /a | /b").unwrap(), ["success", "success"])

    assert [(a.step.command, a.step.op) for a in said] == [("x", "&&"), ("a", "&&"), ("b", "|")]


def test_a_command_a_pipe_passed_over_hands_nothing_on_so_the_rest_of_the_pipeline_is_passed_over_too() -> None:
    program = parse("/a | /b | /c").unwrap()

    assert [(p.step.command, p.step.op) for p in passed(program, ["failure"])] == [("b", "|"), ("c", "|")]


def test_a_saved_chain_that_ends_in_a_sleep_hands_nothing_on_through_a_pipe() -> None:
    ship = Call("ship", "", Sequence((Command("x", ""), Sleep(5, "5s"))))
    program = numbered(Pipeline((ship, Command("c", ""))))

    assert advance(Run(program, ("success", "success"))).next == Finished("success")
    assert [p.step.command for p in passed(program, ["success", "success"])] == ["c"]


def test_a_saved_chain_called_in_a_pipeline_is_handed_the_output_and_its_arguments_come_back_after_a_nested_call() -> (
    None
):
    inner = Call("inner", "Y", Command("b", "$1"))
    outer = Call("outer", "X", Sequence((inner, Command("c", "$1"))))
    program = numbered(Pipeline((Command("a", ""), outer)))

    said = asked(program, ["success", "success"])

    expected = [("a", "", False), ("b", "Y", True), ("c", "X", False)]
    assert [(a.step.command, a.step.args, a.handed) for a in said] == expected


def test_the_history_lists_each_command_with_how_it_ended_and_what_was_passed_over() -> None:
    assert history(Run(parse("/a ; /b ; /c").unwrap(), ("success", "failure", "success"))) == (
        (1, "success"),
        (2, "failure"),
        (3, "success"),
    )
    assert history(Run(parse("/a && /b ; /c").unwrap(), ("failure",))) == ((1, "failure"), (2, "skipped"))
    assert history(Run(parse("/a && /b").unwrap(), (None,))) == ((1, "refused"),)


def test_a_list_keeps_the_operator_before_it_on_its_first_command_and_each_later_one_stands_after_its_own() -> None:
    said = asked(parse("/x && { /a ; /b ; }").unwrap(), ["success", "success", "success"])

    assert [(a.step.command, a.step.op) for a in said] == [("x", "&&"), ("a", "&&"), ("b", ";")]


def test_a_compound_command_passed_over_is_passed_whole_each_command_after_its_operator_and_from_its_file() -> None:
    assert [(p.step.command, p.step.op) for p in passed(parse("/a || { /b && /c; }").unwrap(), ["success"])] == [
        ("b", "||"),
        ("c", "&&"),
    ]
    ship = Call("ship", "", AndOr(Command("a", "", by="ship"), (("&&", Command("b", "", by="ship")),)), by="ship")
    assert [(p.step.command, p.step.by) for p in passed(numbered(ship), ["failure"])] == [("b", "ship")]


def test_a_loop_capped_says_the_iteration_it_stopped_after_and_its_condition_stands_first_after_and() -> None:
    program = parse("while /a; do /b; done").unwrap()
    statuses: list[Status | None] = ["success", "success", "success", "success"]

    said = asked(program, statuses[:3])
    capped = [line for line in advance(Run(program, tuple(statuses), loop_cap=2)).lines if isinstance(line, Capped)]

    assert [(a.step.command, a.step.op) for a in said] == [("a", "&&"), ("b", ";"), ("a", "&&"), ("b", ";")]
    assert capped == [Capped(Mark("while", 2, 2))]


def ran(line: str) -> list[str]:
    """What a program asks for, command and arguments, while every command succeeds, to its end."""
    program = parse(line).unwrap()
    statuses: list[Status | None] = []
    seen: list[str] = []
    while isinstance(move := advance(Run(program, tuple(statuses))).next, Asked):
        seen.append(f"{move.step.command} {move.step.args}")
        statuses.append("success")
    return seen


def test_break_and_continue_with_a_count_leave_or_go_on_with_that_many_loops_out_of_three_or_four() -> None:
    nested = "for a in 1 2; do for b in x y; do for c in p q; do /x $a$b$c; {}; done; done; done"
    assert ran(nested.format("break 2")) == ["x 1xp", "x 2xp"]
    assert ran(nested.format("continue 2")) == ["x 1xp", "x 1yp", "x 2xp", "x 2yp"]
    four = "for z in 1 2; do for a in 1; do for b in x; do for c in p q; do /x $z$c; {}; done; done; /y $z; done; done"
    assert ran(four.format("break 3")) == ["x 1p", "x 2p"]
    assert ran(four.format("continue 3")) == ["x 1p", "x 2p"]


def test_an_expansion_with_nothing_to_fill_stays_as_written_and_a_missing_argument_is_empty() -> None:
    assert ran("/a $1 ${X} $HOME") == ["a $1 ${X} $HOME"]
    ship = Call("ship", "one two", Command("b", "[$1] [$3] $HOME ${X} $ARGUMENTS"))
    said = asked(numbered(ship), [])
    assert [a.step.args for a in said] == ["[one] [] $HOME ${X} one two"]


def test_a_finished_program_counts_every_command_it_asked_for_or_passed_over() -> None:
    done = advance(Run(parse("/a && /b ; /c").unwrap(), ("failure", "success")))

    assert (done.next, done.seen) == (Finished("success"), 3)


def test_a_program_that_reaches_the_bound_of_steps_ends_failed_with_its_line_and_its_count() -> None:
    program = parse("while /a; do while /b; do while /c; do /d; done; done; done").unwrap()
    statuses: list[Status | None] = []
    while isinstance((move := advance(Run(program, tuple(statuses)))).next, Asked):
        statuses.append("success")

    assert (move.next, move.lines[-1], move.seen) == (Finished("failure"), Bounded(MAX_STEPS), MAX_STEPS + 1)


def test_a_command_ended_with_no_output_hands_on_none() -> None:
    assert Run(parse("/a | /b").unwrap()).ended("success").output == ""
