"""The bridge's Python end: handles the host's events one at a time, in the order the host sent them, and answers
each with the reply, the effects (with their forecasts) and the events the session wants next.

Transport only: what an event does is `slashkit.core.session`'s pure move, and what a timer or a run will do is
its replay (`slashkit.core.forecast`). What is here is the order of events, and the versions forecasts hold for.
One `Bridge` per helper process.
"""

import os
import sys
import threading
from collections.abc import Callable

import attrs

from slashkit.adapters import approvals, journal
from slashkit.adapters.bridge import protocol as p
from slashkit.adapters.shell import GRACE_S, ShellEnded, ShellSteps, timeout_of
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.allowlist import HOSTS
from slashkit.core.forecast import foreseen
from slashkit.core.policy import rule_for
from slashkit.core.ports import Environment
from slashkit.core.saved_chain import NO_SAVED, Library

#: How long an event waits for the one the host sent before it.
ORDER_WAIT_S = 2.0
#: How far past the events handled a request's `seq` may reach. A client has a few events on their way at once (the
#: reports it holds and the event behind them), never this many; a `seq` past it is refused and not counted, since
#: counting it would make every later event wait for the ones between, and a huge one would carry the versions past
#: what JavaScript counts exactly (2**53), so that no forecast would hold again.
MAX_SEQ_AHEAD = 1024
#: The names a person adds to the built-ins anyone may run, from their own shell (slashkit.core.policy.rule_for).
ALLOW_VARIABLE = "SLASHKIT_ALLOW"
#: How many times a person lets a `while` or `until` run its body, from their own shell (policy.rule_for).
LOOP_CAP_VARIABLE = "SLASHKIT_LOOP_CAP"
#: Set by a slashkit harness (the Agent SDK host) in the environment of the Claude Code it drives: the text it
#: sends is its chain's steps, never the person's typing, and never a chain of its own.
HARNESS_VARIABLE = "SLASHKIT_HARNESS"


#: The events that carry the saved chains, which the helper reads from disk as each comes (a file the person just
#: wrote counts at once).
SAVED_EVENTS = (m.ChainTyped, m.LineTyped, m.ChainCommandTyped, s.SavedAsked)


class LateEvent(Exception):
    """An event that came after the helper counted it gone: its state and the host's have parted, so the host is
    to give this helper up (the server answers 409) and start a fresh one."""


