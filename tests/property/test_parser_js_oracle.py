"""The parser agrees with an independent JavaScript-semantics oracle on generated text: a hand-written scanner
that follows the separator `(?:^|\\s)(&&|\\|\\||;|\\|)\\s*\\/([A-Za-z0-9_:.-]+)(?=\\s|$)` (the seed's `&&`
pattern with slashkit's other operators beside it, and the program words and shell steps that may follow an
operator) as `String.prototype.matchAll` runs it, with ECMAScript's `\\s` and `String.prototype.trim`."""

import unicodedata

from hypothesis import example, given
from hypothesis import strategies as st

from slashkit.core.chain import Chain, Operator, Step, holds_chain, parse_chain

# ECMA-262 §12.2 WhiteSpace (TAB, VT, FF, ZWNBSP, any Zs) and §12.3 LineTerminator (LF, CR, LS, PS): the set
# both `\s` and `trim` use. Built from the Unicode categories, not from the production module's list.
JS_SPACE = frozenset(
    {"\t", "\x0b", "\x0c", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    | {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"}
)
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:.-")


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in JS_SPACE:
        start += 1
    while end > start and text[end - 1] in JS_SPACE:
        end -= 1
    return text[start:end]


#: The operators in the order the alternation tries them.
OPERATORS: tuple[Operator, ...] = ("&&", "||", ";", "|")


def _tail(text: str, at: int) -> tuple[int, str, Operator] | None:
    """Matches `(op)\\s*\\/([name]+)(?=\\s|$)` at `at`: the end of the match, the name and the operator, or None.
    The alternation is tried in order, each alternative in full; past the operator backtracking cannot help: a
    shorter `\\s*` leaves whitespace before the slash, a shorter name leaves a name character before the
    lookahead."""
    for op in OPERATORS:
        if text[at : at + len(op)] == op and (found := _after_operator(text, at + len(op))) is not None:
            return found[0], found[1], op
    return None


#: What also follows an operator in a program (`while`, `{`, ...) or starts a shell step, as the separator's
#: alternatives after the slash and name: the oracle names such a match by the word, or `!` for a shell step.
PROGRAM_WORDS = ("while", "until", "for", "{", "break", "continue", "sleep")


def _after_operator(text: str, k: int) -> tuple[int, str] | None:
    while k < len(text) and text[k] in JS_SPACE:
        k += 1
    if k >= len(text):
        return None
    if text[k] == "!" and k + 1 < len(text) and text[k + 1] not in JS_SPACE:
        end = k + 1
        while end < len(text) and text[end] not in JS_SPACE:
            end += 1
        return end, "!"
    for word in PROGRAM_WORDS:
        end = k + len(word)
        if text[k:end] == word and (end == len(text) or text[end] in JS_SPACE):
            return end, word
    if text[k] != "/":
        return None
    start = k = k + 1
    while k < len(text) and text[k] in NAME_CHARS:
        k += 1
    if k == start or (k < len(text) and text[k] not in JS_SPACE):
        return None
    return k, text[start:k]


def _match_at(text: str, p: int) -> tuple[int, int, str, Operator] | None:
    """Tries the alternatives in order: `^` (only at 0), then one `\\s` character."""
    if p == 0 and (found := _tail(text, 0)) is not None:
        return p, *found
    if p < len(text) and text[p] in JS_SPACE and (found := _tail(text, p + 1)) is not None:
        return p, *found
    return None


def js_match_all(text: str) -> list[tuple[int, int, str, Operator]]:
    """Every match as `matchAll` with the `g` flag finds them: (index, end, name, operator), each search from the
    last end."""
    marks, p = [], 0
    while p < len(text):
        found = _match_at(text, p)
        if found is None:
            p += 1
            continue
        marks.append(found)
        p = found[1]
    return marks


def js_parse_chain(args: str) -> Chain:
    """The seed's `parseChain`, over the oracle's matches, each step keeping its operator."""
    marks = js_match_all(args)
    if not marks:
        return Chain(head=args, rest=())
    ends = [index for index, _, _, _ in marks[1:]] + [len(args)]
    pairs = zip(marks, ends, strict=True)
    rest = tuple(Step(name, js_trim(args[end:stop]), op) for (_, end, name, op), stop in pairs)
    return Chain(head=js_trim(args[: marks[0][0]]), rest=rest)


FRAGMENTS = [
    "&&", "&", "&&&", " ", "  ", "/", "//", "\t", "\n", "\r", "\x0b", "\x0c", "||", "|", ";", "a", "b c",
    # Whitespace only Python's `\s` has (measured difference, see the examples below) ...
    "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
    # ... only JavaScript's has ...
    "\ufeff",
    # ... and both have; then format characters neither has.
    "\u00a0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e", "\u200b",
    "!", "é", "\U0001f600", "for", "{", "!x",
]  # fmt: skip


@st.composite
def separator_heavy_text(draw: st.DrawFn) -> str:
    """Text built from pieces that make, nearly make or break a separator: `&&`, slashes, names and every kind
    of space the two languages disagree on."""
    piece = st.one_of(
        st.sampled_from(FRAGMENTS),
        st.from_regex(r"[A-Za-z0-9_:.-]{1,5}", fullmatch=True),
        st.from_regex(r"(&&|\|\||;|\|)[ \t\ufeff\x1c\x85]{0,2}/[A-Za-z0-9_:.-]{1,4}", fullmatch=True),
        st.text(max_size=3),
    )
    return "".join(draw(st.lists(piece, max_size=24)))


# Examples: the characters whose whitespace status differs between JavaScript and Python (ECMA-262 §12.2-12.3
# against Python's str.isspace / `\s`): U+001C-U+001F and U+0085 are whitespace only in Python, U+FEFF only in
# JavaScript. Each is tried before `&&`, between `&&` and `/`, after the name, and at both ends of the text.
@given(separator_heavy_text())
@example("a\x1c&& /b")
@example("a &&\x1d/b")
@example("a && /b\x1e")
@example("\x1fa && /b c\x1f")
@example("a\x85&& /b\x85c\x85")
@example("\x85 && /b")
@example("\ufeffa\ufeff&&\ufeff/b\ufeffc\ufeff")
@example("a && /b\ufeff&& /c")
@example("&& /a && /b")
@example("&&/a&& /b")
@example("a ||| /b")
@example("a |&& /b ; /c")
@example(";/a |/b || /c")
@example("&&!&")
@example("a && for x")
def test_the_parser_agrees_with_the_javascript_oracle_on_separator_heavy_text(args: str) -> None:
    marks = js_match_all(args)
    assert holds_chain(args) == bool(marks)
    # The seed's flat reading holds for chains of slash commands; a program or a shell step is the grammar's.
    if all(name != "!" and name not in PROGRAM_WORDS for _, _, name, _ in marks):
        assert parse_chain(args) == js_parse_chain(args)


@given(st.text())
def test_the_parser_agrees_with_the_javascript_oracle_on_any_text(args: str) -> None:
    assert parse_chain(args) == js_parse_chain(args)


def test_the_oracle_knows_the_measured_whitespace_differences() -> None:
    assert {"\x1c", "\x1d", "\x1e", "\x1f", "\x85"}.isdisjoint(JS_SPACE)
    assert "\ufeff" in JS_SPACE
    assert js_parse_chain("a\x1c&& /b") == Chain(head="a\x1c&& /b", rest=())
    assert js_parse_chain("\ufeffa && /b c\ufeff") == Chain(head="a", rest=(Step("b", "c"),))


@given(separator_heavy_text())
def test_without_a_separator_the_head_is_the_text_unchanged(args: str) -> None:
    chain = parse_chain(args)
    if not chain.rest:
        assert chain.head == args


@given(
    st.lists(
        st.tuples(st.from_regex(r"[A-Za-z0-9_:.-]{1,6}", fullmatch=True), st.sampled_from(["", "x", "y z"])),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["", "head", "  head words "]),
    st.lists(st.sampled_from(OPERATORS), min_size=4, max_size=4),
)
def test_a_chain_built_from_steps_parses_back_to_them(
    steps: list[tuple[str, str]], head: str, ops: list[Operator]
) -> None:
    text = head + "".join(f" {op} /{name} {args}" for (name, args), op in zip(steps, ops, strict=False))
    rest = tuple(Step(name, args, op) for (name, args), op in zip(steps, ops, strict=False))
    assert parse_chain(text) == Chain(head=head.strip(), rest=rest)
