"""`slashkit opencode install` / `uninstall` as a person meets them: where the plugin goes, what it starts,
that a second run changes nothing, and that taking it out leaves everything else alone."""

import contextlib
import json
import os
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

from slashkit.adapters.bridge import protocol
from slashkit.adapters.bridge.shim import HELPER_MODULE, NODE_FILES, write_file
from slashkit.adapters.opencode.install import MODULES, config_dir, host_module, install, uninstall
from slashkit.core import texts
from slashkit.core.chain import SEPARATOR_JS
from slashkit.core.forecast import MAX_AHEAD
from slashkit.core.texts import BUILTIN_SCHEMA, BUILTIN_TOOL_ID, FAIL_TOOL_ID, Key


def slashkit(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def plugin_source() -> str:
    return (resources.files("slashkit.adapters.opencode") / "plugin" / "slashkit.ts").read_text()


def a_victim(tmp_path: Path) -> Path:
    """A file of the user's outside the project, which a checked-out project's links aim at."""
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("the user's own file\n")
    return victim


def test_install_puts_the_entry_in_plugins_and_its_modules_one_folder_down(tmp_path: Path) -> None:
    shown = slashkit("opencode", "install", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    plugins = tmp_path / ".opencode" / "plugins"
    # opencode loads every plugins/*.ts as a plugin, so only the entry may stand there.
    assert sorted(p.name for p in plugins.glob("*.ts")) == ["slashkit.ts"]
    assert sorted(p.name for p in (plugins / "slashkit").iterdir()) == sorted((*MODULES, *NODE_FILES, "host.ts"))
    assert NODE_FILES == ("client.ts", "wire.ts", "node-host.ts")
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
    assert 'export const HELPER_ARGS = ["-m", "slashkit.adapters.bridge.helper", "--fail-tool"' in host


def test_the_plugin_speaks_through_the_bridges_own_client(tmp_path: Path) -> None:
    # One client for every JavaScript host: the copy is the bridge's file as it is, not a second transport.
    install(tmp_path)
    client = resources.files("slashkit.adapters.bridge") / "client.ts"
    assert (tmp_path / "plugins" / "slashkit" / "client.ts").read_text() == client.read_text()
    # ...with the facts it shares with the helper, generated from the helper's own.
    wire = (tmp_path / "plugins" / "slashkit" / "wire.ts").read_text()
    assert f"export const VERSION = {protocol.VERSION}\n" in wire
    assert f"export const MAX_FORECAST_DEPTH = {MAX_AHEAD}\n" in wire


def test_the_plugin_shares_the_bridges_node_host(tmp_path: Path) -> None:
    # One Host for every Node-based host (opencode now, pi next), laid out as it is in slashkit.adapters.bridge.
    install(tmp_path)
    node_host = resources.files("slashkit.adapters.bridge") / "node-host.ts"
    assert (tmp_path / "plugins" / "slashkit" / "node-host.ts").read_text() == node_host.read_text()
    host = (tmp_path / "plugins" / "slashkit" / "host.ts").read_text()
    assert 'export const STORE_FILE = "opencode-store.json"\n' in host


def test_install_and_uninstall_take_out_the_module_an_earlier_slashkit_laid_out(tmp_path: Path) -> None:
    # Before the Node host moved to the bridge, opencode's plugin had its own plugins/slashkit/bridge.ts.
    for step in (install, uninstall):
        install(tmp_path)
        former = tmp_path / "plugins" / "slashkit" / "bridge.ts"
        former.write_text("// slashkit's earlier Node host\n")
        assert former in step(tmp_path)
        assert not former.exists()


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
    # The host, whose allowlist of built-ins the refusal rule applies (slashkit.core.allowlist.OPENCODE).
    args = json.dumps(["-m", HELPER_MODULE, "--fail-tool", "slash-chain_fail", "--host", "opencode"])
    assert f"export const HELPER_ARGS = {args}" in host
    assert FAIL_TOOL_ID not in host


def test_the_self_command_tool_is_the_cores_under_opencodes_name() -> None:
    host = host_module(sys.executable)
    # Named as the fail tool is (an MCP server `slash-chain`'s tool `builtin`), described and shaped by the core.
    assert 'export const BUILTIN_TOOL = "slash-chain_builtin"' in host
    assert f"export const BUILTIN_DESCRIPTION = {json.dumps(texts.text(texts.ENGLISH, Key.SELF_TOOL_NOTE))}" in host
    assert f"export const BUILTIN_ARGS = {json.dumps(BUILTIN_SCHEMA['properties'])}" in host
    assert BUILTIN_TOOL_ID not in host


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
    assert len(removed) == 2 + len(MODULES) + len(NODE_FILES)
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


def test_install_writes_through_no_link_a_project_put_at_the_plugins_names(tmp_path: Path) -> None:
    # A checked-out project may hold links at the entry and at any temporary name beside it.
    project = tmp_path / "project"
    plugins = project / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    victim = a_victim(tmp_path)
    (plugins / "slashkit.ts.tmp").symlink_to(victim)
    (plugins / "slashkit.ts").symlink_to(victim)
    shown = slashkit("opencode", "install", str(project))
    assert shown.returncode == 0, shown.stderr
    assert victim.read_text() == "the user's own file\n"
    entry = plugins / "slashkit.ts"
    assert not entry.is_symlink() and entry.read_text() == plugin_source()
    # The project's own link is left as it was, and no temporary file is left behind.
    assert sorted(p.name for p in plugins.iterdir()) == ["slashkit", "slashkit.ts", "slashkit.ts.tmp"]
    assert (plugins / "slashkit.ts.tmp").readlink() == victim


def test_install_and_uninstall_refuse_a_plugin_folder_that_is_a_link_and_touch_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    install(config_dir(project))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    mine = {name: f"// the user's {name}\n" for name in ("host.ts", "client.ts", "node-host.ts")}
    for name, text in mine.items():
        (elsewhere / name).write_text(text)
    folder = project / ".opencode" / "plugins" / "slashkit"
    for module in folder.iterdir():
        module.unlink()
    folder.rmdir()
    folder.symlink_to(elsewhere)
    for what in ("uninstall", "install"):
        refused = slashkit("opencode", what, str(project))
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr == (
            f"slashkit opencode {what}: error: cannot write {folder}: "
            "a symbolic link, which slashkit does not follow (remove it yourself)\n"
        )
        assert {p.name: p.read_text() for p in elsewhere.iterdir()} == mine
        # Refused before anything was removed: the entry is still there.
        assert (folder.parent / "slashkit.ts").read_text() == plugin_source()


def test_uninstall_removes_links_at_the_plugins_files_not_the_files_they_point_at(tmp_path: Path) -> None:
    project = tmp_path / "project"
    plugins = project / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    victim = a_victim(tmp_path)
    (plugins / "slashkit.ts").symlink_to(victim)
    (plugins / "slashkit").mkdir()
    (plugins / "slashkit" / "host.ts").symlink_to(tmp_path / "gone")  # a link to nothing is removed too
    shown = slashkit("opencode", "uninstall", str(project))
    assert shown.returncode == 0, shown.stderr
    assert list(project.iterdir()) == []
    assert victim.read_text() == "the user's own file\n"


def test_uninstall_removes_the_folders_install_made_and_nothing_else(tmp_path: Path) -> None:
    fresh, mine = tmp_path / "fresh", tmp_path / "mine"
    for project in (fresh, mine):
        project.mkdir()
    (mine / ".opencode").mkdir()
    (mine / ".opencode" / "opencode.json").write_text("{}\n")
    for project in (fresh, mine):
        assert slashkit("opencode", "install", str(project)).returncode == 0
        shown = slashkit("opencode", "uninstall", str(project))
        assert shown.returncode == 0, shown.stderr
    assert list(fresh.iterdir()) == []
    assert [p.name for p in (mine / ".opencode").iterdir()] == ["opencode.json"]


def test_install_takes_a_project_or_global_not_both(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    refused = slashkit("opencode", "install", str(tmp_path), "--global", env=env)
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1] == (
        "slashkit opencode install: error: takes a PROJECT_DIR or --global, not both"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_install_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    # A folder at the entry's name: the new file cannot take its place.
    plugins = tmp_path / ".opencode" / "plugins"
    (plugins / "slashkit.ts").mkdir(parents=True)
    refused = slashkit("opencode", "install", str(tmp_path))
    assert (refused.returncode, refused.stdout) == (1, "")
    assert (
        refused.stderr == f"slashkit opencode install: error: cannot write {plugins / 'slashkit.ts'}: Is a directory\n"
    )
    assert [p.name for p in plugins.iterdir()] == ["slashkit.ts"]
    assert list((plugins / "slashkit.ts").iterdir()) == []


def test_a_relative_xdg_config_home_is_ignored_as_the_xdg_spec_asks(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": "rel"}
    shown = slashkit("opencode", "install", "--global", env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "home" / ".config" / "opencode" / "plugins" / "slashkit.ts").is_file()
    assert not (tmp_path / "rel").exists()


def test_the_installed_files_name_no_path_of_this_machine_so_a_team_can_commit_them(tmp_path: Path) -> None:
    shown = slashkit("opencode", "install", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    written = {p: p.read_text() for p in (tmp_path / ".opencode").rglob("*.ts")}
    names = {p.name for p in written}
    assert names == {"slashkit.ts", *MODULES, *NODE_FILES, "host.ts"}
    assert "export const PYTHON = null\n" in written[tmp_path / ".opencode" / "plugins" / "slashkit" / "host.ts"]
    machine = (sys.prefix, sys.base_prefix, os.path.realpath(sys.executable), str(tmp_path))
    assert [str(p) for p, text in written.items() if any(m in text for m in machine)] == []


def test_this_python_names_this_interpreter_for_this_machine_only(tmp_path: Path) -> None:
    shown = slashkit("opencode", "install", str(tmp_path), "--this-python")
    assert shown.returncode == 0, shown.stderr
    host = (tmp_path / ".opencode" / "plugins" / "slashkit" / "host.ts").read_text()
    assert f"export const PYTHON = {json.dumps(sys.executable)}\n" in host


def test_a_fifo_at_a_file_the_installer_lays_out_is_replaced_never_waited_on(tmp_path: Path) -> None:
    # The installer first asks whether the file already holds its bytes: a plain read of a FIFO there would wait
    # for a writer for good (slashkit.adapters.files, issue 34).
    target = tmp_path / "slashkit.ts"
    os.mkfifo(target)
    written: list[bool] = []
    worker = threading.Thread(target=lambda: written.append(write_file(target, b"export {}\n")), daemon=True)
    worker.start()
    worker.join(timeout=10)
    with contextlib.suppress(OSError):  # let a blocked read go, should one be
        os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))

    assert written == [True]
    assert target.read_bytes() == b"export {}\n"
