"""The slash-chain step state machine: a pure transition from (state, event) to (state, effects, reply).

The host reports what happened (events, past tense); the machine answers with what to do (effects,
imperative) and, for events that are a hook the host holds open, the hook's reply. Nothing here waits,
reads a clock or touches the host: `slashkit.core.chain_session` applies the effects through ports.
"""

from typing import Final

import attrs
from attrs import frozen

from slashkit.core import texts
from slashkit.core.chain import Step, parse_chain
from slashkit.core.js_text import js_trim, js_trim_end
from slashkit.core.texts import Wait

#: The prompt origins that are the person's own input: the prompt's Enter, or the bridge.
PERSON: Final = frozenset({"composer", "bridge"})

# State


@frozen
class Running:
    """The running chain: the step that runs, the steps after it, and what the step waits for.

    A step that handed the model a prompt (`saw_prompt`) waits for its turn; one that opened a focused,
    placed pane waits for that pane to close. `turn_ended` and `pane_closed` hold an end that came before
    the step's run resolved. `chain` and `index` name this step, so a report about an ended one is ignored.
    """

    chain: int
    index: int
    total: int
    step: Step
    left: tuple[Step, ...]
    wait: Wait = "run"
    saw_prompt: bool = False
    turn_ended: str | None = None
    pane: str | None = None
    pane_closed: bool = False

    def is_step(self, chain: int, index: int) -> bool:
        """Tells whether a report names this step."""
        return self.chain == chain and self.index == index


@frozen
class ChainState:
    """What the machine remembers: the running chain, if any, and how many chains have started."""

    running: Running | None = None
    started: int = 0


# Events: what the host reports


@frozen
class ChainTyped:
    """A command whose arguments hold `&& /<name>` was run; `enabled` is the stored setting, read just now."""

    command: str
    args: str
    origin: str
    enabled: bool


@frozen
class StepRan:
    """A step's run resolved."""

    chain: int
    index: int


@frozen
class StepFailed:
    """A step's run threw, with this message."""

    chain: int
    index: int
    message: str


@frozen
class TimerFired:
    """The timer a step after the first waits on fired."""

    chain: int
    index: int


@frozen
class PromptHanded:
    """A command handed the model this prompt text (the host's `skill.prompt`)."""

    text: str


@frozen
class PaneOpened:
    """A pane was opened: whether it took the focus and whether the host placed it."""

    pane: str
    focus: bool
    placed: bool


@frozen
class PaneClosed:
    """A pane is closing."""

    pane: str


@frozen
class TurnEnded:
    """A turn ended for this reason; `agent` is set when it was a subagent's turn."""

    reason: str
    agent: str | None = None


@frozen
class PromptSubmitted:
    """A prompt was submitted, from this origin."""

    text: str
    origin: str


@frozen
class FailCalled:
    """The model called the fail tool; `reason` is the input as it came, of any type."""

    reason: object
    agent: str | None = None


@frozen
class ChainCommandTyped:
    """`/slash-chain` was run with these arguments; `enabled` is the stored setting, read just now."""

    args: str
    enabled: bool


Event = (
    ChainTyped
    | StepRan
    | StepFailed
    | TimerFired
    | PromptHanded
    | PaneOpened
    | PaneClosed
    | TurnEnded
    | PromptSubmitted
    | FailCalled
    | ChainCommandTyped
)

# Effects: what the host is to do


@frozen
class Log:
    """Write this line to the transcript."""

    text: str


@frozen
class StartTimer:
    """Start a timer for this step: a command does not run from inside another command's hook."""

    chain: int
    index: int


@frozen
class RunStep:
    """Run this step now (its timer fired), then report StepRan or StepFailed."""

    chain: int
    index: int
    step: Step


@frozen
class SaveEnabled:
    """Store the on/off setting, which every window of the host shares."""

    enabled: bool


Effect = Log | StartTimer | RunStep | SaveEnabled

# Replies: how the hook the host holds open answers


@frozen
class RunTyped:
    """Run the typed command with these arguments (the chain's head), then report StepRan or StepFailed."""

    chain: int
    index: int
    args: str


