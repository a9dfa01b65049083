"""The application service: one session of a host, chains and self-commands together, as a pure move from
(session, event) to (session, effects, reply).

Every host drives this and nothing else: the in-memory and Agent SDK hosts in-process
(`slashkit.core.driver` carries out the effects through the ports), every JavaScript host through the helper,
whose Python only decodes an event, moves the session and encodes the answer. Each effect carries what a host
needs to carry it out later, on its own schedule: a timer or a run is named by a token, and the host reports
its end with that token, so no host reads the session back. Asking lich who this session is becomes a reply
too (`AskWhoami`), whose answer comes back as an event, so no event waits on another process.

The chains are `slashkit.core.chain_machine`'s; the self-command decisions `slashkit.core.self_command`'s;
this module holds what applying them needs: the tokens, the gate, and turning the machine's effects
(`StartTimer`, `RunStep`, named by the step they belong to) into the host's (`After`, `Run`, named by token).
"""

from collections.abc import Mapping
from typing import Final

import attrs
from attrs import frozen

from slashkit.core import chain_machine as m
from slashkit.core import self_command as sc
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_machine import (
    ChainEnded,
    ChainState,
    CommandAnswer,
    Log,
    PromptText,
    SaveEnabled,
    ToolAnswered,
)
from slashkit.core.policy import DEFAULT_RULE, SETTINGS, Denied, Rule, chain_words, command_name, is_refused
from slashkit.core.program import printed
from slashkit.core.saved_chain import NO_SAVED, Library, program_of
from slashkit.core.self_command import ControlQueued, Lich, Request, SkillQueued
from slashkit.core.texts import Key

#: The store key of the on/off setting (`SaveEnabled`).
ENABLED_KEY: Final = "enabled"
#: The store key of the switch of the model's self-commands (`SaveBuiltin`, `/slash-chain builtin on|off`), beside
#: the on/off setting in the same store, read the same way (`enabled`).
BUILTIN_KEY: Final = "builtin"
#: The optional events an active self-command session needs; an inactive one needs none.
ACTIVE_WANTS: Final = frozenset({"ToolDescribed", "SkillAnswered", "ControlAnswered"})

# Events a host sends besides the chain machine's (`chain_machine.Event`)


@frozen
class TimerFired:
    """A timer an `After` effect started has fired; `applied` says the host already carried out what the
    effect foresaw (`After.fires`)."""

    token: int
    applied: bool = False


@frozen
class RunEnded:
    """A run a `Run` effect or a `RunTyped` reply asked for resolved with the text `output`, or threw `error`;
    `applied` says the host already carried out what its good end was foreseen to do (`then`)."""

    token: int
    error: str | None = None
    output: str = ""
    applied: bool = False


@frozen
class SessionStarted:
    """The session (re)started; `interactive` says a person is at it (the self-command gate)."""

    interactive: bool


@frozen
class ToolDescribed:
    """A tool's description, as the host would show it to the model."""

    tool: str
    description: str


@frozen
class SkillAnswered:
    """The host's skill tool answered a call (`is_error`: it refused); `builtins` names the host's built-in
    commands, as listed just now; `switched_on` is the stored switch of the model's self-commands (`BUILTIN_KEY`,
    read through `enabled`), read just now."""

    skill: object
    is_error: bool
    builtins: tuple[str, ...]
    args: object = None
    switched_on: bool = True


@frozen
class ControlAnswered:
    """lich's control tool answered a call aimed at the session `target`; `builtins` and `switched_on` as above."""

    is_error: bool
    builtins: tuple[str, ...]
    target: object = None
    action: object = None
    value: object = None
    args: object = None
    switched_on: bool = True


@frozen
class WhoamiAnswered:
    """Who lich says this session is, for the `AskWhoami` reply with this token: the `label` and `name` of the
    object `$LICH_BIN whoami --json` printed, each None when it could not tell (no lich, a failure, a timeout,
    output without them)."""

    token: int
    label: str | None = None
    name: str | None = None

    @property
    def identity(self) -> sc.Identity | None:
        """Who this session is, when lich said both."""
        if self.label is None or self.name is None:
            return None
        return sc.Identity(self.label, self.name)


