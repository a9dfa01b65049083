"""What a harness sees while the SDK host runs what it typed: the harness events every harness host shares
(`slashkit.adapters.harness.events`), and each message of the SDK's stream. Nothing here talks to the SDK."""

from typing import TYPE_CHECKING

from attrs import frozen

from slashkit.adapters.harness import events as harness

if TYPE_CHECKING:
    from claude_agent_sdk import Message as SdkMessage


@frozen
class Message:
    """A message of the SDK's stream, as the SDK typed it, for a harness that shows everything."""

    message: "SdkMessage"


Event = harness.Event | Message
