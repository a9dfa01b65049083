"""The repository is a Claude Code marketplace: `.claude-plugin/marketplace.json` and `plugins/` are committed,
generated from the core by scripts/plugins.py, carry slashkit's source through links, and name no path of the
machine that wrote them."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from slashkit.adapters.bridge.bridge import HARNESS_VARIABLE
from slashkit.adapters.claude_code import plugins

ROOT = Path(__file__).resolve().parents[2]


def committed() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


def test_the_committed_marketplace_is_what_scripts_plugins_writes_from_the_core() -> None:
    wanted = plugins.marketplace_files(python=None)
    tracked = set(committed())
    assert {str(path) for path in wanted} <= tracked, "run: python scripts/plugins.py, then commit"
    stale = [str(path) for path, content in wanted.items() if (ROOT / path).read_bytes() != content]
    assert stale == [], f"out of date, run: python scripts/plugins.py ({', '.join(stale)})"
    for name in plugins.PLUGINS:
        for link, target in plugins.source_links(name).items():
            assert str(link) in tracked and (ROOT / link).is_symlink(), link
            assert str((ROOT / link).readlink()) == target
            assert (ROOT / link).resolve() == ROOT / target.removeprefix("../../../")
    # Nothing else is committed there: a file the script no longer writes is taken out.
    links = {str(link) for name in plugins.PLUGINS for link in plugins.source_links(name)}
    under = {path for path in tracked if path.startswith(("plugins/", ".claude-plugin/"))}
    assert under == {str(path) for path in wanted} | links


def test_the_committed_plugins_let_the_plugin_find_its_python() -> None:
    for name in plugins.PLUGINS:
        bundled = (ROOT / "plugins" / name / "hooks" / plugins.MODULE).read_text()
        assert plugins.PYTHON_LINE in bundled
        assert 'var HELPER_SCRIPT = "slashkit-helper";\n' in bundled


def test_no_committed_file_holds_a_path_of_the_machine_that_wrote_it() -> None:
    machine = {str(ROOT), sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)}
    found = [
        f"{path}: {mark}"
        for path in committed()
        if (ROOT / path).is_file() and not (ROOT / path).is_symlink()
        for text in [(ROOT / path).read_bytes().decode("utf-8", "replace")]
        for mark in machine
        if mark in text
    ]
    assert found == []


def test_the_slash_chain_plugin_reads_the_harness_mark_the_sdk_host_sets() -> None:
    # The engine takes only a literal name in `$.env.get`, so the plugin writes the variable out: it must be the one
    # the SDK host sets, or the plugin would take the host's tool calls (tests/kit: the harness test).
    source = (ROOT / "plugins" / "slash-chain" / "hooks" / plugins.MODULE).read_text()
    assert f'$.env.get("{HARNESS_VARIABLE}")' in source


def test_the_committed_hooks_modules_are_what_esbuild_bundles_from_the_typescript() -> None:
    # The bundles ship in the package (`mod/<plugin>.js`); a change to a mod or to the client that was not bundled
    # again would never reach the engine.
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "plugins.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_plugins_hooks_module_is_one_file_that_imports_nothing() -> None:
    # The engine checks a hooks module file by file: one file starts a session sooner (docs/performance.md).
    for name in plugins.PLUGINS:
        hooks = ROOT / "plugins" / name / "hooks"
        assert sorted(p.name for p in hooks.iterdir()) == ["hooks.json", plugins.MODULE]
        bundled = (hooks / plugins.MODULE).read_text()
        assert re.findall(r"^\s*import\b.*$", bundled, re.MULTILINE) == [], name


def test_laying_out_writes_the_interpreter_into_the_bundled_module() -> None:
    bundle = f"var A = 1;\n{plugins.PYTHON_LINE}var B = 2;\n"
    named = 'var A = 1;\nvar PYTHON = "/opt/py 3/bin/python";\nvar B = 2;\n'
    assert plugins.with_python(bundle, "/opt/py 3/bin/python") == named
    assert plugins.with_python(bundle, None) == bundle
    for broken in ("var A = 1;\n", bundle + plugins.PYTHON_LINE):
        with pytest.raises(ValueError, match="expected one"):
            plugins.with_python(broken, "/usr/bin/python3")
