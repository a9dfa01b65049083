"""An in-memory host: a manual clock, scripted commands, a recording UI log, a dict store and a scripted
whoami, driving the core's session in the order a real host delivers events. For tests and embedding."""

from collections.abc import Callable, Collection, Mapping
from typing import Final

from attrs import define, field, frozen
from returns.result import Failure, Success

from slashkit.core import session as s
from slashkit.core.chain import holds_chain
from slashkit.core.chain_machine import (
    ChainCommandTyped,
    ChainEnded,
    ChainTyped,
    CommandAnswer,
    LineTyped,
    Outcome,
    PaneClosed,
    PaneOpened,
    PromptHanded,
    PromptSubmitted,
    PromptText,
    TurnEnded,
)
from slashkit.core.driver import Driver
from slashkit.core.grammar import starts_program
from slashkit.core.policy import DEFAULT_RULE, Rule
from slashkit.core.ports import RunOutcome
from slashkit.core.saved_chain import NO_SAVED, Library
from slashkit.core.self_command import Identity
from slashkit.core.session import BUILTIN_KEY, ENABLED_KEY, enabled
from slashkit.core.texts import CHAIN_COMMAND

# Scripted commands


@frozen
class Local:
    """A command that runs and returns this text, like /cost."""

    output: str = ""


@frozen
class Prompt:
    """A command that hands the model this prompt (a skill or a project command); its turn is then the
    test's to end with `MemoryHost.end_turn`."""

    text: str


@frozen
class Pane:
    """A command that opens a pane; `MemoryHost.close_pane` closes it."""

    pane: str
    focus: bool = True
    placed: bool = True


@frozen
class Throws:
    """A command whose run throws this message."""

    message: str


@frozen
class Turns:
    """A command whose runs go by a script of their own: its first run does the first thing listed, its second the
    second, and every run after the list does the last (`Turns((Throws("red"), Throws("red"), Local()))` fails
    its first two runs, then passes). For loops whose condition changes from run to run."""

    scripts: tuple[Local | Prompt | Pane | Throws, ...]


def failing_first(runs: int, message: str = "failed", then: Local | Prompt | Pane | Throws = Local()) -> Turns:
    """A command that fails its first `runs` runs with `message`, then does `then` on every run after."""
    return Turns((*(Throws(message) for _ in range(runs)), then))


Script = Local | Prompt | Pane | Throws | Turns


@frozen
class Command:
    """A scripted command: what it does, whether it is a built-in, and whether its run resolves only when the
    test calls `MemoryHost.resolve` (so events can arrive before it does)."""

    does: Script = Local()
    builtin: bool = False
    held: bool = False


# Ports


@define
class ManualClock:
    """A clock that moves only when told; timers fire in the order they are due."""

    now: int = 0
    _timers: list[tuple[int, int, Callable[[], None]]] = field(factory=list)
    _made: int = 0

    def after(self, ms: int, fire: Callable[[], None]) -> None:
        self._made += 1
        self._timers.append((self.now + ms, self._made, fire))

    def advance(self, ms: int = 0) -> None:
        """Moves time on by `ms` and fires every timer due by then, including ones those timers start."""
        self.now += ms
        while due := sorted(t for t in self._timers if t[0] <= self.now):
            timer = due[0]
            self._timers.remove(timer)
            timer[2]()

    @property
    def pending(self) -> int:
        """Counts the timers that have not fired."""
        return len(self._timers)


@define
class RecordingUi:
    """Records the transcript lines and toasts, in order, every text the status area showed (None: cleared), and
    counts the times the tool descriptions were to be drawn again."""

    lines: list[str] = field(factory=list)
    toasts: list[str] = field(factory=list)
    statuses: list[str | None] = field(factory=list)
    invalidated: int = 0

    def log(self, text: str) -> None:
        self.lines.append(text)

    def toast(self, text: str) -> None:
        self.toasts.append(text)

    def invalidate(self) -> None:
        self.invalidated += 1

    def progress(self, text: str | None) -> None:
        self.statuses.append(text)


