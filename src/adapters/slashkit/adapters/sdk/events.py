"""What a harness sees while the SDK host runs what it typed: the harness events every harness host shares
(`slashkit.adapters.harness.events`), and each message of the SDK's stream. Nothing here talks to the SDK."""

from typing import TYPE_CHECKING

from attrs import frozen

from slashkit.adapters.harness.events import (
    ChainEnded,
    CommandStarted,
    Line,
    Notice,
    Output,
    StepEnd,
    StepEnded,
    StepStarted,
)

if TYPE_CHECKING:
    from claude_agent_sdk import Message as SdkMessage

__all__ = [
    "ChainEnded",
    "CommandStarted",
    "Event",
    "Line",
    "Message",
    "Notice",
    "Output",
    "StepEnd",
    "StepEnded",
    "StepStarted",
]


@frozen
class Message:
    """A message of the SDK's stream, as the SDK typed it, for a harness that shows everything."""

    message: "SdkMessage"


Event = Line | StepStarted | CommandStarted | Output | StepEnded | ChainEnded | Notice | Message
