"""The driving loop every harness host shares (the Agent SDK's, Codex's): what the harness types becomes the core's
events, each run the core asks for becomes one query (one turn) of the host, sent one at a time, and its end goes
back to the core. A host says only how to send one query and how it ended (`Harness._send`), and how to interrupt.
"""

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Collection, Iterable, Mapping
from pathlib import Path
from typing import Final, Generic, Self, TypedDict, TypeVar

from attrs import frozen

from slashkit.adapters.harness.agenda import Agenda, Query, SettingStore, chain_of, started_by
from slashkit.adapters.harness.events import CommandStarted, Event, Output, StepEnd, StepEnded
from slashkit.adapters.journal import SessionJournal
from slashkit.adapters.memory import DictStore
from slashkit.adapters.saved_chains import load
from slashkit.adapters.shell import run_shell, timeout_of
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.allowlist import Allowlist
from slashkit.core.chain import Step, holds_chain
from slashkit.core.grammar import starts_program
from slashkit.core.js_text import js_trim_end
from slashkit.core.policy import Denied, rule_for
from slashkit.core.saved_chain import NO_SAVED, Library
from slashkit.core.texts import CHAIN_COMMAND, MAX_TOOL_TEXT

#: The origin of what the harness types for the person: their own input, which may run anything and cancels a
#: running chain (slashkit.core.policy). Claude Code's own name for an SDK host's turn, `sdk`, is the person's
#: typing too but keeps the seed's rule that it does not cancel a chain; a harness's next prompt does, so the
#: host names it as the person's input from outside the composer: `bridge`.
HARNESS_ORIGIN: Final = "bridge"
#: The origin of text a harness sends that it does not mark as the person's (`run(..., by_person=False)`: a
#: model's output, a message from elsewhere): it runs only what anyone may run.
HARNESS_TEXT: Final = "harness"


#: A host's own messages, yielded to a harness that shows everything (the SDK's `Message`, Codex's `Raw`).
M = TypeVar("M")


@frozen
class Ended:
    """How one query (one turn) of the host ended: `how` in the core's words, its `output` (what a `|` hands on,
    or why it failed), and whether the core was already handed its prompt (`PromptHanded`)."""

    how: StepEnd
    output: str
    prompted: bool = False


def told(token: int, ended: Ended, text: str) -> tuple[s.Event, ...]:
    """The core events a chain step's query ending becomes: its run resolved or threw, then (for a prompt) its
    turn ended. `text` is the query's; a prompt not handed to the core yet is handed first (the model took a turn
    all the same), which a step that no longer waits on its run ignores."""
    if ended.how in ("ran", "failed"):
        return (run_ended(token, ended.how, ended.output),)
    handed = () if ended.prompted else (m.PromptHanded(text),)
    return (*handed, s.RunEnded(token), m.TurnEnded(ended.how, None, ended.output))


def typed_command(text: str) -> tuple[str, str]:
    """The command a typed text names and its args, or ("", "") for a prompt: a text that does not start with a
    slash and a name right after it. A slash then a space names no command: Claude Code and Codex send `/ please
    review` to the model as typed, so it is a prompt here too, shown as typed, never as a step named `/`.

    >>> typed_command("/greet Bob && /bye"), typed_command("/ please review"), typed_command("hello")
    (('greet', 'Bob && /bye'), ('', ''), ('', ''))
    """
    command, _, args = text.removeprefix("/").partition(" ")
    return (command, args) if text.startswith("/") and command else ("", "")


def run_ended(token: int, how: StepEnd, output: str) -> s.RunEnded:
    """The end of a run as the core reads it: it threw when it failed (`output` says why), else it resolved with
    its text."""
    return s.RunEnded(token, output) if how == "failed" else s.RunEnded(token, None, output)


