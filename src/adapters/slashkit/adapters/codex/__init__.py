"""slashkit on OpenAI's Codex CLI (`codex app-server`): slash chains and self-commands in a Python harness, with
the same events and controls as the Agent SDK host (docs/codex.md).

    async with CodexSession("codex", cwd=".") as session:
        async for event in session.run("/greet Bob && /compact && /greet Carol"):
            ...
"""

from slashkit.adapters import harness
from slashkit.adapters.codex.host import CodexSession, Raw
from slashkit.adapters.codex.rpc import CodexGone
from slashkit.adapters.harness import *  # noqa: F403 (every harness host's events, named once in harness)
from slashkit.adapters.harness.events import Event

__all__ = ["CodexGone", "CodexSession", "Event", "Raw"]
__all__ += harness.__all__
