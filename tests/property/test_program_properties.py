"""The grammar and the interpreter's state (issue 33), as properties: any text is read as a program or refused with
where (never an exception), a program printed back reads as the same tree, and the interpreter's state survives a
round trip through cattrs and JSON at every step, and goes on from there exactly as it would have."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from slashkit.adapters.run_codec import read, written
from slashkit.core.grammar import MAX_NESTING, parse, starts_program
from slashkit.core.interpreter import Asked, Finished, Napping, Run, advance
from slashkit.core.js_text import JS_WHITESPACE
from slashkit.core.program import printed
from tests.property.test_programs_bash import Scripts, programs

PIECES = ["/a", "/b x", " ", ";", "\n", "&&", "||", "|", "while", "until", "for", "v", "in", "do", "done", "{", "}",
          "break", "continue", "sleep", "5m", "#", "$v", "x", "!x", "!sh -c 'p && q'", "'"]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=30).map(" ".join), st.booleans())
def test_any_text_is_a_program_or_says_where_it_is_none(text: str, file: bool) -> None:
    match parse(text, file):
        case Success(node):
            assert parse(printed(node)).unwrap() == node
        case Failure(error):
            assert 0 <= error.offset <= len(text)
            assert error.why


@given(st.text(max_size=200), st.booleans())
def test_no_text_makes_the_grammar_throw(text: str, file: bool) -> None:
    assert isinstance(parse(text, file), Success | Failure)


def test_nesting_past_the_bound_is_refused_with_where() -> None:
    deep = "{ " * (MAX_NESTING + 1) + "/a" + "; }" * (MAX_NESTING + 1)

    refused = parse(deep).failure()

    assert refused.why == f"it nests more than {MAX_NESTING} deep"
    assert refused.column == 2 * MAX_NESTING + 1
    assert parse("{ " * MAX_NESTING + "/a" + "; }" * MAX_NESTING).unwrap()


@settings(max_examples=300, deadline=None)
@given(programs())
def test_a_program_printed_back_reads_as_the_same_tree(program: tuple[str, Scripts]) -> None:
    node = parse(program[0]).unwrap()

    assert parse(printed(node)).unwrap() == node


@settings(max_examples=300, deadline=None)
@given(programs(), st.text(max_size=20))
def test_the_state_round_trips_through_json_at_every_step_and_goes_on_the_same(
    program: tuple[str, Scripts], output: str
) -> None:
    text, scripts = program
    run = Run(parse(text).unwrap(), loop_cap=50)
    runs = dict.fromkeys(scripts, 0)
    while True:
        kept = read(json.loads(json.dumps(written(run))))
        assert kept == run
        now = advance(run)
        assert advance(kept) == now
        match now.next:
            case Finished():
                return
            case Napping():
                run = run.ended("success")
            case Asked(step):
                said = scripts[step.command][min(runs[step.command], len(scripts[step.command]) - 1)]
                runs[step.command] += 1
                run = run.ended("success" if said else "failure", output)


@given(
    st.text(alphabet=JS_WHITESPACE + "x", max_size=3),
    st.sampled_from(["/", *PIECES]),
    st.lists(st.sampled_from([*PIECES, *JS_WHITESPACE]), max_size=6).map("".join),
)
def test_the_gemini_hooks_thin_entry_hands_on_every_line_that_may_open_a_program(
    lead: str, first: str, rest: str
) -> None:
    # The thin entry answers without the core a line it takes for no chain: a program it missed would reach the
    # model as a prompt.
    from slashkit.adapters.gemini.hook import MAY_BE_OURS

    line = lead + first + rest
    if starts_program(line) or line.lstrip(JS_WHITESPACE).startswith("/"):
        assert MAY_BE_OURS.match(line), line
