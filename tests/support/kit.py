"""The Claude Code plugins' kit tests (tests/kit, run by `claude plugin test`) laid into a laid-out plugin's `tests/`
folder, one way for both places that do it: tests/engine/test_kit.py, which runs them, and scripts/typescript.py,
which type-checks them with the plugin's TypeScript."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from slashkit.adapters.claude_code import plugins

KIT: Final = Path(__file__).resolve().parents[1] / "kit"
#: The generated facts the kit's fake helper imports, laid beside it (`plugins.module_sources`): the bundled hooks
#: module holds them and exports none.
FACTS: Final = ("wire.ts", "host.ts")


def kit_files(plugin: str) -> list[Path]:
    """The files of tests/kit a plugin's folder gets: its own ``<plugin>.test.ts`` and every shared ``.ts``."""
    tests = sorted(KIT.glob("*.test.ts"))
    strays = [t.name for t in tests if t.name.removesuffix(".test.ts") not in plugins.PLUGINS]
    assert not strays, f"tests/kit holds test files named after no plugin: {strays}"
    shared = sorted(p for p in KIT.glob("*.ts") if not p.name.endswith(".test.ts"))
    return [KIT / f"{plugin}.test.ts", *shared]


def lay_out_kit_tests(folder: Path, plugin: str, sources: Mapping[str, str]) -> None:
    """Makes `folder`'s `tests/` (a laid-out plugin's) with the plugin's kit tests and the generated facts they read,
    taken from `sources` (the plugin's `plugins.module_sources`, which a caller may already hold)."""
    tests = folder / "tests"
    tests.mkdir()
    for source in kit_files(plugin):
        shutil.copyfile(source, tests / source.name)
    for file in FACTS:
        (tests / file).write_text(sources[file])
