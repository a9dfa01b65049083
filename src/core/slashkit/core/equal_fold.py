"""Name comparison as lich does it: Go's `strings.TrimSpace` on the target, then `strings.EqualFold`."""

# Go's unicode.IsSpace: the Unicode White_Space property (no U+001C-U+001F, unlike Python's str.isspace).
GO_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


def go_trim_space(text: str) -> str:
    """Removes leading and trailing white space as Go's `strings.TrimSpace` does."""
    return text.strip(GO_SPACE)


def equal_fold(a: str, b: str) -> bool:
    """Tells whether two names are equal under simple case folding, as Go's `strings.EqualFold` says.

    Simple folding maps one character to one character, so `ß` and `ss` differ while `K`, `k` and the Kelvin
    sign `K` are one; Python's `str.casefold` is full folding and would call `ß` and `ss` equal.

    >>> equal_fold("Fix/X", "fix/x"), equal_fold("straße", "STRASSE"), equal_fold("\\u212a", "k")
    (True, False, True)
    """
    return len(a) == len(b) and all(x == y or _simple_fold(x) == _simple_fold(y) for x, y in zip(a, b, strict=True))


def _simple_fold(char: str) -> str:
    """Maps a character to one member of its simple case-folding orbit.

    Where full folding gives one character it is the simple folding too; where it gives several (`ß` gives
    `ss`, `ẞ` gives `ss`), the simple folding is the one-character lowercase, if there is one (`ß`), else
    the character itself (`İ`, whose lowercase is two characters, folds only to itself, as in Go).
    """
    folded = char.casefold()
    if len(folded) == 1:
        return folded
    lower = char.lower()
    return lower if len(lower) == 1 else char
