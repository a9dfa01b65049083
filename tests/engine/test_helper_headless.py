"""The resident helper behind the real Claude Code 2.1.328, headless and offline: text a person can type that
once made the helper drop the connection."""

from pathlib import Path

import pytest

from slashkit.adapters.claude_code.plugins import plugin_dir
from tests.support.claude_cli import StreamingRun, ui_log_texts
from tests.support.model_server import ModelServer

pytestmark = pytest.mark.engine


def test_a_lone_surrogate_in_a_chain_runs_both_steps(tmp_path: Path) -> None:
    """A byte that is not UTF-8 reaches the engine as a lone surrogate (Python's argv, or a JSON `\\udcff`), and
    the engine hands it to the helper as one; the helper wrote its answer as UTF-8 and failed, and the mod
    logged `unavailable: ... ECONNRESET` and fell back for the rest of the chain."""
    project = tmp_path / "project"
    project.mkdir()
    plugin = plugin_dir("slash-chain", tmp_path / "marketplace")
    with ModelServer() as model, StreamingRun([plugin], project, model=model) as session:
        session.send("/cost \udcff && /context")
        ended = session.wait_until(lambda ev: any("ran" in t for t in ui_log_texts(ev, "slash-chain")), timeout=60)
        result = session.finish()
    lines = ui_log_texts(result.events, "slash-chain")
    assert ended, result.describe()
    assert lines[0].startswith("1/2: /usage "), lines
    assert lines[1:] == ["2/2: /context", "all 2 command(s) ran"], lines
