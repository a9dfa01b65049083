"""Saved chains under Hypothesis (issue 28): the file reader never fails on any bytes and reads back what a valid file
says; and a saved chain runs as the same text does in bash written as a shell function (bash is the oracle, as for
the operators)."""

import hashlib
import string

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from slashkit.core.saved_chain import NAME, Problem, SavedChain, SavedFile, library, read
from tests.property.test_operators_bash import LOSSES, WINS, WORDS, Bash, new_host

# The reader


@settings(max_examples=500)
@given(name=st.text(max_size=80), data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_file_is_a_saved_chain_or_one_line_saying_why_not(name: str, data: bytes) -> None:
    found = read(SavedFile(name, f"/p/{name}", data))

    if isinstance(found, Problem):
        assert "\n" not in found.text and "\r" not in found.text
        assert found.text.startswith("saved chain /p/")
    else:
        assert isinstance(found, SavedChain)
        assert NAME.fullmatch(found.name) and found.body.startswith("/")
        assert "\n" not in found.body


words = st.text(alphabet=string.ascii_letters + string.digits + " .,:'-", min_size=1, max_size=30).map(str.strip)
command_names = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)


@settings(max_examples=300)
@example(name="a", description="0  0", steps=[("&&", "a", "0")], blank_lines=0)
@given(
    name=st.from_regex(NAME, fullmatch=True),
    description=words.filter(lambda w: w and not w.startswith(("'", '"'))),
    steps=st.lists(st.tuples(st.sampled_from(["&&", "||", ";", "|"]), command_names, words), min_size=1, max_size=4),
    blank_lines=st.integers(0, 3),
)
def test_a_well_formed_file_reads_back_as_written(
    name: str, description: str, steps: list[tuple[str, str, str]], blank_lines: int
) -> None:
    body = " ".join(f"{op} /{command} {args}".strip() for op, command, args in steps).removeprefix(steps[0][0]).strip()
    text = f"---\ndescription: {description}\n---\n" + "\n" * blank_lines + body + "\n"

    found = read(SavedFile(f"{name}.md", "/p/x.md", text.encode()))

    # The description as a menu shows it: text from a file, its runs of spaces one (`texts.menu_text`).
    shown = " ".join(description.split())
    assert found == SavedChain(name, body, "/p/x.md", shown, digest=hashlib.sha256(text.encode()).hexdigest())


# Against bash

#: Saved chains the typed lines may call: each calls only the ones before it (a cycle runs nothing, which bash
#: would not end), with `$1` and `$ARGUMENTS` in both languages' spelling.
CHAIN_NAMES = ("f1", "f2", "f3")


def step(callable_names: tuple[str, ...]) -> st.SearchStrategy[tuple[str, str]]:
    args = st.sampled_from((*WORDS, "$1", "$ARGUMENTS", "x $1"))
    return st.tuples(st.sampled_from(WINS + LOSSES + callable_names), args)


@st.composite
def saved_lines(draw: st.DrawFn) -> dict[str, list[tuple[str, tuple[str, str]]]]:
    chains: dict[str, list[tuple[str, tuple[str, str]]]] = {}
    for n, name in enumerate(CHAIN_NAMES):
        first = draw(step(CHAIN_NAMES[:n]))
        rest = draw(st.lists(st.tuples(st.sampled_from(["&&", "||", ";"]), step(CHAIN_NAMES[:n])), max_size=3))
        chains[name] = [("", first), *rest]
    return chains


def line(steps: list[tuple[str, tuple[str, str]]], slash: str, arguments: str) -> str:
    return " ".join(f"{op} {slash}{name} {args.replace('$ARGUMENTS', arguments)}".strip() for op, (name, args) in steps)


typed_step = st.tuples(st.sampled_from(WINS + LOSSES + CHAIN_NAMES), st.sampled_from(WORDS))


@settings(max_examples=1500, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    chains=saved_lines(),
    first=typed_step,
    rest=st.lists(st.tuples(st.sampled_from(["&&", "||", ";"]), typed_step), max_size=4),
)
@example(
    chains={"f1": [("", ("ok", ""))], "f2": [("", ("bad", "")), ("&&", ("ok", "x"))], "f3": [("", ("f2", ""))]},
    first=("ok", ""),
    rest=[("||", ("f3", "")), ("&&", ("fine", ""))],
)
def test_a_saved_chain_runs_as_a_bash_function_of_the_same_text(
    bash: Bash,
    chains: dict[str, list[tuple[str, tuple[str, str]]]],
    first: tuple[str, str],
    rest: list[tuple[str, tuple[str, str]]],
) -> None:
    assume(rest or first[0] in CHAIN_NAMES)  # a lone command that is no saved chain is no chain
    h = new_host()
    bodies = {name: line(steps, "/", "$ARGUMENTS") for name, steps in chains.items()}
    h.saved = library(SavedFile(f"{name}.md", f"{name}.md", body.encode()) for name, body in bodies.items())
    typed = [("", first), *rest]

    h.type(line(typed, "/", "$ARGUMENTS"))
    h.settle()

    functions = "\n".join(f"{name}() {{ {line(steps, '', '$*')}; }}" for name, steps in chains.items())
    expected, status = bash.run(f"{functions}\n{line(typed, '', '$*')}")
    assert h.runs == expected
    assert [o.status for o in h.outcomes] == [status]
