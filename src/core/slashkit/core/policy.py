"""The refusal rule every path goes through: `/model` and `/effort` run only when the person typed them, and the
origins that are the person's own typing."""

import re
from typing import Final

from attrs import frozen

from slashkit.core.js_text import JS_WHITESPACE

#: Never run for anyone but the person: run from a plugin, Claude Code saves what they set as the default for
#: every new session (measured on Claude Code 2.1.288 and 2.1.289, and again on 2.1.328 by
#: tests/engine/test_self_command_interactive.py).
REFUSED: Final = frozenset({"model", "effort"})

#: The prompt origins that are the person's own typing (Claude Code's `PromptOrigin` kinds, 2.1.328): Enter at
#: the terminal (`composer`), the Remote Control bridge (`bridge`), and the SDK host's own turn (`sdk`: the
#: prompt of `claude -p` or of a harness on the Agent SDK). Every other kind (`plugin`, `peer`, `channel`,
#: `scheduled-trigger`, `unclassified`, ...) is not the person typing.
PERSON_TYPING: Final = frozenset({"composer", "bridge", "sdk"})

#: The origins whose prompt cancels a running chain: the seed's (seed 003 keeps `sdk` out, so a headless
#: session's next message does not cancel the chain it started).
PERSON: Final = frozenset({"composer", "bridge"})

# Both languages' whitespace (JavaScript's and Python's), so that no reading of a name slips past.
_SPACES: Final = JS_WHITESPACE + "\x1c\x1d\x1e\x1f\x85"
_ANY_SPACE: Final = "[" + re.escape(_SPACES) + "]"


def is_refused(name: str) -> bool:
    """Tells whether a name is /model or /effort, in any casing, with any slashes, spaces or args around it.

    >>> is_refused("Model"), is_refused(" /effort high"), is_refused("models")
    (True, True, False)
    """
    first = re.split(_ANY_SPACE, name.lstrip("/" + _SPACES), maxsplit=1)[0]
    return first.rstrip("/").casefold() in REFUSED


def typed_by_person(origin: str) -> bool:
    """Tells whether a command or prompt of this origin is the person's own typing."""
    return origin in PERSON_TYPING


def may_run(command: str, origin: str, handed: bool = False) -> bool:
    """Tells whether a command may run for this origin: a refused one only when the person typed it, arguments
    and all, so never with text a `|` hands it (`handed`): that text is a command's output, often the model's."""
    return not is_refused(command) or (typed_by_person(origin) and not handed)


@frozen
class Denied:
    """Refuse the call with this text; nothing runs. The one refusal every path answers with (the fail tool's
    when nothing waits, a /model or /effort the model asked for)."""

    text: str
