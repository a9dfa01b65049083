"""The chain parser: `&& /<name>` splits typed arguments, as seed 003's `parseChain` does, with JavaScript's
whitespace and trim (`slashkit.core.js_text`); `||`, `;` and `|` split where `&&` would, each step keeping the operator
before it."""

import re

import pytest

from slashkit.core.chain import SEPARATOR_JS, Chain, Operator, Step, holds_chain, parse_chain


def test_arguments_without_a_separator_stay_as_typed() -> None:
    assert parse_chain("  keep  my spaces  ") == Chain(head="  keep  my spaces  ", rest=())


def test_a_separator_splits_the_head_from_a_step_and_both_are_trimmed() -> None:
    assert parse_chain("  x y  && /b  z w  ") == Chain(head="x y", rest=(Step("b", "z w"),))


def test_each_separator_starts_a_step_whose_args_run_to_the_next() -> None:
    assert parse_chain("x && /b y && /c && /d z") == Chain(
        head="x", rest=(Step("b", "y"), Step("c", ""), Step("d", "z"))
    )


def test_a_separator_may_start_the_text() -> None:
    assert parse_chain("&& /b y") == Chain(head="", rest=(Step("b", "y"),))


def test_whitespace_between_the_ampersands_and_the_slash_is_optional() -> None:
    assert parse_chain("x &&/b") == Chain(head="x", rest=(Step("b", ""),))
    assert parse_chain("x &&\t\n /b") == Chain(head="x", rest=(Step("b", ""),))


@pytest.mark.parametrize(
    "args",
    [
        "a && b",  # no slash: `/commit a && b` keeps its text
        "a&& /b",  # `&&` must start the text or follow whitespace
        "a; /b",  # so must every other operator
        "a|| /b",
        "a| /b",
        "a |& /b",
        "a ;; /b",
        "a ||| /b",
        "a & /b",
        "a || b",
        "a ; /b!",
        "a && /b/c",  # the name must end at whitespace or the end
        "a && /b!",
        "a && /",
        "a && / b",
        "a &&& /b",
    ],
)
def test_text_that_is_no_separator_stays_in_the_args(args: str) -> None:
    assert parse_chain(args) == Chain(head=args, rest=())
    assert not holds_chain(args)


def test_a_name_is_letters_digits_and_underscore_colon_dot_dash() -> None:
    assert parse_chain("&& /plugin:do_it.v2-x go") == Chain(head="", rest=(Step("plugin:do_it.v2-x", "go"),))


def test_a_separator_that_follows_a_line_break_splits_too() -> None:
    assert parse_chain("fix it\n&& /b\nnow") == Chain(head="fix it", rest=(Step("b", "now"),))


def test_a_step_whose_args_are_another_separator_gets_empty_args() -> None:
    assert parse_chain("&& /a && /b") == Chain(head="", rest=(Step("a", ""), Step("b", "")))


# Measured differences between JavaScript's `\s`/trim and Python's `\s`/`str.strip` (ECMA-262 WhiteSpace and
# LineTerminator against Python's str.isspace): U+001C-U+001F and U+0085 are whitespace only in Python, U+FEFF
# only in JavaScript.


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"])
def test_characters_only_python_calls_whitespace_do_not_separate(char: str) -> None:
    assert parse_chain(f"a{char}&& /b") == Chain(head=f"a{char}&& /b", rest=())
    assert parse_chain(f"a &&{char}/b") == Chain(head=f"a &&{char}/b", rest=())
    assert parse_chain(f"a && /b{char}") == Chain(head=f"a && /b{char}", rest=())


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"])
def test_characters_only_python_calls_whitespace_are_not_trimmed(char: str) -> None:
    assert parse_chain(f"{char}a{char} && /b {char}c{char}") == Chain(
        head=f"{char}a{char}", rest=(Step("b", f"{char}c{char}"),)
    )


def test_a_byte_order_mark_is_javascript_whitespace() -> None:
    assert parse_chain("\ufeffa\ufeff&&\ufeff/b\ufeffc\ufeff") == Chain(head="a", rest=(Step("b", "c"),))


@pytest.mark.parametrize(
    "char", ["\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\x0b", "\x0c"]
)
def test_other_javascript_whitespace_separates_and_is_trimmed(char: str) -> None:
    assert parse_chain(f"{char}a{char}&&{char}/b{char}c{char}") == Chain(head="a", rest=(Step("b", "c"),))


