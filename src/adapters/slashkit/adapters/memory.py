"""An in-memory host: a manual clock, scripted commands, a recording UI log, a dict store and a scripted
whoami, driving the core's use cases in the order a real host delivers events. For tests and embedding."""

from collections.abc import Callable, Collection, Mapping
from typing import Final

from attrs import define, field, frozen
from returns.result import Failure, Result, Success

from slashkit.core.chain import holds_chain
from slashkit.core.chain_machine import (
    CommandAnswer,
    Outcome,
    PaneClosed,
    PaneOpened,
    PromptHanded,
    PromptSubmitted,
    PromptText,
    RunTyped,
    TurnEnded,
)
from slashkit.core.chain_session import ENABLED_KEY, ChainSession, enabled
from slashkit.core.policy import DEFAULT_RULE, Rule
from slashkit.core.ports import Identity, RunOutcome
from slashkit.core.self_command import ToolReply
from slashkit.core.self_command_session import SelfCommandSession
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


Script = Local | Prompt | Pane | Throws


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
    """Records the transcript lines and toasts, in order."""

    lines: list[str] = field(factory=list)
    toasts: list[str] = field(factory=list)

    def log(self, text: str) -> None:
        self.lines.append(text)

    def toast(self, text: str) -> None:
        self.toasts.append(text)


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
    """Answers whoami with a set identity, or fails with a reason; counts the calls."""

    answer: Result[Identity, str] = field(factory=lambda: Failure("no LICH_BIN"))
    calls: int = 0

    def whoami(self) -> Result[Identity, str]:
        self.calls += 1
        return self.answer


@define
class ScriptedRunner:
    """Runs scripted commands for the host; an unknown name fails as the engine's would."""

    host: "MemoryHost"

    def run(self, command: str, args: str, done: Callable[[RunOutcome], None]) -> None:
        self.host.run_command(command, args, "plugin", done)


# The host

SKILL_REFUSAL: Final = "{name} is a built-in CLI command, not a skill. Ask the user to run /{name} themselves."


