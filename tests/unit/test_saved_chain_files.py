"""A saved chain's file (issue 28): front matter and a program;
every file that is none is one line naming it
and why, and the others still work."""

import hashlib

import pytest

from slashkit.core.saved_chain import Problem, SavedChain, SavedFile, library, read


def file(data: bytes, name: str = "ship.md") -> SavedFile:
    return SavedFile(name, f"/p/{name}", data)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_front_matter_gives_the_description_and_the_argument_hint() -> None:
    text = b'---\ndescription: "Ships: the lot"\nargument-hint: <who>\nallowed-tools: Bash\n---\n\n/greet $1 && /x\n\n'

    assert read(file(text)) == SavedChain("ship", "/greet $1 && /x", "/p/ship.md", "Ships: the lot", "<who>", sha(text))


def test_a_file_without_front_matter_is_its_chain_line() -> None:
    assert read(file(b"  /greet\r\n")) == SavedChain("ship", "/greet", "/p/ship.md", digest=sha(b"  /greet\r\n"))


@pytest.mark.parametrize(
    ("data", "name", "says"),
    [
        (b"\xff/greet", "ship.md", "saved chain /p/ship.md: it is not UTF-8 (byte 0)"),
        (b"/" + b"a" * 64 * 1024, "ship.md", "saved chain /p/ship.md: it is over 64 KiB"),
        (b"/greet", "sh ip.md", "saved chain /p/sh ip.md: its name is not letters, digits, - and _ (at most 64)"),
        (b"/greet", "a" * 65 + ".md", "its name is not letters"),
        (b"/greet", "a.b.md", "its name is not letters"),
        (b"/greet", "ship.txt", "its name is not letters"),
        (b"\n  \n", "ship.md", "saved chain /p/ship.md: its body is empty; a saved chain holds at least one command"),
        (b"---\ndescription: x\n---\n", "ship.md", "its body is empty"),
        (b"/a\n\ndone", "ship.md", "saved chain /p/ship.md:3: a command was expected, not 'done'; nothing of it runs"),
        (b"\n\n/a && until /b\n", "ship.md", "ship.md:3: do was expected, not the end; nothing of it runs"),
        (b"greet Bob", "ship.md", "saved chain /p/ship.md:1: a command was expected, not 'greet'; nothing of it runs"),
        (b"/ greet", "ship.md", "'/' is no slash command"),
        (b"while /a; do\n  break 2 x\ndone", "ship.md", "ship.md:2: done was expected, not 'x'"),
        (b"---\ndescription: x\n", "ship.md", "saved chain /p/ship.md:1: its front matter has no closing ---"),
        (b"---\ndescription: x\n/greet", "ship.md", "saved chain /p/ship.md:3: its front matter line '/greet' is no"),
        (b"---\nnot a pair\n---\n/greet", "ship.md", "saved chain /p/ship.md:2: its front matter line 'not a pair'"),
    ],
)
def test_a_file_that_is_no_saved_chain_is_one_line_naming_it_and_why(data: bytes, name: str, says: str) -> None:
    found = read(file(data, name))

    assert isinstance(found, Problem)
    assert says in found.text
    assert "\n" not in found.text


def test_an_unreadable_file_says_so() -> None:
    assert read(SavedFile("ship.md", "/p/ship.md", None)) == Problem("/p/ship.md", "it could not be read")


def test_a_bad_file_leaves_the_others_working() -> None:
    found = library([file(b"\xff", "bad.md"), file(b"/greet", "good.md")])

    assert [c.name for c in found.chains] == ["good"]
    assert [p.source for p in found.problems] == ["/p/bad.md"]


def test_a_line_from_a_file_stays_one_line() -> None:
    found = read(file(b"hello\x85/model x"))

    assert isinstance(found, Problem)
    assert "\x85" not in found.text


def test_a_file_of_exactly_64_kib_is_read() -> None:
    padded = b"/greet" + b" " * (64 * 1024 - 6)

    assert read(file(padded)) == SavedChain("ship", "/greet", "/p/ship.md", digest=sha(padded))


def test_a_name_of_64_characters_is_a_saved_chain() -> None:
    assert isinstance(read(file(b"/greet", "a" * 64 + ".md")), SavedChain)


@pytest.mark.parametrize(
    ("value", "read_as"),
    [
        ('"Ships it"', "Ships it"),
        ("'Ships it'", "Ships it"),
        ('""', ""),
        ('"Ships', '"Ships'),
        ("x'", "x'"),
        ('"', '"'),
    ],
)
def test_a_front_matter_value_loses_the_quotes_around_it_and_only_those(value: str, read_as: str) -> None:
    found = read(file(f"---\ndescription: {value}\n---\n/greet".encode()))

    assert isinstance(found, SavedChain)
    assert found.description == read_as


def test_blank_indented_and_comment_lines_of_the_front_matter_are_passed_over() -> None:
    text = b"---\n\n# a note\n  folded: more\n  a line folded in, no key\n\tx\ndescription: Ships\n---\n/greet"

    assert read(file(text)) == SavedChain("ship", "/greet", "/p/ship.md", "Ships", digest=sha(text))


def test_a_folder_may_say_itself_what_is_wrong_with_it() -> None:
    said = Problem("/p", "holds 300 files; the ones after the first 256 were not read")

    assert library([said, file(b"/greet")]).problems == (said,)


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"/a\ndone\n", 2),
        (b"\n\n/a\ndone\n", 4),  # blank lines before the body count
        (b"  \n/a\ndone\n", 3),  # a line of spaces is part of the body
        (b"\nX\n", 2),
        (b"---\ndescription: Ships\n---\n\n\n/a\ndone\n", 7),  # so do the front matter and the blanks after it
    ],
)
def test_a_file_that_holds_no_program_names_the_line_of_the_file_where_it_goes_wrong(data: bytes, line: int) -> None:
    found = read(file(data))

    assert isinstance(found, Problem)
    assert found.line == line
