"""slashkit's pi extension in pi 1.6.0's TUI, in tmux (a private socket in the test's folder): a typed chain runs,
its lines show on the screen, and the model gets each step; a chain led by the built-in `/compact` compacts, then
runs the next step (docs/pi.md, "A typed line led by a built-in")."""

import json
import shutil
import threading
from pathlib import Path

import pytest

from slashkit.adapters.pi.install import STORE_FILE
from slashkit.core.texts import OFF_TEXT
from tests.support.openai_server import text
from tests.support.pi_cli import SUMMARIZING, Pi, available
from tests.support.tui import saved_chain_screens, status_lines, tui_on

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        not available(), reason="no pi: scripts/setup.sh installs @earendil-works/pi-coding-agent 1.6.0"
    ),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux: scripts/setup.sh installs it"),
]


def shown(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if line.strip()]


def test_a_chain_typed_in_the_tui(tmp_path: Path) -> None:
    """Each step's line shows before the model's answer to it, and the chain's end after the last answer. Each is
    read while it is pi's newest notice: every notice pi's TUI draws again shows the newest one's text (one field
    read by all of them, `showStatus`, interactive-mode.js, measured on 1.6.0), so once the chain ended, a redraw
    may show `all 2 command(s) ran` where `2/2: /bye Alice` stood."""
    templates = {"greet": "Say hello to $1", "bye": "Say bye to $1"}
    first, second = threading.Event(), threading.Event()
    turns = [text("ANSWER ONE", hold=first), text("ANSWER TWO", hold=second)]
    with tui_on(Pi(tmp_path), turns, templates) as (tui, model, _):
        tui.wait(lambda s: "slashkit" in s)
        tui.type("/greet Bob && /bye Alice")
        step_one = shown(tui.wait(lambda s: "Say hello to Bob" in s and len(model.requests) == 1))
        first.set()
        step_two = shown(tui.wait(lambda s: "Say bye to Alice" in s and len(model.requests) == 2))
        second.set()
        ended = shown(tui.wait(lambda s: "ANSWER TWO" in s and "all 2 command(s) ran" in s))
    assert step_one.index("1/2: /greet Bob") < step_one.index("Say hello to Bob")
    assert step_two.index("ANSWER ONE") < step_two.index("2/2: /bye Alice") < step_two.index("Say bye to Alice")
    assert ended.index("ANSWER TWO") < len(ended) - 1 - ended[::-1].index("all 2 command(s) ran")
    assert [r.last_user_text() for r in model.requests][1] == "Say bye to Alice"


def test_a_chain_led_by_compact_runs_it_then_the_next_step(tmp_path: Path) -> None:
    # pi's own editor would run /compact with "&& /greet Bob" as its instructions (measured on 1.6.0): the
    # extension's editor hands the line to the core first (docs/pi.md, "A typed line led by a built-in").
    turns = [text("ANSWER ONE"), text("THE SUMMARY"), text("HELLO BOB")]
    with tui_on(Pi(tmp_path), turns, {"greet": "Say hello to $1"}) as (tui, model, _):
        tui.wait(lambda s: "slashkit" in s)
        tui.type("hello")
        tui.wait(lambda s: "ANSWER ONE" in s)
        tui.type("/compact && /greet Bob")
        screen = tui.wait(lambda s: "all 2 command(s) ran" in s)
        # The editor is still pi's: Up brings the chain back from its history.
        tui.key("Up")
        recalled = tui.wait(lambda s: s.count("/compact && /greet Bob") == 1)
    # pi redraws the chat from the session once it compacted, so the line `1/2: /compact` is gone by then.
    shown = [line.strip() for line in screen.splitlines() if line.strip()]
    compacted = next(i for i, line in enumerate(shown) if line.startswith("Compacted from"))
    assert compacted < shown.index("2/2: /greet Bob") < shown.index("HELLO BOB") < shown.index("all 2 command(s) ran")
    assert SUMMARIZING in model.requests[1].all_text()
    assert "/greet" not in model.requests[1].all_text()
    assert model.requests[2].last_user_text() == "Say hello to Bob"
    assert "/compact && /greet Bob" in recalled.splitlines()


def test_slash_chain_off_typed_in_the_tui_is_the_persons(tmp_path: Path) -> None:
    # `/slash-chain` is no pi command (an extension's would run for any other extension too, docs/pi.md): the
    # extension reads it from the input event, which pi 1.6.0's TUI sends with the person's line.
    with tui_on(Pi(tmp_path), [], {}) as (tui, model, _):
        tui.wait(lambda s: "slashkit" in s)
        tui.type("/slash-chain off")
        tui.wait(lambda s: OFF_TEXT[:40] in s)
    assert json.loads((tmp_path / "state" / "slashkit" / STORE_FILE).read_text()) == {"enabled": False}
    assert model.requests == []


def test_a_saved_chain_shows_its_step_on_the_status_line_until_it_ended(tmp_path: Path) -> None:
    mid, end, _ = saved_chain_screens(Pi(tmp_path), "slashkit")
    # pi shows an extension's status on a line of its own under the footer (measured on 1.6.0).
    assert status_lines(mid) == ["chain 1/2: /greet Bob · next /bye"]
    assert "ANSWER ONE" not in mid
    assert "ANSWER TWO" in end
    assert status_lines(end) == []


def test_a_saved_chain_is_in_the_command_menu_with_its_description(tmp_path: Path) -> None:
    chains = {"ship": "---\ndescription: Ships it\nargument-hint: <who>\n---\n/greet $1 && /bye $1\n"}
    with tui_on(Pi(tmp_path), [], {"greet": "Say hello to $1", "bye": "Say bye to $1"}, chains) as (tui, model, _):
        tui.wait(lambda s: "slashkit" in s)
        tui.key("/")
        tui.key("s")
        tui.key("h")
        menu = tui.wait(lambda s: "Ships it" in s)
    # pi shows no argument hint for an extension's command: it leads the description (docs/pi.md).
    entry = next(line for line in menu.splitlines() if "Ships it" in line).split()
    assert entry[0] == "ship"
    assert " ".join(entry[1:]).endswith("<who> — Ships it")
    assert model.requests == []
