"""Mutation testing of `slashkit.core` (scripts/mutate, docs/testing.md): plants one small bug at a time in a module
and runs the fast tests (tests/unit, tests/property, the core's doctests) against it; a mutant the tests notice is
killed, one they do not notice survived.

Two kinds of mutant. mutmut 3 mutates the code inside functions; it leaves module constants alone, so the constants
that carry a rule (`REFUSED`, `PERSON_TYPING`, `_SPACES`, ...) are mutated by the list below, which this script
applies itself, one fast-test run a mutant.

mutmut knows one source root (`src/`) and names a mutant by its file's path under it, while slashkit has two roots
for one PEP 420 namespace (`src/core/slashkit`, `src/adapters/slashkit`). So the script lays both out as one
`src/slashkit` in a work folder (.mutation/, never committed), with the tests and a pyproject.toml of its own that
configures mutmut and pytest there; a mutant of `src/slashkit/core/policy.py` is then `slashkit.core.policy.x_...`,
the name the tests import.

The hypothesis example database is off in both (the `mutation` profile, tests/conftest.py): an example saved while
one mutant ran would otherwise be replayed against the next ones, and one that fails on the unchanged code would
"kill" every mutant after it (issue 21).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
WORK: Final = ROOT / ".mutation"
EQUIVALENT_FILE: Final = ROOT / "scripts" / "equivalent-mutants.txt"
#: The modules `scripts/mutate` runs when none is named: the ones docs/testing.md sets goals for.
DEFAULT_MODULES: Final = ("policy", "chain", "chain_machine", "self_command", "session", "saved_chain")
FAST_TESTS: Final = ("tests/unit", "tests/property", "src/slashkit/core")
#: The modules of programs (issue 33), whose mutants meet a smaller set: the unit tests, the programs' own property
#: tests (bash as the oracle, the printed tree, the state's round trip, a running program edited, shell steps) and the
#: doctests. The rest of tests/property reaches them through the chain machine and the bridge, thousands of examples
#: each: on 2 cores every surviving mutant then took ~3 minutes, so the first whole run of the three was on course for
#: 8 hours (2026-12-06). A score against fewer tests is a lower bound of the whole set's.
PROGRAM_MODULES: Final = frozenset({"interpreter", "grammar", "program"})
PROGRAM_TESTS: Final = (
    "tests/unit",
    "tests/property/test_programs_bash.py",
    "tests/property/test_program_properties.py",
    "tests/property/test_running_edit_properties.py",
    "tests/property/test_shell_step_properties.py",
    "src/slashkit/core",
)
#: pytest's arguments for every run: the database off, and the one fast test that reads the repository's own
#: layout (which imports each module makes), which the work folder does not have and no mutant changes.
PYTEST_ARGS: Final = (
    "-p",
    "no:cacheprovider",
    "--hypothesis-profile=mutation",
    "--ignore=tests/unit/test_dependency_rule.py",
)
#: The work folder's conftest.py: the unit tests and doctests run before the property tests, so that with `-x` a
#: mutant a unit test notices is killed in a second, not after minutes of hypothesis (the order is otherwise kept).
CHEAP_FIRST: Final = """def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.nodeid.startswith("tests/property/"))
"""
#: mutmut's status words that mean a test noticed the mutant.
KILLED: Final = frozenset({"killed", "timeout", "segfault", "caught by type check"})


@dataclass(frozen=True)
class ConstantMutant:
    """A module constant given another value: `value` is Python source that replaces the assigned expression."""

    module: str
    constant: str
    value: str
    what: str

    def name(self, number: int) -> str:
        return f"slashkit.core.{self.module}.{self.constant}__const_{number}"


#: The constants that carry a rule, each with the values a slip could give it.
CONSTANT_MUTANTS: Final = (
    ConstantMutant("policy", "REFUSED", 'frozenset({"effort"})', "/model runs for anyone"),
    ConstantMutant("policy", "REFUSED", 'frozenset({"model"})', "/effort runs for anyone"),
    ConstantMutant("policy", "PERSON_TYPING", 'frozenset({"bridge", "sdk"})', "the terminal is not the person"),
    ConstantMutant("policy", "PERSON_TYPING", 'frozenset({"composer", "sdk"})', "Remote Control is not the person"),
    ConstantMutant("policy", "PERSON_TYPING", 'frozenset({"composer", "bridge"})', "the SDK's turn is not the person"),
    ConstantMutant("policy", "PERSON_TYPING", 'frozenset({"composer", "bridge", "sdk", "plugin"})', "a plugin is"),
    ConstantMutant("policy", "PERSON", 'frozenset({"bridge"})', "the terminal's prompt does not cancel"),
    ConstantMutant("policy", "PERSON", 'frozenset({"composer"})', "Remote Control's prompt does not cancel"),
    ConstantMutant("policy", "PERSON", 'frozenset({"composer", "bridge", "sdk"})', "the SDK's prompt cancels"),
    ConstantMutant("policy", "_SPACES", "JS_WHITESPACE", "Python's extra whitespace is no separator"),
    ConstantMutant("policy", "_SPACES", '"\\x1c\\x1d\\x1e\\x1f\\x85"', "JavaScript's whitespace is no separator"),
    ConstantMutant("chain", "SEPARATOR_JS", 'r"/(?:^|\\s)(&&|\\|\\||;)\\s*\\/([A-Za-z0-9_:.-]+)(?=\\s|$)/"', "no |"),
    ConstantMutant("chain_machine", "STEP_OUTPUT", '"StepOutputs"', "the name hosts read is another"),
    ConstantMutant("self_command", "SKILL_TOOL", '"skill"', "the Skill tool is not recognised"),
    ConstantMutant("self_command", "CONTROL_TOOL", '"mcp__lich__control"', "lich's tool is not recognised"),
    ConstantMutant("saved_chain", "NAME", 're.compile(r"[A-Za-z0-9_.-]{1,64}")', "a name may hold a dot"),
    ConstantMutant("saved_chain", "NAME", 're.compile(r"[A-Za-z0-9_-]{1,65}")', "a name may be 65 long"),
    ConstantMutant("saved_chain", "MAX_FILE", "64 * 1024 + 1", "a file one byte over 64 KiB is read"),
    ConstantMutant("saved_chain", "MAX_DEPTH", "9", "calls nest 9 deep"),
    ConstantMutant("saved_chain", "MAX_STEPS", "257", "a line may bring 257 steps"),
    ConstantMutant("saved_chain", "KEYS", 'frozenset({"description"})', "the argument hint is dropped"),
)


@dataclass(frozen=True)
class Result:
    """One mutant's fate: its name, mutmut's status word (or killed/survived for a constant's), and what it is."""

    name: str
    status: str
    what: str = ""


def main(argv: list[str]) -> int:
    modules = tuple(argv) or DEFAULT_MODULES
    known = sorted(p.stem for p in (ROOT / "src/core/slashkit/core").glob("*.py") if p.stem != "__init__")
    unknown = [m for m in modules if m not in known]
    if unknown:
        print(f"no such module of slashkit.core: {', '.join(unknown)} (known: {', '.join(known)})", file=sys.stderr)
        return 2
    equivalent = read_equivalent(EQUIVALENT_FILE.read_text())
    started = time.monotonic()
    # A folder for each set of modules, so that two runs on different modules can go on at once.
    work = WORK / "+".join(modules)
    results = run_mutmut(work / "mutmut", modules) + run_constants(work / "constants", modules)
    print(f"\n{len(results)} mutants in {time.monotonic() - started:.0f} s\n")
    for module in modules:
        print(summary(module, [r for r in results if module_of(r.name) == module], equivalent))
    survivors = [r for r in results if r.status not in KILLED and r.name not in equivalent]
    if survivors:
        print("\nSurvivors:")
        for r in survivors:
            print(show(work / "mutmut", r))
    fates = {r.name: r.status for r in results}
    stale = [n for n in equivalent if module_of(n) in modules and fates.get(n, "absent") != "survived"]
    for name in stale:
        print(f"\n{EQUIVALENT_FILE.name} lists {name}, which is {fates.get(name, 'absent')}: take it out")
    return 0


def read_equivalent(text: str) -> dict[str, str]:
    """The mutants known to be equivalent (no test could tell them from the code), by name, with the reason.

    >>> read_equivalent("# a comment\\nslashkit.core.chain.x_f__mutmut_1  the same regex\\n")
    {'slashkit.core.chain.x_f__mutmut_1': 'the same regex'}
    """
    entries = (line.split(maxsplit=1) for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return {name: reason for name, reason in entries}


def module_of(name: str) -> str:
    """The short module name of a mutant: `policy` for `slashkit.core.policy.x_is_refused__mutmut_3`."""
    return name.removeprefix("slashkit.core.").split(".")[0]


def summary(module: str, results: list[Result], equivalent: dict[str, str]) -> str:
    """One line per module: `MODULE: N mutants, K killed, S survived, E equivalent: score P%`, P = K / (N - E)."""
    killed = sum(r.status in KILLED for r in results)
    same = sum(r.status not in KILLED and r.name in equivalent for r in results)
    survived = len(results) - killed - same
    counted = len(results) - same
    score = f"{100 * killed / counted:.1f}%" if counted else "n/a"
    return f"{module}: {len(results)} mutants, {killed} killed, {survived} survived, {same} equivalent: score {score}"


def lay_out(folder: Path) -> None:
    """Lays the two source roots out as one `src/slashkit`, beside the tests and the seed script they load."""
    if folder.exists():
        shutil.rmtree(folder)
    for part in ("core", "adapters"):
        shutil.copytree(ROOT / "src" / part / "slashkit" / part, folder / "src" / "slashkit" / part)
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "seed_plugin.py", folder / "scripts")
    (folder / "conftest.py").write_text(CHEAP_FIRST)


def selected_tests(modules: Iterable[str]) -> tuple[str, ...]:
    """The tests the mutants of these modules meet: the programs' own when every module is one of theirs.

    >>> selected_tests(["grammar", "interpreter"]) == PROGRAM_TESTS, selected_tests(["grammar", "policy"]) == FAST_TESTS
    (True, True)
    """
    chosen = list(modules)
    return PROGRAM_TESTS if chosen and set(chosen) <= PROGRAM_MODULES else FAST_TESTS


def pyproject(modules: Iterable[str]) -> str:
    """The work folder's pyproject.toml: mutmut's configuration, and pytest's as the repository has it."""
    modules = list(modules)
    only = ", ".join(f'"src/slashkit/core/{m}.py"' for m in modules)
    return f"""[tool.mutmut]
source_paths = ["src/slashkit/core"]
only_mutate = [{only}]
also_copy = ["src/slashkit/adapters", "scripts", "conftest.py"]
pytest_add_cli_args_test_selection = [{", ".join(f'"{t}"' for t in selected_tests(modules))}]
pytest_add_cli_args = [{", ".join(f'"{a}"' for a in PYTEST_ARGS)}]
# A mutant that loops (a step index off by one makes a chain rerun its steps without end) is stopped after
# (t + 1) * 3 * 2 CPU seconds, t the wall time its tests took on the unchanged code, instead of mutmut's 15 * 2:
# CPU time is at most wall time, so that is still 6 times what the tests need. With the default, each looping
# mutant of `_walk` ran for over 15 CPU minutes (measured with mutmut 3.8.1).
timeout_multiplier = 3.0

[tool.pytest.ini_options]
addopts = "-q --doctest-modules"
consider_namespace_packages = true
"""


def environment() -> dict[str, str]:
    """The tests' environment: the seeds where the repository's tests find them (the work folder has no
    ../shared beside it)."""
    env = dict(os.environ)
    env.setdefault("SLASHKIT_SEEDS", str(ROOT.parent / "shared" / "seeds"))
    return env


def run_mutmut(folder: Path, modules: tuple[str, ...]) -> list[Result]:
    """Runs mutmut on the modules in `folder`, afresh (no result of an earlier run stands), and reads every
    mutant's fate."""
    lay_out(folder)
    (folder / "pyproject.toml").write_text(pyproject(modules))
    mutmut = Path(sys.executable).parent / "mutmut"
    subprocess.run([mutmut, "run"], cwd=folder, env=environment(), check=True)
    listed = subprocess.run(
        [mutmut, "results", "--all", "true"], cwd=folder, env=environment(), check=True, capture_output=True, text=True
    )
    found = re.findall(r"^\s+(\S+): (.+)$", listed.stdout, re.MULTILINE)
    return [Result(name, status.strip()) for name, status in found]


def mutated(source: str, constant: str, value: str) -> str:
    """The module's source with the value of a module-level assignment to `constant` replaced by `value`.

    >>> mutated('A: Final = frozenset({"x"})\\nB = 1\\n', "A", "frozenset()")
    'A: Final = frozenset()\\nB = 1\\n'
    """
    lines = source.splitlines(keepends=True)

    def offset(line: int, column: int) -> int:
        return sum(map(len, lines[: line - 1])) + column

    for node in ast.parse(source).body:
        match node:
            case (
                ast.Assign(targets=[ast.Name(id=name)], value=expr)
                | ast.AnnAssign(target=ast.Name(id=name), value=ast.expr() as expr)
            ) if name == constant:
                assert expr.end_lineno is not None and expr.end_col_offset is not None
                start, end = offset(expr.lineno, expr.col_offset), offset(expr.end_lineno, expr.end_col_offset)
                return source[:start] + value + source[end:]
    raise LookupError(f"no module-level assignment to {constant}")


def run_constants(folder: Path, modules: tuple[str, ...]) -> list[Result]:
    """Runs the fast tests once for each constant mutant of the modules, in `folder`: killed when a test fails."""
    results: list[Result] = []
    numbers: Counter[str] = Counter()
    for mutant in CONSTANT_MUTANTS:
        numbers[mutant.constant] += 1
        if mutant.module not in modules:
            continue
        lay_out(folder)
        (folder / "pyproject.toml").write_text(pyproject(()))
        path = folder / "src" / "slashkit" / "core" / f"{mutant.module}.py"
        path.write_text(mutated(path.read_text(), mutant.constant, mutant.value))
        # The work folder's src first, so that `slashkit.core` is imported from there and not from the repository.
        env = environment() | {"PYTHONPATH": str(folder / "src")}
        command = [sys.executable, "-m", "pytest", "-x", "-q", *PYTEST_ARGS, *FAST_TESTS]
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
        if done.returncode not in (0, 1):
            print(done.stdout[-3000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
            raise SystemExit(f"the tests of {mutant.name(numbers[mutant.constant])} could not run ({done.returncode})")
        name = mutant.name(numbers[mutant.constant])
        results.append(Result(name, "killed" if done.returncode == 1 else "survived", f"{mutant.value}: {mutant.what}"))
        print(f"{name}: {results[-1].status}", flush=True)
    return results


def show(folder: Path, result: Result) -> str:
    """A survivor as a reader checks it: its name and status, and the change it makes."""
    if result.what:
        return f"{result.name} ({result.status}): {result.what}"
    mutmut = Path(sys.executable).parent / "mutmut"
    diff = subprocess.run([mutmut, "show", result.name], cwd=folder, capture_output=True, text=True).stdout
    return f"{result.name} ({result.status}):\n{diff.rstrip()}"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
