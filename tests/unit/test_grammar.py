"""The grammar's edges (issue 33): what `sleep` takes, how a typed line that opens a program is told from a prompt,
and a program written back as text."""

import pytest

from slashkit.core.grammar import MAX_NESTING, MAX_SLEEP, MAX_TEXT, looks_like_program, parse, starts_program
from slashkit.core.program import AndOr, Sleep, printed


@pytest.mark.parametrize(("written", "seconds"), [("1", 1), ("1s", 1), ("90s", 90), ("5m", 300), ("24h", MAX_SLEEP)])
def test_sleep_takes_seconds_minutes_or_hours_up_to_a_day(written: str, seconds: int) -> None:
    node = parse(f"/a && sleep {written}").unwrap()

    assert isinstance(node, AndOr)
    assert node.rest[0][1] == Sleep(seconds, written)
    assert printed(node) == f"/a && sleep {written}"


@pytest.mark.parametrize("written", ["0", "0s", "25h", "86401s"])
def test_sleep_refuses_no_time_and_more_than_a_day_saying_where(written: str) -> None:
    refused = parse(f"/a && sleep {written}").failure()

    assert (refused.why, refused.column) == ("sleep takes from 1 second to 24 hours", 13)


@pytest.mark.parametrize("written", ["5d", "m", "-1", "5.5m"])
def test_sleep_refuses_what_is_no_duration(written: str) -> None:
    refused = parse(f"/a && sleep {written}").failure()

    assert refused.why.startswith("sleep takes a duration such as 30s, 5m or 1h, not ")


@pytest.mark.parametrize(
    ("line", "opens", "meant"),
    [
        ("  until /check; do /fix", True, True),
        ("\u3000{ /a; ", True, True),
        ("{ { /a", True, True),
        ("for w in a b; do /x", True, True),
        ("for\tw\tin", True, True),
        ("while you are at it", True, False),
        ("for the record", True, False),
        ("{x", False, False),
        ("untilnow /a", False, False),
        ("/a && until", False, False),
    ],
)
def test_a_typed_line_opens_a_program_and_looks_meant_as_one_or_not(line: str, opens: bool, meant: bool) -> None:
    assert starts_program(line) == opens
    assert looks_like_program(line) == meant


def test_an_error_on_a_later_line_of_a_file_says_its_line_and_its_column_in_that_line() -> None:
    refused = parse("/a\n/b\n  for 1x in a; do /c; done", file=True).failure()

    assert (refused.why, refused.line, refused.column, refused.where) == (
        "for takes a name, not '1x'",
        3,
        7,
        "line 3, column 7",
    )


@pytest.mark.parametrize("indent", ["", "   ", "\t", "\ufeff"])
def test_a_comment_line_of_a_file_may_be_indented_by_any_whitespace_the_hosts_read_as_such(indent: str) -> None:
    assert printed(parse(f"{indent}# why: the review first\n/a", file=True).unwrap()) == "/a"


def test_a_line_that_opens_with_a_word_and_a_semicolon_is_worth_parsing() -> None:
    assert starts_program("until;")
    assert starts_program("while; do /a; done")


@pytest.mark.parametrize("line", ["\ufeffwhile /a", "while\ufeff/a", "while !true; do /a", "{ !make test"])
def test_a_line_that_opens_a_program_across_any_whitespace_or_with_a_shell_step_was_meant_as_one(line: str) -> None:
    assert looks_like_program(line)


@pytest.mark.parametrize(
    ("line", "why", "column"),
    [
        ("for 1 in a; do /a; done", "for takes a name, not '1'", 5),
        ("for " + "1" * 50, f"for takes a name, not {'1' * 40!r}", 5),
        ("for x in a b", "for's words end with ; or a new line before do", 13),
        ("{; /a; }", "a command was expected, not ';'", 2),
    ],
)
def test_a_for_or_a_group_written_wrong_is_refused_saying_what_and_where(line: str, why: str, column: int) -> None:
    refused = parse(line).failure()

    assert (refused.why, refused.column) == (why, column)


def test_a_for_whose_name_is_missing_at_a_line_end_says_it_saw_the_new_line() -> None:
    assert parse("for \n", file=True).failure().why == "for takes a name, not '\\n'"


def test_a_group_of_a_file_may_open_its_body_on_the_next_line() -> None:
    assert printed(parse("{\n/a\n}", file=True).unwrap()) == "{ /a; }"


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("!echo \\;; /x", "!echo \\; ; /x"),
        ('!echo \\"hi && /x', '!echo \\"hi && /x'),
        ("!echo X && /a", "!echo X && /a"),
        ("!sleep 1 & wait && /a", "!sleep 1 & wait && /a"),
        ("!echo 'a && b' && /a", "!echo 'a && b' && /a"),
    ],
)
def test_a_shell_step_ends_at_the_first_operator_outside_quotes_and_escapes(line: str, read: str) -> None:
    assert printed(parse(line).unwrap()) == read