@frozen
class BuiltinAsked:
    """The model called the self-command tool (`texts.BUILTIN_TOOL`) to run one of the session's built-ins:
    `command` and `args` as the call gave them; `builtins` and `switched_on` as for `SkillAnswered`."""

    command: object
    args: object
    builtins: tuple[str, ...]
    switched_on: bool = True


@frozen
class SavedAsked:
    """The host asks which saved chains to offer in its command menu: `commands` are the names it has of its own
    (leaving out the saved chains it offers), `saved` the saved chains as read (the helper reads them)."""

    commands: tuple[str, ...] = ()
    saved: Library = NO_SAVED


Event = (
    m.ChainTyped
    | m.LineTyped
    | m.ChainCommandTyped
    | m.FailCalled
    | m.PromptHanded
    | m.PaneOpened
    | m.PaneClosed
    | m.TurnEnded
    | m.PromptSubmitted
    | m.Continued
    | TimerFired
    | RunEnded
    | SessionStarted
    | ToolDescribed
    | SkillAnswered
    | ControlAnswered
    | WhoamiAnswered
    | BuiltinAsked
    | SavedAsked
)

# Effects: what the host is to do (Log and SaveEnabled are the machine's own)


@frozen
class Progress:
    """Show this text in the host's status area while a chain runs (`texts.progress_text`); None clears it."""

    text: str | None


@frozen
class Toast:
    """Show this passing notice."""

    text: str


@frozen
class Run:
    """Run `/command args` now; once it resolved or threw, send `RunEnded` with this token. `then` is what a good
    end will do, foreseen (`slashkit.core.forecast`), or None."""

    command: str
    args: str
    token: int
    then: "tuple[Log | After | Progress, ...] | None" = None


@frozen
class Shell:
    """Run this shell step's text with `/bin/sh -c` (`slashkit.core.ports.ShellRunner`), in the session's working
    directory; once it ended, send `RunEnded` with this token: `error` None when it exited 0, else why it failed, and
    `output` what it printed, bounded. Only the helper or an in-process host runs it, never the model's tools."""

    text: str
    token: int


@frozen
class After:
    """Start a timer; when it fires, send `TimerFired` with this token. `fires` is what that will do, foreseen,
    or None."""

    ms: int
    token: int
    fires: tuple[Log | Run | Progress, ...] | None = None


@frozen
class SaveBuiltin:
    """Store the switch of the model's self-commands (`BUILTIN_KEY`), which every window of the host shares."""

    enabled: bool


@frozen
class Invalidate:
    """Ask the host for the tool descriptions again (`ToolDescribed`)."""


@frozen
class StepStarted:
    """Step `index` of `total` of a chain has started (its line is logged beside it), for a host that shows its
    chains' progress; a host with nothing to show ignores it, and the wire does not carry it."""

    chain: int
    index: int
    total: int
    step: Step


#: The effects that only tell a host what happened (`ChainEnded`, the machine's, says how a chain ended), for one
#: that reports its chains' progress: a host that shows nothing ignores them, the wire does not carry them, and a
#: forecast leaves them out.
Report = StepStarted | ChainEnded
Effect = Log | Toast | After | Run | Shell | m.Approve | SaveEnabled | SaveBuiltin | Invalidate | Progress | Report

# Replies: how the hook the host holds open answers (PromptText, CommandAnswer, ToolAnswered, Denied,
# SkillQueued and ControlQueued are the machine's and the self-command decisions' own)


@frozen
class RunTyped:
    """Run the typed command with these args (the chain's head), then send `RunEnded` with the token; `then` as
    for `Run`."""

    args: str
    token: int
    then: tuple[Log | After | Progress, ...] | None = None


@frozen
class Description:
    """The tool's description, amended."""

    text: str


@frozen
class Offered:
    """A saved chain the host offers in its command menu: its name, description (its file's, else its chain line)
    and argument hint."""

    name: str
    description: str
    argument_hint: str


@frozen
class SavedListed:
    """The saved chains to offer as commands, and the ones left to the host's command of the same name."""

    chains: tuple[Offered, ...]
    shadowed: tuple[str, ...]


