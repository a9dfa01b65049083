"""The dependency rule (docs/architecture.md): nothing under `slashkit.core` imports an adapter or an I/O
module; the core is pure and talks to the world through its ports only."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "src" / "core" / "slashkit" / "core"
PACKAGE = "slashkit.core"

#: Modules that do I/O, read the clock or the environment, or belong at the boundary (the wire converter).
IO_MODULES = frozenset(
    {
        "os",
        "sys",
        "io",
        "subprocess",
        "socket",
        "time",
        "datetime",
        "threading",
        "asyncio",
        "json",
        "cattrs",
        "logging",
        "pathlib",
        "shutil",
        "tempfile",
        "http",
        "urllib",
        "select",
        "signal",
        "random",
        "multiprocessing",
        "concurrent",
        "importlib",
        "builtins",
        "glob",
        "fileinput",
        "ssl",
        "selectors",
        "sqlite3",
        "pickle",
    }
)
ADAPTERS = "slashkit.adapters"
#: Builtins that reach the outside world or import by name at run time.
IO_CALLS = frozenset({"open", "print", "input", "__import__", "exec", "eval", "breakpoint"})


def imported(source: str, module: str) -> list[str]:
    """Names every module a source imports, with relative imports resolved from `module`'s package."""
    package = module.rsplit(".", 1)[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def called(source: str) -> list[str]:
    """Names every builtin the source calls by a bare name, among those that reach the outside world."""
    return [
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IO_CALLS
    ]


def forbidden(source: str, module: str) -> list[str]:
    """Names the imports and calls of a source that break the dependency rule."""
    bad = []
    for name in imported(source, module):
        top = name.split(".")[0]
        if top in IO_MODULES or name == ADAPTERS or name.startswith(f"{ADAPTERS}."):
            bad.append(name)
    return bad + [f"{name}()" for name in called(source)]


def core_modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(CORE).with_suffix("")
        parts = [p for p in relative.parts if p != "__init__"]
        # A package's __init__ is the package itself, so its relative imports resolve one level up from a child.
        name = ".".join([PACKAGE, *parts, "__init__"] if path.name == "__init__.py" else [PACKAGE, *parts])
        modules.append((name, path))
    return modules


def test_the_core_has_modules_to_check() -> None:
    names = {name for name, _ in core_modules()}
    assert {"slashkit.core.chain", "slashkit.core.chain_machine", "slashkit.core.texts"} <= names


@pytest.mark.parametrize(("module", "path"), core_modules(), ids=[name for name, _ in core_modules()])
def test_no_core_module_imports_an_adapter_or_an_io_module(module: str, path: Path) -> None:
    assert forbidden(path.read_text(encoding="utf-8"), module) == []


# The checker itself, so a rule that could not fail would show.


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import os", ["os"]),
        ("import os.path as p", ["os.path"]),
        ("from subprocess import run", ["subprocess", "subprocess.run"]),
        ("from datetime import datetime", ["datetime", "datetime.datetime"]),
        ("import cattrs.preconf.json", ["cattrs.preconf.json"]),
        ("from slashkit.adapters.memory import host", ["slashkit.adapters.memory", "slashkit.adapters.memory.host"]),
        ("from slashkit import adapters", ["slashkit.adapters"]),
        ("from ..adapters import memory", ["slashkit.adapters", "slashkit.adapters.memory"]),
        ("from .. import adapters", ["slashkit.adapters"]),
        ("def f():\n    import json\n", ["json"]),
        ("x = open('f')", ["open()"]),
        ("__import__('os')", ["__import__()"]),
    ],
)
def test_the_checker_finds_a_forbidden_import_or_call(source: str, bad: list[str]) -> None:
    assert forbidden(source, "slashkit.core.chain") == bad


@pytest.mark.parametrize(
    "source",
    [
        "import re",
        "from typing import Final",
        "from attrs import frozen",
        "from returns.result import Result",
        "from slashkit.core import texts",
        "from . import texts",
        "from .chain import Step",
        "from collections.abc import Callable",
        "import osmosis",
    ],
)
def test_the_checker_lets_pure_imports_through(source: str) -> None:
    assert forbidden(source, "slashkit.core.chain") == []


def test_relative_imports_resolve_from_the_modules_package() -> None:
    assert imported("from .chain import Step", "slashkit.core.texts") == [
        "slashkit.core.chain",
        "slashkit.core.chain.Step",
    ]
    assert imported("from . import chain", "slashkit.core.__init__") == ["slashkit.core", "slashkit.core.chain"]


# The Agent SDK (the `sdk` extra) is imported by its own adapter only: its import costs ~0.7 s and it may be
# missing, so nothing else of slashkit may need it.

SOURCES = Path(__file__).resolve().parents[2] / "src"
SDK_ADAPTER = SOURCES / "adapters" / "slashkit" / "adapters" / "sdk"
SDK = "claude_agent_sdk"


def imports_the_sdk(source: str) -> bool:
    """Tells whether a source imports the Agent SDK, at any depth (a function's own import included)."""
    return any(name.split(".")[0] == SDK for name in imported(source, "slashkit.x"))


def modules_outside_the_sdk_adapter() -> list[Path]:
    return [p for p in sorted(SOURCES.rglob("*.py")) if SDK_ADAPTER not in p.parents]


def test_the_sdk_adapter_is_where_the_sdk_is_imported() -> None:
    assert any(imports_the_sdk(p.read_text(encoding="utf-8")) for p in SDK_ADAPTER.rglob("*.py"))


@pytest.mark.parametrize("path", modules_outside_the_sdk_adapter(), ids=lambda p: str(p.relative_to(SOURCES)))
def test_no_module_outside_the_sdk_adapter_imports_the_sdk(path: Path) -> None:
    assert not imports_the_sdk(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import claude_agent_sdk", True),
        ("from claude_agent_sdk.types import ResultMessage", True),
        ("def f():\n    from claude_agent_sdk import query\n", True),
        ("import claude_agent_sdk_other", False),
        ("from slashkit.adapters.sdk import SlashSession", False),
    ],
)
def test_the_sdk_checker_finds_every_way_to_import_it(source: str, found: bool) -> None:
    assert imports_the_sdk(source) is found


def test_importing_the_cli_does_not_import_the_sdk() -> None:
    """`slashkit --help` and `slashkit play` stay fast: the CLI imports the SDK host only for `run`."""
    probe = "import sys, slashkit.adapters.cli; print('claude_agent_sdk' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "False"