def test_a_for_of_a_file_may_put_do_lines_below_its_words() -> None:
    read = parse("for w in a b\n\n  # then\n  do /x $w\ndone", file=True).unwrap()

    assert printed(read) == "for w in a b; do /x $w; done"


def test_a_bang_at_the_end_of_a_line_is_no_shell_step_and_a_line_may_open_after_any_js_whitespace() -> None:
    assert not looks_like_program("while !")
    assert not looks_like_program("{ !")
    assert starts_program("\ufeffwhile /a")


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("while /a;do /b;done", "while /a; do /b; done"),
        ("/a &&", "/a &&"),
        ("/a ;", "/a ;"),
    ],
)
def test_a_semicolon_may_touch_the_word_it_closes_on_and_an_operator_before_no_command_is_an_argument(
    line: str, read: str
) -> None:
    assert printed(parse(line).unwrap()) == read


@pytest.mark.parametrize(
    ("line", "why", "column"),
    [
        ("for; do /a; done", "for takes a name, not ';'", 4),
        ("/a && sleep;", "sleep takes a duration such as 30s, 5m or 1h, not ';'", 12),
        ("while /a; do /b; done ; break", "break is not inside a loop", 25),
        ("for w in a; do /b; done ; break", "break is not inside a loop", 27),
    ],
)
def test_a_word_that_lacks_what_follows_it_or_a_break_after_its_loop_ended_is_refused(
    line: str, why: str, column: int
) -> None:
    refused = parse(line).failure()

    assert (refused.why, refused.column) == (why, column)


def test_a_loop_of_a_file_may_open_its_condition_on_the_next_line() -> None:
    assert printed(parse("while\n/a\ndo /b\ndone", file=True).unwrap()) == "while /a; do /b; done"


def test_nesting_is_counted_inside_each_compound_command_not_across_the_ones_before_it() -> None:
    def nested(levels: int) -> str:
        return "{ " * levels + "/x" + "; }" * levels

    before = "{ { /a; }; } ; "
    assert parse(before + nested(MAX_NESTING)).unwrap()
    assert parse(before + nested(MAX_NESTING + 1)).failure().why == f"it nests more than {MAX_NESTING} deep"


def test_a_shell_step_of_a_file_ends_at_its_line() -> None:
    assert printed(parse("!make test\n/deploy now", file=True).unwrap()) == "!make test ; /deploy now"


def test_a_text_over_the_bound_is_refused_at_its_start_and_one_at_it_is_read() -> None:
    assert printed(parse("/a " + "x" * (MAX_TEXT - 3)).unwrap()) == "/a " + "x" * (MAX_TEXT - 3)
    refused = parse("/a " + "x" * (MAX_TEXT - 2)).failure()
    assert (refused.why, refused.offset, refused.column) == (f"it is over {MAX_TEXT // 1024} KiB", 0, 1)


def test_a_typed_line_has_no_comments_and_a_new_line_in_it_is_a_blank() -> None:
    assert parse("# note\n/a").failure().why == "a command was expected, not '#'"
    assert printed(parse("{ /a ; }\n&& /b").unwrap()) == "{ /a; } && /b"


@pytest.mark.parametrize(("text", "file"), [("   ", False), ("# only a note\n\n", True)])
def test_a_text_with_no_command_says_so(text: str, file: bool) -> None:
    assert parse(text, file=file).failure().why == "it holds no command"


@pytest.mark.parametrize("file", [False, True])
def test_what_follows_a_whole_program_is_refused_where_it_stands(file: bool) -> None:
    refused = parse("{ /a; } X", file=file).failure()

    assert (refused.why, refused.column) == ("'X' was not expected", 9)


def test_an_operator_at_a_line_end_of_a_file_joins_the_next_line() -> None:
    assert printed(parse("/a &&\n/b ||\n/c |\n/d", file=True).unwrap()) == "/a && /b || /c | /d"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("/x && /a | { /b; }", "only slash commands take part in a pipe (|)"),
        ("/x && /a | !make test", "a shell step takes no text from a pipe (|): put it first, or after && or ;"),
    ],
)
def test_a_pipe_into_what_takes_no_text_is_refused_where_the_pipeline_starts(line: str, why: str) -> None:
    refused = parse(line).failure()

    assert (refused.why, refused.column) == (why, 7)
