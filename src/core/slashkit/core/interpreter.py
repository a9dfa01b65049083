"""The interpreter: runs a program (`slashkit.core.program`) as bash runs the same list, one command at a time.

Its state is one immutable value, `Run`: the program, and the status each command it asked for ended with. The
next move is found by running the program from its start against those statuses (a replay), so where the program
stands, its loop counters, its saved-chain calls and its last status all follow from that one value, which cattrs
round-trips and a journal can keep; a move costs a walk of the program as far as it ran, which its bound on
steps (MAX_STEPS) keeps small.

`advance` answers with what comes next: the lines of what the operators passed over and of each iteration begun,
then the command to run (`Asked`), a wait (`Napping`), or the program's end (`Finished`). The host's part is only
each command's status: success when it ended well, failure when it did not, None when the refusal rule kept it
from running (it then keeps the last status, as a command an operator skips does).
"""

import collections
import functools
import re
from collections.abc import Generator, Iterator
from typing import Final, Literal

import attrs
from attrs import frozen

from slashkit.core.chain import Operator, Step
from slashkit.core.js_text import js_trim
from slashkit.core.policy import DEFAULT_LOOP_CAP
from slashkit.core.program import (
    AndOr,
    Break,
    Call,
    Command,
    Continue,
    For,
    Group,
    Loop,
    Node,
    Pipeline,
    Sequence,
    Sleep,
    commands,
)
from slashkit.core.texts import SKIP_WHY

Status = Literal["success", "failure"]

#: The most commands (and waits) one program runs in all.
MAX_STEPS: Final = 1000

# `$NAME`, `${NAME}` or `$1`: a loop's variable, or a saved chain's arguments.
_EXPANSION: Final = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|([1-9]))")


@frozen
class Mark:
    """A loop the program is in: its kind, the iteration it is in (from 1), its cap (a `for` loop's: its number of
    words), and the word a `for` loop gave its name this iteration."""

    kind: Literal["while", "until", "for"]
    iteration: int
    cap: int
    word: str | None = None


@frozen
class Where:
    """Where a step stands: the loops around it (outermost first) and the saved chains called to reach it."""

    loops: tuple[Mark, ...] = ()
    calls: tuple[str, ...] = ()


# What `advance` says


@frozen
class Passed:
    """A command the operators passed over (`why`: the operator and the last status), with its number."""

    step: Step
    number: int
    why: str


@frozen
class Began:
    """An iteration of a loop began."""

    mark: Mark


@frozen
class Capped:
    """A `while` or `until` ran its body as many times as its cap allows, and ended with a failure status."""

    mark: Mark


@frozen
class Bounded:
    """The program ran as many steps as a program may, and ended with a failure status."""

    steps: int


Line = Passed | Began | Capped | Bounded


@frozen
class Asked:
    """Run this slash command (its arguments filled in): its number in the program; `handed` says a `|` hands it
    the output of the command before it, and `hands_on` that its own output is handed on."""

    step: Step
    number: int
    handed: bool
    hands_on: bool
    where: Where


@frozen
class Napping:
    """Wait this many seconds (`sleep`), then go on as after a success."""

    seconds: int


@frozen
class Finished:
    """The program ended with this last status."""

    status: Status


Next = Asked | Napping | Finished


@frozen
class Run:
    """A running program: the program, what the person allows (its loops' cap), and the status each of the commands
    it asked for ended with, in order (None: refused, keeping the last status); `output` is what the last one
    printed or answered, which a `|` after it hands on."""

    program: Node
    statuses: tuple[Status | None, ...] = ()
    output: str = ""
    loop_cap: int = DEFAULT_LOOP_CAP

    def ended(self, status: Status | None, output: str = "") -> "Run":
        """The run with its asked command ended this way."""
        return attrs.evolve(self, statuses=(*self.statuses, status), output=output)


@frozen
class Advanced:
    """What comes after the last status: the lines to write, in order, and the next step or the end; `seen` counts
    the commands asked for or passed over so far, the next one included (a step's number in this run)."""

    lines: tuple[Line, ...]
    next: Next
    seen: int


#: How many states' next moves are remembered: a move is asked for again and again (the status area's "next", a
#: forecast of the moves ahead, the move itself), and each is a replay of the program as far as it ran.
REMEMBERED: Final = 512


@functools.lru_cache(maxsize=REMEMBERED)
def advance(run: Run) -> Advanced:
    """Runs the program as far as its statuses go, then on to the next command or wait, or to its end.

    >>> from slashkit.core.grammar import parse
    >>> go = advance(Run(parse("/a || /b && /c").unwrap()))
    >>> go.next.step.name
    '/a'
    >>> go = advance(Run(parse("/a || /b && /c").unwrap(), ("success",)))
    >>> [line.step.name for line in go.lines], go.next.step.name
    (['/b'], '/c')
    """
    resumed = _paused.pop(_place(run, len(run.statuses) - 1), None) if run.statuses else None
    if resumed is not None:
        # The walk that stopped at this run's last command goes on from there: a move costs the steps it makes.
        walker, program = resumed
        return _walked(run, walker, program, len(run.statuses))
    walker = _Walker(run)
    return _walked(run, walker, walker.run(run.program, "&&"), 0)


