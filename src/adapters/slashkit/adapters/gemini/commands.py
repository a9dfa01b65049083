"""Gemini CLI's custom commands (`.toml` files), found and expanded as Gemini CLI 0.61.0 does, so that a chain's
next step reaches the model as the text Gemini would have sent for it typed alone (no hook output runs a slash
command: docs/gemini.md). Read in its bundle (`FileCommandLoader`, the prompt processors) and checked against the
real CLI's own expansion (tests/engine/test_gemini_chain.py):

- the folders, in order, the later winning a name: the user's `~/.gemini/commands`, the project's
  `.gemini/commands`, then each extension's `commands` (`~/.gemini/extensions/*/`); `a/b.toml` is `/a:b`, and each
  path segment keeps letters, digits, `_`, `-` and `.` (anything else becomes `_`);
- `@{path}` is the content of that file of the project (a path that cannot be read stays as written, as Gemini
  leaves it);
- `{{args}}` is the arguments as typed; a prompt without it gets the whole typed line after a blank line, when
  there are arguments;
- `!{...}` runs a shell command under Gemini's own shell policy, which no hook can ask: a step whose prompt holds
  one is not expanded here (its run fails with `ShellInjection`'s line).
"""

import itertools
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from slashkit.adapters.files import read_regular

ARGS: Final = "{{args}}"
SHELL: Final = "!{"
FILE: Final = "@{"
#: The most of a command file, or of a file an `@{...}` brings in, that is read (Gemini has no bound of its own;
#: a prompt past this is no prompt a person wrote).
MAX_FILE: Final = 1024 * 1024
#: How many command files are looked at, at most, over every folder.
MAX_COMMANDS: Final = 2000
_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_\-.]")


class Unexpandable(Exception):
    """The command cannot be expanded here; the message says why, in one line."""


def folders(project: Path, home: Path) -> list[Path]:
    """Gemini's command folders, in the order it loads them (a later one wins a name)."""
    extensions = home / ".gemini" / "extensions"
    try:
        installed = sorted(p / "commands" for p in extensions.iterdir() if p.is_dir())
    except OSError:
        installed = []
    return [home / ".gemini" / "commands", project / ".gemini" / "commands", *installed]


def command_name(relative: Path) -> str:
    """The command a file under a command folder is (`git/commit.toml` is `git:commit`)."""
    segments = [_UNSAFE.sub("_", s) for s in relative.with_suffix("").parts]
    return ":".join(s if len(s) <= 50 else s[:47] + "..." for s in segments)


def find(project: Path, home: Path) -> dict[str, Path]:
    """Every custom command by name, with its file."""
    found: dict[str, Path] = {}
    for folder in folders(project, home):
        for path in sorted(_tomls(folder)):
            found[command_name(path.relative_to(folder))] = path
    return found


def _tomls(folder: Path) -> list[Path]:
    """The command files under a folder, the first `MAX_COMMANDS` found (a folder that cannot be read has none)."""
    found = (Path(root) / f for root, _, files in os.walk(folder) for f in files if f.endswith(".toml"))
    return list(itertools.islice(found, MAX_COMMANDS))


def prompt_of(path: Path) -> str:
    """The `prompt` of a command file, or Unexpandable saying why it has none."""
    try:
        raw = read_regular(path, MAX_FILE + 1)
    except OSError as error:
        raise Unexpandable(f"{path.name} cannot be read: {error.strerror}") from None
    if len(raw) > MAX_FILE:
        raise Unexpandable(f"{path.name} is over {MAX_FILE} bytes")
    try:
        prompt = tomllib.loads(raw.decode())["prompt"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        raise Unexpandable(f"{path.name} is no command file Gemini reads (a TOML `prompt` string)") from None
    if not isinstance(prompt, str):
        raise Unexpandable(f"{path.name}'s prompt is not a string")
    return prompt


def expand(prompt: str, command: str, args: str, project: Path) -> str:
    """The text Gemini sends the model for `/command args` typed alone, whose file's prompt is `prompt`."""
    if SHELL in prompt:
        raise Unexpandable(
            f"/{command} runs a shell command (!{{...}}) under Gemini's own policy, which a hook cannot ask"
        )
    text = _files(prompt, command, project) if FILE in prompt else prompt
    if ARGS in prompt:
        return text.replace(ARGS, args)
    return f"{text}\n\n/{command} {args}" if args else text


def _files(prompt: str, command: str, project: Path) -> str:
    out, at = [], 0
    while (start := prompt.find(FILE, at)) >= 0:
        end, depth = start + len(FILE), 1
        while end < len(prompt) and depth:
            depth += {"{": 1, "}": -1}.get(prompt[end], 0)
            end += 1
        if depth:
            raise Unexpandable(f"/{command}: an unclosed @{{ in its prompt")
        out += [prompt[at:start], _read(prompt[start + len(FILE) : end - 1].strip(), project, prompt[start:end])]
        at = end
    return "".join([*out, prompt[at:]])


def _read(name: str, project: Path, placeholder: str) -> str:
    path = (project / name).resolve()
    if not path.is_relative_to(project.resolve()):
        return placeholder
    try:
        return read_regular(path, MAX_FILE).decode(errors="replace")
    except OSError:
        return placeholder


def expansion(command: str, args: str, project: Path, home: Path, known: Mapping[str, Path] | None = None) -> str:
    """`/command args` as Gemini would send it, or Unexpandable when it is no custom command this can expand."""
    path = (find(project, home) if known is None else known).get(command)
    if path is None:
        raise Unexpandable(f"/{command} is no custom command of Gemini's (.toml) here")
    return expand(prompt_of(path), command, args, project)
