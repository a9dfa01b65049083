"""The slash-chain step state machine: a pure transition from (state, event) to (state, effects, reply).

The host reports what happened (events, past tense); the machine answers with what to do (effects,
imperative) and, for events that are a hook the host holds open, the hook's reply. Nothing here waits,
reads a clock or touches the host: `slashkit.core.session` names each step's timer and run by a token the host
sees, and the host carries the effects out.
"""

from typing import Final, Literal

import attrs
from attrs import Factory, field, frozen

from slashkit.core import texts
from slashkit.core.chain import Operator, Step, parse_chain
from slashkit.core.js_text import js_trim, js_trim_end
from slashkit.core.policy import DEFAULT_RULE, HARNESS_STEPS, PERSON, Denied, Rule, command_name
from slashkit.core.saved_chain import NO_SAVED, Expanded, Library, expand, origin_of
from slashkit.core.texts import Wait

#: How a step ended: success when it ended well by the seed's rules (returned, its turn ended with an answer, its
#: pane closed), failure when it would have stopped the seed's chain (threw, its turn ended otherwise, the model
#: called the fail tool).
Status = Literal["success", "failure"]

# State


@frozen
class Tally:
    """How many steps of a chain succeeded, failed, and did not run (skipped by an operator, refused, or left
    when the chain stopped or was cancelled)."""

    succeeded: int = 0
    failed: int = 0
    skipped: int = 0

    def ended(self, status: Status) -> "Tally":
        """Counts one more step that ended with this status."""
        if status == "success":
            return attrs.evolve(self, succeeded=self.succeeded + 1)
        return attrs.evolve(self, failed=self.failed + 1)

    def passed(self, steps: int) -> "Tally":
        """Counts steps that did not run."""
        return attrs.evolve(self, skipped=self.skipped + steps)


@frozen
class Outcome:
    """How a chain ended: its last status (a shell's `$?`), whether it was cancelled, and its tally."""

    status: Status
    cancelled: bool
    tally: Tally

    @property
    def ended_well(self) -> bool:
        """Tells whether the chain ran to its end with a last status of success."""
        return self.status == "success" and not self.cancelled


