"""How the SDK's values become the core's events, and the core's replies the SDK's answers: where a query came
from, how its end reads, the step note and the answers of slashkit's tools. Nothing here imports the SDK;
`slashkit.adapters.sdk.session` hands it plain values."""

from typing import Final

from attrs import frozen

from slashkit.adapters.harness.events import StepEnd
from slashkit.adapters.harness.loop import Ended, told
from slashkit.core import session as s

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


def step_ended(token: int, end: QueryEnd, text: str) -> tuple[s.Event, ...]:
    """The core events a chain step's query ending becomes (`slashkit.adapters.harness.loop.told`)."""
    how, output = step_end(end)
    return told(token, Ended(how, output, end.prompted), text)
