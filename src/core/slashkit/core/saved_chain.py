"""Saved chains: a chain written once in a file (`<name>.md`) and run by name, as a shell runs a function.

The file is optional front matter (`description`, `argument-hint`) and a program (`slashkit.core.grammar`): one chain
line, such as `/check $1 && /tiny done`, or several, where a newline is `;` and a line starting with `#` a comment,
so a file can hold a loop. `$ARGUMENTS` stands for the arguments the name was typed with and `$1`..`$9` for their
words, as Claude Code fills a command's. A step naming another saved chain calls it, as bash calls a function
(`slashkit.core.program.Call`); nesting is bounded and a cycle runs nothing.

Reading the files is an adapter's (`slashkit.adapters.saved_chains`); this module only reads their bytes. Whatever
a file holds is text the person did not type: `slashkit.core.chain_machine` runs its steps under the refusal rule
with the file's saved chain as their origin (`origin_of`).

A shell step (`!npm test`) in a saved chain runs only from a file the person trusts (`Library.trusted`): one of their
own folder, or a project's whose exact content they approved (`/slash-chain allow NAME`, as direnv's `allow`): the
approval names the file's path and the SHA-256 of its bytes, so a changed file needs approving again.
"""

import re
from collections.abc import Iterable
from typing import Final

import attrs
from attrs import frozen
from returns.result import Success

from slashkit.core.grammar import parse
from slashkit.core.js_text import js_trim
from slashkit.core.policy import REFUSED, command_name
from slashkit.core.program import Call, Command, Node, numbered, rebuilt
from slashkit.core.texts import CHAIN_COMMAND, NO_SAVED_CHAINS, menu_text, one_line, shown

#: A saved chain's name: what its file is called, less `.md`, and what the person types after the slash.
NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The largest file read; a program is short, so a larger file is refused rather than read.
MAX_FILE: Final = 64 * 1024
#: How deep saved chains may call each other (a call from the typed line is 1 deep).
MAX_DEPTH: Final = 8
#: The most steps the saved chains of one typed line may bring: eight levels of a few calls each would otherwise
#: grow past anything a person meant to run.
MAX_STEPS: Final = 256
#: The front matter's keys that mean something here; any other key is left alone (a Claude Code command's
#: `allowed-tools`, say), since the same file may serve both.
KEYS: Final = frozenset({"description", "argument-hint"})

_FENCE: Final = "---"


@frozen
class SavedChain:
    """One saved chain: its name, its program (the text after its front matter), the file it came from, and what its
    front matter says of it; `digest` is the SHA-256 of the file's bytes, and `own` says it is in the person's own
    folder (not a project's)."""

    name: str
    body: str
    source: str
    description: str = ""
    argument_hint: str = ""
    digest: str = ""
    own: bool = False


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
    approved: frozenset[tuple[str, str]] = frozenset()

    def trusted(self, chain: SavedChain) -> bool:
        """Tells whether the shell steps of a saved chain may run: it is the person's own, or its file's path and
        content are as the person approved them."""
        return chain.own or (chain.source, chain.digest) in self.approved

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

    >>> chain = read(SavedFile("ship.md", "ship.md", b"---\\ndescription: Ships it\\n---\\n/check $1 && /tiny done\\n"))
    >>> chain.name, chain.body, chain.description, chain.digest[:12]
    ('ship', '/check $1 && /tiny done', 'Ships it', '60081fe59d3a')
    >>> read(SavedFile("ship.md", "ship.md", b"/a\\ndone\\n")).text
    "saved chain ship.md:2: a command was expected, not 'done'; nothing of it runs"
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
    body = "\n".join(lines[body_at:]).strip("\n")
    if js_trim(body) == "":
        return Problem(found.source, "its body is empty; a saved chain holds at least one command")
    program = parse(body, file=True)
    if not isinstance(program, Success):
        why = program.failure()
        at = body_at + _leading_lines(lines, body_at) + why.line
        return Problem(found.source, f"{why.why}; nothing of it runs", at)
    about = (front.get("description", ""), front.get("argument-hint", ""))
    # Imported with the first saved chain read, not before the helper's first answer (~2.5 ms, CPython 3.11.7).
    import hashlib

    return SavedChain(name, js_trim(body), found.source, *about, hashlib.sha256(found.data).hexdigest())


