"""slashkit in a Python harness on the Claude Agent SDK: slash chains and self-commands in-process.

    async with SlashSession(ClaudeAgentOptions(cwd="."), self_commands=True) as session:
        async for event in session.run("/review && /test"):
            ...

Needs the `sdk` extra (`pip install 'slashkit[sdk]'`); see docs/embedding.md.
"""

from slashkit.adapters.sdk.events import (
    ChainEnded,
    CommandStarted,
    Event,
    Line,
    Message,
    Notice,
    Output,
    StepEnded,
    StepStarted,
)
from slashkit.adapters.sdk.session import SELF_TOOL_ID, SlashSession
from slashkit.core.chain_machine import Outcome, Tally

__all__ = [
    "SELF_TOOL_ID",
    "ChainEnded",
    "CommandStarted",
    "Event",
    "Line",
    "Message",
    "Notice",
    "Outcome",
    "Output",
    "SlashSession",
    "StepEnded",
    "StepStarted",
    "Tally",
]