def step_note(prompt: str, reply: s.Reply) -> str | None:
    """The note the model reads after a chained step's prompt: what the core appended to it, if anything.

    >>> step_note("/b x", m.PromptText("/b x\\n\\n[slash-chain] note"))
    '[slash-chain] note'
    >>> step_note("/b x", None) is None
    True
    """
    if not isinstance(reply, m.PromptText):
        return None
    return reply.text.removeprefix(js_trim_end(prompt)).lstrip("\n") or None


def tool_answer(reply: s.Reply) -> tuple[str, bool]:
    """The answer of a tool of slashkit's (the fail tool, the self-command tool) for the core's reply: its text,
    and whether it is a refusal."""
    match reply:
        case m.ToolAnswered(text):
            return text, False
        case Denied(text):
            return text, True
    return texts.FAIL_NOTHING_WAITS, True


def too_long(arguments: Mapping[str, object], *names: str) -> str | None:
    """Why a call of slashkit's tools is refused before the core reads it: one of its texts is over MAX_TOOL_TEXT
    characters (the answer says how long, never the text itself).

    >>> too_long({"args": "x" * 5000}, "command", "args")
    'args is 5,000 characters, over the 4,000 a call of this tool may hold: call it again with less'
    >>> too_long({"command": "compact", "args": 7}, "command", "args") is None
    True
    """
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and len(value) > MAX_TOOL_TEXT:
            held = f"over the {MAX_TOOL_TEXT:,} a call of this tool may hold"
            return f"{name} is {len(value):,} characters, {held}: call it again with less"
    return None


class SessionSettings(TypedDict, total=False):
    """What every harness host's session takes after its own arguments: `self_commands=True` offers the model the
    self-command tool; `language` picks slashkit's texts (en, pt-BR, zh-CN, es); `store` keeps the person's
    `/slash-chain on` and `off` (by default, for this session only); `allow` names the built-ins the person adds to
    the allowlist for themselves (never /model or /effort); `loop_cap` is how many times a `while` or `until` may run
    its body, a whole number from 1 to 1000, or as `SLASHKIT_LOOP_CAP` is written (anything else, or None, keeps 10).
    """

    self_commands: bool
    language: str | None
    store: SettingStore | None
    allow: Iterable[str]
    loop_cap: int | str | None


