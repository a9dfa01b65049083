"""The resident helper behind the real Claude Code 2.1.328, headless and offline: text a person can type that
once made the helper drop the connection."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.claude_cli import Isolation, claude_path, isolated_env
from tests.support.model_server import ModelServer

pytestmark = pytest.mark.engine


def test_a_byte_that_is_not_utf8_in_a_chain_runs_both_steps(tmp_path: Path) -> None:
    """Python reads the byte into argv as a lone surrogate, and the engine hands it to the helper as one; the
    helper wrote its answer as UTF-8 and failed, and the mod logged `unavailable: ... ECONNRESET` and exited 3."""
    project = tmp_path / "project"
    project.mkdir()
    iso = Isolation.create(tmp_path)
    with ModelServer() as model:
        env = {**isolated_env(iso, model.url), "SLASHKIT_CLAUDE": str(claude_path())}
        command = [sys.executable.encode(), b"-m", b"slashkit.adapters.cli", b"run", b"--cwd", bytes(project)]
        ran = subprocess.run([*command, b"/cost \xff && /context"], env=env, capture_output=True)
    lines = ran.stdout.decode(errors="replace").splitlines()
    assert ran.returncode == 0, lines
    assert lines[0].startswith("1/2: /usage ")
    assert lines[1:] == ["2/2: /context", "all 2 command(s) ran"]
