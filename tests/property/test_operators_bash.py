"""`&&`, `||` and `;` decide which step runs next exactly as bash decides for shell commands: Hypothesis writes
lists of succeeding and failing commands joined by random operators, the in-memory host runs each as a typed
chain, and bash itself runs the same list with shell functions of the same names. The commands run, with their
args, and the last status must be equal."""

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from slashkit.adapters.memory import Local, MemoryHost, Throws, host

#: Commands that succeed and commands that fail, named so bash and the host agree on which is which.
WINS = ("ok", "fine", "good")
LOSSES = ("bad", "broken")
WORDS = ("", "x", "two words", "a-b")

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is the oracle of this test and is not on PATH")


class Bash:
    """One bash process kept open for every example: a function per command prints its name and args and
    returns 0 or 1."""

    def __init__(self, path: str) -> None:
        self._child = subprocess.Popen(
            [path, "--norc", "--noprofile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        functions = [f'{n}() {{ echo "RAN {n} $*"; return 0; }}' for n in WINS]
        functions += [f'{n}() {{ echo "RAN {n} $*"; return 1; }}' for n in LOSSES]
        self._send("\n".join(functions))

    def _send(self, script: str) -> None:
        assert self._child.stdin is not None
        self._child.stdin.write(script + "\n")
        self._child.stdin.flush()

    def run(self, line: str) -> tuple[list[tuple[str, str]], str]:
        """Runs one list; returns the commands it ran, with their args, and its last status."""
        assert self._child.stdout is not None
        self._send(f'{line}\necho "STATUS $?"')
        ran: list[tuple[str, str]] = []
        while not (out := self._child.stdout.readline()).startswith("STATUS "):
            assert out, "bash ended"
            name, _, args = out.removeprefix("RAN ").rstrip("\n").partition(" ")
            ran.append((name, args))
        return ran, "success" if out.split()[1] == "0" else "failure"

    def close(self) -> None:
        assert self._child.stdin is not None
        self._child.stdin.close()
        self._child.wait(timeout=10)


def new_host() -> MemoryHost:
    return host(**{n: Local() for n in WINS}, **{n: Throws(f"{n} failed") for n in LOSSES})


command = st.tuples(st.sampled_from(WINS + LOSSES), st.sampled_from(WORDS))


@settings(max_examples=3000, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    first=command,
    rest=st.lists(st.tuples(st.sampled_from(["&&", "||", ";"]), command), min_size=1, max_size=6),
)
@example(first=("bad", ""), rest=[("&&", ("ok", "")), ("||", ("fine", "x"))])
@example(first=("ok", ""), rest=[("||", ("bad", "")), ("&&", ("fine", ""))])
@example(first=("bad", "x"), rest=[(";", ("ok", "")), ("||", ("good", ""))])
def test_the_steps_that_run_are_the_commands_bash_runs(
    bash: Bash, first: tuple[str, str], rest: list[tuple[str, tuple[str, str]]]
) -> None:
    h = new_host()

    h.type(f"/{first[0]} {first[1]}" + "".join(f" {op} /{name} {args}" for op, (name, args) in rest))
    h.settle()

    expected, status = bash.run(f"{first[0]} {first[1]}" + "".join(f" {op} {name} {args}" for op, (name, args) in rest))
    assert h.runs == expected
    assert [o.status for o in h.outcomes] == [status]