class Harness(Generic[M]):
    """What the harness types, run the way a person's session would, plus slash chains: `async for event in
    session.run("/review && /test")`. A host subclasses it with `_send` (one query, yielding its output and then
    how it ended) and `interrupt`, and fills `_known` and `_builtins` once connected."""

    #: The most characters `run` takes.
    max_typed: int = 100_000

    def __init__(
        self, host: Allowlist, settings: SessionSettings, *, harness: bool = False, fail_tool: str = texts.FAIL_TOOL_ID
    ) -> None:
        """`host`'s built-ins and allowlist, widened by `allow`; `harness`: the host reads the harness's text as
        typing unless told it is not (slashkit.core.policy.rule_for); `fail_tool` is the fail tool's name there."""
        unknown = sorted(settings.keys() - SessionSettings.__annotations__.keys())
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        cap = settings.get("loop_cap")
        self._rule = rule_for(host, " ".join(settings.get("allow", ())), harness, None if cap is None else str(cap))
        self._self_commands = settings.get("self_commands", False)
        rule, language = self._rule, settings.get("language")
        self._agenda = Agenda(s.opened(rule, fail_tool, language=language), settings.get("store") or DictStore())
        #: Whether the model reported the running step failed with the fail tool.
        self._reported_failed = False
        #: The names the session knows (None: it listed none, and no step is refused for being unknown).
        self._known: frozenset[str] | None = None
        self._builtins: Collection[str] = frozenset()
        #: The project whose saved chains the session runs (None: the working directory), which a host sets.
        self._project: Path | None = None
        #: Whether the files that are no saved chains were told, once a session.
        self._told_saved = False

    # Lifecycle: `async with session:` connects, and disconnects at the end

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.disconnect()

    async def connect(self) -> None:
        """Starts the host's session."""
        raise NotImplementedError

    async def disconnect(self) -> None:
        """Ends the host's session."""
        raise NotImplementedError

    # What the host says

    def _send(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | M | Ended]:
        """Sends one query and yields what it produced as it came, then how it ended (an `Ended`)."""
        raise NotImplementedError

    def _unknown(self, command: str) -> str:
        """The reason a command the session does not know did not run."""
        return f"Unknown command: /{command}"

    async def interrupt(self) -> None:
        """Interrupts the model's turn: a chain whose step it was stops (its turn ended as `aborted`)."""
        raise NotImplementedError

    # slashkit's tools: each host hands a call's arguments here, as the call gave them, and answers with the text

    def _fail_called(self, arguments: Mapping[str, object], agent: str | None = None) -> tuple[str, bool]:
        """The fail tool's answer, and whether it is a refusal; `agent` names the subagent that called it, if
        one did. A call of the model's own turn that stopped the step marks the step failed."""
        why = too_long(arguments, "reason")
        if why is not None:
            return why, True
        text, refused = tool_answer(self._agenda.move(m.FailCalled(arguments.get("reason"), agent)).reply)
        if agent is None:
            self._reported_failed = self._reported_failed or not refused
        return text, refused

    def _builtin_called(self, arguments: Mapping[str, object]) -> tuple[str, bool]:
        """The self-command tool's answer, and whether it is a refusal: a built-in it queued runs as the query
        after this turn's (`_builtin`)."""
        why = too_long(arguments, "command", "args")
        if why is not None:
            return why, True
        command, args = arguments.get("command"), arguments.get("args")
        asked = s.BuiltinAsked(command, args, tuple(self._builtins), self._agenda.switched_on)
        return tool_answer(self._agenda.move(asked).reply)

    # What the harness types

    async def run(self, text: str, *, by_person: bool = True) -> AsyncIterator[Event | M]:
        """Types `text` as the person would and yields what happens until it is over: a chain's steps and how
        it ended, a single command's output, or the model's answer to a prompt.

        Text that opens a loop or a group (`until /check; do /fix; done`, `for w in a b; do /x $w; done`) runs as a
        program when it parses whole as one, its steps as a saved chain's; else it is a prompt. Anything but a chain
        (a prompt, a command alone) cancels a running chain first, as the person's own prompt does; a new chain or
        program cancels it too, then starts. Text the person did not type (a model's output, a
        message from elsewhere) is `by_person=False`: then only what anyone may run runs (a built-in off the
        allowlist is answered with the refusal, in a chain or alone), and it cancels nothing. A text of more than
        `max_typed` characters is refused with a ValueError before anything is sent.
        """
        if len(text) > self.max_typed:
            raise ValueError(f"the text is {len(text):,} characters, over the {self.max_typed:,} one query may hold")
        command, args = typed_command(text)
        origin = HARNESS_ORIGIN if by_person else HARNESS_TEXT
        listed = (tuple(self._builtins), tuple(self._known or ()))
        saved = await self._saved()
        calls = saved.leaving(listed[1], self._rule.builtins).named(command) is not None
        program = starts_program(text)
        chained = program or (bool(command) and (holds_chain(args) or calls))
        alone = bool(command) and not chained
        if alone and not self._rule.knowing(*listed).may_run(command, origin, args=args):
            refused = texts.refused_text(Step(command, args), origin)
            for event in self._answer(Step(command, args), refused, ran=False):
                yield event
            return
        if command == CHAIN_COMMAND:
            answer, moved = self._chain_moved(args, saved)
            for event in self._answer(Step(command, args), answer):
                yield event
            # `/slash-chain resume` starts the program cut off: its steps run from here, as a typed chain's do.
            async for event in self._queries(chain_of(moved)):
                yield event
            return
        if not chained:
            async for event in self._alone(text, origin):
                yield event
            return
        typed: m.LineTyped | m.ChainTyped
        if program:
            # A program's steps all run from timers, as a saved chain's do; its text is answered as a prompt's step.
            typed, step = m.LineTyped(text, origin, self._agenda.enabled, *listed, saved), Step("", text)
        else:
            typed, step = m.ChainTyped(command, args, origin, self._agenda.enabled, *listed, saved), Step(command, args)
        moved = self._agenda.move(typed)
        first: Query | None = None
        match moved.reply:
            case s.RunTyped(head, token):
                first = Query(Step(command, head), token, started_by(moved))
            case m.CommandAnswer(answer):
                # The typed command itself is not to run (the refusal rule), or a saved chain or a program started:
                # the chain goes on from a timer. Nothing started (a line that does not read, a file to approve
                # first, a command refused): the typed text was refused, and says why.
                for event in self._answer(step, answer, ran=chain_of(moved) is not None):
                    yield event
            case _:
                # Not a chain to run (slash chains are off, or the text is a prompt): it runs as typed.
                async for event in self._alone(text, origin):
                    yield event
                return
        async for event in self._queries(chain_of(moved), first):
            yield event

    def status(self) -> str:
        """`/slash-chain`: `on · no chain runs`, or the running step and what it waits for."""
        return self._chain_command("")

    def stop(self) -> str:
        """`/slash-chain stop`: cancels the running chain once its step's query ended."""
        return self._chain_command("stop")

    def on(self) -> str:
        """`/slash-chain on`: typed chains run step after step."""
        return self._chain_command("on")

    def off(self) -> str:
        """`/slash-chain off`: a chain typed from now on runs as typed, one command; a running one is cancelled."""
        return self._chain_command("off")

    def journal_to(self, journal: SessionJournal) -> None:
        """Journals each move of this session's programs from now on (slashkit.adapters.journal), so that a run cut
        off by a crash or a timeout can be resumed."""
        self._agenda.journal = journal

    def offer(self, cut: m.Cut) -> None:
        """Hands the session a program its previous process left cut off, as a host that continues a session does:
        nothing runs until the person types `/slash-chain resume` (or `forget`)."""
        self._agenda.move(m.Continued(cut))

    def _chain_command(self, args: str, saved: Library = NO_SAVED) -> str:
        """`/slash-chain args`: the text the command answers (`list` reads `saved`)."""
        return self._chain_moved(args, saved)[0]

    def _chain_moved(self, args: str, saved: Library) -> tuple[str, s.Moved]:
        """`/slash-chain args`: the text the command answers, and the move (`resume` starts a program)."""
        typed = m.ChainCommandTyped(args, self._agenda.enabled, None, saved, tuple(self._known or ()))
        moved = self._agenda.move(typed)
        return (moved.reply.text if isinstance(moved.reply, m.CommandAnswer) else ""), moved

    async def _saved(self) -> Library:
        """The saved chains as their files are now; the first time in a session, the ones that are none are told
        (as lines, with what the next `run` yields). The files are read on a thread: a folder anyone may write is
        read off the event loop, which the host's own messages (the SDK's, the app-server's) run on."""
        saved = await asyncio.to_thread(load, self._project)
        if not self._told_saved:
            self._told_saved = True
            self._agenda.move(s.SavedAsked(tuple(self._known or ()), saved))
        return saved

    # Drivers

    async def _queries(self, chain: int | None, query: Query | None = None) -> AsyncIterator[Event | M]:
        """Sends the runs the core asks for, one query each, until none is left: this chain's steps, and the
        built-ins the model queued during a turn, each once that turn ended. A step's line and report come just
        before its query, the lines of a queued built-in (queued, runs now) before its query, and what is left once
        nothing more runs."""
        while True:
            if query is None:
                query = self._agenda.next_run()
            for flushed in self._agenda.flush(chain if query is None or query.started is not None else None):
                yield flushed
            if query is None and self._agenda.pause > 0:
                # A `sleep`: no query and no turn while it waits; cancelling the run (Ctrl-C) ends the wait.
                await asyncio.sleep(self._agenda.pause)
                self._agenda.paused()
                continue
            if query is None:
                return
            async for event in self._step(query) if query.started is not None else self._builtin(query):
                yield event
            query = None

    async def _sent(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | M | Ended]:
        """`_send`, with the fail tool's mark reset first; a query that said nothing of its end failed."""
        self._reported_failed = False
        ended = Ended("failed", "")
        async for item in self._send(text, index, is_step=is_step):
            if isinstance(item, Ended):
                ended = item
            else:
                yield item
        yield ended

    async def _step(self, query: Query) -> AsyncIterator[Event | M]:
        step, index = query.step, query.index
        if step.is_shell:
            yield await self._shell(query)
            return
        if step.command == CHAIN_COMMAND:
            answer = self._chain_command(step.args)
            for event in self._answer(step, answer, index):
                yield event
            self._agenda.move(s.RunEnded(query.token, None, answer))
            return
        if self._known is not None and step.command not in self._known:
            why = self._unknown(step.command)
            yield StepEnded(index, step, "failed", why)
            self._agenda.move(s.RunEnded(query.token, why))
            return
        ended = Ended("failed", "")
        async for item in self._sent(step.name, index, is_step=True):
            if isinstance(item, Ended):
                ended = item
            else:
                yield item
        # A step the model reported with the fail tool has already stopped the chain; the core ignores the rest.
        yield StepEnded(index, step, "failed" if self._reported_failed else ended.how, ended.output)
        for report in told(query.token, ended, step.name):
            self._agenda.move(report)

    async def _shell(self, query: Query) -> StepEnded:
        """Runs a shell step (the person's own shell line, never a query of the host's) on a thread, off the event
        loop; cancelling the run (Ctrl-C) ends its process group. The core shows its output."""
        stop = threading.Event()
        cwd = str(self._project or Path.cwd())
        try:
            ended = await asyncio.to_thread(run_shell, query.step.args, cwd, os.environ, timeout_of(os.environ), stop)
        finally:
            stop.set()
        self._agenda.move(s.RunEnded(query.token, ended.error, ended.output))
        return StepEnded(query.index, query.step, "ran" if ended.error is None else "failed", ended.error or "")

    async def _alone(self, text: str, origin: str) -> AsyncIterator[Event | M]:
        self._agenda.move(m.PromptSubmitted(text, origin))
        command, args = typed_command(text)
        step = Step(command, args) if command else Step("", text)
        if command:
            yield CommandStarted(step)
            if self._known is not None and command not in self._known:
                # Fails at once, as the same command does in a chain: the session would hand it to the model.
                yield StepEnded(0, step, "failed", self._unknown(command))
                return
        ended = Ended("failed", "")
        async for item in self._sent(text, 0, is_step=False):
            if isinstance(item, Ended):
                ended = item
            else:
                yield item
        yield StepEnded(0, step, ended.how, ended.output)
        async for event in self._queries(None):
            yield event

    async def _builtin(self, query: Query) -> AsyncIterator[Event | M]:
        """Runs a built-in the model queued during the turn that just ended; the core turns its failure into a
        notice (it has no turn left to answer)."""
        step = query.step
        yield CommandStarted(step, queued=True)
        ended = Ended("failed", "")
        async for item in self._sent(step.name, 0, is_step=False):
            if isinstance(item, Ended):
                ended = item
            else:
                yield item
        yield StepEnded(0, step, ended.how, ended.output)
        self._agenda.move(run_ended(query.token, ended.how, ended.output))

    def _answer(self, step: Step, text: str, index: int = 0, ran: bool = True) -> list[Event | M]:
        """The typed text answered without a query: `ran`, or it was refused (`text` says why)."""
        return [
            Output(index, text),
            StepEnded(index, step, "ran" if ran else "refused", text),
            *self._agenda.flush(None),
        ]
