"""The slash-chain state machine: a pure transition from (state, event) to (state, effects, reply). What runs next
is the interpreter's (`slashkit.core.interpreter`); this machine holds what a step waits for on a host.

The host reports what happened (events, past tense); the machine answers with what to do (effects,
imperative) and, for events that are a hook the host holds open, the hook's reply. Nothing here waits,
reads a clock or touches the host: `slashkit.core.session` names each step's timer and run by a token the host
sees, and the host carries the effects out.
"""

from typing import Final, Literal

import attrs
from attrs import Factory, field, frozen
from returns.result import Failure, Success

from slashkit.core import texts
from slashkit.core.chain import Step, holds_chain, written_steps
from slashkit.core.grammar import looks_like_program, parse
from slashkit.core.interpreter import (
    MAX_STEPS,
    Asked,
    Began,
    Bounded,
    Capped,
    Finished,
    Line,
    Napping,
    Passed,
    Run,
    Where,
    advance,
    ahead,
    history,
    passed_steps,
)
from slashkit.core.js_text import js_trim, js_trim_end
from slashkit.core.policy import DEFAULT_RULE, HARNESS_STEPS, PERSON, Denied, Rule, chain_words, command_name
from slashkit.core.program import NAP, Command, Node, appended, commands, is_and_list, without
from slashkit.core.saved_chain import NO_SAVED, Library, SavedChain, inlined, origin_of
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
    """The running program's step: the command that runs (or the `sleep` that waits), and what it waits for.

    A step that handed the model a prompt (`saw_prompt`) waits for its turn; one that opened a focused,
    placed pane waits for that pane to close. `turn_ended` and `pane_closed` hold an end that came before
    the step's run resolved. `chain` and `index` name this step (`index` counts the commands the program ran or
    passed over, this one included), so a report about an ended one is ignored; `number` is its place in the
    program's text, `total` the program's commands, and `steps` those commands as written, which the lines name.

    `run` is the interpreter's state (`slashkit.core.interpreter`) before this step ended; `where` the loops and
    saved chains around it; `hands_on` says a `|` hands its output on; `napping` is what is left of a `sleep`, in
    seconds. `args` are what the step runs with: its own, plus the output handed to it after `|`. `origin` says
    who typed the chain, and `rule` is the refusal rule that reads it, knowing the host's commands as listed then;
    `mixed` says the seed's lines do not apply (more than `&&` between slash commands, or a refused step);
    `output` is the step's run text or its turn's answer, handed on by a `|` after it; `reported` is the model's
    report that the step failed, applied when its turn ends (mixed chains). `trusted` names the saved chains whose
    shell steps may run (`Library.trusted`: the person's own, or approved as they are).
    """

    chain: int
    index: int
    total: int
    step: Step
    run: Run
    steps: tuple[Step, ...] = ()
    number: int = 0
    where: Where = field(factory=Where)
    hands_on: bool = False
    napping: int | None = None
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
    trusted: frozenset[str] = frozenset()

    def is_step(self, chain: int, index: int) -> bool:
        """Tells whether a report names this step."""
        return self.chain == chain and self.index == index

    @property
    def left(self) -> tuple[Step, ...]:
        """The program's commands written after this step, which the seed's lines name as not run."""
        return self.steps[self.number :]


@frozen
class Cut:
    """A running program as a journal keeps it (`cut_of`): its interpreter state before the running step ended, that
    step (its number of the program's `total`, and the program's commands as written), who typed it, whether the
    seed's lines apply, its tally, and the saved chains whose shell steps it may run. `key` is the journal's name for
    it, which the host gives when it hands a cut-off run back (`Continued`)."""

    run: Run
    step: Step
    number: int
    total: int
    steps: tuple[Step, ...]
    origin: str
    mixed: bool
    tally: Tally
    trusted: frozenset[str] = frozenset()
    key: str = ""


def cut_of(r: Running) -> Cut:
    """The running program as a journal keeps it: resumed, it runs its running step again, then the rest."""
    return Cut(r.run, r.step, r.number, r.total, r.steps, r.origin, r.mixed, r.tally, r.trusted)