class Bridge:
    """The core of one host session behind the wire format."""

    def __init__(
        self,
        env: Environment,
        fail_tool: str | None = None,
        host: str = "claude-code",
        saved: Callable[[], Library] = lambda: NO_SAVED,
        cwd: str | None = None,
    ) -> None:
        """`fail_tool` is the fail tool's name as the host gives it to the model, which the fail note names; None
        for Claude Code's. `host` names the host whose allowlist the refusal rule applies (allowlist.HOSTS),
        widened by the names the person listed in `SLASHKIT_ALLOW`; a session a slashkit harness drives
        (`SLASHKIT_HARNESS`, which the Agent SDK host sets for its Claude Code) is not typed by the person. The
        session's lich variables say whether self-commands may start. `saved` reads the saved chains, with each event
        that carries them (`SAVED_EVENTS`): the shim never sends them. The session's shell steps run in `cwd` (None:
        the helper's own working directory) with the helper's environment, the person's; the session's `env` holds
        their timeout and where their approvals are kept. Its programs are journaled in the person's state, keyed
        by the host, the session the host names (`journal.SESSION_VARIABLES`) and `cwd`."""
        harness = bool(env.get(HARNESS_VARIABLE))
        rule = rule_for(HOSTS[host], env.get(ALLOW_VARIABLE), harness, env.get(LOOP_CAP_VARIABLE))
        lich = (env.get("LICH_SESSION_ID"), env.get("LICH_PROMPT_LANG"))
        self.state = s.opened(rule, fail_tool or texts.FAIL_TOOL_ID, lich)
        self._turn = threading.Condition()
        self._version = 0
        #: The version the forecast of a timer or run holds for, by token.
        self._foreseen: dict[int, int] = {}
        self._saved = saved
        self._env = env
        self._timeout_s = timeout_of(env)
        self.shells = ShellSteps(lambda: cwd or os.getcwd(), os.environ, self._timeout_s)
        where = (host, journal.session_of(host, env), cwd or os.getcwd())
        self._journal = journal.SessionJournal(journal.default(env), where, journal.resume_within_s(env))

    @property
    def version(self) -> int:
        """How many events the bridge has handled (or counted as gone)."""
        return self._version

    def handle(self, event: p.Event, seq: int | None = None) -> p.Answer:
        """Handles one event; events are handled one at a time, in the order the host sent them (`seq`), even
        when two requests overtake each other on their way. The event counts as handled even when handling it
        fails, so the events the host sent after it do not wait for it; the state then stays as it was.

        Raises LateEvent for an event that comes after the helper counted it gone (ORDER_WAIT_S) and handled the
        ones after it: handled now, out of order, it would meet a state that took it for never sent (issue 21: a
        report of a run the host carried out from a forecast found its token given to another step's run)."""
        with self._turn:
            self._wait_for_turn(seq)
            if self._passed(seq):
                raise LateEvent(f"event {seq} came after the helper counted it gone and went on without it")
            self._version += 1
            try:
                return self._answer(event, self._version)
            finally:
                self._turn.notify_all()

    def reaches(self, seq: int | None) -> bool:
        """Tells whether a request's `seq` is within reach of the events handled so far (MAX_SEQ_AHEAD)."""
        return seq is None or seq <= self._version + MAX_SEQ_AHEAD

    def wants(self) -> frozenset[str]:
        """The optional events the session needs (`slashkit.core.session.wants`)."""
        return s.wants(self.state)

    def refused(self, seq: int | None) -> None:
        """Counts an event the helper could not read as handled, changing nothing else, so the events the host
        sent after it do not wait for it. Without a `seq` it is not the host's, or not readable enough to count."""
        if seq is None or not self.reaches(seq):
            return
        with self._turn:
            self._wait_for_turn(seq)
            if self._passed(seq):
                return  # counted already, as gone
            self._version += 1
            self._turn.notify_all()

    def _wait_for_turn(self, seq: int | None) -> None:
        if seq is None:
            return
        # A missing event is one the host failed to send (after which it retires this helper) or one the helper
        # could not read: wait a little for it, then count it as gone, so the events after it wait no more.
        self._turn.wait_for(lambda: self._version >= seq - 1, timeout=ORDER_WAIT_S)
        self._version = max(self._version, seq - 1)

    def _passed(self, seq: int | None) -> bool:
        """Tells whether the events handled (or counted as gone) already include this one."""
        return seq is not None and seq <= self._version

    def _carried_out(self, event: p.Event, before: int) -> bool:
        """Tells whether the host already carried out what this event produced: it applied the forecast, and
        the helper had handled no other event since it made it (else the forecast may say something else)."""
        token = s.reported_token(event)
        if token is None:
            return False
        held = self._foreseen.pop(token, None)
        applied = s.foreseen_token(event) == token
        if applied and held != before:
            print(f"slashkit: the host applied a stale forecast for token {token}", file=sys.stderr)
        return applied and held == before

    def _answer(self, event: p.Event, version: int) -> p.Answer:
        """The answer to the event handled as `version`; the session moves only once the whole answer is made."""

        def held(token: int) -> None:
            self._foreseen[token] = version

        if isinstance(event, SAVED_EVENTS):
            event = attrs.evolve(event, saved=self._saved())
        failed: list[str] = []
        if isinstance(event, m.Continued):
            cut, failed = self._journal.offered()
            event = attrs.evolve(event, cut=cut)
        before = self.state.chains
        moved = foreseen(s.on_event(self.state, event), held)
        effects = () if self._carried_out(event, version - 1) else moved.effects
        # Journaled whether or not the host carried the move out from a forecast: the journal is the helper's.
        failed += self._journal.moved(before, moved)
        effects = (*effects, *map(m.Log, failed))
        self.state = moved.session
        # A forecast is for a timer or run the session still waits on, or for none worth keeping.
        self._foreseen = {token: at for token, at in self._foreseen.items() if token in self.state.pending}
        # A shell step whose chain was stopped or replaced is ended; the new ones start here, in the helper.
        self.shells.keep(lambda token: token in self.state.pending)
        return p.Answer(version=version, wants=self.wants(), reply=moved.reply, effects=self._carry(effects))

    def _carry(self, effects: tuple[s.Effect, ...]) -> tuple[s.Effect, ...]:
        """Carries out the effects that are the helper's own: it starts each shell step (the host waits for its end
        through `shell_ended`) and records an approval in the person's state; the rest go to the host."""
        carried: list[s.Effect] = []
        for effect in effects:
            match effect:
                case s.Shell(text, token):
                    self.shells.start(token, text)
                    carried.append(effect)
                case m.Approve(source, digest):
                    try:
                        approvals.approve(self._env, source, digest)
                    except OSError as err:
                        carried.append(m.Log(texts.approval_failed_text(source, err.strerror or str(err))))
                case _:
                    carried.append(effect)
        return tuple(carried)

    def shell_ended(self, token: int) -> ShellEnded | None:
        """Waits for the end of the shell step this token names (its timeout bounds the wait); None when the session
        runs none by that token."""
        return self.shells.ended(token, self._timeout_s + 2 * GRACE_S + 5)

    def close(self) -> None:
        """Ends what the session still runs (its shell steps) and closes its journal's connection."""
        self.shells.close()
        self._journal.close()
