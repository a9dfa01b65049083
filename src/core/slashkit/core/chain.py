"""A chain of slash commands joined by operators (`&&`, `||`, `;`, `|`): its steps, the matcher a host filters typed
arguments with, and their reading as the reference reads them."""

import re
from collections.abc import Iterator
from typing import Final, Literal

from attrs import frozen
from returns.result import Success

from slashkit.core.grammar import parse
from slashkit.core.js_text import JS_SPACE_CLASS
from slashkit.core.program import NAP, SHELL, AndOr, Call, Command, For, Group, Loop, Node, Pipeline, Sequence

#: What stands between two commands: `&&` runs the next after a success, `||` after a failure, `;` always,
#: and `|` after the command before it ended well, handing on its output (as a shell's, minus concurrency).
Operator = Literal["&&", "||", ";", "|"]

#: The separator as the JavaScript literal the engine takes as a `command.run` matcher. The mod registers
#: exactly this text; a test compiles both and checks they are one pattern.
SEPARATOR_JS: Final = (
    r"/(?:^|\s)(&&|\|\||;|\|)\s*"
    r"(?:\/([A-Za-z0-9_:.-]+)|while|until|for|\{|break|continue|sleep|!\S+)(?=\s|$)/"
)

# An operator, then a slash and a command name as a word of its own, a word of the language that starts one
# (`slashkit.core.grammar.STARTERS`), or a shell step (`!` and a non-space): the operator starts the text or follows
# whitespace (`/commit a && b` keeps its text because nothing of the sort follows). `||` is tried before `|`.
# Written with JavaScript's `\s`; `^` and `$` are the text's ends (no multiline flag), as in the reference's `&&`. A
# host sends the core only a command whose arguments match; the core's grammar reads them (`parse_chain`).
_NOT_SPACE: Final = "[^" + JS_SPACE_CLASS[1:]
SEPARATOR: Final = re.compile(
    rf"(?:\A|{JS_SPACE_CLASS})(&&|\|\||;|\|){JS_SPACE_CLASS}*"
    rf"(?:/([A-Za-z0-9_:.-]+)|while|until|for|\{{|break|continue|sleep|!{_NOT_SPACE}+)(?={JS_SPACE_CLASS}|\Z)"
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
    def is_shell(self) -> bool:
        """Tells whether the step is a shell step (`!npm test`), whose args are the shell's text."""
        return self.command == SHELL

    @property
    def is_nap(self) -> bool:
        """Tells whether the step is a `sleep` waiting (`sleep 4m`), whose args are the time it waits."""
        return self.command == NAP

    @property
    def name(self) -> str:
        """Renders the step as the transcript shows it: `/name args`, or `/name` alone; a shell step `!text`; a
        `sleep` as written, `sleep 4m`."""
        if self.is_shell:
            return f"!{self.args}"
        if self.is_nap:
            return f"sleep {self.args}"
        return f"/{self.command}" if self.args == "" else f"/{self.command} {self.args}"

    @property
    def head(self) -> str:
        """The step as a line names what ended: `/name`, or a shell step's text up to its first space (`!npm`)."""
        return f"!{self.args.split(maxsplit=1)[0]}" if self.is_shell and self.args else f"/{self.command}"


@frozen
class Chain:
    """The command typed first keeps its own arguments (`head`); every operator and `/<name>` after them starts
    a step."""

    head: str
    rest: tuple[Step, ...]


def parse_chain(args: str) -> Chain:
    """Reads the arguments a host handed the first command as the grammar does (`slashkit.core.grammar`): the
    first command keeps its own arguments (`head`), and every command of the program after it is a step, with the
    operator written before it. Where only `&&`, `||`, `;` and `|` stand between slash commands this is the
    reference's reading, exactly; arguments that hold no program keep their text whole.

    >>> parse_chain("x && /b y").head, parse_chain("x && /b y").rest[0].name
    ('x', '/b y')
    >>> [(s.op, s.command) for s in parse_chain("src | /commit ; /clear").rest]
    [('|', 'commit'), (';', 'clear')]
    >>> parse_chain("a && b")
    Chain(head='a && b', rest=())
    """
    parsed = parse(f"/_ {args}")
    if not isinstance(parsed, Success):
        return Chain(head=args, rest=())
    first, *rest = written_steps(parsed.unwrap())
    return Chain(head=first.args, rest=tuple(rest)) if rest else Chain(head=args, rest=())


def written_steps(node: Node, op: Operator = "&&") -> Iterator[Step]:
    """A program's slash commands as written, each with the operator written before it (`&&` for the first; the
    first command of a loop's body: `;`)."""
    match node:
        case Command(command, args, _, by):
            yield Step(command, args, op, by)
        case Call(body=body) | Group(body=body) | For(body=body):
            yield from written_steps(body, op)
        case Pipeline(parts) | Sequence(items=parts):
            joint: Operator = "|" if isinstance(node, Pipeline) else ";"
            for n, part in enumerate(parts):
                yield from written_steps(part, op if n == 0 else joint)
        case AndOr(first, rest):
            yield from written_steps(first, op)
            for and_or, part in rest:
                yield from written_steps(part, and_or)
        case Loop(condition=condition, body=body):
            yield from written_steps(condition, op)
            yield from written_steps(body, ";")


def holds_chain(args: str) -> bool:
    """Tells whether typed arguments hold a separator, as the engine's matcher would."""
    return SEPARATOR.search(args) is not None