@frozen
class ChainState:
    """What the machine remembers: the running chain, if any, and how many chains have started; and two facts of
    the session: the name the host gives the model for the fail tool, which the fail note names (Claude Code's
    unless the host says), and the rule of who may run what there (`slashkit.core.policy`). `cut` is a program a
    previous run of this session left cut off (a crash, a closed terminal), which only the person resumes."""

    running: Running | None = None
    started: int = 0
    fail_tool: str = texts.FAIL_TOOL_ID
    rule: Rule = DEFAULT_RULE
    cut: Cut | None = None


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
class LineTyped:
    """A prompt that starts with a word opening a compound command (`while`, `until`, `for`, `{`:
    `slashkit.core.grammar.starts_program`) was submitted, from this origin; the rest as `ChainTyped`'s. A line
    that parses whole as a program runs; any other is the person's prompt, and reaches the model untouched."""

    text: str
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
    """A step's run threw, with this message; a shell step's also with what it printed (`output`)."""

    chain: int
    index: int
    message: str
    output: str = ""


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
class Continued:
    """The host continued a session (Claude Code's `--continue`, `--resume`), and its journal holds the program this
    session's previous run left cut off, if any (`cut`), no older than the person allows."""

    cut: Cut | None = None


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
    | LineTyped
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
    | Continued
)

# Effects: what the host is to do


@frozen
class Log:
    """Write this line to the transcript."""

    text: str


@frozen
class StartTimer:
    """Start a timer for this step: a command does not run from inside another command's hook, and a `sleep`
    waits on one (`ms`)."""

    chain: int
    index: int
    ms: int = 0


@frozen
class RunStep:
    """Run `/command args` now (its timer fired), then report StepRan or StepFailed."""

    chain: int
    index: int
    command: str
    args: str


@frozen
class RunShell:
    """Run this shell step's text with `/bin/sh -c` now (its timer fired), then report StepRan with its output, or
    StepFailed with why and its output."""

    chain: int
    index: int
    text: str


@frozen
class Approve:
    """Record, in the person's own state, that they approved the shell steps of the saved chain in the file at
    `source` whose bytes hash to `digest` (SHA-256)."""

    source: str
    digest: str


@frozen
class SaveEnabled:
    """Store the on/off setting, which every window of the host shares."""

    enabled: bool


@frozen
class ChainEnded:
    """The chain has ended, this way (no line of its own: the lines are logged beside it)."""

    chain: int
    outcome: Outcome


Effect = Log | StartTimer | RunStep | RunShell | Approve | SaveEnabled | ChainEnded

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

#: How often a `sleep` wakes to show the time it has left (and a prompt or `stop` ends it at once in any case).
NAP_TICK: Final = 60


def on_event(state: ChainState, event: Event) -> Transition:
    """Moves the machine by one event."""
    r = state.running
    match event:
        case ChainTyped():
            return _chain_typed(state, event)
        case LineTyped():
            return _line_typed(state, event)
        case StepRan(chain, index, output) if r is not None and r.is_step(chain, index) and r.step.is_shell:
            return _shell_ended(state, r, "", output)
        case StepFailed(chain, index, message, output) if r is not None and r.is_step(chain, index) and r.step.is_shell:
            return _shell_ended(state, r, message, output)
        case StepRan(chain, index, output) if r is not None and r.is_step(chain, index):
            # A prompt step hands on its turn's answer, not its run's text.
            return _after_run(state, r if r.saw_prompt else attrs.evolve(r, output=output))
        case StepFailed(chain, index, message) if r is not None and r.is_step(chain, index):
            return _step_ended(state, r, "failure", texts.thrown_why(message))
        case StepDue(chain, index) if r is not None and r.is_step(chain, index) and r.napping is not None:
            return _woke(state, r)
        case StepDue(chain, index) if r is not None and r.is_step(chain, index) and r.step.is_shell:
            return Transition(state, (RunShell(chain, index, r.args),))
        case StepDue(chain, index) if r is not None and r.is_step(chain, index):
            return Transition(state, (RunStep(chain, index, r.step.command, r.args),))
        case PromptHanded(text) if r is not None and r.wait == "run" and r.napping is None:
            return _prompt_handed(state, r, text)
        case PaneOpened(pane, focus, placed) if (
            r is not None and r.wait == "run" and r.napping is None and focus and placed
        ):
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
        case Continued(cut) if cut is not None and r is None:
            return Transition(attrs.evolve(state, cut=cut), (Log(texts.cut_off_text(cut.number, cut.total, cut.step)),))
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
    if r.napping is not None:
        return frozenset(wanted)
    if r.wait == "run":
        wanted |= {"PromptHanded", "PaneOpened"}
    if r.pane is not None:
        wanted.add("PaneClosed")
    if r.saw_prompt:
        wanted.add("TurnEnded")
    if r.hands_on or r.step.is_shell:
        # The text the running step returns is handed on, or shown (a shell step's): only then does the host send it.
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
    saved = event.saved.leaving(event.commands, rule.builtins)
    calls = saved.named(event.command) is not None
    if calls and not event.enabled:
        return Transition(state, effects, CommandAnswer(texts.saved_off_text(event.command)))
    parsed = parse(f"/{event.command} {event.args}") if event.enabled else None
    if isinstance(parsed, Failure) and holds_chain(event.args):
        # Text that reads as a chain to the reference, but as no program: nothing of it runs.
        return Transition(
            state, effects, CommandAnswer(texts.unparsed_text(parsed.failure().why, parsed.failure().where))
        )
    program = parsed.unwrap() if isinstance(parsed, Success) else None
    if program is None or (isinstance(program, Command) and not calls):
        if rule.may_run(event.command, event.origin, args=event.args):
            return Transition(state, effects)
        return Transition(state, effects, CommandAnswer(texts.refused_text(typed, event.origin)))
    return _begin(state, (program, saved), (event.origin, rule), effects, "saved" if calls else "head")


