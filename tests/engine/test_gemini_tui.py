"""slashkit's hooks in Gemini CLI 0.61.0's TUI, in tmux (a private socket in the test's folder), offline against a
scripted Gemini API: a typed chain runs a turn per step, its lines show on the screen, and no request carries the
chain's tail."""

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.support.gemini_cli import Gemini, available
from tests.support.gemini_server import GeminiServer, text
from tests.support.tui import Tui

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not available(), reason="no Gemini CLI: scripts/setup.sh installs @google/gemini-cli 0.61.0"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it"),
]


def test_a_chain_typed_in_the_tui_runs_a_turn_per_step(tmp_path: Path) -> None:
    gemini = Gemini(tmp_path).setup({"greet": "Greet {{args}} warmly."})
    with GeminiServer([text("ANSWER ONE"), text("ANSWER TWO"), text("ANSWER THREE")]) as model:
        tui = Tui(gemini.argv(), gemini.env(model.url), gemini.project, tmp_path / "tmux.sock")
        try:
            tui.wait(lambda s: "Type your message" in s and "1 MCP server" in s, timeout=60)
            # The line first, Enter once the prompt shows it: an Enter sent while the command menu still opened
            # under load was taken by the menu, and the line stayed unsent (measured).
            tui.key("/greet Bob && /greet Alice && /greet Carol")
            tui.wait(lambda s: "> /greet Bob && /greet Alice && /greet Carol" in s)
            time.sleep(2)
            tui.key("Enter")
            screen = tui.wait(lambda s: "all 3 command(s) ran" in s and "ANSWER THREE" in s, timeout=90)
        finally:
            tui.close()
        requests = model.main
    for line in ("1/3: /greet Bob", "2/3: /greet Alice", "3/3: /greet Carol", "ANSWER ONE", "ANSWER TWO"):
        assert line in screen
    asked = [json.dumps(r.body) for r in requests]
    assert len(asked) == 3
    assert "Greet Bob warmly." in asked[0] and "Greet Alice warmly." in asked[1] and "Greet Carol warmly." in asked[2]
    assert not any("&& /greet" in body for body in asked)
