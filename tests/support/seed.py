"""Seed 003, the reference slash-chain mod, for the tests and benchmarks that compare slashkit with it.

The seed is kept outside the repository (docs/architecture.md, "The reference mod"): in the folder that
SLASHKIT_SEEDS names, else in `../shared/seeds` beside the clone, the convention `scripts/seed_plugin.py`
follows. It is read at test time and never copied: `scripts/seed_plugin.py` splits it into register.ts and
chain.ts, and `parser_js` takes the parser out of chain.ts as JavaScript that Node runs.

Why a small transform rather than the TypeScript compiler: Node 20 runs no TypeScript, and the part the tests
run (the `SEPARATOR` literal and `parseChain`) carries its types on one line, the function's signature. A
pinned `typescript` would be one more npm install in every clone, and one more program to start on every run,
to remove two annotations. The transform rewrites that one line and refuses any shape it does not know, so a
changed seed fails loudly, and Node refuses any type syntax left in the body as a SyntaxError.
"""

import importlib.util
import os
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Final

import pytest

REPO_ROOT: Final = Path(__file__).resolve().parents[2]
SEED_PLUGIN_SCRIPT: Final = REPO_ROOT / "scripts" / "seed_plugin.py"

#: Set (to anything non-empty) where the seed must be there, such as CI: a missing seed then fails the tests
#: that need it instead of skipping them.
REQUIRE_VARIABLE: Final = "SLASHKIT_REQUIRE_SEEDS"


@cache
def _seed_plugin() -> ModuleType:
    """Loads scripts/seed_plugin.py, which is a script and not a package, as a module."""
    spec = importlib.util.spec_from_file_location("seed_plugin", SEED_PLUGIN_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SeedFormatError(ValueError):
    """The seed's chain.ts does not hold the parser in the shape `parser_js` knows."""


def seed_path() -> Path:
    """Says where seed 003 should be: in $SLASHKIT_SEEDS when it is set, else in ../shared/seeds."""
    path: Path = _seed_plugin().default_seed_path()
    return path


def missing_reason(path: Path) -> str:
    """Says, in one line, that the seed is not at `path` and how to give it."""
    return (
        f"seed 003 is not at {path}: put the seeds beside the clone as ../shared/seeds, "
        "or name their folder in SLASHKIT_SEEDS"
    )


def seed_sources(path: Path) -> dict[str, str]:
    """Splits the seed at `path` into its files, `register.ts` and `chain.ts`, line numbers stripped."""
    sources: dict[str, str] = _seed_plugin().split_seed(path.read_text(encoding="utf-8"))
    return sources


# The parser, as JavaScript

_SEPARATOR_LINE: Final = re.compile(r"^const SEPARATOR = /.+/[dgimsuy]*$", re.MULTILINE)
# The function runs from its signature to the first line that is a lone `}` (the body is indented).
_PARSE_CHAIN: Final = re.compile(
    r"^export function parseChain\((?P<params>[^()]*)\)(?P<returns>[^{\n]*) \{\n(?P<body>(?:.*\n)*?)\}$",
    re.MULTILINE,
)
_TYPE: Final = r"[A-Za-z_$][\w$]*(?:\[\])?"
_PARAM: Final = re.compile(rf"(?P<name>[A-Za-z_$][\w$]*)(?::\s*{_TYPE})?")
_RETURNS: Final = re.compile(rf"(?::\s*{_TYPE})?")


def parser_js(chain_ts: str) -> str:
    """Takes `SEPARATOR` and `parseChain` out of the seed's chain.ts as plain JavaScript.

    Only the signature changes: `export` and the parameter and return types go; every other line is the seed's.

    >>> print(parser_js("const SEPARATOR = /x/g\\nexport function parseChain(a: string): Chain {\\n  return a\\n}\\n"))
    const SEPARATOR = /x/g
    function parseChain(a) {
      return a
    }
    <BLANKLINE>
    """
    separators = _SEPARATOR_LINE.findall(chain_ts)
    if len(separators) != 1:
        raise SeedFormatError(f"chain.ts should hold one `const SEPARATOR = /…/` line, and it holds {len(separators)}")
    found = _PARSE_CHAIN.search(chain_ts)
    if found is None:
        raise SeedFormatError("chain.ts holds no `export function parseChain(…) {` closed by a lone `}`")
    if _RETURNS.fullmatch(found["returns"]) is None:
        raise SeedFormatError(f"parseChain's return type is not a plain name: {found['returns']!r}")
    names = []
    for param in found["params"].split(","):
        typed = _PARAM.fullmatch(param.strip())
        if typed is None:
            raise SeedFormatError(f"a parameter of parseChain is not `name` or `name: Type`: {param.strip()!r}")
        names.append(typed["name"])
    return f"{separators[0]}\nfunction parseChain({', '.join(names)}) {{\n{found['body']}}}\n"


_MATCHER: Final = re.compile(r"^\s*on\('command\.run', \{ args: (?P<literal>/.+/[dgimsuy]*) \}", re.MULTILINE)


def matcher_js(register_ts: str) -> str:
    """Takes the `args` matcher of the seed's `command.run` hook out of its register.ts, as `const MATCHER`.

    >>> matcher_js("  on('command.run', { args: /x/ }, async ($, e, next) => {\\n")
    'const MATCHER = /x/\\n'
    """
    literals = [found["literal"] for found in _MATCHER.finditer(register_ts)]
    if len(literals) != 1:
        raise SeedFormatError(
            f"register.ts should hold one `command.run` hook with an `args` matcher, not {len(literals)}"
        )
    return f"const MATCHER = {literals[0]}\n"


# For pytest


def found_or_skip(path: Path) -> Path:
    """Gives `path` back when the seed is there; else skips the test, naming `path` (fails it instead when
    SLASHKIT_REQUIRE_SEEDS is set)."""
    if not path.is_file():
        if os.environ.get(REQUIRE_VARIABLE):
            pytest.fail(missing_reason(path), pytrace=False)
        pytest.skip(missing_reason(path))
    return path
