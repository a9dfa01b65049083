"""`slashkit pi install --omp` / `uninstall --omp` as a person meets them: the extension goes where omp (oh-my-pi)
loads a project's or the user's extensions, with omp's entry named by its manifest; a second run changes nothing;
taking it out leaves the rest alone; and pi's own install is unchanged by it."""

import json
import os
import subprocess
import sys
from pathlib import Path

from slashkit.adapters.bridge.shim import NODE_FILES


def slashkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashkit.adapters.cli", *args], capture_output=True, text=True, env=env
    )


PI_FILES = sorted(("index.ts", "host.ts", *NODE_FILES))


def test_install_omp_puts_the_extension_in_the_project_s_omp_folder_with_omp_s_entry(tmp_path: Path) -> None:
    shown = slashkit("pi", "install", "--omp", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    folder = tmp_path / ".omp" / "extensions" / "slashkit"
    assert sorted(p.name for p in folder.iterdir()) == sorted((*PI_FILES, "omp.ts", "package.json"))
    # omp loads the entry its manifest names (not index.ts, which it would load too otherwise).
    assert json.loads((folder / "package.json").read_text())["omp"] == {"extensions": ["./omp.ts"]}
    assert "from './index.js'" in (folder / "omp.ts").read_text()
    assert f"slashkit extension installed in {folder}" in shown.stdout
    assert str(folder / "omp.ts") in shown.stdout
    assert not (tmp_path / ".pi").exists()


def test_the_omp_files_name_no_path_of_this_machine(tmp_path: Path) -> None:
    slashkit("pi", "install", "--omp", str(tmp_path))
    folder = tmp_path / ".omp" / "extensions" / "slashkit"
    for path in folder.iterdir():
        assert str(tmp_path) not in path.read_text()
        assert sys.executable not in path.read_text()


def test_a_second_omp_install_changes_nothing_and_says_so(tmp_path: Path) -> None:
    slashkit("pi", "install", "--omp", str(tmp_path))
    again = slashkit("pi", "install", "--omp", str(tmp_path))
    assert again.returncode == 0
    folder = tmp_path / ".omp" / "extensions" / "slashkit"
    assert again.stdout.strip() == f"slashkit extension already up to date in {folder}"


def test_uninstall_omp_takes_out_its_files_and_the_folders_it_made_only(tmp_path: Path) -> None:
    (tmp_path / ".omp" / "prompts").mkdir(parents=True)
    slashkit("pi", "install", "--omp", str(tmp_path))
    out = slashkit("pi", "uninstall", "--omp", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert f"slashkit extension removed from {tmp_path / '.omp' / 'extensions' / 'slashkit'}" in out.stdout
    # The project's own .omp (its prompts) stays; the extensions folder install made goes.
    assert sorted(p.name for p in (tmp_path / ".omp").iterdir()) == ["prompts"]
    again = slashkit("pi", "uninstall", "--omp", str(tmp_path))
    assert "was not installed" in again.stdout


def test_global_omp_install_goes_to_the_user_s_omp_agent_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"} | {"HOME": str(tmp_path)}
    shown = slashkit("pi", "install", "--omp", "--global", env=env)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / ".omp" / "agent" / "extensions" / "slashkit" / "omp.ts").is_file()
    # omp 18.2.3 reads PI_CODING_AGENT_DIR as its agent folder too.
    agent = tmp_path / "agent"
    slashkit("pi", "install", "--omp", "--global", env=env | {"PI_CODING_AGENT_DIR": str(agent)})
    assert (agent / "extensions" / "slashkit" / "package.json").is_file()


def test_pi_s_install_writes_no_omp_entry(tmp_path: Path) -> None:
    slashkit("pi", "install", str(tmp_path))
    folder = tmp_path / ".pi" / "extensions" / "slashkit"
    assert sorted(p.name for p in folder.iterdir()) == PI_FILES
