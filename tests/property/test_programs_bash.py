"""Programs run as bash runs them (issue 33): Hypothesis writes programs with loops (`while`, `until`, `for`), groups,
`break` and `continue` around `&&`, `||` and `;`, over commands whose outcome changes from run to run (each follows a
script of its own: fail, fail, pass...). The in-memory host runs each as a typed line, and bash runs the same
program with a shell function for each command that follows the same script. The commands run, in order and with
their arguments, and the last status must be equal."""

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from slashkit.adapters.memory import Local, MemoryHost, Throws, Turns, host
from slashkit.core.policy import DEFAULT_RULE
from tests.property.test_operators_bash import BASH, Bash

pytestmark = pytest.mark.skipif(BASH is None, reason="bash is the oracle of this test and is not on PATH")

#: Each command's script: True runs well, False fails; past its end the last entry repeats.
Scripts = dict[str, list[bool]]
WORDS = ("a", "b c", "")


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, Scripts]:
    """A program's text and the scripts of its commands. Every loop's condition is a command of its own whose
    script ends on the outcome that ends the loop, so every loop ends (well within the cap, which the test raises)."""
    scripts: Scripts = {}
    loops = 0

    def command() -> str:
        name = f"c{len(scripts)}"
        scripts[name] = draw(st.lists(st.booleans(), min_size=1, max_size=3))
        args = draw(st.sampled_from(WORDS))
        return f"/{name} {args}".rstrip()

    def condition(until: bool) -> str:
        name = f"c{len(scripts)}"
        # A while loop ends when its condition fails; an until loop when it passes.
        scripts[name] = [*draw(st.lists(st.booleans(), max_size=3)), until]
        return f"/{name}"

    def listing(depth: int, in_loop: bool, variable: str | None) -> str:
        items = [and_or(depth, in_loop, variable) for _ in range(draw(st.integers(1, 3)))]
        return "; ".join(items)

    def and_or(depth: int, in_loop: bool, variable: str | None) -> str:
        text = part(depth, in_loop, variable)
        for _ in range(draw(st.integers(0, 2))):
            text += f" {draw(st.sampled_from(['&&', '||']))} {part(depth, in_loop, variable)}"
        return text

    def part(depth: int, in_loop: bool, variable: str | None) -> str:
        nonlocal loops
        kinds = ["command", "command", "command"]
        if depth < 3:
            kinds += ["group", "while", "until", "for"]
        if in_loop:
            kinds += ["break", "continue"]
        match draw(st.sampled_from(kinds)):
            case "command":
                text = command()
                return f"{text} ${variable}" if variable is not None and draw(st.booleans()) else text
            case "group":
                return f"{{ {listing(depth + 1, in_loop, variable)}; }}"
            case "while" | "until" as kind:
                head = condition(kind == "until")
                return f"{kind} {head}; do {listing(depth + 1, True, variable)}; done"
            case "for":
                loops += 1
                name = f"v{loops}"
                words = " ".join(draw(st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)))
                return f"for {name} in {words}; do {listing(depth + 1, True, name)}; done"
            case jump:
                return f"{jump} {draw(st.sampled_from(['', '1', '2']))}".rstrip()

    first = command()
    text = first + "".join(f" {draw(st.sampled_from(['&&', '||', ';']))} {and_or(0, False, None)}" for _ in range(2))
    return text, scripts


def new_host(scripts: Scripts) -> MemoryHost:
    h = host(
        **{
            name: Turns(tuple(Local() if ok else Throws(f"{name} failed") for ok in runs))
            for name, runs in scripts.items()
        }
    )
    # The loops here end by their conditions; the cap has tests of its own.
    return attrs.evolve(h, rule=attrs.evolve(DEFAULT_RULE, loop_cap=1000))


def bash_functions(scripts: Scripts) -> str:
    """A function per command: it prints its name and args, then returns what its script says for this run."""
    lines = []
    for name, runs in scripts.items():
        codes = " ".join("0" if ok else "1" for ok in runs)
        lines.append(f"n_{name}=0; s_{name}=({codes})")
        lines.append(
            f'{name}() {{ echo "RAN {name} $*"; local i=$n_{name}; n_{name}=$((i+1)); '
            f"[ $i -ge {len(runs)} ] && i={len(runs) - 1}; return ${{s_{name}[$i]}}; }}"
        )
    return "\n".join(lines)


@settings(max_examples=600, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(programs())
@example(
    (
        "/c0 && until /c1; do /c2 || break; done; /c3",
        {"c0": [True], "c1": [False, False, True], "c2": [True, False], "c3": [False]},
    )
)
@example(
    ("/c0 ; for v1 in x y z; do /c1 $v1 && continue; /c2; done", {"c0": [False], "c1": [True, False], "c2": [True]})
)
@example(
    (
        "/c0 || { /c1; /c2; } && while /c3; do /c4; done",
        {"c0": [False], "c1": [True], "c2": [False], "c3": [True, False], "c4": [True]},
    )
)
def test_the_commands_that_run_are_the_ones_bash_runs(bash: Bash, program: tuple[str, Scripts]) -> None:
    text, scripts = program
    h = new_host(scripts)

    h.type(text)
    h.settle()

    expected, status = bash.run(f"{bash_functions(scripts)}\n{text.replace('/', '')}")
    assert [(name, args) for name, args in h.runs] == expected, "\n".join(h.ui.lines)
    assert [o.status for o in h.outcomes] == [status]