def _line_typed(state: ChainState, event: LineTyped) -> Transition:
    """A typed line that opens a compound command runs as a program when it parses whole as one (each of its
    commands a slash command, a saved chain or a word of the language); one that only looks like one
    (`looks_like_program`) and does not parse is answered with where, and nothing of it runs; any other line is
    a prompt (None: the host hands it to the model as typed)."""
    if not event.enabled:
        return Transition(state)
    parsed = parse(event.text)
    if not isinstance(parsed, Success):
        if looks_like_program(event.text):
            return Transition(
                state, reply=CommandAnswer(texts.unparsed_text(parsed.failure().why, parsed.failure().where))
            )
        return Transition(state)
    rule = state.rule.knowing(event.builtins, event.commands)
    effects: tuple[Effect, ...] = ()
    r = state.running
    if r is not None and event.origin in PERSON:
        cancelled = _cancel(state, r)
        state, effects = cancelled.state, cancelled.effects
    saved = event.saved.leaving(event.commands, rule.builtins)
    return _begin(state, (parsed.unwrap(), saved), (event.origin, rule), effects, "line")


def _begin(
    state: ChainState,
    written: tuple[Node, Library],
    by: tuple[str, Rule],
    effects: tuple[Effect, ...],
    start: Literal["head", "saved", "line"],
) -> Transition:
    """Starts a program typed from an origin (`by`: and the session's rule, knowing the host's commands), its saved
    chains filled in. Its first command runs in the typed command's place (`head`), unless the rule keeps it from
    running: then the typed command is answered with the refusal and the program goes on without it. A saved
    chain's name (`saved`) and a typed program (`line`) have no run of their own: every step runs from a timer, as
    a step after the first does, and the typed text is answered with a line."""
    program, saved = written
    origin, rule = by
    filled = inlined(program, saved)
    if isinstance(filled, str):
        return Transition(state, effects, CommandAnswer(filled))
    steps = tuple(written_steps(filled))
    unapproved = _unapproved(steps, saved)
    if unapproved is not None:
        # A project's file (which may come with a clone) runs a shell only as the person approved it: none of it.
        return Transition(state, effects, CommandAnswer(texts.unapproved_text(unapproved.name, unapproved.source)))
    trusted = frozenset(c.name for c in saved.chains if saved.trusted(c))
    unrunnable = _unchainable(rule, steps)
    if unrunnable is not None:
        # The host runs a built-in only from the person's own prompt: such a chain cannot run as typed, so none of it.
        return Transition(state, effects, CommandAnswer(texts.unchainable_text(unrunnable)))
    if state.running is not None:
        # One anyone else starts replaces the running chain without a line, as in the seed.
        dropped = _dropped(state, state.running)
        state, effects = dropped.state, (*effects, *dropped.effects)
    runs = all(_may_run(rule, s, origin, trusted) for s in steps)
    mixed = not is_and_list(filled) or not runs
    call = steps[0] if start == "head" else Step("", "")
    before = Running(state.started + 1, 0, len(steps), call, Run(filled, loop_cap=rule.loop_cap), steps, 0)
    before = attrs.evolve(before, origin=origin, mixed=mixed, rule=rule, trusted=trusted)
    state = attrs.evolve(state, started=before.chain)
    moved = _go_on(state, before, before.run, Tally(), effects, head=start == "head")
    if start == "head":
        if isinstance(moved.reply, RunHead):
            return moved
        return attrs.evolve(moved, reply=CommandAnswer(texts.refused_text(call, origin)))
    if start == "saved":
        typed = next(commands(program))
        return attrs.evolve(
            moved, reply=CommandAnswer(texts.saved_started_text(Step(typed.command, typed.args), len(steps)))
        )
    return attrs.evolve(moved, reply=CommandAnswer(texts.program_started_text(len(steps))))


