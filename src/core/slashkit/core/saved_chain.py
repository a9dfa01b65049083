"""Saved chains: a chain written once in a file (`<name>.md`) and run by name, as a shell runs a function.

The file is optional front matter (`description`, `argument-hint`) and one chain line, such as `/check $1 && /tiny
done`. `$ARGUMENTS` stands for the arguments the name was typed with and `$1`..`$9` for their words, as Claude Code
fills a command's. A step naming another saved chain calls it; nesting is bounded and a cycle runs nothing.

Reading the files is an adapter's (`slashkit.adapters.saved_chains`); this module only reads their bytes. Whatever
a file holds is text the person did not type: `slashkit.core.chain_machine` runs its steps under the refusal rule
with the file's saved chain as their origin (`origin_of`).
"""

import re
from collections.abc import Iterable
from typing import Final

import attrs
from attrs import frozen

from slashkit.core.chain import Step, parse_chain
from slashkit.core.js_text import JS_SPACE_CLASS, js_trim
from slashkit.core.policy import REFUSED, command_name
from slashkit.core.texts import CHAIN_COMMAND, NO_SAVED_CHAINS, menu_text, one_line, shown

#: A saved chain's name: what its file is called, less `.md`, and what the person types after the slash.
NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The largest file read; a chain line is short, so a larger file is refused rather than read.
MAX_FILE: Final = 64 * 1024
#: How deep saved chains may call each other (a call from the typed line is 1 deep).
MAX_DEPTH: Final = 8
#: The most steps the saved chains of one typed line may bring: eight levels of a few calls each would otherwise
#: grow past anything a person meant to run.
MAX_STEPS: Final = 256
#: The front matter's keys that mean something here; any other key is left alone (a Claude Code command's
#: `allowed-tools`, say), since the same file may serve both.
KEYS: Final = frozenset({"description", "argument-hint"})

# A chain line: `/name` as a word of its own, then its arguments and the steps after them.
_FIRST: Final = re.compile(rf"/([A-Za-z0-9_:.-]+)(?:{JS_SPACE_CLASS}+|\Z)")
_PLACEHOLDER: Final = re.compile(r"\$(ARGUMENTS|[1-9])")
_FENCE: Final = "---"


@frozen
class SavedChain:
    """One saved chain: its name, its chain line, the file it came from, and what its front matter says of it."""

    name: str
    body: str
    source: str
    description: str = ""
    argument_hint: str = ""


@frozen
class SavedFile:
    """A file found where saved chains live: its name, where it is, and its bytes (None: it could not be read; at
    most MAX_FILE + 1 of them, so a larger one shows it is larger)."""

    name: str
    source: str
    data: bytes | None


@frozen
class Problem:
    """Why a file is no saved chain: where (its path, and line when one is to blame) and why."""

    source: str
    why: str
    line: int | None = None

    @property
    def text(self) -> str:
        """The one line that tells the person: `<path>:<line>: <why>`."""
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return one_line(f"saved chain {where}: {self.why}")


@frozen
class Library:
    """The saved chains a session may run, by name, and the files that were not read as one."""

    chains: tuple[SavedChain, ...] = ()
    problems: tuple[Problem, ...] = ()

    def named(self, name: str) -> SavedChain | None:
        """The saved chain of this name, if there is one."""
        return next((c for c in self.chains if c.name == name), None)

    def listing(self, commands: Iterable[str], builtins: Iterable[str] = ()) -> str:
        """The answer to `/slash-chain list`: each saved chain, what it says it does and where it comes from, a name
        the host has (`host_has`) marked as the host's, and a line for each file that is no saved chain."""
        taken = host_has(commands, builtins)
        lines = []
        for chain in self.chains:
            about = f" - {one_line(chain.description)}" if chain.description else ""
            shadowed = f" (shadowed: the host has its own /{chain.name})" if command_name(chain.name) in taken else ""
            lines.append(f"/{chain.name}{about} [{one_line(chain.source)}]{shadowed}")
        lines += [problem.text for problem in self.problems]
        return "\n".join(lines) if lines else NO_SAVED_CHAINS

    def leaving(self, commands: Iterable[str], builtins: Iterable[str] = ()) -> "Library":
        """The saved chains whose names the host has none of (`host_has`): a name it has is the host's (shadowed)."""
        taken = host_has(commands, builtins)
        return attrs.evolve(self, chains=tuple(c for c in self.chains if command_name(c.name) not in taken))


