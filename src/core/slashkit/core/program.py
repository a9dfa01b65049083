"""A program: the syntax tree of a chain line or a saved chain's body (`slashkit.core.grammar` reads the text), as
frozen values, and a printer back to text.

The language is a small subset of bash with bash's meaning: lists joined by `;` (or a newline in a file), `&&` and
`||`, pipelines with `|`, groups `{ LIST; }`, `while`/`until LIST; do LIST; done`, `for NAME in WORDS; do LIST;
done`, `break`, `continue` and `sleep`. Its simple commands are the host's slash commands and shell steps (`!npm
test`, a `Command` named `SHELL` whose args are the shell's text); a saved chain's name is a function call (`Call`)
whose body is that chain's program (`slashkit.core.saved_chain.inlined`).

Every slash command has a number, its place in the program's text (1 for the first): a chain of `&&` alone writes
the reference's `2/3: /b` lines with it, and a loop's steps keep theirs in every iteration.

Each node keeps its hash once made (`cache_hash`): the interpreter's moves are remembered by their state, whose
program is hashed at every move.
"""

import itertools
from collections.abc import Callable, Iterator
from typing import Final, Literal

import attrs
from attrs import frozen

#: The operators of an and-or list; `|` joins a pipeline, and `;` a list.
Joint = Literal["&&", "||"]
#: The words of the language besides slash commands.
WORDS = frozenset({"while", "until", "for", "in", "do", "done", "break", "continue", "sleep", "{", "}"})
#: The name of a shell step (`!npm test`): no slash command has it (a name is letters, digits and `_:.-`), so no host
#: command and no saved chain is ever taken for one, nor one for them.
SHELL = "!"
#: The name of the step a running program holds while a `sleep` waits (`chain_machine`): no slash command has it
#: either, so a `/sleep` command of the host's stays a command and a line never shows the wait as one.
NAP = "(sleep)"


@frozen(cache_hash=True)
class Command:
    """A slash command: its name without the slash, its arguments as written (a `$NAME` or `$1` in them is filled
    when it runs), its number in the program, and the saved chain whose file holds it (None: the typed line). A
    shell step is one named `SHELL`, its args the text `/bin/sh -c` runs."""

    command: str
    args: str
    number: int = 0
    by: str | None = None


@frozen(cache_hash=True)
class Call:
    """A saved chain called by name, as bash calls a function: its arguments fill `$1`..`$9` and `$ARGUMENTS` in its
    body, and its last status is the call's."""

    name: str
    args: str
    body: "Node"
    by: str | None = None


@frozen(cache_hash=True)
class Sleep:
    """`sleep N`: waits this many seconds without a turn or a model request."""

    seconds: int
    written: str


@frozen(cache_hash=True)
class Break:
    """`break N`: leaves the N innermost loops."""

    levels: int = 1


@frozen(cache_hash=True)
class Continue:
    """`continue N`: starts the next iteration of the Nth innermost loop."""

    levels: int = 1


@frozen(cache_hash=True)
class Pipeline:
    """`a | b`: each command runs once the one before it ended well, with that one's output after its arguments."""

    parts: "tuple[Node, ...]"


@frozen(cache_hash=True)
class AndOr:
    """`a && b || c`: left to right, each after the status the one before it left (bash's `&&` and `||`)."""

    first: "Node"
    rest: "tuple[tuple[Joint, Node], ...]"


@frozen(cache_hash=True)
class Sequence:
    """`a; b`: one after another, whatever each ended with."""

    items: "tuple[Node, ...]"


@frozen(cache_hash=True)
class Group:
    """`{ LIST; }`: a list that operators around it treat as one command."""

    body: "Node"


@frozen(cache_hash=True)
class Loop:
    """`while LIST; do LIST; done` (`until`: while the condition fails)."""

    until: bool
    condition: "Node"
    body: "Node"


@frozen(cache_hash=True)
class For:
    """`for NAME in WORDS; do LIST; done`: the body once per word, with `$NAME` standing for it."""

    name: str
    words: tuple[str, ...]
    body: "Node"


Node = Command | Call | Sleep | Break | Continue | Pipeline | AndOr | Sequence | Group | Loop | For


def commands(node: Node) -> Iterator[Command]:
    """The slash commands of a program, in the order they are written (a called saved chain's in its place)."""
    match node:
        case Command():
            yield node
        case Call(body=body) | Group(body=body) | For(body=body):
            yield from commands(body)
        case Pipeline(parts=parts) | Sequence(items=parts):
            for part in parts:
                yield from commands(part)
        case AndOr(first=first, rest=rest):
            yield from commands(first)
            for _, part in rest:
                yield from commands(part)
        case Loop(condition=condition, body=body):
            yield from commands(condition)
            yield from commands(body)


def is_and_list(node: Node) -> bool:
    """Tells whether a program is the reference's kind of chain: slash commands joined by `&&` alone (saved chains
    filled in), which writes exactly the reference's lines."""
    match node:
        case Command():
            return True
        case Call(body=body):
            return is_and_list(body)
        case AndOr(first=first, rest=rest):
            return is_and_list(first) and all(joint == "&&" and is_and_list(part) for joint, part in rest)
    return False