@define
class DictStore:
    """A store held in a dict; set `data` directly to act as another window."""

    data: dict[str, object] = field(factory=dict)

    def get(self, key: str) -> object:
        return self.data.get(key)

    def set(self, key: str, value: object) -> None:
        self.data[key] = value


@define
class DictEnvironment:
    """Environment variables held in a dict."""

    variables: Mapping[str, str] = field(factory=dict)

    def get(self, name: str) -> str | None:
        return self.variables.get(name)


@define
class ScriptedWhoami:
    """Answers whoami with a set identity, or with None (lich could not tell); counts the calls."""

    answer: Identity | None = None
    calls: int = 0

    def whoami(self) -> Identity | None:
        self.calls += 1
        return self.answer


@define
class ScriptedRunner:
    """Runs scripted commands for the host; an unknown name fails as the engine's would."""

    host: "MemoryHost"

    def run(self, command: str, args: str, done: Callable[[RunOutcome], None]) -> None:
        self.host.run_command(command, args, "plugin", done)


@define
class ScriptedShell:
    """Runs no shell: records each shell step the session starts (`started`: token and text) and ends it when told
    (`finish`); `stopped` lists the tokens the session stopped waiting on while they ran."""

    started: list[tuple[int, str]] = field(factory=list)
    stopped: list[int] = field(factory=list)
    _running: dict[int, Callable[[str | None, str], None]] = field(factory=dict)

    def start(self, token: int, text: str, done: Callable[[str | None, str], None]) -> None:
        self.started.append((token, text))
        self._running[token] = done

    def keep(self, tokens: Callable[[int], bool]) -> None:
        for token in [t for t in self._running if not tokens(t)]:
            del self._running[token]
            self.stopped.append(token)

    @property
    def running(self) -> list[int]:
        """The tokens of the steps started and not yet ended, oldest first."""
        return list(self._running)

    def finish(self, error: str | None = None, output: str = "") -> None:
        """Ends the oldest running step: `error` None as an exit of 0."""
        token = next(iter(self._running))
        self._running.pop(token)(error, output)


@define
class RecordedApprovals:
    """Keeps the approvals in a list, as (path, SHA-256)."""

    approved: list[tuple[str, str]] = field(factory=list)

    def approve(self, source: str, digest: str) -> None:
        self.approved.append((source, digest))


# The host

SKILL_REFUSAL: Final = "{name} is a built-in CLI command, not a skill. Ask the user to run /{name} themselves."