def _unapproved(steps: tuple[Step, ...], saved: Library) -> SavedChain | None:
    """The first saved chain holding one of the steps' shell steps that the person has not approved as it is."""
    return next((c for s in steps if s.is_shell and (c := _file_of(s, saved)) and not saved.trusted(c)), None)


def _unchainable(rule: Rule, steps: tuple[Step, ...]) -> Step | None:
    """The first built-in among the steps when the host runs a built-in only from the person's own prompt."""
    return None if rule.chained else next((s for s in steps if command_name(s.command) in rule.builtins), None)


def _file_of(step: Step, saved: Library) -> SavedChain | None:
    """The saved chain whose file holds a step, if a file does."""
    return None if step.by is None else saved.named(step.by)


def _may_run(
    rule: Rule, step: Step, origin: str, trusted: frozenset[str], handed: bool = False, calls: tuple[str, ...] = ()
) -> bool:
    """Tells whether a step of a program typed from `origin` may run: a slash command by the refusal rule; a shell
    step only on the person's word: their typing, with every saved chain on the way to it (`calls`, the step's own
    file last) one they trust, since a caller's arguments fill the step's `$1`; never after a `|`."""
    if step.is_shell:
        files = (*calls, *((step.by,) if step.by is not None else ()))
        return rule.typed_by_person(origin) and not handed and all(name in trusted for name in files)
    return rule.may_run(step.command, _origin(step, origin), handed, step.args)


def _untrusted_caller(r: Running, calls: tuple[str, ...]) -> str | None:
    """The first saved chain on the way to a step that the person does not trust, if any."""
    return next((name for name in calls if name not in r.trusted), None)


def _is_step(r: Running | None, args: str) -> bool:
    """Tells whether `/slash-chain args` is the running step's own run: a chain's step runs only when the rule
    let it run for the chain's origin (`_go_on`)."""
    return r is not None and r.wait == "run" and command_name(r.step.command) == texts.CHAIN_COMMAND and r.args == args


def _is_own_run(r: Running, event: ChainTyped, rule: Rule) -> bool:
    """Tells whether a run the chain hook heard is the running step's own, which the person did not type."""
    own = r.wait == "run" and (event.command, event.args) == (r.step.command, r.args)
    return own and not rule.typed_by_person(event.origin)


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


def _woke(state: ChainState, r: Running) -> Transition:
    """A `sleep`'s timer fired: it waits on for what is left, or goes on as after a success."""
    assert r.napping is not None
    left = r.napping - min(r.napping, NAP_TICK)
    if left > 0:
        return Transition(
            attrs.evolve(state, running=attrs.evolve(r, napping=left)), (_nap_timer(r.chain, r.index, left),)
        )
    return _go_on(state, r, r.run.ended("success"), r.tally, ())


def _nap_timer(chain: int, index: int, left: int) -> StartTimer:
    return StartTimer(chain, index, min(left, NAP_TICK) * 1000)


def _shell_ended(state: ChainState, r: Running, why: str, output: str) -> Transition:
    """A shell step ended (`why`: how it failed, or "" when it exited 0): its output is shown, then the program goes
    on as after any step, with that output for a `|` after it."""
    shown = texts.shell_output_text(output)
    lines: tuple[Effect, ...] = (Log(shown),) if js_trim(shown) else ()
    ended = _step_ended(state, attrs.evolve(r, output=output), "failure" if why else "success", why)
    return attrs.evolve(ended, effects=(*lines, *ended.effects))


def _step_ended(state: ChainState, r: Running, status: Status, why: str) -> Transition:
    """A step ended: a failure stops a chain of `&&` alone with the seed's line; any other chain goes on by its
    operators."""
    tally = r.tally.ended(status)
    if status == "failure" and not r.mixed:
        return _stop(state, r, why, tally)
    effects = (Log(texts.failed_text(r.step, why)),) if status == "failure" else ()
    run = r.run.ended(status, r.output if r.hands_on else "")
    return _go_on(state, r, run, tally, effects)


