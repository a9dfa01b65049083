"""The ports: what the core asks of an in-process host, as `typing.Protocol`s. Adapters implement them;
`slashkit.core.driver` carries out the session's effects through nothing else."""

from collections.abc import Callable
from typing import Protocol

from returns.result import Result

from slashkit.core.self_command import Identity

#: How a command's run ended: Success(the text it returned, "" when none), or Failure(the message it threw).
RunOutcome = Result[str, str]


class Clock(Protocol):
    """Runs a function later, from the host's timer (never inside the hook that asked)."""

    def after(self, ms: int, fire: Callable[[], None]) -> None: ...


class CommandRunner(Protocol):
    """Runs the host's slash commands."""

    def run(self, command: str, args: str, done: Callable[[RunOutcome], None]) -> None:
        """Starts `/command args`; calls `done` once its run resolved or threw."""
        ...


class ShellRunner(Protocol):
    """Runs shell steps (`!npm test`) for the person, bounded in time and output (`slashkit.adapters.shell`)."""

    def start(self, token: int, text: str, done: Callable[[str | None, str], None]) -> None:
        """Starts `/bin/sh -c text`; calls `done` with why it failed (None: it exited 0) and what it printed."""
        ...

    def keep(self, tokens: Callable[[int], bool]) -> None:
        """Ends the steps whose token the session no longer waits on (their chain was stopped)."""
        ...


class Approvals(Protocol):
    """The person's approvals of projects' saved chains, kept outside every project (`/slash-chain allow NAME`)."""

    def approve(self, source: str, digest: str) -> None:
        """Records that the file at `source` whose bytes hash to `digest` may run its shell steps."""
        ...


class UiLog(Protocol):
    """The session's transcript, its passing notices, its status area, and the tool descriptions the model is shown."""

    def log(self, text: str) -> None: ...

    def toast(self, text: str) -> None: ...

    def invalidate(self) -> None:
        """Asks the host for the tool descriptions again (they change once self-commands start)."""
        ...

    def progress(self, text: str | None) -> None:
        """Shows where a running chain is in the host's status area; None clears it (the chain ended)."""
        ...


class Store(Protocol):
    """Settings every window of the host shares. The core only writes them: a value may change between two
    reads, so the host reads it when an event comes and passes it with the event (`ChainTyped.enabled`)."""

    def set(self, key: str, value: object) -> None: ...


class Environment(Protocol):
    """The session's environment variables."""

    def get(self, name: str) -> str | None: ...


class Whoami(Protocol):
    """Asks lich which session this is (`$LICH_BIN whoami --json`); None when it could not tell (no lich, a
    failure, a timeout)."""

    def whoami(self) -> Identity | None: ...
