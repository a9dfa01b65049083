"""What every host's installer needs to put a shim in place: how the shim starts the helper, how long it waits
for it, and how a generated file is written. A host's installer (`claude_code.plugins`, `opencode.install`)
imports these from here and names nothing of another host."""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from slashkit.adapters.bridge.helper import FAIL_TOOL_OPTION

#: The module a shim runs with the interpreter slashkit is installed in: `python -m HELPER_MODULE`.
HELPER_MODULE: Final = "slashkit.adapters.bridge.helper"
#: A helper that has not said READY by then is taken as unavailable (a cold start measured ~0.1-0.3 s).
START_TIMEOUT_MS: Final = 5000
#: Longest wait for one answer; whoami, the slowest thing the helper does, gives up after 2 s.
ANSWER_TIMEOUT_MS: Final = 3000


def helper_facts(python: str, fail_tool: str | None = None) -> dict[str, object]:
    """The facts the bridge's client needs before Python runs: which interpreter, which module with which
    arguments (the fail tool's name, for a host that gives the model the tool under another name than Claude
    Code's), how long to wait."""
    options = [] if fail_tool is None else [FAIL_TOOL_OPTION, fail_tool]
    return {
        "PYTHON": python,
        "HELPER_ARGS": ["-m", HELPER_MODULE, *options],
        "START_TIMEOUT_MS": START_TIMEOUT_MS,
        "ANSWER_TIMEOUT_MS": ANSWER_TIMEOUT_MS,
    }


def typescript_constants(head: str, values: Mapping[str, object]) -> str:
    """A generated TypeScript module exporting each value as a JSON literal, under a `head` comment line."""
    lines = [f"export const {key} = {json.dumps(value, ensure_ascii=False)}" for key, value in values.items()]
    return "\n".join([head, *lines, ""])


def write_file(path: Path, content: bytes) -> bool:
    """Writes `content` to `path`; returns False and leaves the file alone when it already holds those bytes.

    Otherwise the file is replaced whole, so a host loading it never reads half a file."""
    if path.exists() and path.read_bytes() == content:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(content)
    temporary.replace(path)
    return True
