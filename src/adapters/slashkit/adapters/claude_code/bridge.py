"""The bridge's Python end: turns the mod's events into use-case calls and the use cases' port calls into
effects for the mod to carry out. One `Bridge` per helper process; it handles one event at a time."""

import sys
import threading
from collections.abc import Callable, Collection

import attrs
from returns.result import Failure, Success

from slashkit.adapters.claude_code import protocol as p
from slashkit.core import chain_machine as m
from slashkit.core import self_command_session as s
from slashkit.core.chain_session import ENABLED_KEY, ChainSession
from slashkit.core.ports import Environment, RunOutcome, Whoami


class Outbox:
    """The effects one event produced, and the callbacks waiting on the timers and runs they start."""

    def __init__(self) -> None:
        self.effects: list[p.Effect] = []
        self._timers: dict[int, Callable[[], None]] = {}
        self._runs: dict[int, Callable[[RunOutcome], None]] = {}
        self._tokens = 0

    def timer(self, fire: Callable[[], None]) -> int:
        self._tokens += 1
        self._timers[self._tokens] = fire
        return self._tokens

    def run(self, done: Callable[[RunOutcome], None]) -> int:
        self._tokens += 1
        self._runs[self._tokens] = done
        return self._tokens

    def fire(self, token: int) -> None:
        # A token the helper does not hold (from a helper that was restarted) is ignored.
        fire = self._timers.pop(token, None)
        if fire is not None:
            fire()

    def complete(self, token: int, outcome: RunOutcome) -> None:
        done = self._runs.pop(token, None)
        if done is not None:
            done(outcome)

    def drain(self) -> tuple[p.Effect, ...]:
        effects, self.effects = tuple(self.effects), []
        return effects

    def save(self) -> Callable[[], None]:
        """Remembers everything the outbox holds; the returned function puts it back."""
        saved = (list(self.effects), dict(self._timers), dict(self._runs), self._tokens)

        def restore() -> None:
            self.effects, self._timers, self._runs, self._tokens = saved

        return restore


class _Clock:
    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def after(self, ms: int, fire: Callable[[], None]) -> None:
        self._outbox.effects.append(p.After(ms, self._outbox.timer(fire)))


class _Runner:
    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self.listed: Collection[str] = ()

    def run(self, command: str, args: str, done: Callable[[RunOutcome], None]) -> None:
        self._outbox.effects.append(p.Run(command, args, self._outbox.run(done)))

    def builtins(self) -> Collection[str]:
        return self.listed


class _Ui:
    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def log(self, text: str) -> None:
        self._outbox.effects.append(p.Log(text))

    def toast(self, text: str) -> None:
        self._outbox.effects.append(p.Toast(text))


