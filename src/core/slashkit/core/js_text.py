"""JavaScript's idea of whitespace, which the reference parser runs on (Python's `\\s` and `str.strip` differ)."""

# `\s` in a JavaScript RegExp and what String.prototype.trim removes: WhiteSpace and LineTerminator
# (ECMA-262 §12.2, §12.3). Python's `\s` adds U+001C-U+001F and U+0085 and lacks U+FEFF.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# The same set as a regular-expression class, for patterns that must match what `\s` matches in JavaScript.
JS_SPACE_CLASS = "[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"


def js_trim(text: str) -> str:
    """Removes JavaScript whitespace from both ends, as `String.prototype.trim` does.

    >>> js_trim("\\ufeff a \\x1c")
    'a \\x1c'
    """
    return text.strip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    """Removes JavaScript whitespace from the end, as `String.prototype.trimEnd` does."""
    return text.rstrip(JS_WHITESPACE)