def host_has(commands: Iterable[str], builtins: Iterable[str]) -> frozenset[str]:
    """The names a saved chain never takes from the host, as the refusal rule compares names: the commands it listed,
    its built-ins (as measured, even when it listed none), /model, /effort and slashkit's own /slash-chain, so no
    file stands in for what the person types to change a setting or to stop a chain."""
    return frozenset(map(command_name, (*commands, *builtins))) | REFUSED | {CHAIN_COMMAND}


#: A session's saved chains before the host has read any.
NO_SAVED: Final = Library()


def read(found: SavedFile) -> SavedChain | Problem:
    """Reads one file as a saved chain, or says why it is none.

    >>> read(SavedFile("ship.md", "ship.md", b"---\\ndescription: Ships it\\n---\\n/check $1 && /tiny done\\n"))
    SavedChain(name='ship', body='/check $1 && /tiny done', source='ship.md', description='Ships it', argument_hint='')
    >>> read(SavedFile("ship.md", "ship.md", b"/a\\n/b\\n")).text
    'saved chain ship.md:2: holds a second line; a saved chain is one chain line'
    """
    name = found.name.removesuffix(".md")
    if not found.name.endswith(".md") or NAME.fullmatch(name) is None:
        return Problem(found.source, "its name is not letters, digits, - and _ (at most 64) followed by .md")
    if found.data is None:
        return Problem(found.source, "it could not be read")
    if len(found.data) > MAX_FILE:
        return Problem(found.source, f"it is over {MAX_FILE // 1024} KiB")
    try:
        text = found.data.decode("utf-8")
    except UnicodeDecodeError as error:
        return Problem(found.source, f"it is not UTF-8 (byte {error.start})")
    lines = text.splitlines()
    matter = _front_matter(lines, found.source)
    if isinstance(matter, Problem):
        return matter
    front, body_at = matter
    body = [(n, js_trim(line)) for n, line in enumerate(lines[body_at:], start=body_at + 1) if js_trim(line)]
    if not body:
        return Problem(found.source, "its body is empty; a saved chain is one chain line")
    if len(body) > 1:
        return Problem(found.source, "holds a second line; a saved chain is one chain line", body[1][0])
    at, line = body[0]
    if _FIRST.match(line) is None:
        return Problem(found.source, f"{shown(line)!r} is no chain line: it starts with /name", at)
    return SavedChain(name, line, found.source, front.get("description", ""), front.get("argument-hint", ""))


def _front_matter(lines: list[str], source: str) -> tuple[dict[str, str], int] | Problem:
    """The front matter's keys, and the index of the line after it (0 when there is none), or what is wrong with
    it: a blank, indented or `#` line in it is passed over."""
    if not lines or lines[0].strip() != _FENCE:
        return {}, 0
    found: dict[str, str] = {}
    for n, line in enumerate(lines[1:], start=1):
        if line.strip() == _FENCE:
            return found, n + 1
        key, colon, value = line.partition(":")
        if line.strip() == "" or line.startswith((" ", "\t", "#")):
            continue
        if not colon:
            return Problem(source, f"its front matter line {shown(line)!r} is no `key: value`", n + 1)
        if key.strip() in KEYS:
            # Shown in a host's menu and in `/slash-chain list`: text from a file, cleaned and bounded as a menu's.
            found[key.strip()] = menu_text(_unquoted(value.strip()))
    return Problem(source, "its front matter has no closing ---", 1)


def _unquoted(value: str) -> str:
    for quote in ('"', "'"):
        if len(value) >= 2 and value.startswith(quote) and value.endswith(quote):
            return value[1:-1]
    return value


def library(*folders: Iterable[SavedFile | Problem]) -> Library:
    """The saved chains of several folders, each shadowing the ones before it (the person's, then the project's);
    a folder may say itself what is wrong with it (a `Problem`).

    >>> person = [SavedFile("ship.md", "~/ship.md", b"/a"), SavedFile("x.md", "~/x.md", b"")]
    >>> project = [SavedFile("ship.md", ".slashkit/ship.md", b"/b")]
    >>> lib = library(person, project)
    >>> [(c.name, c.body) for c in lib.chains], [p.source for p in lib.problems]
    ([('ship', '/b')], ['~/x.md'])
    """
    by_name: dict[str, SavedChain] = {}
    problems: list[Problem] = []
    for folder in folders:
        for found in folder:
            match found if isinstance(found, Problem) else read(found):
                case SavedChain() as chain:
                    by_name[chain.name] = chain
                case Problem() as problem:
                    problems.append(problem)
    return Library(tuple(sorted(by_name.values(), key=lambda c: c.name)), tuple(problems))