@frozen
class PromptText:
    """Hand the model this prompt text instead."""

    text: str


@frozen
class CommandAnswer:
    """Answer the command with this text."""

    text: str


@frozen
class ToolDenied:
    """Refuse the tool call with this text."""

    text: str


@frozen
class ToolAnswered:
    """Answer the tool call with this text."""

    text: str


#: None: the host goes on as it would without slashkit (runs the command as typed, keeps the prompt).
Reply = RunTyped | PromptText | CommandAnswer | ToolDenied | ToolAnswered | None


@frozen
class Transition:
    """The machine's answer to one event."""

    state: ChainState
    effects: tuple[Effect, ...] = ()
    reply: Reply = None


# Transition


def on_event(state: ChainState, event: Event) -> Transition:
    """Moves the machine by one event."""
    r = state.running
    match event:
        case ChainTyped():
            return _chain_typed(state, event)
        case StepRan(chain, index) if r is not None and r.is_step(chain, index):
            return _after_run(state, r)
        case StepFailed(chain, index, message) if r is not None and r.is_step(chain, index):
            return _stop(state, r, texts.thrown_why(message))
        case TimerFired(chain, index) if r is not None and r.is_step(chain, index):
            return Transition(state, (RunStep(chain, index, r.step),))
        case PromptHanded(text) if r is not None and r.wait == "run":
            return _prompt_handed(state, r, text)
        case PaneOpened(pane, focus, placed) if r is not None and r.wait == "run" and focus and placed:
            return Transition(attrs.evolve(state, running=attrs.evolve(r, pane=pane)))
        case PaneClosed(pane) if r is not None and r.pane == pane:
            if r.wait == "pane":
                return _advance(state, r)
            return Transition(attrs.evolve(state, running=attrs.evolve(r, pane_closed=True)))
        case TurnEnded(reason, None) if r is not None and r.saw_prompt:
            # A subagent's turn ends inside the step's own; only the main loop's end is the step's.
            if r.wait == "turn":
                return _end_turn(state, r, reason)
            if r.wait == "run":
                return Transition(attrs.evolve(state, running=attrs.evolve(r, turn_ended=reason)))
            return Transition(state)
        case PromptSubmitted(text, origin) if r is not None and origin in PERSON and not _is_own(text, r):
            return _cancel(state, r)
        case FailCalled(reason, agent):
            return _fail_called(state, reason, agent)
        case ChainCommandTyped(args, enabled):
            return _chain_command(state, args, enabled)
        case _:
            return Transition(state)


def wants(state: ChainState) -> frozenset[str]:
    """Names the host events the state cares about besides the ones the plugin always hears (the chain
    matcher, `/slash-chain`, the fail tool and its own reports), so a host can skip the rest."""
    r = state.running
    if r is None:
        return frozenset()
    wanted = {"prompt.submit"}
    if r.wait == "run":
        wanted |= {"skill.prompt", "ui.open"}
    if r.pane is not None:
        wanted.add("ui.close")
    if r.saw_prompt:
        wanted.add("turn.complete")
    return frozenset(wanted)


def _chain_typed(state: ChainState, event: ChainTyped) -> Transition:
    """The typed first command of a chain runs with its own arguments alone; the steps after it wait."""
    effects: tuple[Effect, ...] = ()
    r = state.running
    if r is not None and event.origin in PERSON:
        # A new chain the person types while one runs ends the running one, then starts its own.
        cancelled = _cancel(state, r)
        state, effects = cancelled.state, cancelled.effects
    chain = parse_chain(event.args)
    if not chain.rest or not event.enabled:
        return Transition(state, effects)
    step = Step(event.command, chain.head)
    started = state.started + 1
    running = Running(chain=started, index=1, total=len(chain.rest) + 1, step=step, left=chain.rest)
    return Transition(
        ChainState(running=running, started=started),
        (*effects, Log(texts.step_text(1, running.total, step))),
        RunTyped(started, 1, chain.head),
    )