@define
class MemoryHost:
    """A session of an in-memory agent CLI with slashkit loaded.

    `type` is the person's prompt; `end_turn`, `close_pane`, `resolve` and `clock.advance` are the host
    moving on; `skill_call`, `control_call` and `builtin_call` are the model's tool calls. What the person would
    see is in `ui.lines`, `ui.toasts`, `answers` and `prompts`; `runs` lists every command run, in order. `rule` is
    who may run what (slashkit.core.policy: Claude Code's allowlist unless told), knowing the host's `commands`.
    """

    commands: dict[str, Command] = field(factory=dict)
    interactive: bool = True
    clock: ManualClock = field(factory=ManualClock)
    ui: RecordingUi = field(factory=RecordingUi)
    store: DictStore = field(factory=DictStore)
    env: DictEnvironment = field(factory=DictEnvironment)
    whoami: ScriptedWhoami = field(factory=ScriptedWhoami)
    #: lich's control_session, answering (target, action, value) with (text, is_error).
    lich_control: Callable[[object, object, object], tuple[str, bool]] = lambda *_: ("", True)
    rule: Rule = DEFAULT_RULE
    #: The saved chains the host reads (slashkit.core.saved_chain), as if from its folders.
    saved: Library = NO_SAVED
    shell: ScriptedShell = field(factory=ScriptedShell)
    approvals: RecordedApprovals = field(factory=RecordedApprovals)
    runs: list[tuple[str, str]] = field(factory=list)
    #: Who started each run of `runs`, by the engine's origin kind (`composer`, `plugin`, ...).
    origins: list[str] = field(factory=list)
    #: How each chain ended, in order.
    outcomes: list[Outcome] = field(factory=list)
    #: Each step the session reported started (`StepStarted`: a harness shows these), as `index/total name`.
    started: list[str] = field(factory=list)
    answers: list[str] = field(factory=list)
    prompts: list[str] = field(factory=list)
    _held: dict[str, Callable[[RunOutcome], None]] = field(factory=dict)
    driver: Driver = field(init=False)

    def __attrs_post_init__(self) -> None:
        lich = (self.env.get("LICH_SESSION_ID"), self.env.get("LICH_PROMPT_LANG"))
        ports = (self.clock, ScriptedRunner(self), self.ui, self.store, self.whoami)
        self.driver = Driver(s.opened(self.rule, lich=lich), ports, self._told, (self.shell, self.approvals))
        self.start_session()

    def _told(self, report: s.Report) -> None:
        if isinstance(report, ChainEnded):
            self.outcomes.append(report.outcome)
        else:
            self.started.append(f"{report.index}/{report.total} {report.step.name}")

    @property
    def session(self) -> s.Session:
        """The core's session as it is now."""
        return self.driver.session

    def handle(self, event: s.Event) -> s.Reply:
        """Hands the core one event, as the host's hook would; returns the hook's reply."""
        return self.driver.handle(event)

    def wants(self) -> frozenset[str]:
        """The optional events the session needs now (`slashkit.core.session.wants`)."""
        return s.wants(self.session)

    def start_session(self) -> None:
        """Starts (or, like /clear and /compact, restarts) the session."""
        self.handle(s.SessionStarted(self.interactive))

    def type(self, text: str, origin: str = "composer") -> None:
        """Submits a prompt (the person's, unless `origin` says who else); a `/name args` one runs that command,
        as the engine does; one that opens a loop or a group runs as a program when it is one."""
        if not text.startswith("/"):
            if starts_program(text):
                listed = (tuple(self.builtins()), (*self.commands, CHAIN_COMMAND))
                reply = self.handle(LineTyped(text, origin, self.enabled(), *listed, saved=self.saved))
                if isinstance(reply, CommandAnswer):
                    self.answers.append(reply.text)
                    self.settle()
                    return
            self.handle(PromptSubmitted(text, origin))
            return
        command, _, args = text[1:].partition(" ")
        self.run_command(command, args, origin)
        if holds_chain(args) or self.saved.named(command) is not None:
            self.settle()

    def run_command(
        self, command: str, args: str, origin: str, done: Callable[[RunOutcome], None] = lambda _: None
    ) -> None:
        """Runs a command from any origin through the hooks, as the engine does: the chain hook hears every run
        whose arguments its matcher accepts, whoever started it."""
        listed = (tuple(self.builtins()), (*self.commands, CHAIN_COMMAND))
        chained = holds_chain(args) or self.saved.leaving(listed[1], self.rule.builtins).named(command) is not None
        typed = ChainTyped(command, args, origin, self.enabled(), *listed, saved=self.saved)
        reply = self.handle(typed) if chained else None
        match reply:
            case s.RunTyped(head, token):
                self._run(command, head, origin, self.driver.reporter(token))
            case CommandAnswer(text):
                self.answers.append(text)
                done(Success(text))
            case _:
                self._run(command, args, origin, done)

    def enabled(self) -> bool:
        """The on/off setting as the host reads it when an event comes (another window may have changed it)."""
        return enabled(self.store.get(ENABLED_KEY))

    def switched_on(self) -> bool:
        """The switch of the model's self-commands as the host reads it when the model calls a tool."""
        return enabled(self.store.get(BUILTIN_KEY))

    def builtins(self) -> Collection[str]:
        """The host's built-in commands, as its command list names them now."""
        return [name for name, c in self.commands.items() if c.builtin]

    def settle(self) -> None:
        """Lets every timer that is due fire (the host going idle)."""
        self.clock.advance(0)

    def end_turn(self, reason: str = "answer", agent: str | None = None, answer: str = "") -> None:
        """The model's turn ends (a subagent's when `agent` is set), its final text `answer`."""
        self.handle(TurnEnded(reason, agent, answer))
        self.settle()

    def close_pane(self, pane: str) -> None:
        """The person closes a pane."""
        self.handle(PaneClosed(pane))
        self.settle()

    def resolve(self, command: str, error: str | None = None) -> None:
        """A held command's run resolves, or throws `error`."""
        done = self._held.pop(command)
        done(Success("") if error is None else Failure(error))
        self.settle()

    def skill_call(self, skill: object, args: object = None) -> s.Reply | str:
        """The model calls the Skill tool: the tool answers first (a skill it serves, or its refusal of a
        built-in), then slashkit; returns slashkit's reply, or the native text when untouched."""
        name = skill.removeprefix("/") if isinstance(skill, str) else ""
        served = name in self.commands and not self.commands[name].builtin
        native = f"Launching skill: {name}" if served else SKILL_REFUSAL.format(name=name)
        reply = self.handle(s.SkillAnswered(skill, not served, tuple(self.builtins()), args, self.switched_on()))
        self.settle()
        return native if reply is None else reply

    def control_call(self, target: object, action: object, value: object, args: object = None) -> s.Reply | str:
        """The model calls lich's control_session: lich answers first, then slashkit."""
        native, is_error = self.lich_control(target, action, value)
        listed = tuple(self.builtins())
        reply = self.handle(s.ControlAnswered(is_error, listed, target, action, value, args, self.switched_on()))
        self.settle()
        return native if reply is None else reply

    def builtin_call(self, command: object, args: object = None) -> s.Reply:
        """The model calls the self-command tool (`texts.BUILTIN_TOOL`): slashkit alone answers it, and what it
        queues runs once the turn ends (`end_turn`)."""
        return self.handle(s.BuiltinAsked(command, args, tuple(self.builtins()), self.switched_on()))

    def describe(self, tool: str, description: str) -> str:
        """The description of a tool as the model is shown it."""
        reply = self.handle(s.ToolDescribed(tool, description))
        return reply.text if isinstance(reply, s.Description) else description

    def _run(self, command: str, args: str, origin: str, done: Callable[[RunOutcome], None]) -> None:
        self.runs.append((command, args))
        self.origins.append(origin)
        if command == CHAIN_COMMAND:
            typed = ChainCommandTyped(args, self.enabled(), origin, self.saved, tuple(self.commands))
            reply = self.handle(typed)
            answer = reply.text if isinstance(reply, CommandAnswer) else ""
            self.answers.append(answer)
            done(Success(answer))
            return
        script = self.commands.get(command)
        if script is None:
            done(Failure(f"Unknown command: /{command}"))
            return
        does = script.does
        if isinstance(does, Turns):
            ran = sum(1 for name, _ in self.runs[:-1] if name == command)
            does = does.scripts[min(ran, len(does.scripts) - 1)]
        match does:
            case Throws(message):
                done(Failure(message))
                return
            case Prompt(text):
                # As the engine does: the prompt is handed (skill.prompt), then submitted as `/name args`.
                amended = self.handle(PromptHanded(text))
                self.prompts.append(amended.text if isinstance(amended, PromptText) else text)
                self.handle(PromptSubmitted(f"/{command} {args}".rstrip(), origin))
            case Pane(pane, focus, placed):
                self.handle(PaneOpened(pane, focus, placed))
        if script.held:
            self._held[command] = done
        else:
            done(Success(does.output if isinstance(does, Local) else ""))


def host(**commands: Command | Script) -> MemoryHost:
    """Builds a host with these commands: `host(a=Local(), b=Prompt("do b"), compact=Command(builtin=True))`."""
    made = {name: c if isinstance(c, Command) else Command(does=c) for name, c in commands.items()}
    return MemoryHost(commands=made)