class _Store:
    """The engine's store as the mod read it for this event; a write goes back as an effect."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self.read: dict[str, object] = {}

    def get(self, key: str) -> object:
        return self.read.get(key)

    def set(self, key: str, value: object) -> None:
        self.read[key] = value
        self._outbox.effects.append(p.StoreSet(key, value))


#: How long an event waits for the one the mod sent before it.
ORDER_WAIT_S = 2.0


class Bridge:
    """The use cases of one engine session behind the wire format."""

    def __init__(self, env: Environment, whoami: Whoami) -> None:
        self._outbox = Outbox()
        self._runner = _Runner(self._outbox)
        self._store = _Store(self._outbox)
        clock, ui = _Clock(self._outbox), _Ui(self._outbox)
        self.chains = ChainSession(clock, self._runner, ui, self._store)
        self.self_commands = s.SelfCommandSession(env, whoami, clock, self._runner, ui)
        self._turn = threading.Condition()
        self._version = 0
        #: The version the foreseen effects of a timer or run hold for, by token.
        self._foreseen: dict[int, int] = {}

    def handle(self, event: p.Event, seq: int | None = None) -> p.Answer:
        """Handles one event; events are handled one at a time, in the order the mod sent them (`seq`), even
        when two requests overtake each other on their way."""
        with self._turn:
            self._wait_for_turn(seq)
            before = self._version
            reply = self._dispatch(event)
            self._version += 1
            effects = tuple(self._foresee(e, self._version) for e in self._outbox.drain())
            if self._carried_out(event, before):
                effects = ()
            if isinstance(reply, p.RunArgs):
                reply = attrs.evolve(reply, then=self._then(reply.token, self._version))
            self._turn.notify_all()
            wants = self.chains.wants() | self.self_commands.wants()
            return p.Answer(version=self._version, wants=wants, reply=reply, effects=effects)

    def refused(self, seq: int | None) -> None:
        """Counts an event the helper could not read as handled, changing nothing else, so the events the mod
        sent after it do not wait for it. Without a `seq` it is not the mod's, or not readable enough to count."""
        if seq is None:
            return
        with self._turn:
            self._wait_for_turn(seq)
            self._version += 1
            self._turn.notify_all()

    def _wait_for_turn(self, seq: int | None) -> None:
        if seq is None:
            return
        # A missing event is one the mod failed to send (after which it retires this helper) or one the helper
        # could not read: wait a little for it, then count it as gone, so the events after it wait no more.
        self._turn.wait_for(lambda: self._version >= seq - 1, timeout=ORDER_WAIT_S)
        self._version = max(self._version, seq - 1)

    # Foresight: what a timer or a run will do, so the mod need not wait a round trip for it. The core is
    # deterministic, so if the helper handles no other event first, the foreseen effects are the effects.

    def _foresee(self, effect: p.Effect, version: int | None) -> p.Effect:
        """Adds to a run what it does when it resolves well, and to a timer what it does when it fires, when
        that is all they do (lines, timers; a timer's runs); records it as holding for `version` (None: a
        forecast inside a forecast, recorded when its own event comes)."""
        match effect:
            case p.Run(token=token):
                return attrs.evolve(effect, then=self._then(token, version))
            case p.After(token=token):
                produced = self._dry(lambda: self._outbox.fire(token))
                fires = tuple(e for e in produced if isinstance(e, p.Log | p.Run))
                if len(fires) != len(produced):
                    return effect
                self._hold(token, version)
                return attrs.evolve(effect, fires=fires)
        return effect

    def _then(self, token: int, version: int | None) -> tuple[p.Log | p.After, ...] | None:
        """What the run with this token does when it resolves well, if lines and timers are all it does and
        its output is handed on to no step (the forecast cannot know the text)."""
        if m.hands_on(self.chains.state):
            return None
        produced = self._dry(lambda: self._outbox.complete(token, Success("")))
        then = tuple(e for e in produced if isinstance(e, p.Log | p.After))
        if len(then) != len(produced):
            return None
        self._hold(token, version)
        return then

    def _dry(self, action: Callable[[], None]) -> tuple[p.Effect, ...]:
        """The effects `action` produces, each foreseen in turn, leaving everything as it was."""
        restore_outbox = self._outbox.save()
        state, lich = self.chains.state, self.self_commands.lich
        self._outbox.effects = []
        action()
        produced = tuple(self._foresee(e, None) for e in self._outbox.effects)
        restore_outbox()
        self.chains.state, self.self_commands.lich = state, lich
        return produced

    def _hold(self, token: int, version: int | None) -> None:
        if version is not None:
            self._foreseen[token] = version

    def _carried_out(self, event: p.Event, before: int) -> bool:
        """Tells whether the mod already carried out what this event produced: it applied the foreseen
        effects, and the helper had handled no other event since it foresaw them."""
        if not isinstance(event, p.Timer | p.RunDone):
            return False
        held = self._foreseen.pop(event.token, None)
        if event.applied and held != before:
            print(f"slashkit: the mod applied a stale forecast for token {event.token}", file=sys.stderr)
        return event.applied and held == before

    def _dispatch(self, event: p.Event) -> p.Reply:
        chains = self.chains
        match event:
            case p.CommandTyped(command, args, origin, stored):
                self._store.read[ENABLED_KEY] = stored
                match chains.command_typed(command, args, origin):
                    case m.RunTyped(chain, index, head):
                        return p.RunArgs(head, self._outbox.run(chains.reporter(chain, index)))
                    case m.CommandAnswer(text):
                        return p.Text(text)
                return None
            case p.ChainCommand(args, stored):
                self._store.read[ENABLED_KEY] = stored
                return p.Text(chains.chain_command(args))
            case p.FailCall(reason, agent):
                return _chain_reply(chains.handle(m.FailCalled(reason, agent)))
            case p.SkillPrompt(text):
                return _chain_reply(chains.handle(m.PromptHanded(text)))
            case p.UiOpen(pane, focus, placed):
                chains.handle(m.PaneOpened(pane, focus, placed))
            case p.UiClose(pane):
                chains.handle(m.PaneClosed(pane))
            case p.TurnComplete(reason, agent, answer):
                chains.handle(m.TurnEnded(reason, agent, answer))
            case p.PromptSubmit(text, origin):
                chains.handle(m.PromptSubmitted(text, origin or ""))
            case p.Timer(token):
                self._outbox.fire(token)
            case p.RunDone(token, error, _, output):
                self._outbox.complete(token, Success(output) if error is None else Failure(error))
            case p.SessionStart(interactive):
                if self.self_commands.session_started(interactive):
                    self._outbox.effects.append(p.Invalidate())
            case p.ToolDescribe(tool, description):
                described = self.self_commands.tool_described(tool, description)
                return None if described is None else p.Description(described)
            case p.SkillAnswered(skill, is_error, commands, args):
                self._runner.listed = _builtins(commands)
                return _tool_reply(self.self_commands.skill_answered(skill, args, is_error))
            case p.ControlAnswered(is_error, commands, target, action, value, args):
                self._runner.listed = _builtins(commands)
                return _tool_reply(self.self_commands.control_answered(target, action, value, args, is_error))
        return None


def _builtins(commands: Collection[p.CommandInfo]) -> frozenset[str]:
    return frozenset(c.name for c in commands if c.source == "builtin")


def _chain_reply(reply: m.Reply) -> p.Reply:
    match reply:
        case m.PromptText(text):
            return p.PromptText(text)
        case m.ToolDenied(text):
            return p.Deny(text)
        case m.ToolAnswered(text) | m.CommandAnswer(text):
            return p.Text(text)
    return None


def _tool_reply(reply: s.ToolReply) -> p.Reply:
    match reply:
        case s.SkillQueued(command, note):
            return p.SkillLoaded(command, note)
        case s.ControlQueued(text):
            return p.Text(text)
        case s.Denied(text):
            return p.Deny(text)
    return None
