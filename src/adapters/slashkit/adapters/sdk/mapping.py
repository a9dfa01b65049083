"""How the SDK's values become the core's events, and the core's replies the SDK's answers: where a query came
from, how its end reads, the step note and the answers of slashkit's tools. Nothing here imports the SDK;
`slashkit.adapters.sdk.session` hands it plain values."""

from typing import Final

from attrs import frozen

from slashkit.adapters.sdk.events import StepEnd
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core import texts
from slashkit.core.js_text import js_trim_end
from slashkit.core.policy import Denied

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


def step_ended(token: int, end: QueryEnd, text: str) -> tuple[s.Event, ...]:
    """The core events a chain step's query ending becomes: its run resolved or threw, then (for a prompt) its
    turn ended. `text` is the query's; a prompt whose hook did not fire is handed to the core first (the model
    took a turn all the same), which a step that no longer waits on its run ignores."""
    how, output = step_end(end)
    if how in ("ran", "failed"):
        return (run_ended(token, how, output),)
    handed = () if end.prompted else (m.PromptHanded(text),)
    return (*handed, s.RunEnded(token), m.TurnEnded(how, None, output))


def run_ended(token: int, how: StepEnd, output: str) -> s.RunEnded:
    """The end of a run as the core reads it: it threw when it failed (`output` says why), else it resolved with
    its text."""
    return s.RunEnded(token, output) if how == "failed" else s.RunEnded(token, None, output)


def step_note(prompt: str, reply: s.Reply) -> str | None:
    """The note the model reads after a chained step's prompt: what the core appended to it, if anything.

    >>> step_note("/b x", m.PromptText("/b x\\n\\n[slash-chain] note"))
    '[slash-chain] note'
    >>> step_note("/b x", None) is None
    True
    """
    if not isinstance(reply, m.PromptText):
        return None
    return reply.text.removeprefix(js_trim_end(prompt)).lstrip("\n") or None


def tool_answer(reply: s.Reply) -> tuple[str, bool]:
    """The answer of a tool of slashkit's (the fail tool, the self-command tool) for the core's reply: its text,
    and whether it is a refusal."""
    match reply:
        case m.ToolAnswered(text):
            return text, False
        case Denied(text):
            return text, True
    return texts.FAIL_NOTHING_WAITS, True
