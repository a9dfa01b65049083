"""slashkit installs as one `slashkit` namespace from two source roots, editable and as a wheel, and never
as a bare `core` or `adapters` package; the wheel carries its types, its licence and its metadata."""

import email
import importlib.metadata
import re
import site
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from attrs import frozen

from slashkit.adapters import __version__
from slashkit.adapters.bridge.shim import NODE_HOST
from slashkit.adapters.claude_code import plugins
from slashkit.adapters.opencode.install import ENTRY, MODULES
from tests.support.claude_cli import Isolation, isolated_env
from tests.support.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
IMPORTS = "import slashkit.adapters.memory; from slashkit.core import parse_chain; print(slashkit.core.__file__)"


@frozen
class Installed:
    """A wheel built from this tree, installed without its dependencies into a fresh venv."""

    wheel: Path
    python: Path

    def names(self) -> list[str]:
        return zipfile.ZipFile(self.wheel).namelist()

    def run(
        self, *argv: str | Path, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        # The dependencies come from this environment's site-packages, read as a plain path (its .pth files,
        # among them the editable install's, are not processed there).
        dependencies = sysconfig.get_paths()["purelib"]
        assert dependencies in site.getsitepackages()
        return subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            env={**(env or {}), "PYTHONPATH": dependencies},
            cwd=cwd,
            timeout=300,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    folder = tmp_path_factory.mktemp("wheel")
    # Built from a fresh clone of the last commit, as a user would build it: nothing uncommitted counts.
    clone = folder / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    built = [sys.executable, "-m", "pip", "wheel", str(clone), "--no-deps", "--no-build-isolation", "-q", "-w"]
    subprocess.run([*built, str(folder)], check=True)
    [wheel] = folder.glob("slashkit-*.whl")
    fresh = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    return Installed(wheel, python)


def test_the_editable_install_imports_the_core_from_the_source_tree() -> None:
    found = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True)
    assert Path(found.stdout.strip()).is_relative_to(ROOT / "src" / "core")


def test_a_built_wheel_holds_only_slashkit_and_imports_from_a_fresh_environment(installed: Installed) -> None:
    tops = {name.split("/")[0] for name in installed.names()}
    assert tops == {"slashkit", installed.wheel.name.split("-py3")[0] + ".dist-info"}
    assert "slashkit/__init__.py" not in installed.names()
    # `slashkit opencode install` copies these out of the installed package.
    for module in (ENTRY, *MODULES):
        assert f"slashkit/adapters/opencode/plugin/{module}" in installed.names()
    for module in ("client.ts", NODE_HOST):
        assert f"slashkit/adapters/bridge/{module}" in installed.names()
    # `slashkit claude-code plugin-dir` lays out the plugins' bundled hooks modules (plugins.MODULE) from here.
    for plugin in plugins.PLUGINS:
        assert f"slashkit/adapters/claude_code/mod/{plugin}.js" in installed.names()
    found = installed.run(installed.python, "-c", IMPORTS)
    assert Path(found.stdout.strip()).is_relative_to(installed.python.parents[1]), found.stderr


def test_the_wheel_carries_the_licence_and_metadata_a_package_index_shows(installed: Installed) -> None:
    [info] = {name.split("/")[0] for name in installed.names() if ".dist-info/" in name}
    wheel = zipfile.ZipFile(installed.wheel)
    assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    metadata = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
    assert (metadata["Version"], metadata["License-Expression"]) == (__version__, "MIT")
    assert metadata["Author"] or metadata["Author-email"]
    assert metadata["Keywords"] and "Typing :: Typed" in metadata.get_all("Classifier", [])
    # The test tools are a dependency group for whoever works on slashkit, not an extra a user can ask for.
    assert metadata.get_all("Provides-Extra") == ["sdk"]


def test_slashkit_version_prints_the_one_version_the_package_and_its_plugins_carry(installed: Installed) -> None:
    shown = installed.run(installed.python, "-m", "slashkit.adapters.cli", "--version")
    assert (shown.returncode, shown.stdout) == (0, f"slashkit {__version__}\n"), shown.stderr
    assert importlib.metadata.version("slashkit") == __version__
    assert "version" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dynamic"]


def mypy_sees(installed: Installed, code: str, tmp_path: Path) -> Sequence[str]:
    """What the user's mypy says of `code` in the fresh venv, with no configuration of slashkit's own."""
    (tmp_path / "user.py").write_text(code)
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file=", "--python-executable"]
    return installed.run(*mypy, installed.python, "user.py", cwd=tmp_path).stdout.splitlines()


def test_a_users_mypy_sees_slashkits_types_through_py_typed(installed: Installed, tmp_path: Path) -> None:
    for package in ("core", "adapters"):
        assert f"slashkit/{package}/py.typed" in installed.names()
    said = mypy_sees(installed, "from slashkit.core import parse_chain\nreveal_type(parse_chain('x'))\n", tmp_path)
    assert said[0] == 'user.py:2: note: Revealed type is "slashkit.core.chain.Chain"', said


def test_the_suite_runs_on_the_lowest_sdk_the_sdk_extra_allows() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [sdk] = project["optional-dependencies"]["sdk"]
    lowest = re.fullmatch(r"claude-agent-sdk>=([\d.]+),<0\.3", sdk)
    assert lowest is not None, sdk
    assert importlib.metadata.version("claude-agent-sdk") == lowest[1]
    assert f'SDK_LOWEST="{lowest[1]}"' in (ROOT / "scripts" / "setup.sh").read_text()


@pytest.mark.engine
def test_the_wheel_runs_a_chain_on_the_claude_code_the_sdk_bundles(installed: Installed, tmp_path: Path) -> None:
    iso = Isolation.create(tmp_path)
    project = iso.root / "project"
    project.mkdir()
    with ModelServer() as model:
        # No claude on PATH, none named: `run` falls back on the SDK's own.
        env = isolated_env(iso, model.url, extra_env={"PATH": "/usr/bin:/bin"})
        slashkit = installed.python.parent / "slashkit"
        ran = installed.run(slashkit, "run", "/context && /usage", "--cwd", project, env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.startswith("slashkit: no claude on PATH; running the Claude Code ")
    assert "bundled with claude-agent-sdk " in ran.stderr
    assert ran.stdout.splitlines()[-1] == "all 2 command(s) ran"