@define
class MemoryHost:
    """A session of an in-memory agent CLI with slashkit loaded.

    `type` is the person's prompt; `end_turn`, `close_pane`, `resolve` and `clock.advance` are the host
    moving on; `skill_call` and `control_call` are the model's tool calls. What the person would see is in
    `ui.lines`, `ui.toasts`, `answers` and `prompts`; `runs` lists every command run, in order. `rule` is who
    may run what (slashkit.core.policy: Claude Code's allowlist unless told), knowing the host's `commands`.
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
    runs: list[tuple[str, str]] = field(factory=list)
    #: Who started each run of `runs`, by the engine's origin kind (`composer`, `plugin`, ...).
    origins: list[str] = field(factory=list)
    #: How each chain ended, in order.
    outcomes: list[Outcome] = field(factory=list)
    answers: list[str] = field(factory=list)
    prompts: list[str] = field(factory=list)
    _held: dict[str, Callable[[RunOutcome], None]] = field(factory=dict)
    chains: ChainSession = field(init=False)
    self_commands: SelfCommandSession = field(init=False)

    def __attrs_post_init__(self) -> None:
        runner = ScriptedRunner(self)
        self.chains = ChainSession(self.clock, runner, self.ui, self.store, self._ended, self.rule)
        self.self_commands = SelfCommandSession(self.env, self.whoami, self.clock, runner, self.ui, self.rule)
        self.start_session()

    def _ended(self, _: int, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def start_session(self) -> None:
        """Starts (or, like /clear and /compact, restarts) the session."""
        self.self_commands.session_started(self.interactive)

    def type(self, text: str, origin: str = "composer") -> None:
        """Submits a prompt (the person's, unless `origin` says who else); a `/name args` one runs that command,
        as the engine does."""
        if not text.startswith("/"):
            self.chains.handle(PromptSubmitted(text, origin))
            return
        command, _, args = text[1:].partition(" ")
        self.run_command(command, args, origin)
        if holds_chain(args):
            self.settle()

    def run_command(
        self, command: str, args: str, origin: str, done: Callable[[RunOutcome], None] = lambda _: None
    ) -> None:
        """Runs a command from any origin through the hooks, as the engine does: the chain hook hears every run
        whose arguments its matcher accepts, whoever started it."""
        listed = (self.builtins(), [*self.commands, CHAIN_COMMAND])
        reply = self.chains.command_typed(command, args, origin, self.enabled(), *listed) if holds_chain(args) else None
        match reply:
            case RunTyped(chain, index, head):
                self._run(command, head, origin, self.chains.reporter(chain, index))
            case CommandAnswer(text):
                self.answers.append(text)
                done(Success(text))
            case None:
                self._run(command, args, origin, done)

    def enabled(self) -> bool:
        """The on/off setting as the host reads it when an event comes (another window may have changed it)."""
        return enabled(self.store.get(ENABLED_KEY))

    def builtins(self) -> Collection[str]:
        """The host's built-in commands, as its command list names them now."""
        return [name for name, c in self.commands.items() if c.builtin]

    def settle(self) -> None:
        """Lets every timer that is due fire (the host going idle)."""
        self.clock.advance(0)

    def end_turn(self, reason: str = "answer", agent: str | None = None, answer: str = "") -> None:
        """The model's turn ends (a subagent's when `agent` is set), its final text `answer`."""
        self.chains.handle(TurnEnded(reason, agent, answer))
        self.settle()

    def close_pane(self, pane: str) -> None:
        """The person closes a pane."""
        self.chains.handle(PaneClosed(pane))
        self.settle()

    def resolve(self, command: str, error: str | None = None) -> None:
        """A held command's run resolves, or throws `error`."""
        done = self._held.pop(command)
        done(Success("") if error is None else Failure(error))
        self.settle()

    def skill_call(self, skill: object, args: object = None) -> ToolReply | str:
        """The model calls the Skill tool: the tool answers first (a skill it serves, or its refusal of a
        built-in), then slashkit; returns slashkit's reply, or the native text when untouched."""
        name = skill.removeprefix("/") if isinstance(skill, str) else ""
        served = name in self.commands and not self.commands[name].builtin
        native = f"Launching skill: {name}" if served else SKILL_REFUSAL.format(name=name)
        reply = self.self_commands.skill_answered(skill, args, not served, self.builtins())
        self.settle()
        return native if reply is None else reply

    def control_call(self, target: object, action: object, value: object, args: object = None) -> ToolReply | str:
        """The model calls lich's control_session: lich answers first, then slashkit."""
        native, is_error = self.lich_control(target, action, value)
        reply = self.self_commands.control_answered(target, action, value, args, is_error, self.builtins())
        self.settle()
        return native if reply is None else reply

    def describe(self, tool: str, description: str) -> str:
        """The description of a tool as the model is shown it."""
        return self.self_commands.tool_described(tool, description) or description

    def _run(self, command: str, args: str, origin: str, done: Callable[[RunOutcome], None]) -> None:
        self.runs.append((command, args))
        self.origins.append(origin)
        if command == CHAIN_COMMAND:
            answer = self.chains.chain_command(args, self.enabled())
            self.answers.append(answer)
            done(Success(answer))
            return
        script = self.commands.get(command)
        if script is None:
            done(Failure(f"Unknown command: /{command}"))
            return
        match script.does:
            case Throws(message):
                done(Failure(message))
                return
            case Prompt(text):
                # As the engine does: the prompt is handed (skill.prompt), then submitted as `/name args`.
                amended = self.chains.handle(PromptHanded(text))
                self.prompts.append(amended.text if isinstance(amended, PromptText) else text)
                self.chains.handle(PromptSubmitted(f"/{command} {args}".rstrip(), origin))
            case Pane(pane, focus, placed):
                self.chains.handle(PaneOpened(pane, focus, placed))
        if script.held:
            self._held[command] = done
        else:
            done(Success(script.does.output if isinstance(script.does, Local) else ""))


def host(**commands: Command | Script) -> MemoryHost:
    """Builds a host with these commands: `host(a=Local(), b=Prompt("do b"), compact=Command(builtin=True))`."""
    made = {name: c if isinstance(c, Command) else Command(does=c) for name, c in commands.items()}
    return MemoryHost(commands=made)