@frozen
class AskWhoami:
    """Ask lich who this session is, then send `WhoamiAnswered` with this token: its reply answers the hook."""

    token: int


#: None: the host goes on as it would without slashkit.
Reply = (
    RunTyped
    | CommandAnswer
    | ToolAnswered
    | PromptText
    | Denied
    | Description
    | SkillQueued
    | ControlQueued
    | AskWhoami
    | SavedListed
    | None
)

# State

#: What a token stands for: a step's timer or run (the machine's effect or reply that asked for it), a queued
#: self-command's timer (`sc.Queue`) or run (its `Request`), or a control call waiting on whoami.
Pending = m.StartTimer | m.RunStep | m.RunShell | m.RunHead | sc.Queue | Request | ControlAnswered
#: What a `TimerFired` may report, and what a `RunEnded` may.
TIMERS: Final = (m.StartTimer, sc.Queue)
RUNS: Final = (m.RunStep, m.RunShell, m.RunHead, Request)


@frozen
class Session:
    """One host session: its chains, its self-command gate, and the timers, runs and questions it waits on.

    `lich_id` and `lich_lang` are the session's `LICH_SESSION_ID` and `LICH_PROMPT_LANG`, which the host read
    when it made the session; `lich` is the active self-command session once it started inside lich. `language`
    is that of a harness's own self-command tool (`BuiltinAsked`)."""

    chains: ChainState = attrs.field(factory=ChainState)
    lich_id: str | None = None
    lich_lang: str | None = None
    language: str = texts.ENGLISH
    lich: Lich | None = None
    tokens: int = 0
    pending: Mapping[int, Pending] = attrs.field(factory=dict)

    @property
    def rule(self) -> Rule:
        """Who may run what in this session (`slashkit.core.policy`)."""
        return self.chains.rule

    def hold(self, what: Pending) -> tuple["Session", int]:
        """Names a new timer, run or question with the next token."""
        token = self.tokens + 1
        return attrs.evolve(self, tokens=token, pending={**self.pending, token: what}), token

    def take(self, token: int, kind: type[Pending] | tuple[type[Pending], ...]) -> tuple["Session", Pending | None]:
        """Forgets a token that was reported, when it names a `kind` of thing (a timer for `TimerFired`, ...). A
        token this session never gave (a restarted helper's), or one that names something else, is None and
        changes nothing: a report of the wrong kind must not drop what the session waits on."""
        what = self.pending.get(token)
        if not isinstance(what, kind):
            return self, None
        left = {t: held for t, held in self.pending.items() if t != token}
        return attrs.evolve(self, pending=left), what

    def _without_gone_steps(self) -> "Session":
        """Forgets the timers and runs of steps that no longer run (their chain ended or another replaced it): the
        machine ignores their ends, and a host that never reports them must not make the state grow."""
        r = self.chains.running

        def live(what: Pending) -> bool:
            if isinstance(what, m.StartTimer | m.RunStep | m.RunShell | m.RunHead):
                return r is not None and r.is_step(what.chain, what.index)
            return True

        if all(map(live, self.pending.values())):
            return self
        return attrs.evolve(self, pending={t: what for t, what in self.pending.items() if live(what)})


def opened(
    rule: Rule = DEFAULT_RULE,
    fail_tool: str = texts.FAIL_TOOL_ID,
    lich: tuple[str | None, str | None] = (None, None),
    language: str | None = None,
) -> Session:
    """A new session under `rule`, whose host gives the model the fail tool as `fail_tool`, with the host's
    `LICH_SESSION_ID` and `LICH_PROMPT_LANG` (`lich`) and the language a harness picked for its texts."""
    lich_id, lich_lang = lich
    chains = ChainState(fail_tool=fail_tool, rule=rule)
    return Session(chains, lich_id, lich_lang, texts.language(language))


@frozen
class Moved:
    """One event's result: the new session, what the host is to do, and the reply to the hook it holds open."""

    session: Session
    effects: tuple[Effect, ...] = ()
    reply: Reply = None


def enabled(stored: object) -> bool:
    """Reads a stored on/off setting (`ENABLED_KEY`, `BUILTIN_KEY`): on unless it is `false` (a setting never
    written is on)."""
    return stored is not False


