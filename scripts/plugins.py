"""Writes the repository's own Claude Code marketplace from the core: `.claude-plugin/marketplace.json` and
`plugins/<name>/` for each plugin, with no interpreter named (the plugins find one: docs/claude-code.md, "Which
Python") and links to slashkit's source, which `claude plugin install` copies into the installed plugin.

Run it after changing a mod, the bridge's client or a text the plugins register: `python scripts/plugins.py`.
tests/adapters/test_marketplace.py fails while the committed files differ from what it writes.
"""

import sys
from pathlib import Path

from slashkit.adapters.claude_code import plugins

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    plugins.lay_out(ROOT, python=None)
    for name in plugins.PLUGINS:
        for link, target in plugins.source_links(name).items():
            path = ROOT / link
            if path.is_symlink() and str(path.readlink()) == target:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            path.symlink_to(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
