"""`slashkit opencode install` / `uninstall` as a person meets them: where the plugin goes, what it starts,
that a second run changes nothing, and that taking it out leaves everything else alone."""

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

from slashkit.adapters.bridge.shim import HELPER_MODULE
from slashkit.adapters.opencode.install import config_dir, host_module, install, uninstall
from slashkit.core.chain import SEPARATOR_JS
from slashkit.core.texts import FAIL_TOOL_ID


def slashkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", *args], capture_output=True, text=True, env=env
    )


def test_install_puts_the_entry_in_plugins_and_its_modules_one_folder_down(tmp_path: Path) -> None:
    shown = slashkit("opencode", "install", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    plugins = tmp_path / ".opencode" / "plugins"
    # opencode loads every plugins/*.ts as a plugin, so only the entry may stand there.
    assert sorted(p.name for p in plugins.glob("*.ts")) == ["slashkit.ts"]
    assert sorted(p.name for p in (plugins / "slashkit").iterdir()) == ["bridge.ts", "client.ts", "host.ts"]
    assert f"installed in {plugins}" in shown.stdout
    assert str(plugins / "slashkit.ts") in shown.stdout


def test_a_second_install_changes_nothing_and_says_so(tmp_path: Path) -> None:
    slashkit("opencode", "install", str(tmp_path))
    again = slashkit("opencode", "install", str(tmp_path))
    assert again.returncode == 0
    assert again.stdout.strip() == f"slashkit plugin already up to date in {tmp_path / '.opencode' / 'plugins'}"


def test_the_plugin_starts_the_helper_with_this_interpreter_by_its_absolute_path(tmp_path: Path) -> None:
    install(tmp_path, "/opt/py/bin/python3")
    host = (tmp_path / "plugins" / "slashkit" / "host.ts").read_text()
    assert 'export const PYTHON = "/opt/py/bin/python3"' in host
    assert (
        'export const HELPER_ARGS = ["-m", "slashkit.adapters.bridge.helper", "--fail-tool", "slash-chain_fail"]'
        in host
    )


def test_the_plugin_speaks_through_the_bridges_own_client(tmp_path: Path) -> None:
    # One client for every JavaScript host: the copy is the bridge's file as it is, not a second transport.
    install(tmp_path)
    client = resources.files("slashkit.adapters.bridge") / "client.ts"
    assert (tmp_path / "plugins" / "slashkit" / "client.ts").read_text() == client.read_text()


def test_the_plugin_imports_nothing_from_npm_at_run_time(tmp_path: Path) -> None:
    install(tmp_path)
    for module in (tmp_path / "plugins").rglob("*.ts"):
        for line in module.read_text().splitlines():
            if line.startswith("import ") and " from '" in line:
                source = line.rsplit(" from ", 1)[1].strip("'\"; ")
                assert line.startswith("import type ") or source.startswith(("node:", "./")), line


def test_the_matcher_and_the_fail_tool_come_from_the_core() -> None:
    host = host_module(sys.executable)
    assert f"export const SEPARATOR = {SEPARATOR_JS}" in host
    # opencode's name for the tool, which the helper hears with its arguments for the fail note.
    assert 'export const FAIL_TOOL = "slash-chain_fail"' in host
    assert f'export const HELPER_ARGS = ["-m", "{HELPER_MODULE}", "--fail-tool", "slash-chain_fail"]' in host
    assert FAIL_TOOL_ID not in host


def test_global_install_goes_to_the_users_opencode_config(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    shown = slashkit("opencode", "install", "--global", env=env)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "config" / "opencode" / "plugins" / "slashkit.ts").is_file()
    assert config_dir(None, {"HOME": "/home/ann"}) == Path("/home/ann/.config/opencode")


def test_uninstall_takes_out_only_the_plugin(tmp_path: Path) -> None:
    target = config_dir(tmp_path)
    install(target)
    other = target / "plugins" / "mine.ts"
    other.write_text("export const Mine = async () => ({})\n")
    removed = uninstall(target)
    assert len(removed) == 4
    assert [p.name for p in (target / "plugins").iterdir()] == ["mine.ts"]
    shown = slashkit("opencode", "uninstall", str(tmp_path))
    assert shown.stdout.strip() == f"slashkit plugin was not installed from {target / 'plugins'}"


def test_install_refuses_a_project_that_is_not_a_folder(tmp_path: Path) -> None:
    shown = slashkit("opencode", "install", str(tmp_path / "missing"))
    assert shown.returncode == 2
    assert "is not a folder" in shown.stderr


def test_install_into_a_folder_that_cannot_be_written_is_one_line_naming_it_and_exit_1() -> None:
    # /proc/1 is a folder, so it passes the check above, and no one may make a folder in it.
    refused = slashkit("opencode", "install", "/proc/1")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert (
        refused.stderr
        == "slashkit opencode install: error: cannot write /proc/1/.opencode: No such file or directory\n"
    )


def test_global_install_under_a_home_that_cannot_be_written_is_one_line_naming_it_and_exit_1() -> None:
    refused = slashkit(
        "opencode", "install", "--global", env={**os.environ, "HOME": "/proc/nope", "XDG_CONFIG_HOME": ""}
    )
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == "slashkit opencode install: error: cannot write /proc/nope: No such file or directory\n"