def wants(session: Session) -> frozenset[str]:
    """The optional events the session needs now (the ones it is not sent are the ones that change nothing): the
    chains' (`chain_machine.wants`) and, in an active self-command session, the tool events."""
    return m.wants(session.chains) | (ACTIVE_WANTS if session.lich is not None else frozenset())


def reported_token(event: Event) -> int | None:
    """The token of the timer or run an event reports the end of, if it is such a report."""
    return event.token if isinstance(event, TimerFired | RunEnded) else None


def foreseen_token(event: Event) -> int | None:
    """The token of a timer or run whose foreseen effects the host says it already carried out (`applied`)."""
    if isinstance(event, TimerFired | RunEnded) and event.applied:
        return event.token
    return None


def on_event(session: Session, event: Event) -> Moved:
    """Moves the session by one event."""
    match event:
        case TimerFired(token):
            return _timer_fired(*session.take(token, TIMERS))
        case RunEnded(token, error, output):
            return _run_ended(*session.take(token, RUNS), error, output)
        case SessionStarted(interactive):
            lich = sc.activation(interactive, session.lich_id, session.lich_lang)
            return Moved(attrs.evolve(session, lich=lich), (Invalidate(),) if lich is not None else ())
        case ToolDescribed(tool, description):
            described = None if session.lich is None else sc.described(session.lich, tool, description)
            return Moved(session, reply=None if described is None else Description(described))
        case SkillAnswered(skill, is_error, builtins, args, switched_on) if _outside_lich(session):
            taken = sc.skill_refused(session.language, skill, args, is_error, builtins, session.rule)
            return _took(session, taken, switched_on)
        case SkillAnswered(skill, is_error, builtins, args, switched_on):
            taken = sc.skill_answered(session.lich, skill, args, is_error, builtins, session.rule)
            return _took(session, taken, switched_on)
        case ControlAnswered():
            return _control_answered(session, event)
        case WhoamiAnswered(token):
            session, asked = session.take(token, ControlAnswered)
            if isinstance(asked, ControlAnswered) and session.lich is not None:
                return _control(session, session.lich, asked, event.identity)
            return Moved(session)
        case BuiltinAsked():
            return _builtin_asked(session, event)
        case m.ChainCommandTyped():
            return _chain_command(session, event)
        case SavedAsked(commands, saved):
            offered = _offered(saved, commands, session.rule.builtins)
            return Moved(session, tuple(Log(p.text) for p in saved.problems), offered)
        case _:
            return _chains_moved(session, m.on_event(session.chains, event))


def _offered(saved: Library, commands: tuple[str, ...], builtins: frozenset[str]) -> SavedListed:
    """The saved chains a host offers: every one whose name it has no command of."""
    leaving = saved.leaving(commands, builtins)
    # A file that gives no description is described by its program, on one line: a menu shows something of what it
    # runs (and Claude Code refuses to register a command with none, measured on 2.1.328). The front matter's texts
    # are cleaned as read (texts.menu_text); the program is cleaned here, as shown.
    offered = tuple(
        Offered(c.name, c.description or texts.menu_text(printed(program_of(c))), c.argument_hint)
        for c in leaving.chains
    )
    shadowed = tuple(c.name for c in saved.chains if c not in leaving.chains)
    return SavedListed(offered, shadowed)


def _outside_lich(session: Session) -> bool:
    """Tells whether the Skill tool's refusals are this session's own to take: no lich variable is set. Inside
    lich they are the self-command plugin's (its session is `lich`), so that with both of slashkit's plugins
    loaded one call queues one command; and a `claude -p` inside lich takes none, as the seed's plugin does."""
    return not session.lich_id


def _timer_fired(session: Session, what: Pending | None) -> Moved:
    match what:
        case m.StartTimer(chain, index):
            return _chains_moved(session, m.on_event(session.chains, m.StepDue(chain, index)))
        case sc.Queue(request, lang):
            # The host refuses a command run inside a hook the turn waits on: it runs from this timer instead.
            session, token = session.hold(request)
            runs = Log(texts.text(lang, Key.LOG_RUNS, queued=request.label))
            return Moved(session, (runs, Run(request.name, request.args, token)))
    return Moved(session)