def _go_on(
    state: ChainState, r: Running, run: Run, tally: Tally, effects: tuple[Effect, ...], head: bool = False
) -> Transition:
    """Runs the program on from `run` (`slashkit.core.interpreter`): writes what its operators passed over and the
    loops it entered, skips what the refusal rule keeps from running, then starts the next step from a timer (the
    typed command's own run for the `head`), or ends the chain."""
    lines: list[Effect] = []
    while True:
        advanced = advance(run)
        for line in advanced.lines:
            lines.append(Log(_line_text(line, r.total)))
            tally = tally.passed(1) if isinstance(line, Passed) else tally
        match advanced.next:
            case Finished(status):
                clean = tally.failed == 0 and tally.skipped == 0 and status == "success"
                total = tally.succeeded
                end = texts.done_text(total) if clean else texts.ended_text(total, tally.failed, tally.skipped)
                ended = ChainEnded(r.chain, Outcome(status, False, tally))
                return Transition(attrs.evolve(state, running=None), (*effects, *lines, Log(end), ended))
            case Napping(seconds):
                nap = Step(NAP, texts.duration(seconds))
                new = Running(r.chain, advanced.seen, r.total, nap, run, r.steps, r.number, napping=seconds)
                new = attrs.evolve(new, origin=r.origin, mixed=r.mixed, tally=tally, rule=r.rule, trusted=r.trusted)
                timer = _nap_timer(r.chain, new.index, seconds)
                return Transition(attrs.evolve(state, running=new), (*effects, *lines, timer))
            case Asked(step, number, handed, hands, where):
                origin = _origin(step, r.origin)
                if not _may_run(r.rule, step, r.origin, r.trusted, handed, where.calls):
                    by_person = r.rule.typed_by_person(origin)
                    if step.is_shell:
                        # Named by who started the program when that was not the person, else by the file to blame.
                        caller = _untrusted_caller(r, where.calls)
                        blamed = origin if caller is None else origin_of(caller)
                        why = texts.shell_refused_why(blamed if r.rule.typed_by_person(r.origin) else r.origin)
                    elif by_person:
                        why = texts.handed_refused_why(step)
                    else:
                        why = texts.refused_why(step, origin)
                    lines.append(Log(texts.skipped_text(number, r.total, step, why)))
                    tally = tally.passed(1)
                    run = run.ended(None)
                    continue
                args = texts.handed(step.args, run.output) if handed else step.args
                new = Running(r.chain, advanced.seen, r.total, step, run, r.steps, number, where, hands, args=args)
                new = attrs.evolve(new, origin=r.origin, mixed=r.mixed, tally=tally, rule=r.rule, trusted=r.trusted)
                moved = attrs.evolve(state, running=new)
                starts = Log(texts.step_text(number, r.total, step))
                if head and new.index == 1:
                    return Transition(moved, (*effects, *lines, starts), RunHead(r.chain, 1, args))
                return Transition(moved, (*effects, *lines, starts, StartTimer(r.chain, new.index)))


def _line_text(line: Line, total: int) -> str:
    match line:
        case Passed(step, number, why):
            return texts.skipped_text(number, total, step, why)
        case Began(mark):
            return texts.iteration_text(mark.kind, mark.iteration, mark.cap, mark.word)
        case Capped(mark):
            return texts.capped_text(mark.kind, mark.cap)
        case Bounded(steps):
            return texts.bounded_text(steps)


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
    if not r.left and not r.where.loops:
        return seen
    if r.mixed:
        note = texts.mixed_fail_note(r.number, r.total, _after_success(r), _after_failure(r), state.fail_tool)
    else:
        note = texts.fail_note(r.number, r.total, r.left, state.fail_tool)
    return attrs.evolve(seen, reply=PromptText(f"{js_trim_end(text)}\n\n{note}"))


def _after_success(r: Running) -> tuple[Step, ...]:
    """What the model is told follows the running step: the commands written after it, or inside a loop the one
    that runs next when the step ends well (a loop's last command is followed by its first again)."""
    if not r.where.loops:
        return r.left
    advanced = ahead(r.run, "success")
    return (advanced.next.step,) if isinstance(advanced.next, Asked) else ()


