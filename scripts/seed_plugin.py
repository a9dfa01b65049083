"""Lay out seed 003 (the reference TypeScript mod `slash-chain`) as a loadable Claude Code plugin folder.

The seed is read at run time and never copied into the repository. It is one text file: a title line
(`slash-chain`), a blank line, then register.ts and chain.ts, each source line prefixed with its line
number (no separator between the number and the text), the two files parted by one unnumbered blank
line; chain.ts is where the numbering restarts at 1.

Usage: ``python scripts/seed_plugin.py OUT_DIR [SEED_FILE]``. The seed file defaults to
``$SLASHKIT_SEEDS/003_e3cd542c3666b0ba.txt`` when SLASHKIT_SEEDS is set, else to
``<repo root>/../shared/seeds/003_e3cd542c3666b0ba.txt``. Prints the plugin folder.

Import specifiers are kept as the seed has them (`./chain.ts`): measured on 2.1.328, `claude plugin
validate` loads the module with that import and reports no error (only the TS5097 warning for a `.ts`
suffix on an import path), and the mod runs under `claude -p`, so nothing is rewritten.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SEED_NAME = "003_e3cd542c3666b0ba.txt"
PLUGIN_NAME = "slash-chain"
REPO_ROOT = Path(__file__).resolve().parent.parent
FILE_NAMES = ("register.ts", "chain.ts")


class SeedFormatError(ValueError):
    """The seed text is not laid out as expected (title, blank line, numbered files)."""


def default_seed_path() -> Path:
    seeds = os.environ.get("SLASHKIT_SEEDS")
    base = Path(seeds) if seeds else REPO_ROOT.parent / "shared" / "seeds"
    return base / SEED_NAME


def split_seed(text: str) -> dict[str, str]:
    """Split the seed into its source files, line numbers stripped; keys are FILE_NAMES in order."""
    lines = text.split("\n")
    if len(lines) < 3 or lines[0].strip() != PLUGIN_NAME or lines[1] != "":
        raise SeedFormatError(f"the seed must start with a {PLUGIN_NAME!r} title line and a blank line")
    files: list[list[str]] = []
    expected = 0  # the line number the next line carries; 0 between files (the next one opens a file)
    for index, line in enumerate(lines[2:], start=3):
        if expected == 0:
            if not line.startswith("1"):
                raise SeedFormatError(f"seed line {index} should open a file with line 1: {line!r}")
            files.append([line[1:]])
            expected = 2
        elif line.startswith(str(expected)):
            files[-1].append(line[len(str(expected)) :])
            expected += 1
        elif line == "":
            expected = 0  # the unnumbered blank line between two files
        else:
            raise SeedFormatError(f"seed line {index} is not numbered {expected}: {line!r}")
    if len(files) != len(FILE_NAMES):
        raise SeedFormatError(f"the seed holds {len(files)} numbered files, expected {len(FILE_NAMES)}")
    sources = {name: "\n".join(body) for name, body in zip(FILE_NAMES, files, strict=True)}
    if "export const register" not in sources["register.ts"]:
        raise SeedFormatError("the first file is not register.ts (no `export const register`)")
    return sources


def plugin_manifest() -> dict[str, object]:
    return {
        "name": PLUGIN_NAME,
        "version": "0.0.1",
        "description": "Runs /a && /b one after another (reference mod from slashkit seed 003).",
        "author": {"name": "slashkit seed 003"},
    }


def write_plugin(out_dir: Path, seed_path: Path | None = None) -> Path:
    """Write the plugin folder under out_dir (created if needed) and return its absolute path."""
    seed = seed_path if seed_path is not None else default_seed_path()
    sources = split_seed(seed.read_text(encoding="utf-8"))
    out = out_dir.resolve()
    (out / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (out / "hooks").mkdir(parents=True, exist_ok=True)
    (out / ".claude-plugin" / "plugin.json").write_text(
        json.dumps(plugin_manifest(), indent=2) + "\n", encoding="utf-8"
    )
    (out / "hooks" / "hooks.json").write_text(
        json.dumps({"modules": ["./register.ts"]}, indent=2) + "\n", encoding="utf-8"
    )
    for name, body in sources.items():
        (out / "hooks" / name).write_text(body, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        print("usage: python scripts/seed_plugin.py OUT_DIR [SEED_FILE]", file=sys.stderr)
        return 2
    seed = Path(args[1]) if len(args) == 2 else None
    try:
        out = write_plugin(Path(args[0]), seed)
    except (OSError, SeedFormatError) as err:
        print(f"seed_plugin: {err}", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
