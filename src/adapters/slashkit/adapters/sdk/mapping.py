"""The one place the SDK host meets the core: the ports it lends the chain session, how a step's query ending
becomes the core's events, and how the core's replies, lines and chain ends reach the session. Nothing here
imports the SDK; `slashkit.adapters.sdk.session` hands it plain values."""

from collections import deque
from collections.abc import Callable
from typing import Final, Protocol

from attrs import define, field, frozen
from returns.result import Failure, Success

from slashkit.adapters.sdk.events import ChainEnded, Event, Line, Notice, StepEnd, StepStarted
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_session import ChainSession
from slashkit.core.js_text import js_trim_end
from slashkit.core.policy import DEFAULT_RULE, Denied, Rule
from slashkit.core.ports import RunOutcome

#: The origin of what the harness types for the person: their own input, which may run anything and cancels a
#: running chain (slashkit.core.policy). Claude Code's own name for an SDK host's turn, `sdk`, is the person's
#: typing too but keeps the seed's rule that it does not cancel a chain; a harness's next prompt does, so the
#: host names it as the person's input from outside the composer: `bridge`.
HARNESS_ORIGIN: Final = "bridge"
#: The origin of text a harness sends that it does not mark as the person's (`SlashSession.run(..., by_person=
#: False)`: a model's output, a message from elsewhere): it runs only what anyone may run.
HARNESS_TEXT: Final = "harness"

#: How the session's turn ended, by the ResultMessage's `terminal_reason` (measured on claude-agent-sdk 0.2.184
#: with Claude Code 2.1.328: `aborted_streaming` after `interrupt()`, `api_error` after an HTTP 400 or 500).
_REASONS: Final = {
    "completed": "answer",
    "aborted_streaming": "aborted",
    "aborted_tools": "aborted",
    "api_error": "error",
    "max_turns": "max_turns",
}


def unknown_command_text(name: str) -> str:
    """The reason a step whose command the session does not know did not run, in Claude Code's words."""
    return f"Unknown command: /{name}"


# How a step's query ended


@frozen
class QueryEnd:
    """What the SDK said about one query, in plain values: its ResultMessage's fields, the text of the
    `<synthetic>` assistant message a local command answers with, and whether the model was handed a prompt."""

    is_error: bool
    num_turns: int
    result: str
    terminal_reason: str | None = None
    stop_reason: str | None = None
    errors: tuple[str, ...] = ()
    synthetic: str = ""
    prompted: bool = False

    @property
    def model_turn(self) -> bool:
        """Tells whether the step handed the model a prompt (its hook fired, or the model took a turn)."""
        return self.prompted or self.num_turns > 0


def step_end(end: QueryEnd) -> tuple[StepEnd, str]:
    """Reads how a step ended and its output (what a `|` hands on) from its query's end."""
    if end.model_turn:
        return turn_reason(end), end.result
    if end.is_error:
        return "failed", "; ".join(end.errors) or end.result or end.synthetic
    # measured on Claude Code 2.1.328: a local command's `result` carries its stdout only; what it wrote to
    # stderr (`/compact` with nothing to compact: `Error: No messages to compact`) reaches the SDK only as the
    # synthetic assistant text, with `is_error` false. The CLI's own failure mark on that message is internal,
    # and the SDK's typed messages drop it.
    if end.synthetic.strip() and end.synthetic.strip() != end.result.strip():
        return "failed", end.synthetic.strip()
    return "ran", end.result or end.synthetic


def turn_reason(end: QueryEnd) -> StepEnd:
    """Names how the model's turn ended, in the core's words (`answer` runs the next step)."""
    if end.stop_reason == "refusal":
        return "refusal"
    reason = _REASONS.get(end.terminal_reason or "")
    if reason == "answer" and end.is_error:
        return "error"
    if reason is not None:
        return reason  # type: ignore[return-value]
    return "error" if end.is_error else "answer"


def report(chains: ChainSession, done: Callable[[RunOutcome], None], how: StepEnd, output: str, text: str) -> None:
    """Tells the core how a step's query ended: its run resolved or threw, then (for a prompt) its turn."""
    if how == "failed":
        done(Failure(output))
        return
    if how != "ran" and _waits_on_run(chains):
        # The model took a turn though no prompt hook fired for it: the step still waits on that turn.
        chains.handle(m.PromptHanded(text))
    done(Success(output if how == "ran" else ""))
    if how != "ran":
        chains.handle(m.TurnEnded(how, None, output))


