"""slashkit installs as one `slashkit` namespace from two source roots, editable and as a wheel, and never
as a bare `core` or `adapters` package."""

import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMPORTS = "import slashkit.adapters.memory; from slashkit.core import parse_chain; print(slashkit.core.__file__)"


def test_the_editable_install_imports_the_core_from_the_source_tree() -> None:
    found = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True)
    assert Path(found.stdout.strip()).is_relative_to(ROOT / "src" / "core")


def test_a_built_wheel_holds_only_slashkit_and_imports_from_a_fresh_environment(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
    )
    [wheel] = tmp_path.glob("slashkit-*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"slashkit", wheel.name.split("-py3")[0] + ".dist-info"}
    assert "slashkit/__init__.py" not in zipfile.ZipFile(wheel).namelist()
    # `slashkit opencode install` copies these out of the installed package.
    for module in ("slashkit.ts", "bridge.ts"):
        assert f"slashkit/adapters/opencode/plugin/{module}" in zipfile.ZipFile(wheel).namelist()
    fresh = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True)
    python = fresh / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    # The dependencies come from this environment's site-packages, read as a plain path (its .pth files,
    # among them the editable install's, are not processed there).
    dependencies = sysconfig.get_paths()["purelib"]
    assert dependencies in site.getsitepackages()
    found = subprocess.run(
        [python, "-c", IMPORTS], capture_output=True, text=True, check=True, env={"PYTHONPATH": dependencies}
    )
    assert Path(found.stdout.strip()).is_relative_to(fresh)
