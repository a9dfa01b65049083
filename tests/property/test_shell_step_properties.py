"""The shell step's grammar (issue 34) as properties: a step's text is the shell's, up to the first operator outside
quotes, kept whole (quoted operators included) wherever the step stands; the commands around it read as they would
without it; a step never follows a `|`; and only a `!` followed by a non-space starts one."""

from hypothesis import given
from hypothesis import strategies as st

from slashkit.core.chain import holds_chain, written_steps
from slashkit.core.grammar import parse
from slashkit.core.program import SHELL

#: Plain words a shell line holds (no quote, operator, backslash or newline), and quoted ones holding operators.
WORDS = st.text(alphabet="abcxyz019._-/=$>", min_size=1, max_size=8)
QUOTED = st.builds(lambda q, w: f"{q}{w}{q}", st.sampled_from(["'", '"']), st.text(alphabet="ab &|;", max_size=10))
SHELL_TEXT = st.lists(st.one_of(WORDS, QUOTED), min_size=1, max_size=6).map(" ".join)
JOINTS = st.sampled_from(["&&", "||", ";"])


@given(SHELL_TEXT, JOINTS, JOINTS)
def test_a_shell_steps_text_is_kept_whole_between_the_commands_around_it(text: str, before: str, after: str) -> None:
    program = parse(f"/a x {before} !{text} {after} /b y").unwrap()

    steps = list(written_steps(program))

    assert [(s.command, s.args, s.op) for s in steps] == [("a", "x", "&&"), (SHELL, text, before), ("b", "y", after)]
    assert holds_chain(f"x {before} !{text}")


@given(SHELL_TEXT)
def test_a_loop_is_decided_by_a_shell_step_written_anywhere_in_it(text: str) -> None:
    program = parse(f"until !{text}; do /fix; !{text}; done").unwrap()

    assert [(s.command, s.args) for s in written_steps(program)] == [(SHELL, text), ("fix", ""), (SHELL, text)]


@given(SHELL_TEXT)
def test_a_shell_step_never_takes_what_a_pipe_hands_on(text: str) -> None:
    refused = parse(f"/a | !{text}").failure()

    assert refused.why.startswith("a shell step takes no text from a pipe")
    assert parse(f"!{text} | /a").unwrap()


@given(SHELL_TEXT, st.sampled_from([" ", "\t", "\u3000"]))
def test_a_bang_followed_by_a_space_starts_no_step(text: str, space: str) -> None:
    assert not holds_chain(f"x && !{space}{text}")
    # The reference's reading: an operator before no command is the command's text.
    assert [(s.command, s.args) for s in written_steps(parse(f"/a && !{space}{text}").unwrap())] == [
        ("a", f"&& !{space}{text}")
    ]


@given(st.sampled_from(["'", '"']), WORDS)
def test_an_unclosed_quote_is_refused_where_it_opens(quote: str, word: str) -> None:
    refused = parse(f"/a && !echo {quote}{word}").failure()

    assert refused.why == f"the quote {quote} opened here is not closed"
    assert refused.column == len("/a && !echo ") + 1