def _run_ended(session: Session, what: Pending | None, error: str | None, output: str) -> Moved:
    match what:
        case m.RunStep(chain, index) | m.RunHead(chain, index) | m.RunShell(chain, index):
            ended = m.StepRan(chain, index, output) if error is None else m.StepFailed(chain, index, error, output)
            return _chains_moved(session, m.on_event(session.chains, ended))
        case Request(name) if error is not None:
            # A queued command has no turn left to answer, so its failure is a notice.
            return Moved(session, (Toast(texts.queued_failed_toast(name, error)),))
    return Moved(session)


def _control_answered(session: Session, call: ControlAnswered) -> Moved:
    """lich's control tool answered: only its refusal of a command may be taken, and only for this session;
    lich is asked who this session is when the call did not name its id."""
    lich = session.lich
    if lich is None or not sc.control_takes(call.action, call.value, call.is_error):
        return Moved(session)
    if not sc.needs_whoami(lich, call.target):
        return _control(session, lich, call, None)
    session, token = session.hold(call)
    return Moved(session, reply=AskWhoami(token))


def _control(session: Session, lich: Lich, call: ControlAnswered, known: sc.Identity | None) -> Moved:
    asked = (call.target, call.action, call.value, call.args)
    return _took(session, sc.control_answered(lich, asked, call.builtins, known, session.rule), call.switched_on)


def _builtin_asked(session: Session, call: BuiltinAsked) -> Moved:
    """The self-command tool asks for a built-in: queued as any self-command is, else refused saying why."""
    asked = sc.request(call.command if isinstance(call.command, str) else "", call.args)
    lang = session.language
    match sc.decide(lang, asked, call.builtins, session.rule):
        case Denied() if is_refused(asked.name):
            # In an SDK session /model sets this session only (measured on Claude Code 2.1.328): lich's reason
            # (it saves a default) is not this one.
            return Moved(session, reply=Denied(texts.text(lang, Key.DENY_PERSON_ONLY, name=asked.shown_name)))
        case Denied() as denied:
            return Moved(session, reply=denied)
        case sc.Queue() as queue:
            answer = ToolAnswered(texts.text(lang, Key.SKILL_QUEUED, queued=asked.label))
            return _queued(session, (queue, answer), call.switched_on)
    if session.rule.restricted(asked.name) and command_name(asked.name) in session.rule.builtins:
        # A built-in the host did not list (an SDK session lists no /permissions, the interactive one's) is still
        # the person's alone: saying it is none would be wrong, and tell the model to look for another way.
        return Moved(session, reply=Denied(texts.text(lang, Key.DENY_NOT_ALLOWED, name=asked.shown_name)))
    return Moved(session, reply=Denied(texts.text(lang, Key.NOT_BUILTIN, name=asked.shown_name)))


def _took(session: Session, taken: sc.Taken, switched_on: bool) -> Moved:
    """The reply a tool's native answer gets, with the command it queues, if any."""
    if taken.queued is None:
        return Moved(session, reply=taken.reply)
    return _queued(session, (taken.queued, taken.reply), switched_on)


def _queued(session: Session, call: tuple[sc.Queue, Reply], switched_on: bool) -> Moved:
    """Queues the self-command the rule lets the model run (`call`: the decision, and the reply its call gets when
    queued), unless the person switched them off or one is held.

    At most one self-command per turn, on every host: one is held from the call that queued it until its run
    ended, and every host runs it only once the turn that asked is over (Claude Code's `command.run` waits on the
    turn a hook holds; pi runs it once idle; opencode holds a summarize asked for during a turn until that turn
    ended; the harness hosts send it as the query after the turn's), so a second call in the same turn finds the
    first one held and is told so. A run that never ends would hold it for good, but every host reports each run's
    end (`RunEnded`), a failure too."""
    queue, reply = call
    asked, lang = queue.request, queue.lang
    if not switched_on:
        return Moved(session, reply=Denied(texts.text(lang, Key.DENY_SWITCHED_OFF, name=asked.shown_name)))
    held = _held(session)
    if held is not None:
        _, first, _ = held
        text = texts.text(lang, Key.DENY_ONE_QUEUED, name=asked.shown_name, queued=first.label)
        return Moved(session, reply=Denied(text))
    # The host refuses a command run inside a hook the turn waits on: it runs from a timer once the hook answered.
    session, token = session.hold(queue)
    line = Log(texts.text(lang, Key.LOG_QUEUED, queued=asked.label))
    return Moved(session, (line, After(0, token)), reply)


