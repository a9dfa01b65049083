"""slashkit in a Python harness on the Claude Agent SDK: slash chains and self-commands in-process.

    async with SlashSession(ClaudeAgentOptions(cwd="."), self_commands=True) as session:
        async for event in session.run("/review && /test"):
            ...

Needs the `sdk` extra (`pip install 'slashkit[sdk]'`); see docs/embedding.md.
"""

from slashkit.adapters.sdk.events import (
    Cancelled,
    ChainEnded,
    ChainOutcome,
    CommandStarted,
    Event,
    Message,
    Notice,
    Output,
    Ran,
    StepEnded,
    StepStarted,
    Stopped,
)
from slashkit.adapters.sdk.session import SELF_TOOL_ID, SlashSession

__all__ = [
    "SELF_TOOL_ID",
    "Cancelled",
    "ChainEnded",
    "ChainOutcome",
    "CommandStarted",
    "Event",
    "Message",
    "Notice",
    "Output",
    "Ran",
    "SlashSession",
    "StepEnded",
    "StepStarted",
    "Stopped",
]
