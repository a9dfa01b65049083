"""The harness hosts' shared parts (the driving loop, the agenda, `slashkit run`'s printing), and the public names
every harness host's package exports as its own: the events a run yields and how a chain ended. A host's package
(`slashkit.adapters.sdk`, `slashkit.adapters.codex`) adds its session, its own messages and its `Event`."""

from slashkit.adapters.harness.events import (
    ChainEnded,
    CommandStarted,
    Line,
    Notice,
    Output,
    StepEnded,
    StepStarted,
)
from slashkit.core.chain_machine import Outcome, Tally

__all__ = [
    "ChainEnded",
    "CommandStarted",
    "Line",
    "Notice",
    "Outcome",
    "Output",
    "StepEnded",
    "StepStarted",
    "Tally",
]