def filled(args: str, typed: str) -> str:
    """A step's arguments with the call's filled in: `$ARGUMENTS` is all of them, `$1`..`$9` their words (nothing
    when there are fewer).

    >>> filled("$1 to $2, all: $ARGUMENTS; $3.", "Bob prod")
    'Bob to prod, all: Bob prod; .'
    """
    words = typed.split()
    return _PLACEHOLDER.sub(lambda m: typed if m[1] == "ARGUMENTS" else _word(words, int(m[1])), args)


def _word(words: list[str], number: int) -> str:
    return words[number - 1] if number <= len(words) else ""


def steps_of(chain: SavedChain) -> tuple[Step, ...]:
    """The steps of a saved chain's line, with its placeholders unfilled.

    >>> [(s.op, s.name) for s in steps_of(SavedChain("ship", "/check $1 || /tiny fixed", "ship.md"))]
    [('&&', '/check $1'), ('||', '/tiny fixed')]
    """
    first = _FIRST.match(chain.body)
    if first is None:
        raise ValueError(f"{chain.source} holds no chain line")
    parsed = parse_chain(chain.body[first.end() :])
    return (Step(first[1], parsed.head), *parsed.rest)


def origin_of(name: str) -> str:
    """The origin the steps of a saved chain run from: a file, never the person's typing."""
    return f"saved chain {name}"


@frozen
class Expanded:
    """A typed line with its saved chains filled in: its steps, each saying which call it is part of (`Step.calls`)
    and from which saved chain its text came (`Step.by`)."""

    steps: tuple[Step, ...]


@frozen
class NotExpanded:
    """Why a typed line's saved chains cannot run (a cycle, too deep, too many steps): nothing of it runs."""

    why: str


def expand(steps: Iterable[Step], saved: Library) -> Expanded | NotExpanded:
    """Fills in every step that names a saved chain with that chain's steps, as a shell runs a function: the call's
    operator decides whether it runs, and its last step's status is then the call's. The first step of a call keeps
    the call's operator; every step of it carries the call's number in `calls`, so a call that does not run skips
    all of them.

    >>> lib = Library((SavedChain("ship", "/check $1 && /tiny done", "s"), SavedChain("check", "/tiny $1", "c")))
    >>> [(s.name, s.op, s.by, s.calls) for s in expand([Step("a", ""), Step("ship", "Bob", "||")], lib).steps]
    [('/a', '&&', None, ()), ('/tiny Bob', '||', 'check', (1, 2)), ('/tiny done', '&&', 'ship', (1,))]
    """
    out: list[Step] = []
    calls = brought = 0

    def visit(step: Step, stack: tuple[str, ...], around: tuple[int, ...]) -> NotExpanded | None:
        nonlocal calls, brought
        chain = saved.named(step.command)
        if chain is None:
            out.append(attrs.evolve(step, calls=around))
            brought += bool(around)
            return None if brought <= MAX_STEPS else NotExpanded(_TOO_MANY.format(limit=MAX_STEPS))
        path = " -> ".join((*stack, chain.name))
        if chain.name in stack:
            return NotExpanded(_CYCLE.format(path=path))
        if len(stack) >= MAX_DEPTH:
            return NotExpanded(_TOO_DEEP.format(limit=MAX_DEPTH, path=path))
        calls += 1
        inner = (*around, calls)
        for n, own in enumerate(steps_of(chain)):
            args = js_trim(filled(own.args, step.args))
            called = Step(own.command, args, step.op if n == 0 else own.op, chain.name)
            stopped = visit(called, (*stack, chain.name), inner)
            if stopped is not None:
                return stopped
        return None

    for step in steps:
        stopped = visit(step, (), ())
        if stopped is not None:
            return stopped
    return Expanded(tuple(out))


_CYCLE: Final = "saved chains call each other in a cycle ({path}); nothing ran"
_TOO_DEEP: Final = "saved chains nest more than {limit} deep ({path}); nothing ran"
_TOO_MANY: Final = "the saved chains make more than {limit} steps; nothing ran"