def _leading_lines(lines: list[str], body_at: int) -> int:
    """How many blank lines stand before the body's first line (the body is read without them). A blank line is an
    empty one: `str.splitlines` leaves no line break in a line, and a line of spaces is part of the body."""
    blank = 0
    for line in lines[body_at:]:
        if line:
            break
        blank += 1
    return blank


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


def library(
    person: Iterable[SavedFile | Problem],
    project: Iterable[SavedFile | Problem] = (),
    approved: Iterable[tuple[str, str]] = (),
) -> Library:
    """The saved chains of the person's folder and the project's, which shadows it; a folder may say itself what is
    wrong with it (a `Problem`). `approved` holds the (path, SHA-256) of each project file whose shell steps the person
    approved.

    >>> person = [SavedFile("ship.md", "~/ship.md", b"/a"), SavedFile("x.md", "~/x.md", b"")]
    >>> project = [SavedFile("ship.md", ".slashkit/ship.md", b"/b")]
    >>> lib = library(person, project)
    >>> [(c.name, c.body, c.own) for c in lib.chains], [p.source for p in lib.problems]
    ([('ship', '/b', False)], ['~/x.md'])
    """
    by_name: dict[str, SavedChain] = {}
    problems: list[Problem] = []
    for own, folder in ((True, person), (False, project)):
        for found in folder:
            match found if isinstance(found, Problem) else read(found):
                case SavedChain() as chain:
                    by_name[chain.name] = attrs.evolve(chain, own=own)
                case Problem() as problem:
                    problems.append(problem)
    chains = tuple(sorted(by_name.values(), key=lambda c: c.name))
    return Library(chains, tuple(problems), frozenset(approved))


def origin_of(name: str) -> str:
    """The origin the steps of a saved chain run from: a file, never the person's typing."""
    return f"saved chain {name}"


def program_of(chain: SavedChain) -> Node:
    """A saved chain's program, each of its slash commands saying which saved chain's file holds it (`Command.by`).

    >>> program_of(SavedChain("ship", "/check $1 || /tiny fixed", "ship.md")).rest[0][1]
    Command(command='tiny', args='fixed', number=2, by='ship')
    """
    parsed = parse(chain.body, file=True)
    if not isinstance(parsed, Success):
        raise ValueError(f"{chain.source} holds no program: {parsed.failure().why}")
    return rebuilt(parsed.unwrap(), lambda n: attrs.evolve(n, by=chain.name) if isinstance(n, Command) else n)


def inlined(program: Node, saved: Library) -> Node | str:
    """The program with every slash command that names a saved chain made a call of it (`Call`), whose body is that
    chain's program, its own calls made in turn; then numbered again, so a call's commands stand in its place. Or why
    the saved chains cannot run (a cycle, too deep, too many commands): then nothing of the program runs.

    >>> lib = Library((SavedChain("ship", "/check $1 && /tiny done", "s"), SavedChain("check", "/tiny $1", "c")))
    >>> from slashkit.core.program import commands
    >>> [(c.number, c.command, c.args, c.by) for c in commands(inlined(parse("/a && /ship Bob").unwrap(), lib))]
    [(1, 'a', '', None), (2, 'tiny', '$1', 'check'), (3, 'tiny', 'done', 'ship')]
    """
    brought = 0

    class _Stop(Exception):
        pass

    stopped: list[str] = []

    def call(node: Node, stack: tuple[str, ...]) -> Node:
        nonlocal brought
        if not isinstance(node, Command):
            return node
        chain = saved.named(node.command)
        if chain is None:
            brought += bool(stack)
            if brought > MAX_STEPS:
                stopped.append(_TOO_MANY.format(limit=MAX_STEPS))
                raise _Stop
            return node
        path = " -> ".join((*stack, chain.name))
        if chain.name in stack:
            stopped.append(_CYCLE.format(path=path))
            raise _Stop
        if len(stack) >= MAX_DEPTH:
            stopped.append(_TOO_DEEP.format(limit=MAX_DEPTH, path=path))
            raise _Stop
        inner = (*stack, chain.name)
        body = rebuilt(program_of(chain), lambda n: call(n, inner))
        return Call(chain.name, node.args, body, node.by)

    try:
        return numbered(rebuilt(program, lambda n: call(n, ())))
    except _Stop:
        return stopped[0]


_CYCLE: Final = "saved chains call each other in a cycle ({path}); nothing ran"
_TOO_DEEP: Final = "saved chains nest more than {limit} deep ({path}); nothing ran"
_TOO_MANY: Final = "the saved chains make more than {limit} steps; nothing ran"