@frozen
class Running:
    """The running chain: the step that runs, the steps after it, and what the step waits for.

    A step that handed the model a prompt (`saw_prompt`) waits for its turn; one that opened a focused,
    placed pane waits for that pane to close. `turn_ended` and `pane_closed` hold an end that came before
    the step's run resolved. `chain` and `index` name this step, so a report about an ended one is ignored.

    `args` are what the step runs with: its own, plus the output handed to it after `|`. `origin` says who typed
    the chain, and `rule` is the refusal rule that reads it, knowing the host's commands as listed then; `mixed`
    says the seed's lines do not apply (an operator besides `&&`, or a refused step); `output` is the step's run
    text or its turn's answer, handed on by a `|` after it; `reported` is the model's report that the step
    failed, applied when its turn ends (mixed chains).
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
    args: str = field(default=Factory(lambda self: self.step.args, takes_self=True))
    origin: str = "composer"
    mixed: bool = False
    tally: Tally = Tally()
    output: str = ""
    reported: str | None = None
    rule: Rule = DEFAULT_RULE

    def is_step(self, chain: int, index: int) -> bool:
        """Tells whether a report names this step."""
        return self.chain == chain and self.index == index


@frozen
class ChainState:
    """What the machine remembers: the running chain, if any, and how many chains have started; and two facts of
    the session: the name the host gives the model for the fail tool, which the fail note names (Claude Code's
    unless the host says), and the rule of who may run what there (`slashkit.core.policy`)."""

    running: Running | None = None
    started: int = 0
    fail_tool: str = texts.FAIL_TOOL_ID
    rule: Rule = DEFAULT_RULE


# Events: what the host reports


@frozen
class ChainTyped:
    """A command whose arguments hold `&& /<name>` was run, or a saved chain's name; `enabled` is the stored
    setting, read just now, and so are `commands`, every name in the host's command list (empty: it could not list
    them), and `builtins`, the built-ins among them, which the refusal rule reads; and `saved`, the saved chains
    (the helper reads them; a name the host has in `commands` stays the host's)."""

    command: str
    args: str
    origin: str
    enabled: bool
    builtins: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    saved: Library = NO_SAVED


@frozen
class StepRan:
    """A step's run resolved; `output` is the text it returned (handed on by a `|` after it)."""

    chain: int
    index: int
    output: str = ""


@frozen
class StepFailed:
    """A step's run threw, with this message."""

    chain: int
    index: int
    message: str


@frozen
class StepDue:
    """The timer a step after the first waits on fired: the step is due to run."""

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
    """A turn ended for this reason; `agent` is set when it was a subagent's turn; `answer` is the model's
    final text (handed on by a `|` after the step)."""

    reason: str
    agent: str | None = None
    answer: str = ""


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
    """`/slash-chain` was run with these arguments; `enabled` is the stored setting, read just now; `origin` says
    who ran it, as `ChainTyped`'s does (None: the host names none, and only the person reaches its command);
    `saved` and `commands` as `ChainTyped`'s, for `list`."""

    args: str
    enabled: bool
    origin: str | None = None
    saved: Library = NO_SAVED
    commands: tuple[str, ...] = ()


Event = (
    ChainTyped
    | StepRan
    | StepFailed
    | StepDue
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
    """Run `/command args` now (its timer fired), then report StepRan or StepFailed."""

    chain: int
    index: int
    command: str
    args: str


@frozen
class SaveEnabled:
    """Store the on/off setting, which every window of the host shares."""

    enabled: bool


@frozen
class ChainEnded:
    """The chain has ended, this way (no line of its own: the lines are logged beside it)."""

    chain: int
    outcome: Outcome


Effect = Log | StartTimer | RunStep | SaveEnabled | ChainEnded

# Replies: how the hook the host holds open answers


@frozen
class RunHead:
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
    """Answer the command with this text, without running it."""

    text: str


@frozen
class ToolAnswered:
    """Answer the tool call with this text."""

    text: str


#: None: the host goes on as it would without slashkit (runs the command as typed, keeps the prompt).
Reply = RunHead | PromptText | CommandAnswer | Denied | ToolAnswered | None


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
        case StepRan(chain, index, output) if r is not None and r.is_step(chain, index):
            # A prompt step hands on its turn's answer, not its run's text.
            return _after_run(state, r if r.saw_prompt else attrs.evolve(r, output=output))
        case StepFailed(chain, index, message) if r is not None and r.is_step(chain, index):
            return _step_ended(state, r, "failure", texts.thrown_why(message))
        case StepDue(chain, index) if r is not None and r.is_step(chain, index):
            return Transition(state, (RunStep(chain, index, r.step.command, r.args),))
        case PromptHanded(text) if r is not None and r.wait == "run":
            return _prompt_handed(state, r, text)
        case PaneOpened(pane, focus, placed) if r is not None and r.wait == "run" and focus and placed:
            return _moved(state, attrs.evolve(r, pane=pane))
        case PaneClosed(pane) if r is not None and r.pane == pane:
            if r.wait == "pane":
                return _step_ended(state, r, "success", "")
            return _moved(state, attrs.evolve(r, pane_closed=True))
        case TurnEnded(reason, None, answer) if r is not None and r.saw_prompt:
            # A subagent's turn ends inside the step's own; only the main loop's end is the step's. A step that
            # handed a prompt waits for its run, then its turn (`_after_run`), never for a pane.
            if r.wait == "turn":
                return _end_turn(state, r, reason, answer)
            return _moved(state, attrs.evolve(r, turn_ended=reason, output=answer))
        case PromptSubmitted(text, origin) if r is not None and origin in PERSON and not _is_own(text, r):
            return _cancel(state, r)
        case FailCalled(reason, agent):
            return _fail_called(state, reason, agent)
        case ChainCommandTyped():
            return _chain_command(state, event)
        case _:
            return Transition(state)


#: The names `wants` gives: each optional event by its class's name, and `StepOutput`, which asks a host to send
#: the text a step's run returned with its end (`StepRan.output`), since only a `|` after the step reads it.
STEP_OUTPUT: Final = "StepOutput"


def wants(state: ChainState) -> frozenset[str]:
    """Names the events the state cares about besides the ones a host always sends (`ChainTyped`,
    `ChainCommandTyped`, `FailCalled` and the reports of the runs and timers the machine asked for), so a host
    can skip the rest: a state that does not name an event is left unchanged by it."""
    r = state.running
    if r is None:
        return frozenset()
    wanted = {"PromptSubmitted"}
    if r.wait == "run":
        wanted |= {"PromptHanded", "PaneOpened"}
    if r.pane is not None:
        wanted.add("PaneClosed")
    if r.saw_prompt:
        wanted.add("TurnEnded")
    if r.left and r.left[0].op == "|":
        # The text the running step returns is handed on: only then does the host send it.
        wanted.add(STEP_OUTPUT)
    return frozenset(wanted)


def hands_on(state: ChainState) -> bool:
    """Tells whether the running step's output matters: a `|` after it hands the output to the next step."""
    return STEP_OUTPUT in wants(state)


def _moved(state: ChainState, running: Running) -> Transition:
    return Transition(attrs.evolve(state, running=running))


def _chain_typed(state: ChainState, event: ChainTyped) -> Transition:
    """The typed first command of a chain runs with its own arguments alone; the steps after it wait."""
    r = state.running
    rule = state.rule.knowing(event.builtins, event.commands)
    if r is not None and _is_own_run(r, event, rule):
        # The running step's own run: its args hold an operator only because `|` handed it text, which is data
        # and never a chain of its own.
        return Transition(state)
    typed = Step(event.command, "")
    if event.origin == HARNESS_STEPS and not rule.typed_by_person(event.origin):
        # A step a slashkit harness sent on its chain's behalf (a `|` of its own may have handed it text that
        # holds an operator): the harness runs the chain, so this text is never one, nor the person's typing.
        if rule.may_run(event.command, event.origin, args=event.args):
            return Transition(state)
        return Transition(state, reply=CommandAnswer(texts.refused_text(typed, event.origin)))
    effects: tuple[Effect, ...] = ()
    if r is not None and event.origin in PERSON:
        # A new chain the person types while one runs ends the running one, then starts its own.
        cancelled = _cancel(state, r)
        state, effects = cancelled.state, cancelled.effects
    chain = parse_chain(event.args)
    saved = event.saved.leaving(event.commands, rule.builtins)
    head = Step(event.command, chain.head)
    calls = saved.named(event.command) is not None
    if calls and not event.enabled:
        return Transition(state, effects, CommandAnswer(texts.saved_off_text(event.command)))
    if not (chain.rest or calls) or not event.enabled:
        if rule.may_run(event.command, event.origin, args=event.args):
            return Transition(state, effects)
        return Transition(state, effects, CommandAnswer(texts.refused_text(typed, event.origin)))
    expanded = expand((head, *chain.rest), saved)
    if not isinstance(expanded, Expanded):
        return Transition(state, effects, CommandAnswer(expanded.why))
    builtins = () if rule.chained else (s for s in expanded.steps if command_name(s.command) in rule.builtins)
    unrunnable = next(iter(builtins), None)
    if unrunnable is not None:
        # The host runs a built-in only from the person's own prompt: such a chain cannot run as typed, so none of it.
        return Transition(state, effects, CommandAnswer(texts.unchainable_text(unrunnable)))
    if state.running is not None:
        # One anyone else starts replaces the running chain without a line, as in the seed.
        dropped = _dropped(state, state.running)
        state, effects = dropped.state, (*effects, *dropped.effects)
    first, *rest = expanded.steps
    if calls:
        # The typed name is a saved chain's, which the host has no run for: its steps run from timers, as any
        # step after the first does, and the typed command answers with a line.
        return _start_saved(state, head, expanded.steps, (event.origin, rule), effects)
    return _start(state, first, tuple(rest), (event.origin, rule), effects)


def _is_step(r: Running | None, args: str) -> bool:
    """Tells whether `/slash-chain args` is the running step's own run: a chain's step runs only when the rule
    let it run for the chain's origin (`_walk`)."""
    return r is not None and r.wait == "run" and command_name(r.step.command) == texts.CHAIN_COMMAND and r.args == args


def _is_own_run(r: Running, event: ChainTyped, rule: Rule) -> bool:
    """Tells whether a run the chain hook heard is the running step's own, which the person did not type."""
    own = r.wait == "run" and (event.command, event.args) == (r.step.command, r.args)
    return own and not rule.typed_by_person(event.origin)


def _start(
    state: ChainState, head: Step, rest: tuple[Step, ...], by: tuple[str, Rule], effects: tuple[Effect, ...]
) -> Transition:
    """Starts a chain typed from an origin, under the session's rule knowing the host's commands (`by`): its
    first command runs in the typed command's place, unless the rule keeps it from running; then the typed
    command is answered with the refusal and the chain goes on without it."""
    origin, rule = by
    mixed = _mixed((head, *rest), by)
    first = Running(state.started + 1, 1, len(rest) + 1, head, rest, origin=origin, mixed=mixed, rule=rule)
    state = attrs.evolve(state, running=first, started=first.chain)
    if rule.may_run(head.command, origin, args=head.args):
        line = Log(texts.step_text(1, first.total, head))
        return Transition(state, (*effects, line), RunHead(first.chain, 1, head.args))
    refused = Log(texts.skipped_text(1, first.total, head, texts.refused_why(head, origin)))
    moved = _go_on(state, first, "success", False, Tally(skipped=1), (*effects, refused))
    return attrs.evolve(moved, reply=CommandAnswer(texts.refused_text(head, origin)))


def _start_saved(
    state: ChainState, call: Step, steps: tuple[Step, ...], by: tuple[str, Rule], effects: tuple[Effect, ...]
) -> Transition:
    """Starts a chain whose typed command is a saved chain's name: before its first step (index 0 stands for the
    call itself), then on from a timer as after any step that ended well."""
    origin, rule = by
    before = Running(state.started + 1, 0, len(steps), call, steps, origin=origin, mixed=_mixed(steps, by), rule=rule)
    state = attrs.evolve(state, started=before.chain)
    moved = _go_on(state, before, "success", False, Tally(), effects)
    return attrs.evolve(moved, reply=CommandAnswer(texts.saved_started_text(call, len(steps))))


def _mixed(steps: tuple[Step, ...], by: tuple[str, Rule]) -> bool:
    """Tells whether the seed's lines do not apply: an operator besides `&&`, or a step the rule keeps from running."""
    origin, rule = by
    runs = all(rule.may_run(s.command, _origin(s, origin), args=s.args) for s in steps)
    return any(s.op != "&&" for s in steps) or not runs


def _origin(step: Step, origin: str) -> str:
    """Who a step's text came from: the chain's origin, or the saved chain whose file holds it."""
    return origin if step.by is None else origin_of(step.by)


def _after_run(state: ChainState, r: Running) -> Transition:
    """After a step's run resolved: wait for the turn it started or the pane it opened, else go on."""
    if r.saw_prompt:
        if r.turn_ended is None:
            return _moved(state, attrs.evolve(r, wait="turn"))
        return _end_turn(state, r, r.turn_ended, r.output)
    if r.pane is not None and not r.pane_closed:
        return _moved(state, attrs.evolve(r, wait="pane"))
    return _step_ended(state, r, "success", "")


def _end_turn(state: ChainState, r: Running, reason: str, answer: str) -> Transition:
    if r.reported is not None:
        return _step_ended(state, r, "failure", texts.failed_why(r.reported))
    if reason == "answer":
        return _step_ended(state, attrs.evolve(r, output=answer), "success", "")
    return _step_ended(state, r, "failure", texts.turn_why(reason))


def _step_ended(state: ChainState, r: Running, status: Status, why: str) -> Transition:
    """A step ended: a failure stops a chain of `&&` alone with the seed's line; any other chain goes on by its
    operators."""
    tally = r.tally.ended(status)
    if status == "failure" and not r.mixed:
        return _stop(state, r, why, tally)
    effects = (Log(texts.failed_text(r.step, why)),) if status == "failure" else ()
    return _go_on(state, r, status, status == "success", tally, effects)


def _go_on(
    state: ChainState, r: Running, status: Status, ran_ok: bool, tally: Tally, effects: tuple[Effect, ...]
) -> Transition:
    """Skips the steps the operators (or the refusal rule) pass over, then starts the next one from a timer, or
    ends the chain after its last."""
    passed, nxt = _walk(r, status, ran_ok)
    lines = tuple(Log(texts.skipped_text(i, r.total, s, why)) for i, s, why in passed)
    tally = tally.passed(len(passed))
    if nxt is None:
        clean = tally.failed == 0 and tally.skipped == 0
        end = texts.done_text(r.total) if clean else texts.ended_text(tally.succeeded, tally.failed, tally.skipped)
        ended = ChainEnded(r.chain, Outcome(status, False, tally))
        return Transition(attrs.evolve(state, running=None), (*effects, *lines, Log(end), ended))
    index, step = nxt
    args = texts.handed(step.args, r.output) if step.op == "|" else step.args
    left = r.left[index - r.index :]
    new = Running(
        r.chain, index, r.total, step, left, args=args, origin=r.origin, mixed=r.mixed, tally=tally, rule=r.rule
    )
    started = (Log(texts.step_text(index, r.total, step)), StartTimer(r.chain, index))
    return Transition(attrs.evolve(state, running=new), (*effects, *lines, *started))


def _walk(r: Running, status: Status, ran_ok: bool) -> tuple[list[tuple[int, Step, str]], tuple[int, Step] | None]:
    """Reads the steps after the running one as bash would after this status: the ones passed over (with why),
    and the next one to run, if any. `ran_ok` says the running step ran and ended well, which a `|` needs.

    A saved chain's call that its operator passes over is passed over whole, as bash skips a function's body: the
    steps of the call that its first step enters (`Step.calls`) go with the same why."""
    passed: list[tuple[int, Step, str]] = []
    around = r.step.calls
    skipping: tuple[int, str] | None = None
    for index, step in enumerate(r.left, start=r.index + 1):
        entered = [c for c in step.calls if c not in around]
        around = step.calls
        if skipping is not None and skipping[0] in step.calls:
            passed.append((index, step, skipping[1]))
        elif _runs(step.op, status, ran_ok):
            skipping = None
            origin = _origin(step, r.origin)
            if r.rule.may_run(step.command, origin, step.op == "|", step.args):
                return passed, (index, step)
            by_person = r.rule.typed_by_person(origin)
            why = texts.handed_refused_why(step) if by_person else texts.refused_why(step, origin)
            passed.append((index, step, why))
        else:
            why = texts.SKIP_WHY[step.op]
            skipping = (entered[0], why) if entered else None
            passed.append((index, step, why))
        ran_ok = False
    return passed, None


def _runs(op: Operator, status: Status, ran_ok: bool) -> bool:
    """Tells whether the command after `op` runs: `&&` after a success, `||` after a failure, `;` always, `|`
    after the command just before it ran and ended well. A skipped command keeps the last status."""
    match op:
        case "&&":
            return status == "success"
        case "||":
            return status == "failure"
        case "|":
            return ran_ok
    return True


def _stop(state: ChainState, r: Running, why: str, tally: Tally) -> Transition:
    ended = ChainEnded(r.chain, Outcome("failure", False, tally.passed(len(r.left))))
    return Transition(attrs.evolve(state, running=None), (Log(texts.stopped_text(r.step, why, r.left)), ended))


def _cancel(state: ChainState, r: Running) -> Transition:
    moved = _dropped(state, r)
    return attrs.evolve(moved, effects=(Log(texts.cancelled_text(r.left)), *moved.effects))


def _dropped(state: ChainState, r: Running) -> Transition:
    """Ends the running chain without a line of its own: the step that ran and the ones after it never end."""
    ended = ChainEnded(r.chain, Outcome("failure", True, r.tally.passed(len(r.left))))
    return Transition(attrs.evolve(state, running=None), (ended,))


def _prompt_handed(state: ChainState, r: Running, text: str) -> Transition:
    """A step that hands the model a prompt waits for its turn; the text tells the model how to report a
    failure, unless it is the last step."""
    seen = _moved(state, attrs.evolve(r, saw_prompt=True))
    if not r.left:
        return seen
    if r.mixed:
        note = texts.mixed_fail_note(r.index, r.total, r.left, _after_failure(r), state.fail_tool)
    else:
        note = texts.fail_note(r.index, r.total, r.left, state.fail_tool)
    return attrs.evolve(seen, reply=PromptText(f"{js_trim_end(text)}\n\n{note}"))


def _after_failure(r: Running) -> str:
    """Says what a failure of the running step leads to, for the model."""
    passed, nxt = _walk(r, "failure", False)
    return texts.after_failure(None if nxt is None else nxt[1], (step for _, step, _ in passed))


def _is_own(text: str, r: Running) -> bool:
    """Tells whether a prompt the person sent is the running step's own text or `/slash-chain`."""
    return text.startswith(f"/{r.step.command}") or text.startswith(f"/{texts.CHAIN_COMMAND}")


def _fail_called(state: ChainState, reason: object, agent: str | None) -> Transition:
    """The model's report that the step it was handed failed: only a step that handed the main loop a
    prompt can be reported, because only that step waits on the model's turn. A chain of `&&` alone stops at
    once, as the seed's; any other chain counts the step as failed when its turn ends."""
    r = state.running
    if r is None or not r.saw_prompt or agent is not None:
        return Transition(state, reply=Denied(texts.FAIL_NOTHING_WAITS))
    why = js_trim(reason) if isinstance(reason, str) else ""
    if why == "":
        return Transition(state, reply=Denied(texts.FAIL_NEEDS_REASON))
    if r.mixed:
        marked = _moved(state, attrs.evolve(r, reported=why))
        return attrs.evolve(marked, reply=ToolAnswered(texts.fail_marked_text(_after_failure(r))))
    stopped = _stop(state, r, texts.failed_why(why), r.tally.ended("failure"))
    return attrs.evolve(stopped, reply=ToolAnswered(texts.FAIL_STOPPED))


def _chain_command(state: ChainState, typed: ChainCommandTyped) -> Transition:
    """`/slash-chain`: nothing gives the status; stop, on and off act (on and off only for the person, or as the
    running step of a chain they typed, which the rule let run); list names the saved chains; anything else gets
    the usage."""
    r = state.running
    args, enabled, origin = typed.args, typed.enabled, typed.origin
    word = js_trim(args)
    if origin is not None and not state.rule.may_run(texts.CHAIN_COMMAND, origin, args=args) and not _is_step(r, args):
        return Transition(state, reply=CommandAnswer(texts.refused_text(Step(texts.CHAIN_COMMAND, args), origin)))
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
    if word == texts.LIST_WORD:
        return Transition(state, reply=CommandAnswer(typed.saved.listing(typed.commands, state.rule.builtins)))
    if word != "":
        return Transition(state, reply=CommandAnswer(texts.USAGE))
    running = None if r is None else (r.index, r.total, r.step, r.wait)
    status = texts.status_text(enabled, running)
    if r is not None and r.mixed and r.left:
        status += texts.next_text(r.left[0])
    return Transition(state, reply=CommandAnswer(status))
