"""How deep a JSON text nests, told before it is read: Python's reader recurses, and fails past its recursion limit
(about 1,000 levels) with a RecursionError, not a JSON error. Kept apart from the bridge's protocol so that a thin
entry (the Gemini hook's) can bound its input without importing the core."""

import re
from itertools import accumulate
from typing import Final

_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]")
_NESTING: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def too_deep(text: str, limit: int) -> bool:
    """Tells whether arrays and objects nest deeper than `limit`; brackets inside strings do not count. On JSON the
    string pattern finds exactly its strings; on anything else the count may be off, and reading fails anyway."""
    if text.count("[") + text.count("{") <= limit:
        return False  # the usual text: too few brackets to scan for
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_NESTING.__getitem__, brackets)), default=0) > limit
