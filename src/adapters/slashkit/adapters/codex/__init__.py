"""slashkit on OpenAI's Codex CLI (`codex app-server`): slash chains and self-commands in a Python harness, with
the same events and controls as the Agent SDK host (docs/codex.md).

    async with CodexSession("codex", cwd=".") as session:
        async for event in session.run("/greet Bob && /compact && /greet Carol"):
            ...
"""

from slashkit.adapters.codex.host import SELF_TOOL, CodexSession, Raw
from slashkit.adapters.codex.rpc import CodexGone
from slashkit.adapters.harness.events import (
    ChainEnded,
    CommandStarted,
    Event,
    Line,
    Notice,
    Output,
    StepEnded,
    StepStarted,
)
from slashkit.core.chain_machine import Outcome, Tally

__all__ = [
    "SELF_TOOL",
    "ChainEnded",
    "CodexGone",
    "CodexSession",
    "CommandStarted",
    "Event",
    "Line",
    "Notice",
    "Outcome",
    "Output",
    "Raw",
    "StepEnded",
    "StepStarted",
    "Tally",
]
