"""slashkit in a Python harness on the Claude Agent SDK: slash chains and self-commands in-process.

    async with SlashSession(ClaudeAgentOptions(cwd="."), self_commands=True) as session:
        async for event in session.run("/review && /test"):
            ...

Needs the `sdk` extra (`pip install 'slashkit[sdk]'`); see docs/embedding.md.
"""

from slashkit.adapters import harness
from slashkit.adapters.harness import *  # noqa: F403 (every harness host's events, named once in harness)
from slashkit.adapters.sdk.events import Event, Message
from slashkit.adapters.sdk.session import SlashSession

__all__ = ["Event", "Message", "SlashSession"]
__all__ += harness.__all__
