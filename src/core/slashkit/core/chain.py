"""A chain of slash commands joined by operators (`&&`, `||`, `;`, `|`): its steps, and the parser that splits
typed arguments."""

import re
from typing import Final, Literal

from attrs import frozen

from slashkit.core.js_text import JS_SPACE_CLASS, js_trim

#: What stands between two commands: `&&` runs the next after a success, `||` after a failure, `;` always,
#: and `|` after the command before it ended well, handing on its output (as a shell's, minus concurrency).
Operator = Literal["&&", "||", ";", "|"]

#: The separator as the JavaScript literal the engine takes as a `command.run` matcher. The mod registers
#: exactly this text; a test compiles both and checks they are one pattern.
SEPARATOR_JS: Final = r"/(?:^|\s)(&&|\|\||;|\|)\s*\/([A-Za-z0-9_:.-]+)(?=\s|$)/"

# An operator, then a slash and a command name, as a word of its own: the operator starts the text or follows
# whitespace (`/commit a && b` keeps its text because no `/<name>` follows). `||` is tried before `|`. Written
# with JavaScript's `\s`; `^` and `$` are the text's ends (no multiline flag), as in the reference's `&&`.
SEPARATOR: Final = re.compile(
    rf"(?:\A|{JS_SPACE_CLASS})(&&|\|\||;|\|){JS_SPACE_CLASS}*/([A-Za-z0-9_:.-]+)(?={JS_SPACE_CLASS}|\Z)"
)


@frozen
class Step:
    """One command of a chain: its name without the slash, its arguments as typed, and the operator before it
    (the first command's is `&&`: nothing stands before it, and it always runs).

    A step a saved chain brought (`slashkit.core.saved_chain`) names it in `by`, since its text came from a file and
    not from whoever typed the chain, and numbers in `calls` the saved-chain calls it is part of, outermost first."""

    command: str
    args: str
    op: Operator = "&&"
    by: str | None = None
    calls: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """Renders the step as the transcript shows it: `/name args`, or `/name` alone."""
        return f"/{self.command}" if self.args == "" else f"/{self.command} {self.args}"


@frozen
class Chain:
    """The command typed first keeps its own arguments (`head`); every operator and `/<name>` after them starts
    a step."""

    head: str
    rest: tuple[Step, ...]


def parse_chain(args: str) -> Chain:
    """Splits the arguments the engine handed the first command at each operator followed by `/<name>`.

    >>> parse_chain("x && /b y").head, parse_chain("x && /b y").rest[0].name
    ('x', '/b y')
    >>> [(s.op, s.command) for s in parse_chain("src | /commit ; /clear").rest]
    [('|', 'commit'), (';', 'clear')]
    >>> parse_chain("a && b")
    Chain(head='a && b', rest=())
    """
    marks = list(SEPARATOR.finditer(args))
    if not marks:
        return Chain(head=args, rest=())
    ends = [m.start() for m in marks[1:]] + [len(args)]
    spans = zip(marks, ends, strict=True)
    rest = tuple(Step(m.group(2), js_trim(args[m.end() : end]), _operator(m.group(1))) for m, end in spans)
    return Chain(head=js_trim(args[: marks[0].start()]), rest=rest)


def _operator(text: str) -> Operator:
    match text:
        case "&&" | "||" | ";" | "|":
            return text
    raise AssertionError(f"SEPARATOR matched {text!r}, which is no operator")


def holds_chain(args: str) -> bool:
    """Tells whether typed arguments hold a separator, as the engine's matcher would."""
    return SEPARATOR.search(args) is not None
