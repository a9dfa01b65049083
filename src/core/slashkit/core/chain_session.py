"""The slash-chain use case: feeds host events to the machine and applies its effects through ports."""

from collections.abc import Callable, Collection
from typing import Final

from returns.result import Success

from slashkit.core import chain_machine as m
from slashkit.core.policy import DEFAULT_RULE, Rule
from slashkit.core.ports import Clock, CommandRunner, RunOutcome, Store, UiLog

#: The store key of the on/off setting.
ENABLED_KEY: Final = "enabled"


def enabled(stored: object) -> bool:
    """Reads the stored on/off setting: on unless it is `false` (a setting never written is on)."""
    return stored is not False


class ChainSession:
    """One session's chains. Each method is one host event; a method that answers a hook returns the reply."""

    def __init__(
        self,
        clock: Clock,
        runner: CommandRunner,
        ui: UiLog,
        store: Store,
        ended: Callable[[int, m.Outcome], None] = lambda chain, outcome: None,
        rule: Rule = DEFAULT_RULE,
    ) -> None:
        self._clock = clock
        self._runner = runner
        self._ui = ui
        self._store = store
        self._ended = ended
        self.state = m.ChainState(rule=rule)

    def wants(self) -> frozenset[str]:
        """Names the optional host events the running chain needs (see `chain_machine.wants`)."""
        return m.wants(self.state)

    def command_typed(
        self,
        command: str,
        args: str,
        origin: str,
        enabled: bool,
        builtins: Collection[str] = (),
        commands: Collection[str] = (),
    ) -> m.RunTyped | m.CommandAnswer | None:
        """A command whose arguments hold an operator and `/<name>` is about to run (whoever ran it; `enabled`
        is the stored setting, and `commands` and `builtins` the host's command list and its built-ins, all read
        by the host just now, since another window may have changed them): RunTyped runs it with the chain's
        head, then calls `reporter(typed.chain, typed.index)`; CommandAnswer answers it with a text and runs
        nothing (the refusal rule); None runs it as typed."""
        reply = self.handle(m.ChainTyped(command, args, origin, enabled, tuple(builtins), tuple(commands)))
        return reply if isinstance(reply, m.RunTyped | m.CommandAnswer) else None

    def report_run(self, chain: int, index: int, outcome: RunOutcome) -> None:
        """The run a RunTyped asked for resolved or threw."""
        self.handle(_reported(chain, index, outcome))

    def chain_command(self, args: str, enabled: bool) -> str:
        """`/slash-chain args`: the text the command answers; `enabled` as for `command_typed`."""
        reply = self.handle(m.ChainCommandTyped(args, enabled))
        assert isinstance(reply, m.CommandAnswer)
        return reply.text

    def handle(self, event: m.Event) -> m.Reply:
        """Moves the machine by one event and applies what it says; returns the hook's reply."""
        moved = m.on_event(self.state, event)
        self.state = moved.state
        for effect in moved.effects:
            self._apply(effect)
        return moved.reply

    def _apply(self, effect: m.Effect) -> None:
        match effect:
            case m.Log(text):
                self._ui.log(text)
            case m.StartTimer(chain, index):
                self._clock.after(0, self._fire(chain, index))
            case m.RunStep(chain, index, command, args):
                self._runner.run(command, args, self.reporter(chain, index))
            case m.SaveEnabled(enabled):
                self._store.set(ENABLED_KEY, enabled)
            case m.ChainEnded(chain, outcome):
                self._ended(chain, outcome)

    def _fire(self, chain: int, index: int) -> Callable[[], None]:
        def fire() -> None:
            self.handle(m.TimerFired(chain, index))

        return fire

    def reporter(self, chain: int, index: int) -> Callable[[RunOutcome], None]:
        """The function to call with how a step's run ended (the host's `done` for that run)."""
        return lambda outcome: self.report_run(chain, index, outcome)


def _reported(chain: int, index: int, outcome: RunOutcome) -> m.Event:
    if isinstance(outcome, Success):
        return m.StepRan(chain, index, outcome.unwrap())
    return m.StepFailed(chain, index, outcome.failure())
