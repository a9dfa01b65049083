"""Lays out the Claude Code plugins slashkit ships (a marketplace of `slash-chain` and `self-command`) with the
interpreter they start and the texts they register, generated from the core so nothing is written twice."""

import hashlib
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Final

from slashkit.adapters import __version__
from slashkit.adapters.bridge.shim import (
    client_files,
    helper_facts,
    refuse_link,
    typescript_constants,
    write_file,
    xdg_home,
)
from slashkit.adapters.saved_chains import PERSON_FOLDER, PROJECT_FOLDER
from slashkit.core import texts
from slashkit.core.chain import SEPARATOR_JS
from slashkit.core.session import BUILTIN_KEY, ENABLED_KEY

MARKETPLACE: Final = "slashkit"
PLUGINS: Final = ("slash-chain", "self-command")

_DESCRIPTIONS: Final = {
    "slash-chain": "Runs /a && /b one after another, as a shell's && does (slashkit)",
    "self-command": "Inside lich, runs a built-in command such as /compact when the user asks the model (slashkit)",
}
#: The folder of the repository's own plugins that holds slashkit's source (links to these parts of the
#: repository), which a plugin builds its private environment from.
SOURCE: Final = "slashkit"
SOURCE_PARTS: Final = ("pyproject.toml", "README.md", "LICENSE", "src")
_UNAVAILABLE: Final = {"slash-chain": texts.CHAIN_UNAVAILABLE, "self-command": texts.SELF_COMMAND_UNAVAILABLE}
#: A plugin's hooks module: one JavaScript file, `mod/<plugin>.js` in the package, that scripts/plugins.py bundles from
#: the plugin's TypeScript (`module_sources`) with the pinned esbuild, types and unused code dropped. The engine checks
#: a hooks module on its main thread before the session starts, file by file, at a cost that grows with the code:
#: each session started 19 ms sooner with this one file than with it and the two generated files it imported, and
#: those three checked 4.5-35 ms faster than the five TypeScript files (measured on Claude Code 2.1.328,
#: docs/performance.md). Laying it out writes in the interpreter (`with_python`).
MODULE: Final = "register.js"
#: The interpreter's line in a bundled module, as the bundle holds it: esbuild writes host.ts's `export const` as a
#: `var`, and the bundle is made with no interpreter named (the repository's own marketplace).
PYTHON_LINE: Final = "var PYTHON = null;\n"
#: The line of `mod/slash-chain.ts` that imports the chain matcher, and the matcher that uses it (`inline_separator`).
SEPARATOR_IMPORT: Final = "import { SEPARATOR } from './host.js'\n"
SEPARATOR_MATCHER: Final = "{ args: SEPARATOR }"


def default_root(python: str = sys.executable) -> Path:
    """The marketplace folder for this interpreter: one per slashkit version and interpreter path, under
    `$XDG_DATA_HOME` (a relative value is ignored, as the XDG spec asks)."""
    data = xdg_home("XDG_DATA_HOME", ".local/share")
    tag = hashlib.sha256(os.fsencode(python)).hexdigest()[:12]
    return data / "slashkit" / "claude-code" / f"{__version__}-{tag}"


def lay_out(root: Path, python: str | None = sys.executable) -> Path:
    """Writes the marketplace under `root` (files that already hold the same bytes are left alone); `python` is the
    interpreter its plugins start the helper with, or None for the repository's own marketplace, whose plugins
    find one (docs/claude-code.md, "Which Python").

    Every file's bytes are made before the first is written, so a failure (an interpreter path that is not
    UTF-8) leaves nothing half written; and a symbolic link at any folder below `root` (a plugin's folder, its
    `hooks`) is refused before anything is written, so nothing lands where a link points."""
    files = {root / path: content for path, content in marketplace_files(python).items()}
    for path in files:
        for folder in path.relative_to(root).parents[:-1]:
            refuse_link(root / folder)
    for path, content in files.items():
        write_file(path, content)
    return root


def plugin_dir(name: str, root: Path | None = None, python: str = sys.executable) -> Path:
    """Lays out the marketplace if needed and returns one plugin's folder, ready for `--plugin-dir`."""
    if name not in PLUGINS:
        raise ValueError(f"no plugin {name!r}: slashkit ships {', '.join(PLUGINS)}")
    return lay_out(root or default_root(python), python) / "plugins" / name


def marketplace_files(python: str | None) -> dict[Path, bytes]:
    """Every file of the marketplace, by its path under the marketplace's root."""
    files = {Path(".claude-plugin/marketplace.json"): _json(_marketplace()).encode()}
    for name in PLUGINS:
        files |= {Path("plugins", name, path): content for path, content in _plugin(name, python).items()}
    return files


def source_links(name: str) -> dict[Path, str]:
    """The symbolic links that give the repository's own plugin `name` slashkit's source, by their path under the
    repository and what they point at: `claude plugin install` copies what a link points at (measured on Claude
    Code 2.1.328), so the installed plugin carries the source it builds its private environment from."""
    return {Path("plugins", name, SOURCE, part): f"../../../{part}" for part in SOURCE_PARTS}


