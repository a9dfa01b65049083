"""The core's session as a harness host (the Agent SDK's, Codex's) holds it, and what its effects leave the host to
do on its own schedule.

Every hook, tool and step moves `slashkit.core.session` by one event here. The host sends one query (one turn) at
a time, so it carries out the effects in its own order: a timer (`After`) is due once the query in flight ended, and
fires then; a run (`Run`) is the next query, and so is a shell step (`Shell`), which the host runs itself; an approval
(`Approve`) is kept in the person's state at once; the core's lines, notices and reports become the harness's events,
kept until the `run` that iterates them yields them. Nothing here talks to a host.
"""

import os
from collections import deque
from typing import Protocol

from attrs import define, field, frozen

from slashkit.adapters import approvals
from slashkit.adapters.harness.events import ChainEnded, Event, Line, Notice, StepStarted
from slashkit.adapters.journal import SessionJournal
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.program import SHELL


class SettingStore(Protocol):
    """Where the on/off setting lives: the host reads it before each chain (and passes it to the core, which only
    writes it); a harness that shares it across sessions passes its own."""

    def get(self, key: str) -> object: ...

    def set(self, key: str, value: object) -> None: ...


@frozen
class Query:
    """A run the core asked for (a `Run` effect, or the head a `RunTyped` reply names), as the query the host sends
    for it; its end goes back with `token`. `started` is the chain step it runs, as the core reported it when the
    step started; None for a built-in the model queued."""

    step: Step
    token: int
    started: s.StepStarted | None = None

    @property
    def index(self) -> int:
        """The step's index in its chain; 0 for a built-in the model queued."""
        return 0 if self.started is None else self.started.index


def started_by(moved: s.Moved) -> s.StepStarted | None:
    """The step a move started, if any (the core reports it beside the timer or the head's run it asks for)."""
    return next((effect for effect in moved.effects if isinstance(effect, s.StepStarted)), None)


def chain_of(moved: s.Moved) -> int | None:
    """The chain a typed chain's move started: the one its last report is about (a chain the typing cancelled
    ended first); None when it reported nothing."""
    chains = [effect.chain for effect in moved.effects if isinstance(effect, s.StepStarted | m.ChainEnded)]
    return chains[-1] if chains else None


@define
class Agenda:
    """The core's session and what its effects left to do: the tokens of the timers it started (each with the
    step it starts, if any), the runs it asked for, and the harness events not yet yielded (the lines and notices
    for whichever `run` yields next, the reports for the `run` that iterates their chain)."""

    session: s.Session
    store: SettingStore
    #: Where each move of a program is journaled, if anywhere (`slashkit run` journals; an embedding harness not).
    journal: SessionJournal | None = None
    _due: deque[tuple[int, s.StepStarted | None, int]] = field(factory=deque)
    _runs: deque[Query] = field(factory=deque)
    _loose: list[Event] = field(factory=list)
    _chains: dict[int, list[Event]] = field(factory=dict)

    @property
    def enabled(self) -> bool:
        """The on/off setting, read before each event that needs it: a harness may share it across sessions."""
        return s.enabled(self.store.get(s.ENABLED_KEY))

    @property
    def switched_on(self) -> bool:
        """The person's switch of the model's self-commands, read with each call, as `enabled` is."""
        return s.enabled(self.store.get(s.BUILTIN_KEY))

    @property
    def due(self) -> int:
        """Counts the timers that have not fired."""
        return len(self._due)

    def move(self, event: s.Event, started: s.StepStarted | None = None) -> s.Moved:
        """Moves the session by one event and takes on what it says to do; the move's reply answers the hook.
        `started` is the step a timer that fires starts: the run its firing asks for is that step's."""
        before = self.session.chains
        moved = s.on_event(self.session, event)
        self.session = moved.session
        if self.journal is not None:
            # A journal that cannot be used is one notice, once; the program runs on in memory.
            self._loose += [Notice(line.removeprefix("slashkit: ")) for line in self.journal.moved(before, moved)]
        started = started_by(moved) or started
        for effect in moved.effects:
            self._take(effect, started)
        return moved

    def next_run(self) -> Query | None:
        """The next query to send, once the one in flight ended: every timer of no delay is due then, and fires
        (timers the firing starts too), in the order the core started them, up to one that waits (a `sleep`'s)."""
        while self._due and self._due[0][2] == 0:
            token, started, _ = self._due.popleft()
            self.move(s.TimerFired(token), started)
        return self._runs.popleft() if self._runs else None

    @property
    def pause(self) -> float:
        """How long, in seconds, the first timer left waits (a `sleep`'s); 0 when none does."""
        return self._due[0][2] / 1000 if self._due else 0.0

    def paused(self) -> None:
        """The first timer has waited its time: it is due now."""
        token, started, _ = self._due.popleft()
        self._due.appendleft((token, started, 0))

    def flush(self, chain: int | None) -> list[Event]:
        """The events not yet yielded, for the `run` that iterates this chain (None: it runs none)."""
        events = [*self._loose, *(self._chains.pop(chain, []) if chain is not None else [])]
        self._loose.clear()
        return events

    def _take(self, effect: s.Effect, started: s.StepStarted | None) -> None:
        match effect:
            case m.Log(text):
                self._loose.append(Line(text))
            case s.Toast(text):
                self._loose.append(Notice(text))
            case s.After(ms, token):
                self._due.append((token, started, ms))
            case s.Run(command, args, token):
                self._runs.append(Query(Step(command, args), token, started))
            case s.Shell(text, token):
                self._runs.append(Query(Step(SHELL, text), token, started))
            case m.Approve(source, digest):
                try:
                    approvals.approve(os.environ, source, digest)
                except OSError as err:
                    self._loose.append(Line(texts.approval_failed_text(source, err.strerror or str(err))))
            case m.SaveEnabled(on):
                self.store.set(s.ENABLED_KEY, on)
            case s.SaveBuiltin(on):
                self.store.set(s.BUILTIN_KEY, on)
            case s.StepStarted(chain, index, total, step):
                self._chains.setdefault(chain, []).append(StepStarted(index, total, step))
            case m.ChainEnded(chain, outcome):
                self._chains.setdefault(chain, []).append(ChainEnded(outcome))
            case s.Invalidate():
                # Only a session started inside lich asks it (`SessionStarted`), which this host never sends.
                pass
            case s.Progress():
                # A harness shows progress from `StepStarted` and `ChainEnded` (slashkit run's progress line).
                pass