def _waits_on_run(chains: ChainSession) -> bool:
    r = chains.state.running
    return r is not None and r.wait == "run" and not r.saw_prompt


def step_note(prompt: str, reply: m.Reply) -> str | None:
    """The note the model reads after a chained step's prompt: what the core appended to it, if anything.

    >>> step_note("/b x", m.PromptText("/b x\\n\\n[slash-chain] note"))
    '[slash-chain] note'
    >>> step_note("/b x", None) is None
    True
    """
    if not isinstance(reply, m.PromptText):
        return None
    return reply.text.removeprefix(js_trim_end(prompt)).lstrip("\n") or None


def tool_answer(reply: m.Reply) -> tuple[str, bool]:
    """The fail tool's answer for the core's reply: its text, and whether it is a refusal."""
    match reply:
        case m.ToolAnswered(text):
            return text, False
        case Denied(text):
            return text, True
    return texts.FAIL_NOTHING_WAITS, True


# What the core did, as the harness sees it


def started(before: m.Running | None, after: m.ChainState) -> list[tuple[int, Event]]:
    """The step one core event started, if any, with the chain it belongs to."""
    now = after.running
    if now is not None and (before is None or (before.chain, before.index) != (now.chain, now.index)):
        return [(now.chain, StepStarted(now.index, now.total, now.step))]
    return []


class ObservedChainSession(ChainSession):
    """The core's chain session, telling the host what each event it handled did to the chains."""

    def __init__(self, ports: "Ports", seen: Callable[[int, Event], None], rule: Rule = DEFAULT_RULE) -> None:
        super().__init__(ports.clock, ports.runner, ports.ui, ports.store, lambda c, o: seen(c, ChainEnded(o)), rule)
        self._seen = seen
        ports.runner.running = lambda: self.state.running

    def handle(self, event: m.Event) -> m.Reply:
        before = self.state.running
        reply = super().handle(event)
        for chain, made in started(before, self.state):
            self._seen(chain, made)
        return reply


# Ports


@define
class DrainedClock:
    """Timers the host fires between queries. The core starts each later step from a timer because Claude
    Code refuses a command run inside a hook; the SDK host runs queries one after another, so every timer is
    due once the query before it ended."""

    _due: list[Callable[[], None]] = field(factory=list)

    def after(self, ms: int, fire: Callable[[], None]) -> None:
        self._due.append(fire)

    def fire_due(self) -> None:
        """Fires every timer, including ones those timers start."""
        while self._due:
            self._due.pop(0)()


@frozen
class RunRequest:
    """A step the core asked to run: its chain and index, the command, and the function to report its end."""

    chain: int
    index: int
    step: Step
    done: Callable[[RunOutcome], None]


@define
class QueuedRunner:
    """Takes the core's runs as requests the host's driver sends as queries, one at a time."""

    requests: deque[RunRequest] = field(factory=deque)
    running: Callable[[], m.Running | None] = lambda: None

    def run(self, command: str, args: str, done: Callable[[RunOutcome], None]) -> None:
        r = self.running()
        chain, index = (r.chain, r.index) if r is not None else (0, 0)
        self.requests.append(RunRequest(chain, index, Step(command, args), done))

    def take(self, chain: int) -> RunRequest | None:
        """The next run of this chain, if one waits; runs of chains that ended are dropped."""
        while self.requests:
            request = self.requests.popleft()
            if request.chain == chain:
                return request
        return None


@define
class NoticeLog:
    """Hands the core's transcript lines and toasts to the harness, as lines and notices, and keeps the lines."""

    tell: Callable[[Event], None]
    lines: list[str] = field(factory=list)

    def log(self, text: str) -> None:
        self.lines.append(text)
        self.tell(Line(text))

    def toast(self, text: str) -> None:
        self.tell(Notice(text))


class SettingStore(Protocol):
    """Where the on/off setting lives: the host reads it before each chain (and passes it to the core, which only
    writes it); a harness that shares it across sessions passes its own."""

    def get(self, key: str) -> object: ...

    def set(self, key: str, value: object) -> None: ...


@define
class Ports:
    """The ports one SDK session lends the core."""

    clock: DrainedClock
    runner: QueuedRunner
    ui: NoticeLog
    store: SettingStore
