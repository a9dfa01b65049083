"""The repository stands on its own: the examples in src's docstrings run in the suite, no docstring or
comment sends a reader to a document outside the repository, and no committed file holds a merge's conflict
markers."""

import re
import subprocess
import sys
from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parents[1]
SOURCE_ROOTS: Final = (REPO_ROOT / "src" / "core", REPO_ROOT / "src" / "adapters")

#: Pointers at documents this repository does not hold: a design note's file name or section sign (a file of
#: docs/ is named with its folder), the source tags of those notes, the seeds other than 003 (which
#: docs/architecture.md describes), and the folder beside the clone.
OUTSIDE: Final = re.compile(
    r"(?<![\w/])(?:design|style|lich|claude-code-engine|opencode|agent-sdk)\.md"
    r"|\.md §"
    r"|\b[PL]-(?:doc|test|js|cli|spawn|close|clictl|stab|mc|\d{3})\b"
    r"|\bseed 00[0-24-9]\b"
    r"|\.\./shared"
)
#: The one module whose work is to look beside the clone, and says so.
LOOKS_BESIDE: Final = {REPO_ROOT / "tests" / "support" / "seed.py"}


def module_name(path: Path) -> str:
    """Names the module of a file under src as Python imports it: `slashkit.core.chain`."""
    root = next(root for root in SOURCE_ROOTS if path.is_relative_to(root))
    return ".".join(path.relative_to(root).with_suffix("").parts)


def test_every_module_of_src_with_docstring_examples_has_them_collected_under_its_own_name() -> None:
    with_examples = {
        module_name(path) for path in sorted((REPO_ROOT / "src").rglob("*.py")) if ">>> " in path.read_text("utf-8")
    }
    assert len(with_examples) >= 5, "fewer modules with examples than when this test was written"
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "src"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    # A doctest's id is `<file>::<module>.<object>`.
    named = {line.split("::")[1] for line in collected.splitlines() if "::" in line}
    assert {module for module in with_examples if not any(n.startswith(f"{module}.") for n in named)} == set()


def test_no_docstring_or_comment_in_src_or_tests_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for folder in ("src", "tests")
        for path in sorted((REPO_ROOT / folder).rglob("*"))
        if path.suffix in {".py", ".ts", ".md"} and path not in LOOKS_BESIDE and path != Path(__file__)
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert found == []


#: The lines git writes into a file where a merge could not join two changes: `<<<<<<< ours`, `=======`,
#: `>>>>>>> theirs`. A merge committed with them once (the CHANGELOG, until 1818b4a).
CONFLICT_MARKER: Final = re.compile(r"^(?:<{7}|>{7})(?: |$)", re.MULTILINE)


def test_no_committed_file_holds_a_merge_s_conflict_markers() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.split("\0")
    held = [
        name
        for name in tracked
        if name and (REPO_ROOT / name).is_file() and CONFLICT_MARKER.search(_text(REPO_ROOT / name))
    ]
    assert held == []


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")