def _plugin(name: str, python: str | None) -> dict[str, bytes]:
    """One plugin's files, by their path in its folder."""
    mod = resources.files("slashkit.adapters.claude_code") / "mod"
    manifest = {
        "name": name,
        "version": __version__,
        "description": _DESCRIPTIONS[name],
        "author": {"name": "slashkit"},
        "license": "MIT",
        # What it reaches: only the helper, over a unix socket, as `http://localhost/...` (mod/bridge.ts).
        "network": {"hosts": ["localhost"]},
    }
    written = {
        ".claude-plugin/plugin.json": _json(manifest),
        "hooks/hooks.json": _json({"modules": [f"./{MODULE}"]}),
        f"hooks/{MODULE}": with_python((mod / f"{name}.js").read_text(), python),
        "README.md": (mod / f"{name}.README.md").read_text(),
    }
    return {path: text.encode() for path, text in written.items()} | {
        ".claude-plugin/icon.png": (mod / "icon.png").read_bytes()
    }


def module_sources(name: str) -> dict[str, str]:
    """The TypeScript a plugin's hooks module (`MODULE`) is bundled from, by file name: its mod as `register.ts`
    (the chain matcher written in as a literal for `slash-chain`), Claude Code's side of the bridge, the bridge's
    client shared by every JavaScript host (which bridge.ts gives Claude Code's `$`), the wire's facts, and the
    plugin's own (`host.ts`, no interpreter named)."""
    mod = resources.files("slashkit.adapters.claude_code") / "mod"
    register = (mod / f"{name}.ts").read_text()
    client = client_files()
    return {
        "register.ts": inline_separator(register) if name == "slash-chain" else register,
        "bridge.ts": (mod / "bridge.ts").read_text(),
        "client.ts": client["client.ts"],
        "wire.ts": client["wire.ts"],
        "host.ts": _host_module(name),
    }


def with_python(bundle: str, python: str | None) -> str:
    """A bundled hooks module with `python` as the interpreter its plugin starts (None: the plugin finds one). A
    bundle without exactly one `PYTHON_LINE` is a ValueError."""
    if bundle.count(PYTHON_LINE) != 1:
        raise ValueError(f"expected one {PYTHON_LINE.strip()!r} in the bundled module")
    named = helper_facts(python)["PYTHON"]  # an interpreter whose path is not UTF-8 is a ValueError there
    return bundle.replace(PYTHON_LINE, f"var PYTHON = {json.dumps(named, ensure_ascii=False)};\n")


def inline_separator(source: str) -> str:
    """Writes the core's chain pattern (`slashkit.core.chain.SEPARATOR_JS`) into a mod as the literal of its
    `command.run` matcher, in the place of the `SEPARATOR` it imports from `host.ts`, and drops that import: the
    engine's static analysis reads a matcher only as a literal (measured on Claude Code 2.1.328: imported, the hook
    loads, but `claude plugin validate` lists the matcher as `?`). So the pattern has one source, the core's. A mod
    without exactly one such import and one such matcher is a ValueError."""
    if source.count(SEPARATOR_IMPORT) != 1 or source.count(SEPARATOR_MATCHER) != 1:
        raise ValueError(f"expected one {SEPARATOR_IMPORT.strip()!r} and one {SEPARATOR_MATCHER!r} in the mod")
    return source.replace(SEPARATOR_IMPORT, "").replace(SEPARATOR_MATCHER, f"{{ args: {SEPARATOR_JS} }}")


def _host_module(name: str) -> str:
    """The generated facts a plugin needs before Python runs: which interpreter (none named here: `with_python`
    writes it into the bundle), where its private environment's source is, and what it registers."""
    values: dict[str, object] = {
        **helper_facts(None),
        "VERSION": __version__,
        "SOURCE": SOURCE,
        "UNAVAILABLE": _UNAVAILABLE[name],
        "ENABLED_KEY": ENABLED_KEY,
        "BUILTIN_KEY": BUILTIN_KEY,
        "COMMAND_DESCRIPTION": texts.CHAIN_COMMAND_DESCRIPTION,
        "COMMAND_HINT": texts.CHAIN_COMMAND_HINT,
        "FAIL_DESCRIPTION": texts.FAIL_DESCRIPTION,
        "FAIL_SCHEMA": texts.FAIL_SCHEMA,
        "BUILTIN_TOOL": texts.BUILTIN_TOOL,
        # English, as the fail tool's: the tool is declared before the helper (which knows the language) starts.
        "BUILTIN_DESCRIPTION": texts.text(texts.ENGLISH, texts.Key.SELF_TOOL_NOTE),
        "BUILTIN_SCHEMA": texts.BUILTIN_SCHEMA,
        # Where saved chains can be (slashkit.adapters.saved_chains): a session with neither folder asks for none.
        "PERSON_CHAINS": PERSON_FOLDER.as_posix(),
        "PROJECT_CHAINS": PROJECT_FOLDER.as_posix(),
    }
    head = "// Generated by slashkit (slashkit.adapters.claude_code.plugins) from its core; do not edit."
    # The chain matcher, which bundling writes into the mod as a literal (`inline_separator`).
    matcher = f"export const SEPARATOR = {SEPARATOR_JS}\n" if name == "slash-chain" else ""
    return typescript_constants(head, values) + matcher


def _marketplace() -> dict[str, object]:
    return {
        "name": MARKETPLACE,
        "owner": {"name": "slashkit"},
        "description": "slashkit's Claude Code plugins: slash chains (/a && /b, ||, ;, |) and self-commands in lich",
        "plugins": [
            {"name": name, "source": f"./plugins/{name}", "description": _DESCRIPTIONS[name]} for name in PLUGINS
        ],
    }


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