def _walked(run: Run, walker: "_Walker", program: "_Walk", answered: int) -> Advanced:
    """Walks on, sent the run's last status (`answered`, of them all: a walk that stopped at the last command) or from
    the start (0), to the command or wait after the last status, or to the end; a walk that stops at a command is
    kept to go on from (`_paused`)."""
    lines: list[Line] = []
    try:
        said = program.send(run.statuses[answered - 1]) if answered else next(program)
        while True:
            if isinstance(said, Asked | Napping):
                if answered == len(run.statuses):
                    _pause(_place(run, answered), walker, program)
                    return Advanced(tuple(lines), said, walker.seen)
                answered += 1
                said = program.send(run.statuses[answered - 1])
                continue
            if answered == len(run.statuses):
                lines.append(said)
            said = next(program)
    except StopIteration as stop:
        status: Status = stop.value
        return Advanced(tuple(lines), Finished(status), walker.seen)
    except _Bound:
        lines.append(Bounded(MAX_STEPS))
        return Advanced(tuple(lines), Finished("failure"), walker.seen)


#: Where a walk stands: the program, the statuses it was sent, and the cap it runs under (the output handed on is
#: no part of where it goes).
_Place = tuple[Node, tuple["Status | None", ...], int]
#: Walks stopped at a command, by where they stand, to go on from when that command's status comes; each goes on
#: once (a generator cannot be copied), and a move asked of a place kept nowhere is walked from the start.
_paused: "collections.OrderedDict[_Place, tuple[_Walker, _Walk]]" = collections.OrderedDict()
#: How many stopped walks are kept: a host asks for the next move of the newest few states.
PAUSED: Final = 64


def _place(run: Run, statuses: int) -> _Place:
    return (run.program, run.statuses[:statuses], run.loop_cap)


def _pause(place: _Place, walker: "_Walker", program: "_Walk") -> None:
    _paused[place] = (walker, program)
    while len(_paused) > PAUSED:
        _paused.popitem(last=False)


def ahead(run: Run, status: Status | None) -> Advanced:
    """What would come if the asked command ended this way."""
    return advance(run.ended(status))


#: How a command of the program has gone so far (`history`): it ran and ended so, the refusal rule kept it from
#: running, or an operator passed over it.
Outcome = Literal["success", "failure", "refused", "skipped"]


def history(run: Run) -> tuple[tuple[int, Outcome], ...]:
    """What the program did so far, in order: each command it asked for or passed over (by its number in the
    program) and how that went. One replay, as far as the run's statuses go; a loop's command appears once an
    iteration."""
    walker = _Walker(run)
    program = walker.run(run.program, "&&")
    did: list[tuple[int, Outcome]] = []
    answered = 0
    try:
        said = next(program)
        while True:
            if isinstance(said, Asked | Napping):
                if answered == len(run.statuses):
                    break
                status = run.statuses[answered]
                answered += 1
                if isinstance(said, Asked):
                    did.append((said.number, "refused" if status is None else status))
                said = program.send(status)
                continue
            if isinstance(said, Passed):
                did.append((said.number, "skipped"))
            said = next(program)
    except (StopIteration, _Bound):
        pass
    finally:
        program.close()
    return tuple(did)


def passed_steps(lines: tuple[Line, ...]) -> tuple[Step, ...]:
    """The commands the lines say were passed over."""
    return tuple(line.step for line in lines if isinstance(line, Passed))


class _Jump(Exception):
    def __init__(self, levels: int) -> None:
        super().__init__(levels)
        self.levels = levels


class _Break(_Jump):
    pass


class _Continue(_Jump):
    pass


class _Bound(Exception):
    pass


#: What the walk says as it goes, and what it is sent back: a command's status.
_Walk = Generator[Line | Asked | Napping, Status | None, Status]