def _held(session: Session) -> tuple[int, Request, bool] | None:
    """The self-command the session holds, if any: its token, what it runs, and whether its run started."""
    for token, what in session.pending.items():
        match what:
            case sc.Queue(request):
                return token, request, False
            case Request():
                return token, what, True
    return None


def _chain_command(session: Session, typed: m.ChainCommandTyped) -> Moved:
    """`/slash-chain`: `builtin on` and `off` switch the model's self-commands for every session; the other words
    are the chains' (`chain_machine`), and the status and `stop` also name a self-command the session holds."""
    words = chain_words(typed.args)
    if words in SETTINGS and words[0] == texts.BUILTIN_WORD:
        on = words[1] == "on"
        # Switching off cancels the self-command that waits, as turning chaining off cancels the running chain.
        session, cancelled = (session, None) if on else _cancel_held(session)
        answer = _joined(texts.BUILTIN_ON_TEXT if on else texts.BUILTIN_OFF_TEXT, cancelled)
        return Moved(session, (SaveBuiltin(on),), CommandAnswer(answer))
    moved = _chains_moved(session, m.on_event(session.chains, typed))
    held = _held(moved.session)
    if held is None or not isinstance(moved.reply, CommandAnswer):
        return moved
    _, request, runs = held
    if words == ():
        status = moved.reply.text + texts.queued_status_text(request.label, runs)
        return attrs.evolve(moved, reply=CommandAnswer(status))
    if words != ("stop",):
        return moved
    session, cancelled = _cancel_held(moved.session)
    chain = None if moved.reply.text == texts.NO_CHAIN_RUNS else moved.reply.text
    return attrs.evolve(moved, session=session, reply=CommandAnswer(_joined(chain, cancelled)))


def _cancel_held(session: Session) -> tuple[Session, str | None]:
    """Cancels the self-command the session holds, unless its run started (then nothing stops it); says which."""
    held = _held(session)
    if held is None:
        return session, None
    token, request, runs = held
    if not runs:
        session = attrs.evolve(session, pending={t: what for t, what in session.pending.items() if t != token})
    return session, texts.queued_stop_text(request.label, runs)


def _joined(*said: str | None) -> str:
    return " · ".join(part for part in said if part is not None)


def _chains_moved(session: Session, moved: m.Transition) -> Moved:
    before = session.chains.running
    session = attrs.evolve(session, chains=moved.state)
    effects: list[Effect] = []
    for effect in moved.effects:
        match effect:
            case m.StartTimer(ms=ms):
                session, token = session.hold(effect)
                effects.append(After(ms, token))
            case m.RunStep(command=command, args=args):
                session, token = session.hold(effect)
                effects.append(Run(command, args, token))
            case m.RunShell(text=text):
                session, token = session.hold(effect)
                effects.append(Shell(text, token))
            case Log() | SaveEnabled() | m.Approve():
                effects.append(effect)
            case ChainEnded():
                effects.extend((effect, Progress(None)))
    now = session.chains.running
    if now is not None and (before is None or not before.is_step(now.chain, now.index)):
        effects.append(StepStarted(now.chain, now.number, now.total, now.step))
    if now is not None and now is not before:
        # Where the program stands shows as it moves on, and as a `sleep` counts down.
        shown = m.progress(now)
        if before is None or not before.is_step(now.chain, now.index) or shown != m.progress(before):
            effects.append(Progress(shown))
    reply: Reply
    match moved.reply:
        case m.RunHead(args=args):
            session, token = session.hold(moved.reply)
            reply = RunTyped(args, token)
        case other:
            reply = other
    return Moved(session._without_gone_steps(), tuple(effects), reply)
