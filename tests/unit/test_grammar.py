"""The grammar's edges (issue 33): what `sleep` takes, how a typed line that opens a program is told from a prompt,
and a program written back as text."""

import pytest

from slashkit.core.grammar import MAX_SLEEP, looks_like_program, parse, starts_program
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
