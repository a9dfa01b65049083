"""The self-target matcher compares names as lich does (Go's `strings.TrimSpace`, then `strings.EqualFold`,
which is simple case folding): it never matches a name EqualFold would not (docs/lich.md, "How the plugin behaves")."""

from hypothesis import example, given
from hypothesis import strategies as st

from slashkit.core.equal_fold import equal_fold
from slashkit.core.self_command import Identity, Lich, is_this_session

#: Characters whose case orbits are odd: the Kelvin and long-s signs, sharp s, dotted and dotless i, the Greek
#: sigmas and micro sign, titlecase digraphs, ligatures, and characters whose lowercase is two characters.
TRICKY = (
    "kK\u212asS\u017f\u00df\u1e9ei\u0130\u0131I\u03c3\u03c2\u03a3\u00b5\u03bc\u039c\u01c4\u01c5\u01c6"
    "\ufb00\u0149\u1f88\u1f80\u13a0\uab70"
)
#: Go's unicode.IsSpace, which strings.TrimSpace strips (not U+FEFF, not U+001C-U+001F).
GO_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"


def variants(char: str) -> list[str]:
    """The one-character case variants Python knows for a character, to make names likely to match."""
    found = {char}
    for mapped in (char.lower(), char.upper(), char.casefold(), char.title()):
        if len(mapped) == 1:
            found.add(mapped)
    return sorted(found)


names = st.text(alphabet=st.one_of(st.sampled_from(TRICKY), st.characters(codec="utf-8")), max_size=8)


@st.composite
def case_twins(draw: st.DrawFn) -> tuple[str, str]:
    """Two names, the second a per-character case variant of the first, sometimes with one character changed."""
    a = draw(names)
    b = "".join(draw(st.sampled_from(variants(c))) for c in a)
    if b and draw(st.booleans()):
        i = draw(st.integers(0, len(b) - 1))
        b = b[:i] + draw(st.sampled_from(TRICKY + "ss")) + b[i + 1 :]
    return a, b


def fold_compatible(a: str, b: str) -> bool:
    """A necessary condition for Go's EqualFold: same length, each pair equal or equal under full case folding."""
    return len(a) == len(b) and all(x == y or x.casefold() == y.casefold() for x, y in zip(a, b, strict=True))


@given(case_twins())
@example(("straße", "STRASSE"))
@example(("ß", "ss"))
@example(("\u0130", "i"))
@example(("\u0131", "i"))
@example(("\u0131", "I"))
@example(("\ufb00", "ff"))
def test_equal_fold_never_matches_names_go_would_not(pair: tuple[str, str]) -> None:
    a, b = pair
    if equal_fold(a, b):
        assert fold_compatible(a, b)


@given(case_twins())
def test_equal_fold_is_symmetric_and_reflexive(pair: tuple[str, str]) -> None:
    a, b = pair
    assert equal_fold(a, b) == equal_fold(b, a)
    assert equal_fold(a, a)


@given(names, names, names)
def test_equal_fold_is_transitive(a: str, b: str, c: str) -> None:
    if equal_fold(a, b) and equal_fold(b, c):
        assert equal_fold(a, c)


@given(
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=8),
)
@example("Fix/X", "fix/x")
@example("A", "a")
@example("@", "`")
@example("[", "{")
def test_on_ascii_equal_fold_agrees_with_lowercasing(a: str, b: str) -> None:
    assert equal_fold(a, b) == (a.lower() == b.lower())


@given(st.text(max_size=4), st.text(max_size=4))
def test_sharp_s_never_matches_double_s(before: str, after: str) -> None:
    for sharp in ("ß", "\u1e9e"):
        for double in ("ss", "SS", "Ss", "sS"):
            assert not equal_fold(f"{before}{sharp}{after}", f"{before}{double}{after}")


def test_the_named_orbits_go_defines() -> None:
    assert equal_fold("\u212a", "k") and equal_fold("\u212a", "K")
    assert equal_fold("\u212aELVIN", "kelvin")
    assert equal_fold("\u017f", "s") and equal_fold("\u017f", "S")
    assert equal_fold("ß", "\u1e9e")
    assert equal_fold("\u03c3", "\u03c2") and equal_fold("\u03c2", "\u03a3")
    assert equal_fold("\u00b5", "\u03bc") and equal_fold("\u00b5", "\u039c")
    assert equal_fold("\u01c4", "\u01c5") and equal_fold("\u01c5", "\u01c6")
    assert not equal_fold("\u0130", "i") and not equal_fold("\u0130", "I")
    assert not equal_fold("\u0131", "i") and not equal_fold("\u0131", "I")
    assert not equal_fold("ß", "ss")
    assert not equal_fold("\ufb00", "ff")


LICH = Lich(session_id="lich-7f3a", lang="en")


@given(st.one_of(names, st.sampled_from(["lich-7f3a", "LICH-7F3A", " lich-7f3a", "fix/x", "FIX/X"])), names, names)
@example("FIX/X", "fix/x", "repo-a1b2")
@example(" Fix/X\n", "fix/x", "repo-a1b2")
@example("\ufefffix/x", "fix/x", "repo-a1b2")
@example("\x1cfix/x", "fix/x", "repo-a1b2")
@example("STRASSE", "straße", "x")
def test_a_target_is_this_session_only_by_its_exact_id_or_a_name_equal_fold_matches(
    target: str, label: str, name: str
) -> None:
    identity = Identity(label=label, name=name)
    matched = is_this_session(LICH, target, identity)
    trimmed = target.strip(GO_SPACE)
    assert matched == (target == "lich-7f3a" or equal_fold(trimmed, label) or equal_fold(trimmed, name))
    if matched and target != "lich-7f3a":
        assert fold_compatible(trimmed, label) or fold_compatible(trimmed, name)


@given(st.one_of(names, st.sampled_from(["lich-7f3a", "LICH-7F3A", "lich-7f3a "])))
def test_without_whoami_only_the_exact_id_is_this_session(target: str) -> None:
    assert is_this_session(LICH, target, None) == (target == "lich-7f3a")


@given(st.one_of(st.none(), st.integers(), st.lists(st.text(max_size=2), max_size=2)), names)
def test_a_target_that_is_not_a_string_is_never_this_session(target: object, label: str) -> None:
    assert not is_this_session(LICH, target, Identity(label=label, name=label))