def printed(node: Node) -> str:
    """The program as text, one line, as the grammar reads it back.

    >>> from slashkit.core.grammar import parse
    >>> printed(parse("until /check; do /fix a; done").unwrap())
    'until /check; do /fix a; done'
    """
    match node:
        case Command(command, args) if command == SHELL:
            return f"!{args}"
        case Command(command, args):
            return f"/{command} {args}" if args else f"/{command}"
        case Call(name, args):
            return f"/{name} {args}" if args else f"/{name}"
        case Sleep(written=written):
            return f"sleep {written}"
        case Break(levels) | Continue(levels):
            word = "break" if isinstance(node, Break) else "continue"
            return word if levels == 1 else f"{word} {levels}"
        case Pipeline(parts):
            return " | ".join(map(printed, parts))
        case AndOr(first, rest):
            return printed(first) + "".join(f" {joint} {printed(part)}" for joint, part in rest)
        case Sequence(items):
            return " ; ".join(map(printed, items))
        case Group(body):
            return f"{{ {printed(body)}; }}"
        case Loop(until, condition, body):
            return f"{'until' if until else 'while'} {printed(condition)}; do {printed(body)}; done"
        case For(name, words, body):
            return f"for {name} in {' '.join(words)}; do {printed(body)}; done"


def rebuilt(node: Node, leaf: Callable[[Node], Node]) -> Node:
    """The program with each of its simple commands (a slash command, `sleep`, `break`, `continue`) replaced by what
    `leaf` makes of it, in the order they are written; a called saved chain's body is rebuilt in its place."""

    def build(n: Node) -> Node:
        match n:
            case Call(name, args, body, by):
                return Call(name, args, build(body), by)
            case Pipeline(parts):
                return Pipeline(tuple(map(build, parts)))
            case Sequence(items):
                return Sequence(tuple(map(build, items)))
            case AndOr(first, rest):
                first = build(first)
                return AndOr(first, tuple((joint, build(part)) for joint, part in rest))
            case Group(body):
                return Group(build(body))
            case Loop(until, condition, body):
                condition = build(condition)
                return Loop(until, condition, build(body))
            case For(name, words, body):
                return For(name, words, build(body))
        return leaf(n)

    return build(node)


def numbered(node: Node) -> Node:
    """The program with its slash commands numbered from 1 in the order they are written, a called saved chain's in
    its place (`commands`)."""
    counter = itertools.count(1)

    def number(n: Node) -> Node:
        return attrs.evolve(n, number=next(counter)) if isinstance(n, Command) else n

    return rebuilt(node, number)


def appended(node: Node, last: Node) -> Node:
    """The program with `last` run after it whatever its status, as `; last` would (`/slash-chain add`), numbered
    again: the commands already there keep their numbers."""
    items = node.items if isinstance(node, Sequence) else (node,)
    return numbered(Sequence((*items, last)))


#: What `without` makes of a command it removes, and of a compound command left with nothing in it.
_GONE: Final = Sequence(())


def without(node: Node, number: int) -> Node | None:
    """The program without its command numbered `number` (`/slash-chain drop`), numbered again; None when that
    command is all of a loop's condition or body (a loop cannot be left without one), or the whole program. Taken
    out of a list, its operator goes with it: the next command takes the place and operator of the one dropped."""

    def drop(n: Node) -> Node | None:
        match n:
            case Command(number=numbered_as) if numbered_as == number:
                return _GONE
            case Call(body=body) | Group(body=body):
                inner = drop(body)
                return None if inner is None else (_GONE if inner is _GONE else attrs.evolve(n, body=inner))
            case Pipeline(parts):
                kept = dropped_from(parts)
                return kept if kept is None or isinstance(kept, Node) else Pipeline(kept)
            case Sequence(items):
                kept = dropped_from(items)
                return kept if kept is None or isinstance(kept, Node) else Sequence(kept)
            case AndOr(first, rest):
                pairs: list[tuple[Joint, Node]] = []
                for joint, part in (("&&", first), *rest):
                    inner = drop(part)
                    if inner is None:
                        return None
                    if inner is not _GONE:
                        pairs.append((joint, inner))
                if not pairs:
                    return _GONE
                return pairs[0][1] if len(pairs) == 1 else AndOr(pairs[0][1], tuple(pairs[1:]))
            case Loop(until, condition, body):
                kept_condition, kept_body = drop(condition), drop(body)
                if kept_condition is None or kept_body is None or _GONE in (kept_condition, kept_body):
                    return None
                return Loop(until, kept_condition, kept_body)
            case For(name, words, body):
                inner = drop(body)
                return None if inner is None or inner is _GONE else For(name, words, inner)
        return n

    def dropped_from(parts: tuple[Node, ...]) -> "tuple[Node, ...] | Node | None":
        """The parts of a pipeline or list without the command: two or more, or the one left (one command is dropped,
        and a pipeline or a list has two parts or more)."""
        kept = []
        for part in parts:
            inner = drop(part)
            if inner is None:
                return None
            if inner is not _GONE:
                kept.append(inner)
        return kept[0] if len(kept) == 1 else tuple(kept)

    left = drop(node)
    return None if left is None or left is _GONE else numbered(left)
