"""The program's tree (slashkit.core.program) as the person sees it: written back as text (the status area,
`/slash-chain steps`, a journaled run), and edited while it runs (`/slash-chain drop N`): what is left, numbered
again, or None when a loop would be left without its condition or its body."""

import pytest

from slashkit.core.grammar import parse
from slashkit.core.program import Call, Command, commands, printed, without


@pytest.mark.parametrize(
    "line",
    [
        "/a x | /b | /c y",
        "while /a; do for w in b c; do /x $w || break 2 ; continue 3; done; done",
        "until /a; do break; done",
        "{ /a ; sleep 5m; } && !make test",
    ],
)
def test_a_program_is_written_back_as_it_reads(line: str) -> None:
    assert printed(parse(line).unwrap()) == line


def test_a_saved_chain_called_is_written_as_its_call() -> None:
    body = Command("a", "")
    assert (printed(Call("ship", "Bob", body)), printed(Call("ship", "", body))) == ("/ship Bob", "/ship")


@pytest.mark.parametrize(
    ("line", "number", "left"),
    [
        ("/a | /b | /c", 2, "/a | /c"),
        ("/a | /b", 1, "/b"),
        ("/a ; /b ; /c", 2, "/a ; /c"),
        ("/a ; /b", 2, "/a"),
        ("/a && /b || /c", 1, "/b || /c"),
        ("/a && /b || /c", 2, "/a || /c"),
        ("/a && /b", 2, "/a"),
        ("{ /a ; /b; } && /c", 1, "{ /b; } && /c"),
        ("{ /a; } && /c", 1, "/c"),
        ("while /a; do /b ; /c; done", 2, "while /a; do /c; done"),
        ("until /a; do /b ; /c; done", 3, "until /a; do /b; done"),
        ("for w in x y; do /a ; /b; done", 1, "for w in x y; do /b; done"),
        ("/z && for w in x; do /a; done", 1, "for w in x; do /a; done"),
    ],
)
def test_a_command_dropped_leaves_the_rest_numbered_again(line: str, number: int, left: str) -> None:
    kept = without(parse(line).unwrap(), number)

    assert kept is not None
    assert printed(kept) == left
    assert [c.number for c in commands(kept)] == list(range(1, len(list(commands(kept))) + 1))


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("/a", 1),
        ("while /a; do /b; done", 1),
        ("while /a; do /b; done", 2),
        ("until /a && /b; do /c; done", 3),
        ("for w in x; do /a; done", 1),
        ("{ /a; }", 1),
    ],
)
def test_a_loop_is_never_left_without_its_condition_or_its_body_nor_a_program_without_a_command(
    line: str, number: int
) -> None:
    assert without(parse(line).unwrap(), number) is None
