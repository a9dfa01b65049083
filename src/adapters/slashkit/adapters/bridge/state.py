"""What the helper remembers between events, as one value, and the pure moves on it: the core's events in, wire
effects out, each timer and run the host is asked for named by a token.

Everything here is a function of the state and the event, so `slashkit.adapters.bridge.forecast` can run it on
the state as it is now and tell the host what a timer or a run will do, without touching anything.
"""

from collections.abc import Mapping

import attrs
from attrs import frozen

from slashkit.adapters.bridge import protocol as p
from slashkit.core import chain_machine as m
from slashkit.core.self_command import Lich, Request
from slashkit.core.texts import queued_failed_toast

# What a token stands for


@frozen
class StepRun:
    """The run of a chain's step: its end is the core's StepRan or StepFailed."""

    chain: int
    index: int


@frozen
class StepTimer:
    """The timer a chain's step waits on: its firing is the core's TimerFired."""

    chain: int
    index: int


@frozen
class QueuedTimer:
    """The timer a queued self-command waits on: when it fires, the command runs."""

    request: Request


@frozen
class QueuedRun:
    """The run of a queued self-command: nobody waits on it, so only its failure is told (a toast)."""

    request: Request


Pending = StepRun | StepTimer | QueuedTimer | QueuedRun


@frozen
class BridgeState:
    """The chains, the self-command gate, and the timers and runs the host was asked for, by token."""

    chains: m.ChainState = attrs.field(factory=m.ChainState)
    lich: Lich | None = None
    tokens: int = 0
    pending: Mapping[int, Pending] = attrs.field(factory=dict)

    def hold(self, what: Pending) -> tuple["BridgeState", int]:
        """Names a new timer or run with the next token."""
        token = self.tokens + 1
        return attrs.evolve(self, tokens=token, pending={**self.pending, token: what}), token

    def take(self, token: int) -> tuple["BridgeState", Pending | None]:
        """Forgets a token that was reported; a token this state never gave (a restarted helper's) is None."""
        if token not in self.pending:
            return self, None
        left = {t: what for t, what in self.pending.items() if t != token}
        return attrs.evolve(self, pending=left), self.pending[token]

    def without_gone_steps(self) -> "BridgeState":
        """Forgets the timers and runs of steps that no longer run (their chain ended or another replaced it): the
        machine ignores their ends, and a host that never reports them must not make the state grow."""
        r = self.chains.running

        def live(what: Pending) -> bool:
            return not isinstance(what, StepRun | StepTimer) or (r is not None and r.is_step(what.chain, what.index))

        if all(map(live, self.pending.values())):
            return self
        return attrs.evolve(self, pending={t: what for t, what in self.pending.items() if live(what)})


@frozen
class Moved:
    """One event's result: the new state, the reply to the hook the host holds open, and the effects."""

    state: BridgeState
    reply: p.Reply = None
    effects: tuple[p.Effect, ...] = ()


def on_chain_event(state: BridgeState, event: m.Event) -> Moved:
    """Moves the chains by one core event."""
    return _chains_moved(state, m.on_event(state.chains, event))


def on_timer(state: BridgeState, token: int) -> Moved:
    """A timer the host was asked for fired."""
    state, what = state.take(token)
    match what:
        case StepTimer(chain, index):
            return on_chain_event(state, m.TimerFired(chain, index))
        case QueuedTimer(request):
            # The host refuses a command run inside a hook the turn waits on: it runs from this timer instead.
            state, token = state.hold(QueuedRun(request))
            return Moved(state, None, (p.Run(request.name, request.args, token),))
    return Moved(state)


def on_run_ended(state: BridgeState, token: int, error: str | None, output: str) -> Moved:
    """A run the host was asked for resolved with `output`, or threw `error`."""
    state, what = state.take(token)
    match what:
        case StepRun(chain, index):
            ended = m.StepRan(chain, index, output) if error is None else m.StepFailed(chain, index, error)
            return on_chain_event(state, ended)
        case QueuedRun(request) if error is not None:
            # A queued command has no turn left to answer, so its failure is a toast.
            return Moved(state, None, (p.Toast(queued_failed_toast(request.name, error)),))
    return Moved(state)


def queue(state: BridgeState, request: Request) -> Moved:
    """Runs a self-command from a timer, once the hook that asked has answered."""
    state, token = state.hold(QueuedTimer(request))
    return Moved(state, None, (p.After(0, token),))


def _chains_moved(state: BridgeState, moved: m.Transition) -> Moved:
    state = attrs.evolve(state, chains=moved.state)
    effects: list[p.Effect] = []
    for effect in moved.effects:
        match effect:
            case m.Log(text):
                effects.append(p.Log(text))
            case m.StartTimer(chain, index):
                state, token = state.hold(StepTimer(chain, index))
                effects.append(p.After(0, token))
            case m.RunStep(chain, index, command, args):
                state, token = state.hold(StepRun(chain, index))
                effects.append(p.Run(command, args, token))
            case m.SaveEnabled(enabled):
                effects.append(p.SaveEnabled(enabled))
            case m.ChainEnded():
                pass  # the lines beside it say how the chain ended; the wire carries no end of its own
    reply: p.Reply
    match moved.reply:
        case m.RunTyped(chain, index, args):
            state, token = state.hold(StepRun(chain, index))
            reply = p.RunTyped(args, token)
        case m.CommandAnswer(text) | m.ToolAnswered(text):
            reply = p.Text(text)
        case other:
            reply = other  # PromptText, Denied or None: the wire carries the core's own
    return Moved(state.without_gone_steps(), reply, tuple(effects))
