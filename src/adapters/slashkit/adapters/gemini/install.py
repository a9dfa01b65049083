"""Puts slashkit's hooks and fail tool where Gemini CLI reads them: the `hooks`, `hooksConfig` and `mcpServers`
keys of a project's `.gemini/settings.json`, or of the user's `~/.gemini/settings.json` (every project); and takes
them out again, leaving every other key as it was. Gemini 0.61.0 loads extensions from the user's folder only
(`ExtensionManager.loadExtensions`, read in its bundle), so a project's install is its settings.

The entries name no path of the machine: each runs a line of shell that finds Python as the Node hosts do,
`$SLASHKIT_PYTHON`, else the interpreter of `slashkit-helper` on PATH (its `#!` line); with neither, the session's
start shows the one unavailable line and every hook lets Gemini go on as it would.
"""

import json
from pathlib import Path
from typing import Any, Final

from slashkit.adapters import __version__
from slashkit.adapters.bridge.shim import HELPER_SCRIPT, refuse_link, write_file
from slashkit.adapters.gemini import fail_tool
from slashkit.core import texts

SETTINGS: Final = "settings.json"
#: The extension's name and manifest, for `gemini extensions link|install` (docs/gemini.md, "As an extension").
EXTENSION: Final = "slashkit"
MANIFEST: Final = "gemini-extension.json"
#: The hook events slashkit answers (docs/gemini.md); SessionStart says when no Python is found, and tells a resumed
#: session what its previous process left cut off.
EVENTS: Final = ("SessionStart", "BeforeModel", "AfterAgent", "SessionEnd")
HOOK_MODULE: Final = "slashkit.adapters.gemini.hook"
TOOL_MODULE: Final = "slashkit.adapters.gemini.fail_tool"
#: What marks an entry as slashkit's, for uninstall and a second install.
MARK: Final = "slashkit.adapters.gemini"
#: A hook's longest run, in ms: a chain's step asks the helper a few times (each bounded by the bridge's 3 s) and a
#: first one starts it (5 s).
TIMEOUT_MS: Final = 20000
NONE_FOUND: Final = texts.CHAIN_UNAVAILABLE.format(
    why=f"no {HELPER_SCRIPT} on PATH: install slashkit there, or set SLASHKIT_PYTHON to a Python with it"
)
_FIND: Final = f'p="${{SLASHKIT_PYTHON:-$(sed -n "1s/^#! *//p" "$(command -v {HELPER_SCRIPT})" 2>/dev/null)}}"; '

Json = dict[str, Any]


def settings_file(project: Path | None, home: Path) -> Path:
    """The settings file: the project's `.gemini/settings.json`, or (None) the user's."""
    return (home if project is None else project) / ".gemini" / SETTINGS


def hook_command(event: str) -> str:
    """The shell line Gemini runs for one hook event: `# MARK` keeps it findable."""
    if event == "SessionStart":
        said = json.dumps({"systemMessage": NONE_FOUND})
        return f'{_FIND}if [ -z "$p" ]; then echo \'{said}\'; else exec "$p" -m {HOOK_MODULE}; fi # {MARK}'
    return f'{_FIND}if [ -n "$p" ]; then exec "$p" -m {HOOK_MODULE}; fi; echo \'{{}}\''


def entries() -> Json:
    """slashkit's keys of the settings."""
    hooks = {
        event: [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command(event), "timeout": TIMEOUT_MS}]}]
        for event in EVENTS
    }
    server = {"command": "sh", "args": ["-c", f'{_FIND}exec "$p" -m {TOOL_MODULE}'], "trust": True}
    return {"hooks": hooks, "mcpServers": {fail_tool.SERVER: server}}


def extension(folder: Path) -> list[Path]:
    """Lays slashkit out as a Gemini extension in `folder` (its manifest with the fail tool's server, and its
    `hooks/hooks.json`), for `gemini extensions link|install FOLDER`; returns the files it changed."""
    refuse_link(folder)
    ours = entries()
    manifest = {"name": EXTENSION, "version": __version__, "mcpServers": ours["mcpServers"]}
    wanted = {folder / MANIFEST: manifest, folder / "hooks" / "hooks.json": {"hooks": ours["hooks"]}}
    return [p for p, value in wanted.items() if write_file(p, (json.dumps(value, indent=2) + "\n").encode())]


def install(path: Path) -> list[Path]:
    """Adds slashkit's entries to the settings file (made when missing); returns it when it changed."""
    settings = _read(path)
    ours = entries()
    hooks = _without_ours(settings.get("hooks"))
    for event, groups in ours["hooks"].items():
        hooks[event] = [*hooks.get(event, []), *groups]
    servers, config = _object(settings, "mcpServers"), _object(settings, "hooksConfig")
    changed = {**settings, "hooksConfig": {**config, "enabled": True}, "hooks": hooks}
    changed["mcpServers"] = {**servers, **ours["mcpServers"]}
    return [path] if write_file(path, (json.dumps(changed, indent=2) + "\n").encode()) else []


def uninstall(path: Path) -> list[Path]:
    """Takes slashkit's entries out of the settings file (and the file, when nothing else is left in it)."""
    if not path.exists():
        return []
    settings = _read(path)
    hooks = {event: groups for event, groups in _without_ours(settings.get("hooks")).items() if groups}
    servers = {k: v for k, v in _object(settings, "mcpServers").items() if MARK not in json.dumps(v)}
    left = {k: v for k, v in settings.items() if k not in ("hooks", "mcpServers")}
    left.update({"hooks": hooks} if hooks else {}, **({"mcpServers": servers} if servers else {}))
    if not hooks and left.get("hooksConfig") == {"enabled": True}:
        del left["hooksConfig"]
    if left == settings:
        return []
    if not left:
        path.unlink()
        return [path]
    write_file(path, (json.dumps(left, indent=2) + "\n").encode())
    return [path]


def _object(settings: Json, key: str) -> Json:
    value = settings.get(key)
    return value if isinstance(value, dict) else {}


def _without_ours(hooks: object) -> dict[str, list[Any]]:
    if not isinstance(hooks, dict):
        return {}
    kept: dict[str, list[Any]] = {}
    for event, groups in hooks.items():
        kept[event] = [g for g in groups if MARK not in json.dumps(g)] if isinstance(groups, list) else groups
    return kept


def _read(path: Path) -> Json:
    """The settings as they are (an empty file or none is no settings); a file Gemini could not read either is an
    OSError naming it, so nothing of the person's is written over."""
    refuse_link(path.parent)
    refuse_link(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise OSError(0, "not UTF-8 text, which slashkit does not write over", str(path)) from None
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError:
        why = "not JSON (comments included), which slashkit does not write over"
        raise OSError(0, why, str(path)) from None
    if not isinstance(settings, dict):
        raise OSError(0, "not a JSON object, which slashkit does not write over", str(path))
    return settings
