"""The lich CLI adapter: the session's lich variables, and `$LICH_BIN whoami --json` behind the Whoami port."""

import json
import os
import signal
import subprocess
from collections.abc import Mapping
from typing import Final, Self

from attrs import field, frozen
from returns.result import Failure, Result, Success, safe

from slashkit.core.ports import Identity

# Environment


@frozen
class LichEnvironment:
    """The variables lich exports into a session's PTY; None stands for a variable unset or empty."""

    session_id: str | None
    bin: str | None
    prompt_lang: str | None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Self:
        """Reads LICH_SESSION_ID, LICH_BIN and LICH_PROMPT_LANG from `environ`.

        >>> LichEnvironment.from_environ({"LICH_SESSION_ID": "", "LICH_BIN": "/opt/lich"})
        LichEnvironment(session_id=None, bin='/opt/lich', prompt_lang=None)
        """
        # Empty counts as unset: lich gives a plain-shell caller an empty LICH_SESSION_ID, which names no
        # session, and an empty LICH_PROMPT_LANG means English (lich.md §1).
        return cls(
            session_id=environ.get("LICH_SESSION_ID") or None,
            bin=environ.get("LICH_BIN") or None,
            prompt_lang=environ.get("LICH_PROMPT_LANG") or None,
        )


@frozen
class OsEnvironment:
    """The Environment port over a mapping of variables: the process's own unless another is given."""

    # Kept out of the repr, because the environment holds LICH_TOKEN.
    environ: Mapping[str, str] = field(default=os.environ, repr=False)

    def get(self, name: str) -> str | None:
        return self.environ.get(name)


# Whoami


@frozen
class LichWhoami:
    """The Whoami port: asks `$LICH_BIN whoami --json` (lich 0.64 or later) which session this is."""

    env: LichEnvironment
    #: lich-plugin's hook gives whoami the same 2 s (WHOAMI_TIMEOUT_MS).
    timeout: float = 2.0

    def whoami(self) -> Result[Identity, str]:
        """Returns the label and name lich prints for this session, or a Failure saying why there are none."""
        # Never `lich` from PATH: a dev build and an installed lich can both be there (lich.md §1).
        if self.env.bin is None:
            return Failure(NO_BIN_WHY)
        ran = _run([self.env.bin, "whoami", "--json"], self.timeout)
        return ran.alt(_not_run_why).bind(_read_identity)


# `safe` rather than `impure_safe`: the port answers a Result, and mypy without the returns plugin has no typed
# way from an IOResult to one.
@safe(exceptions=(subprocess.TimeoutExpired, OSError))
def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Runs `argv` without stdin and collects its output, killing its process group once `timeout` passed."""
    # A session of its own, so that the kill reaches its children too: killing lich alone would leave a
    # grandchild running, and one holding the pipes keeps a later read of them waiting.
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    ) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            raise
    return subprocess.CompletedProcess(argv, child.returncode, stdout, stderr)


def _read_identity(done: subprocess.CompletedProcess[str]) -> Result[Identity, str]:
    """Reads the identity from a finished whoami's exit code and stdout."""
    if done.returncode != 0:
        return Failure(_exited_why(done.returncode, done.stderr))
    return _parse_json(done.stdout).alt(lambda _: NOT_JSON_WHY).bind(_identity_of)


@safe(exceptions=(ValueError,))
def _parse_json(text: str) -> object:
    return json.loads(text)


def _identity_of(value: object) -> Result[Identity, str]:
    """Takes `label` and `name` from a whoami object, whose other fields (id, project, ...) do not matter."""
    match value:
        case {"label": str(label), "name": str(name)}:
            return Success(Identity(label, name))
    return Failure(NO_IDENTITY_WHY)


# Reasons: why whoami told nothing, for the log


NO_BIN_WHY: Final = "LICH_BIN is not set, so there is no lich to ask"
NOT_JSON_WHY: Final = "lich whoami printed something other than JSON"
NO_IDENTITY_WHY: Final = "lich whoami printed no object with a string label and name"


def _not_run_why(error: Exception) -> str:
    # `_run` lets only TimeoutExpired and OSError through; mypy widens the pair to Exception.
    if isinstance(error, subprocess.TimeoutExpired):
        return f"lich whoami did not answer within {error.timeout:g} s"
    return f"lich could not be run: {error}"


def _exited_why(code: int, stderr: str) -> str:
    # lich writes a failure as one `lich: …` line on stderr (lich.md §2); a lich older than 0.64 writes
    # `lich: unknown command "whoami"`.
    lines = stderr.strip().splitlines()
    return f"lich whoami exited {code}: {lines[0]}" if lines else f"lich whoami exited {code}"