class _Walker:
    """One replay of a program: its variables, the last status, the loops and calls it is in."""

    def __init__(self, run: Run) -> None:
        self.cap = run.loop_cap
        self.status: Status = "success"
        self.ran_ok = False
        self.variables: dict[str, str] = {}
        self.arguments: list[str] = []
        self.loops: list[Mark] = []
        self.calls: list[str] = []
        self.piping = False
        self.seen = 0

    def run(self, node: Node, op: Operator) -> _Walk:
        match node:
            case Command():
                return self._command(node, op, handed=op == "|")
            case Call(name, args, body):
                return self._call(name, args, body, op)
            case Sleep(seconds):
                return self._sleep(seconds)
            case Break(levels):
                return self._jump(_Break(levels))
            case Continue(levels):
                return self._jump(_Continue(levels))
            case Pipeline(parts):
                return self._pipeline(parts, op)
            case AndOr(first, rest):
                return self._and_or(first, rest, op)
            case Sequence(items):
                return self._sequence(items, op)
            case Group(body):
                return self.run(body, op)
            case Loop(until, condition, body):
                return self._loop(until, condition, body)
            case For(name, words, body):
                return self._for(name, words, body)
        raise AssertionError(f"no such node: {node!r}")

    def _command(self, command: Command, op: Operator, handed: bool) -> _Walk:
        self._count()
        step = Step(command.command, js_trim(self._filled(command.args)), op, command.by)
        where = Where(tuple(self.loops), tuple(self.calls))
        status = yield Asked(step, command.number, handed, self.piping, where)
        self.ran_ok = status == "success"
        if status is not None:
            self.status = status
        return self.status

    def _call(self, name: str, args: str, body: Node, op: Operator) -> _Walk:
        outer = self.arguments
        self.arguments = [js_trim(self._filled(args))]
        self.calls.append(name)
        try:
            return (yield from self.run(body, op))
        finally:
            self.calls.pop()
            self.arguments = outer

    def _sleep(self, seconds: int) -> _Walk:
        self._count()
        yield Napping(seconds)
        self.status = "success"
        self.ran_ok = False
        return self.status

    def _jump(self, jump: _Jump) -> _Walk:
        raise jump
        yield  # a generator, as every walk is

    def _pipeline(self, parts: tuple[Node, ...], op: Operator) -> _Walk:
        piping = self.piping
        self.piping = True
        yield from self.run(parts[0], op)
        for n, part in enumerate(parts[1:], start=2):
            self.piping = n < len(parts) or piping
            if self.ran_ok:
                yield from self.run(part, "|")
            else:
                yield from self._pass(part, "|")
        self.piping = piping
        return self.status

    def _and_or(self, first: Node, rest: tuple[tuple[Literal["&&", "||"], Node], ...], op: Operator) -> _Walk:
        yield from self.run(first, op)
        for joint, part in rest:
            if (self.status == "success") == (joint == "&&"):
                yield from self.run(part, joint)
            else:
                yield from self._pass(part, joint)
        return self.status

    def _sequence(self, items: tuple[Node, ...], op: Operator) -> _Walk:
        yield from self.run(items[0], op)
        for item in items[1:]:
            yield from self.run(item, ";")
        return self.status

    def _pass(self, node: Node, op: Operator) -> Iterator[Line]:
        """Passes over a command (a compound one whole, as bash skips it) after this operator."""
        self.ran_ok = False
        why = SKIP_WHY[op]
        for n, command in enumerate(commands(node)):
            self._count()
            step = Step(command.command, command.args, op if n == 0 else "&&", command.by)
            yield Passed(step, command.number, why)

    def _loop(self, until: bool, condition: Node, body: Node) -> _Walk:
        kind: Literal["while", "until"] = "until" if until else "while"
        last: Status = "success"
        runs = 0
        while True:
            mark = Mark(kind, runs + 1, self.cap)
            if runs == self.cap:
                yield Capped(attrs.evolve(mark, iteration=runs))
                self.status = "failure"
                return self.status
            self.loops.append(mark)
            yield Began(mark)
            try:
                decided = yield from self.run(condition, "&&")
                if (decided == "success") == until:
                    break
                runs += 1
                last, broke = yield from self._iteration(body)
            finally:
                self.loops.pop()
            if broke:
                break
        self.status = last
        return self.status

    def _for(self, name: str, words: tuple[str, ...], body: Node) -> _Walk:
        values = [value for word in words for value in self._filled(word).split()]
        last: Status = "success"
        for n, value in enumerate(values, start=1):
            self.variables[name] = value
            mark = Mark("for", n, len(values), value)
            self.loops.append(mark)
            try:
                yield Began(mark)
                last, broke = yield from self._iteration(body)
            finally:
                self.loops.pop()
            if broke:
                break
        self.status = last
        return self.status

    def _iteration(self, body: Node) -> Generator[Line | Asked | Napping, Status | None, tuple[Status, bool]]:
        """Runs a loop's body once: its status, and whether a `break` left the loop (`break` and `continue` leave
        a status of success, as bash's do; `break 2` is the loop around this one's to take, and the outermost loop
        takes whatever is left, as in bash)."""
        outer = len(self.loops) > 1
        try:
            return (yield from self.run(body, ";")), False
        except _Break as jump:
            if jump.levels > 1 and outer:
                raise _Break(jump.levels - 1) from None
            return "success", True
        except _Continue as jump:
            if jump.levels > 1 and outer:
                raise _Continue(jump.levels - 1) from None
            return "success", False

    def _count(self) -> None:
        self.seen += 1
        if self.seen > MAX_STEPS:
            raise _Bound

    def _filled(self, text: str) -> str:
        """`$NAME` and `${NAME}` filled with a `for` loop's word, and inside a saved chain `$ARGUMENTS` and `$1`..`$9`
        with its call's arguments (`$3` of two words is empty); anything else stays as written."""

        def fill(found: re.Match[str]) -> str:
            name = found[1] or found[2]
            if name is not None and name in self.variables:
                return self.variables[name]
            if not self.calls:
                return found[0]
            typed = self.arguments[0] if self.arguments else ""
            if name == "ARGUMENTS":
                return typed
            if found[3] is not None:
                words = typed.split()
                number = int(found[3])
                return words[number - 1] if number <= len(words) else ""
            return found[0]

        return _EXPANSION.sub(fill, text)