def _after_failure(r: Running) -> str:
    """Says what a failure of the running step leads to, for the model."""
    advanced = ahead(r.run, "failure")
    runs_next = advanced.next.step if isinstance(advanced.next, Asked) else None
    return texts.after_failure(runs_next, passed_steps(advanced.lines))


def _is_own(text: str, r: Running) -> bool:
    """Tells whether a prompt the person sent is the running step's own text or `/slash-chain`."""
    own = r.napping is None and text.startswith(f"/{r.step.command}")
    return own or text.startswith(f"/{texts.CHAIN_COMMAND}")


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


def progress(r: Running) -> str:
    """What a host's status area shows while the program runs: the step and what comes next, and the loop it is in
    (`until 3/10 · /fix · next /check`), or the time a `sleep` has left."""
    if r.napping is not None:
        advanced = ahead(r.run, "success")
        then = advanced.next.step if isinstance(advanced.next, Asked) else None
        return texts.napping_text(r.napping, then)
    if not r.where.loops:
        after = r.left[0] if r.left else None
        return texts.progress_text(r.number, r.total, r.step, after)
    mark = r.where.loops[-1]
    advanced = ahead(r.run, "success")
    after = advanced.next.step if isinstance(advanced.next, Asked) else None
    return texts.loop_progress_text(mark.kind, mark.iteration, mark.cap, r.step, after)


def _resume(state: ChainState) -> Transition:
    """`/slash-chain resume`, the person's alone: the program cut off runs its interrupted step again, then the rest,
    with its loop counters and saved-chain calls as they were (its interpreter state), under the session's rule."""
    cut = state.cut
    if cut is None:
        return Transition(state, reply=CommandAnswer(texts.NOTHING_CUT_OFF))
    effects: tuple[Effect, ...] = ()
    if state.running is not None:
        cancelled = _cancel(state, state.running)
        state, effects = cancelled.state, cancelled.effects
    before = Running(state.started + 1, 0, cut.total, cut.step, cut.run, cut.steps, cut.number)
    before = attrs.evolve(before, origin=cut.origin, mixed=cut.mixed, rule=state.rule, trusted=cut.trusted)
    state = attrs.evolve(state, started=before.chain, cut=None)
    line = Log(texts.resumed_text(cut.number, cut.total, cut.step))
    moved = _go_on(state, before, cut.run, cut.tally, (*effects, line))
    return attrs.evolve(moved, reply=CommandAnswer(texts.resumed_text(cut.number, cut.total, cut.step)))


def _forget(state: ChainState) -> Transition:
    """`/slash-chain forget`, the person's alone: the program cut off is dropped, never to be offered again."""
    cut = state.cut
    if cut is None:
        return Transition(state, reply=CommandAnswer(texts.NOTHING_CUT_OFF))
    answer = CommandAnswer(texts.forgot_text(cut.number, cut.total, cut.step))
    return Transition(attrs.evolve(state, cut=None), reply=answer)


def _allow(state: ChainState, names: tuple[str, ...], saved: Library) -> Transition:
    """`/slash-chain allow NAME`, the person's alone (the rule refused anyone else's): records the saved chain's file
    and content as approved, so its shell steps run until the file changes."""
    if len(names) != 1:
        return Transition(state, reply=CommandAnswer(texts.ALLOW_USAGE))
    chain = saved.named(names[0])
    if chain is None:
        return Transition(state, reply=CommandAnswer(texts.allow_unknown_text(names[0])))
    if chain.own:
        return Transition(state, reply=CommandAnswer(texts.allow_own_text(chain.name, chain.source)))
    answer = CommandAnswer(texts.allowed_text(chain.name, chain.source, chain.digest))
    return Transition(state, (Approve(chain.source, chain.digest),), answer)


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
    first, *rest = chain_words(args) or ("",)
    if first == texts.ALLOW_WORD:
        return _allow(state, tuple(rest), typed.saved)
    if word == texts.RESUME_WORD:
        return _resume(state)
    if word == texts.FORGET_WORD:
        return _forget(state)
    if word == texts.STEPS_WORD:
        return Transition(state, reply=CommandAnswer(texts.NO_CHAIN_RUNS if r is None else _steps(r)))
    if first == texts.ADD_WORD:
        return _add(state, js_trim(word[len(texts.ADD_WORD) :]), typed)
    if first == texts.DROP_WORD:
        return _drop(state, tuple(rest))
    if word != "":
        return Transition(state, reply=CommandAnswer(texts.USAGE))
    if r is not None and (r.napping is not None or r.where.loops):
        status = texts.status_line(enabled, progress(r))
        return Transition(state, reply=CommandAnswer(f"{status}\n{_steps(r)}"))
    running = None if r is None else (r.number, r.total, r.step, r.wait)
    status = texts.status_text(enabled, running)
    if r is not None and r.mixed:
        # A chain of `&&` alone answers the reference's one line; any other lists its steps under it.
        status += (texts.next_text(r.left[0]) if r.left else "") + f"\n{_steps(r)}"
    return Transition(state, reply=CommandAnswer(status))