def _after_run(state: ChainState, r: Running) -> Transition:
    """After a step's run resolved: wait for the turn it started or the pane it opened, else go on."""
    if r.saw_prompt:
        if r.turn_ended is None:
            return Transition(attrs.evolve(state, running=attrs.evolve(r, wait="turn")))
        return _end_turn(state, r, r.turn_ended)
    if r.pane is not None and not r.pane_closed:
        return Transition(attrs.evolve(state, running=attrs.evolve(r, wait="pane")))
    return _advance(state, r)


def _advance(state: ChainState, r: Running) -> Transition:
    """Starts the next step from a timer, or ends the chain after its last."""
    if not r.left:
        return Transition(attrs.evolve(state, running=None), (Log(texts.done_text(r.total)),))
    step, *left = r.left
    nxt = Running(chain=r.chain, index=r.index + 1, total=r.total, step=step, left=tuple(left))
    return Transition(
        attrs.evolve(state, running=nxt),
        (Log(texts.step_text(nxt.index, nxt.total, step)), StartTimer(nxt.chain, nxt.index)),
    )


def _end_turn(state: ChainState, r: Running, reason: str) -> Transition:
    return _advance(state, r) if reason == "answer" else _stop(state, r, texts.turn_why(reason))


def _stop(state: ChainState, r: Running, why: str) -> Transition:
    return Transition(attrs.evolve(state, running=None), (Log(texts.stopped_text(r.step, why, r.left)),))


def _cancel(state: ChainState, r: Running) -> Transition:
    return Transition(attrs.evolve(state, running=None), (Log(texts.cancelled_text(r.left)),))


def _prompt_handed(state: ChainState, r: Running, text: str) -> Transition:
    """A step that hands the model a prompt waits for its turn; the text tells the model how to report a
    failure, unless it is the last step."""
    seen = attrs.evolve(state, running=attrs.evolve(r, saw_prompt=True))
    if not r.left:
        return Transition(seen)
    note = texts.fail_note(r.index, r.total, r.left)
    return Transition(seen, reply=PromptText(f"{js_trim_end(text)}\n\n{note}"))


def _is_own(text: str, r: Running) -> bool:
    """Tells whether a prompt the person sent is the running step's own text or `/slash-chain`."""
    return text.startswith(f"/{r.step.command}") or text.startswith(f"/{texts.CHAIN_COMMAND}")


def _fail_called(state: ChainState, reason: object, agent: str | None) -> Transition:
    """The model's report that the step it was handed failed: only a step that handed the main loop a
    prompt can be reported, because only that step waits on the model's turn."""
    r = state.running
    if r is None or not r.saw_prompt or agent is not None:
        return Transition(state, reply=ToolDenied(texts.FAIL_NOTHING_WAITS))
    why = js_trim(reason) if isinstance(reason, str) else ""
    if why == "":
        return Transition(state, reply=ToolDenied(texts.FAIL_NEEDS_REASON))
    stopped = _stop(state, r, texts.failed_why(why))
    return attrs.evolve(stopped, reply=ToolAnswered(texts.FAIL_STOPPED))


def _chain_command(state: ChainState, args: str, enabled: bool) -> Transition:
    """`/slash-chain`: nothing gives the status; stop, on and off act; anything else gets the usage."""
    r = state.running
    word = js_trim(args)
    if word in ("on", "off"):
        on = word == "on"
        answer = CommandAnswer(texts.ON_TEXT if on else texts.OFF_TEXT)
        # Turning off cancels a running chain.
        moved = _cancel(state, r) if not on and r is not None else Transition(state)
        return Transition(moved.state, (SaveEnabled(on), *moved.effects), answer)
    if word == "stop":
        if r is None:
            return Transition(state, reply=CommandAnswer(texts.NO_CHAIN_RUNS))
        return attrs.evolve(_cancel(state, r), reply=CommandAnswer(texts.cancelled_text(r.left)))
    if word != "":
        return Transition(state, reply=CommandAnswer(texts.USAGE))
    running = None if r is None else (r.index, r.total, r.step, r.wait)
    return Transition(state, reply=CommandAnswer(texts.status_text(enabled, running)))
