"""Drives a session in-process: each event moves `slashkit.core.session`, and its effects are carried out at once
through the ports. The in-memory host is built on it; a host with a schedule of its own (the Agent SDK host runs
one query at a time) drives the session itself instead.
"""

from collections.abc import Callable

from returns.result import Success

from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.chain_machine import Approve, Log, SaveEnabled
from slashkit.core.ports import Approvals, Clock, CommandRunner, RunOutcome, ShellRunner, Store, UiLog, Whoami


class Driver:
    """One session, its effects carried out through the ports as they come. `told` hears the effects that only
    report (`session.Report`)."""

    def __init__(
        self,
        session: s.Session,
        ports: tuple[Clock, CommandRunner, UiLog, Store, Whoami],
        told: Callable[[s.Report], None] = lambda report: None,
        shell: tuple[ShellRunner, Approvals] | None = None,
    ) -> None:
        """`shell` runs the session's shell steps and keeps the person's approvals; without it a shell step fails
        at once, saying this host runs none."""
        self.session = session
        self._clock, self._runner, self._ui, self._store, self._whoami = ports
        self._told = told
        self._shell = shell

    def handle(self, event: s.Event) -> s.Reply:
        """Moves the session by one event and carries out what it says; returns the hook's reply. A question
        for lich (`AskWhoami`) is asked here, and the reply to its answer is the hook's."""
        moved = s.on_event(self.session, event)
        self.session = moved.session
        if self._shell is not None:
            self._shell[0].keep(lambda token: token in self.session.pending)
        for effect in moved.effects:
            self._apply(effect)
        if isinstance(moved.reply, s.AskWhoami):
            known = self._whoami.whoami()
            label, name = (None, None) if known is None else (known.label, known.name)
            return self.handle(s.WhoamiAnswered(moved.reply.token, label, name))
        return moved.reply

    def reporter(self, token: int) -> Callable[[RunOutcome], None]:
        """The function to call with how the run this token names ended (the host's `done` for that run)."""

        def done(outcome: RunOutcome) -> None:
            if isinstance(outcome, Success):
                self.handle(s.RunEnded(token, None, outcome.unwrap()))
            else:
                self.handle(s.RunEnded(token, outcome.failure()))

        return done

    def _shell_reporter(self, token: int) -> Callable[[str | None, str], None]:
        def done(error: str | None, output: str) -> None:
            self.handle(s.RunEnded(token, error, output))

        return done

    def _firing(self, token: int) -> Callable[[], None]:
        def fire() -> None:
            self.handle(s.TimerFired(token))

        return fire

    def _apply(self, effect: s.Effect) -> None:
        match effect:
            case Log(text):
                self._ui.log(text)
            case s.Toast(text):
                self._ui.toast(text)
            case s.After(ms, token):
                self._clock.after(ms, self._firing(token))
            case s.Run(command, args, token):
                self._runner.run(command, args, self.reporter(token))
            case s.Shell(text, token) if self._shell is not None:
                self._shell[0].start(token, text, self._shell_reporter(token))
            case s.Shell(token=token):
                self.handle(s.RunEnded(token, texts.NO_SHELL_WHY))
            case Approve(source, digest) if self._shell is not None:
                self._shell[1].approve(source, digest)
            case Approve(source):
                self._ui.log(texts.approval_failed_text(source, texts.NO_SHELL_WHY))
            case SaveEnabled(on):
                self._store.set(s.ENABLED_KEY, on)
            case s.SaveBuiltin(on):
                self._store.set(s.BUILTIN_KEY, on)
            case s.Invalidate():
                self._ui.invalidate()
            case s.Progress(text):
                self._ui.progress(text)
            case _:
                self._told(effect)