def _steps(r: Running) -> str:
    """The running program's steps as written, loops folded: each how it went the last time it was reached (a
    step before the running one), running, or pending (after it; in a loop, to run again)."""
    went = dict(history(r.run))
    listed = []
    for number, step in enumerate(r.steps, start=1):
        if number == r.number and r.napping is None:
            state = "running"
        elif number > r.number:
            state = "pending"
        else:
            state = went.get(number, "unreached")
        listed.append((number, step, state))
    return texts.steps_text(listed)


def _add(state: ChainState, text: str, typed: ChainCommandTyped) -> Transition:
    """`/slash-chain add /x args`, the person's alone (the rule refused anyone else's): the running program runs
    `/x args` after the rest, whatever their status, as `; /x args` would. One slash command, a saved chain's name
    or a shell step; the program then lists its steps (it is no chain of `&&` alone any more)."""
    r = state.running
    if r is None:
        return Transition(state, reply=CommandAnswer(texts.NOTHING_TO_EDIT))
    if r.total >= MAX_STEPS:
        # No program runs more steps than that, so none holds more: the person's queue stays bounded too.
        return Transition(state, reply=CommandAnswer(texts.full_text(MAX_STEPS)))
    parsed = parse(text)
    if not isinstance(parsed, Success) or not isinstance(parsed.unwrap(), Command):
        return Transition(state, reply=CommandAnswer(texts.ADD_USAGE))
    saved = typed.saved.leaving(typed.commands, state.rule.builtins)
    filled = inlined(parsed.unwrap(), saved)
    if isinstance(filled, str):
        return Transition(state, reply=CommandAnswer(filled))
    added = tuple(written_steps(filled))
    unapproved = _unapproved(added, saved)
    if unapproved is not None:
        return Transition(state, reply=CommandAnswer(texts.unapproved_text(unapproved.name, unapproved.source)))
    unrunnable = _unchainable(r.rule, added)
    if unrunnable is not None:
        return Transition(state, reply=CommandAnswer(texts.unchainable_text(unrunnable)))
    program = appended(r.run.program, filled)
    steps = tuple(written_steps(program))
    trusted = r.trusted | {c.name for c in saved.chains if saved.trusted(c)}
    edited = attrs.evolve(r, run=attrs.evolve(r.run, program=program), steps=steps, total=len(steps), mixed=True)
    edited = attrs.evolve(edited, trusted=frozenset(trusted))
    answer = CommandAnswer(texts.added_text(r.total + 1, added[0]))
    return Transition(attrs.evolve(state, running=edited), reply=answer)


def _drop(state: ChainState, words: tuple[str, ...]) -> Transition:
    """`/slash-chain drop N`, the person's alone: the running program without its step N, which it has not reached
    (after the running step, and not run in an earlier iteration of a loop)."""
    r = state.running
    if r is None:
        return Transition(state, reply=CommandAnswer(texts.NOTHING_TO_EDIT))
    if len(words) != 1 or not (words[0].isascii() and words[0].isdigit()) or not 0 < int(words[0]) <= r.total:
        return Transition(state, reply=CommandAnswer(texts.DROP_USAGE))
    number = int(words[0])
    step = r.steps[number - 1]
    if number <= r.number or number in dict(history(r.run)):
        return Transition(state, reply=CommandAnswer(texts.not_pending_text(number, step)))
    program = without(r.run.program, number)
    if program is None:
        return Transition(state, reply=CommandAnswer(texts.undroppable_text(number, step)))
    steps = tuple(written_steps(program))
    edited = attrs.evolve(r, run=attrs.evolve(r.run, program=program), steps=steps, total=len(steps))
    return Transition(attrs.evolve(state, running=edited), reply=CommandAnswer(texts.dropped_text(number, step)))
