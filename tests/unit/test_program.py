"""The program's tree (slashkit.core.program) as the person sees it: written back as text (the status area,
`/slash-chain steps`, a journaled run), and edited while it runs (`/slash-chain drop N`): what is left, numbered
again, or None when a loop would be left without its condition or its body."""

import pytest

from slashkit.core.grammar import parse
from slashkit.core.program import AndOr, Call, Command, Sequence, commands, is_and_list, numbered, printed, without


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
        ("while /a; do while /b; do /c; done; done", 3),
        ("until /a; do /b; done ; /c", 1),
    ],
)
def test_a_loop_is_never_left_without_its_condition_or_its_body_nor_a_program_without_a_command(
    line: str, number: int
) -> None:
    assert without(parse(line).unwrap(), number) is None


def test_only_slash_commands_and_saved_chains_joined_by_and_alone_are_the_references_kind_of_chain() -> None:
    def call(line: str) -> Call:
        return Call("ship", "", parse(line).unwrap())

    assert is_and_list(parse("/a && /b").unwrap())
    assert is_and_list(call("/a && /b"))
    assert is_and_list(AndOr(Command("a", ""), (("&&", call("/b && /c")),)))
    assert not is_and_list(call("/a || /b"))
    assert not is_and_list(AndOr(Command("a", ""), (("&&", call("/b ; /c")),)))
    assert not is_and_list(parse("/a ; /b").unwrap())
    assert not is_and_list(parse("{ /a; }").unwrap())


def test_the_commands_are_listed_and_numbered_in_the_order_they_are_written_a_called_chains_in_its_place() -> None:
    ship = Call("ship", "Bob", parse("/c $1 && /d").unwrap(), by="ship")
    loop = parse("until /a; do { /b | /x; } ; for w in y; do /e; done; done").unwrap()
    program = numbered(Sequence((loop, ship, Command("f", ""))))

    assert [(c.command, c.number) for c in commands(program)] == [
        ("a", 1),
        ("b", 2),
        ("x", 3),
        ("e", 4),
        ("c", 5),
        ("d", 6),
        ("f", 7),
    ]
    assert isinstance(program, Sequence)
    assert (program.items[1].name, program.items[1].args, program.items[1].by) == ("ship", "Bob", "ship")  # type: ignore[union-attr]
    assert printed(program) == "until /a; do { /b | /x; } ; for w in y; do /e; done; done ; /ship Bob ; /f"


def test_an_and_or_list_left_with_one_command_is_that_command() -> None:
    assert without(parse("/a && /b").unwrap(), 2) == parse("/a").unwrap()
    assert without(parse("/a || /b ; /c").unwrap(), 3) == parse("/a || /b").unwrap()
