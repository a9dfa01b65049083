"""What a harness sees while a harness host (the Agent SDK's, Codex's) runs what it typed: steps starting, their
output as it comes, how each ended, and how a chain ended, as typed values. Nothing here talks to a host."""

from typing import Literal

from attrs import frozen

from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.chain_machine import Outcome

# Events, in the order they happen


@frozen
class Line:
    """A transcript line the core wrote, as the Claude Code plugin logs it: `2/3: /test`, `skipped 3/3: ...`,
    `all 3 command(s) ran`."""

    text: str


@frozen
class StepStarted:
    """Step `index` of `total` of a chain starts: its query (its turn) goes to the session now."""

    index: int
    total: int
    step: Step

    @property
    def line(self) -> str:
        """The transcript line: `2/3: /test`."""
        return texts.step_text(self.index, self.total, self.step)


@frozen
class CommandStarted:
    """A command outside a chain starts: one the harness typed alone, or a built-in the model queued."""

    step: Step
    queued: bool = False


@frozen
class Output:
    """Text the running query produced, as it came: a command's output, or the model's text. `index` is the
    chain step's, 0 outside a chain."""

    index: int
    text: str


StepEnd = Literal["ran", "failed", "refused", "answer", "error", "aborted", "refusal", "max_turns", "unknown"]


@frozen
class StepEnded:
    """The query of step `index` (0 outside a chain) ended. `how` is `ran` (a local command), `failed` (it
    did not run; `output` says why), `refused` (the typed line started nothing: it does not read, names a file to
    approve first, or a command the person may not run here; `output` says why), or how the model's turn ended
    (`answer` when it answered). `output` is the command's text or the model's final answer: what a `|` hands on."""

    index: int
    step: Step
    how: StepEnd
    output: str

    @property
    def ok(self) -> bool:
        """Tells whether the step ended well (it ran, or its turn ended with an answer)."""
        return self.how in ("ran", "answer")

    @property
    def label(self) -> str:
        """What ran, as the person reads it: `/name args` for a command; a prompt typed alone (its step has no
        command, only the text) as its text, which is no slash command.

        >>> StepEnded(0, Step("", "please do it"), "error", "").label, StepEnded(1, Step("a", "x"), "ran", "").label
        ('please do it', '/a x')
        """
        return self.step.name if self.step.command else self.step.args


@frozen
class ChainEnded:
    """The chain ended this way (its last line came just before, as a `Line`)."""

    outcome: Outcome

    @property
    def ok(self) -> bool:
        """Tells whether the chain ran to its end with a last status of success (exit status 0)."""
        return self.outcome.ended_well


@frozen
class Notice:
    """A passing notice for the person (a queued built-in that did not run)."""

    text: str


Event = Line | StepStarted | CommandStarted | Output | StepEnded | ChainEnded | Notice