@pytest.mark.parametrize("char", ["\u180e", "\u200b", "\u2060"])
def test_format_characters_are_not_whitespace(char: str) -> None:
    assert parse_chain(f"a{char}&& /b") == Chain(head=f"a{char}&& /b", rest=())


def test_the_separator_the_engine_is_given_is_the_seeds_literal_with_every_operator_and_the_program_words() -> None:
    seeds = r"\/([A-Za-z0-9_:.-]+)"
    words = "|while|until|for|\\{|break|continue|sleep|!\\S+"
    assert r"/(?:^|\s)(&&|\|\||;|\|)\s*(?:" + seeds + words + r")(?=\s|$)/" == SEPARATOR_JS


@pytest.mark.parametrize("word", ["while", "until", "for", "{", "break", "continue", "sleep"])
def test_a_word_that_starts_a_command_after_an_operator_holds_a_chain(word: str) -> None:
    assert holds_chain(f"x && {word} y")
    assert not holds_chain(f"x && {word}y")


@pytest.mark.parametrize("op", ["&&", "||", ";", "|"])
def test_each_operator_starts_a_step_that_keeps_it(op: Operator) -> None:
    assert parse_chain(f"x {op} /b y") == Chain(head="x", rest=(Step("b", "y", op),))
    assert parse_chain(f"{op}/b") == Chain(head="", rest=(Step("b", "", op),))


def test_operators_mix_and_each_step_keeps_its_own() -> None:
    assert parse_chain("src/auth.cs | /commit && /test ; /clear || /rollback now") == Chain(
        head="src/auth.cs",
        rest=(
            Step("commit", "", "|"),
            Step("test", "", "&&"),
            Step("clear", "", ";"),
            Step("rollback", "now", "||"),
        ),
    )


def test_a_double_pipe_is_one_operator_not_two_pipes() -> None:
    assert parse_chain("a || /b") == Chain(head="a", rest=(Step("b", "", "||"),))


def test_a_group_or_a_for_loop_hands_the_operator_before_it_to_its_first_step() -> None:
    # The status area shows it: `· next || /a` while /x runs.
    assert parse_chain("x || { /a ; /b ; }").rest == (Step("a", "", "||"), Step("b", "", ";"))
    assert parse_chain("x ; for n in 1 2 ; do /c $n ; done").rest == (Step("c", "$n", ";"),)


def test_a_loops_condition_keeps_the_operator_before_the_loop_and_its_body_starts_after_a_semicolon() -> None:
    assert parse_chain("x || until /check ; do /fix ; /lint ; done").rest == (
        Step("check", "", "||"),
        Step("fix", "", ";"),
        Step("lint", "", ";"),
    )
    assert parse_chain("x ; while /check && /ready ; do /fix ; done").rest == (
        Step("check", "", ";"),
        Step("ready", "", "&&"),
        Step("fix", "", ";"),
    )


@pytest.mark.parametrize("args", ["x && { /a", "x && while", "x && until /check ; do /fix", "x || for ; do /a ; done"])
def test_arguments_the_grammar_cannot_read_stay_whole_as_the_commands_own(args: str) -> None:
    # The matcher sent them (an operator and a word that starts a command), but they hold no program.
    assert holds_chain(args)
    assert parse_chain(args) == Chain(head=args, rest=())


@pytest.mark.parametrize("args", ["x && /b", "&& /b", "a\t&&/b:c", "x && /b y && /c", "x ; /b", "x || /b", "x | /b"])
def test_holds_chain_says_whether_a_separator_is_there(args: str) -> None:
    assert holds_chain(args)
    assert parse_chain(args).rest != ()


def test_a_step_reads_as_slash_name_and_args() -> None:
    assert Step("b", "").name == "/b"
    assert Step("b", "x y").name == "/b x y"


def test_the_separator_pattern_compiles_in_python_as_the_seed_wrote_it_for_ascii_text() -> None:
    # The literal, read with Python's regex engine: on ASCII text without U+001C-U+001F both agree.
    body = SEPARATOR_JS[1:-1]
    literal = re.compile(body.replace("^", r"\A").replace("$", r"\Z"))
    for args in ["x && /b y && /c", "a&& /b", "&& /b", "a && /b/c", "a\t&&\n/b", "a || /b ; /c | /d", "a|| /b"]:
        assert [m.group(2) for m in literal.finditer(args)] == [s.command for s in parse_chain(args).rest]
