"""Whose prompt cancels a running chain: the person's at the terminal or through Remote Control, not the next
message of a headless session or a harness, which is how that session goes on (seed 003 keeps `sdk` out)."""

from slashkit.adapters.memory import Local, Prompt, host


def test_the_next_message_of_a_headless_session_does_not_cancel_the_chain_it_started() -> None:
    h = host(a=Prompt("do a"), b=Local())
    h.type("/a && /b", origin="sdk")

    h.type("and then summarise", origin="sdk")
    h.end_turn("answer")

    assert h.ui.lines == ["1/2: /a", "2/2: /b", "all 2 command(s) ran"]
