"""Programs (issue 33) typed into a harness host (`slashkit run` on the Agent SDK and Codex hosts), on a host whose
queries are scripted: what is sent, one query a step, and what the harness yields."""

import asyncio
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Unpack

from slashkit.adapters.harness.events import ChainEnded, Event, Line, Output, StepEnded
from slashkit.adapters.harness.loop import Ended, Harness, SessionSettings
from slashkit.adapters.harness.terminal import persons_settings
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.chain import Step


class Scripted(Harness[object]):
    """A harness host whose every query ends well (a local command's), but `/check`'s first `failing` ones."""

    def __init__(self, project: Path, failing: int = 0, **settings: Unpack[SessionSettings]) -> None:
        super().__init__(CLAUDE_CODE, settings)
        self._known = frozenset({"check", "fix", "x", "cost"})
        self._project = project
        self.failing = failing
        self.sent: list[str] = []

    async def _send(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | object | Ended]:
        self.sent.append(text)
        if text == "/check" and self.failing > 0:
            self.failing -= 1
            yield Ended("failed", "still red")
            return
        yield Output(index, f"did {text}")
        yield Ended("ran", f"did {text}")


def typed(host: Scripted, text: str) -> list[Event | object]:
    async def run() -> list[Event | object]:
        return [event async for event in host.run(text)]

    return asyncio.run(run())


def lines(events: Iterable[object]) -> list[str]:
    return [e.text for e in events if isinstance(e, Line)]


def test_a_typed_for_loop_runs_its_body_once_a_word_one_query_a_step(tmp_path: Path) -> None:
    host, program = Scripted(tmp_path), "for w in a b; do /x $w; done"
    events = typed(host, program)

    assert host.sent == ["/x a", "/x b"]
    assert lines(events) == ["for 1/2: a", "1/1: /x a", "for 2/2: b", "1/1: /x b", "all 2 command(s) ran"]
    started = "a program of 1 command(s) runs"
    assert events[:2] == [Output(0, started), StepEnded(0, Step("", program), "ran", started)]
    assert isinstance(events[-1], ChainEnded) and events[-1].ok


def test_a_typed_until_runs_its_body_while_its_condition_fails(tmp_path: Path) -> None:
    host = Scripted(tmp_path, failing=2)
    events = typed(host, "until /check; do /fix; done")

    assert host.sent == ["/check", "/fix", "/check", "/fix", "/check"]
    assert isinstance(events[-1], ChainEnded) and events[-1].ok
    assert lines(events)[-1] == "ended: 3 succeeded, 2 failed, 0 skipped"


def test_a_saved_chain_over_several_lines_with_a_loop_runs_by_name(tmp_path: Path) -> None:
    chains = tmp_path / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    (chains / "each.md").write_text("# each part, then the cost\nfor part in $ARGUMENTS\ndo\n  /x $part\ndone\n/cost\n")
    host = Scripted(tmp_path)
    events = typed(host, "/each api ui")

    assert host.sent == ["/x api", "/x ui", "/cost"]
    assert lines(events)[-1] == "all 3 command(s) ran"


def test_a_prompt_that_only_starts_with_while_is_sent_as_typed(tmp_path: Path) -> None:
    host = Scripted(tmp_path)
    prompt = "while you are at it, fix the typo; done means green"
    events = typed(host, prompt)

    assert host.sent == [prompt]
    assert lines(events) == []
    assert StepEnded(0, Step("", prompt), "ran", f"did {prompt}") in events


def test_a_line_that_looks_like_a_program_but_does_not_parse_says_where_and_sends_nothing(tmp_path: Path) -> None:
    host = Scripted(tmp_path)
    events = typed(host, "until /check; do /fix")

    assert host.sent == []
    [said] = [e.text for e in events if isinstance(e, Output)]
    assert said.startswith("not run: ")
    # Nothing ran: the typed line was refused, so `slashkit run` exits 2, neither 0 nor a step's failure (1).
    assert [e.how for e in events if isinstance(e, StepEnded)] == ["refused"]


def test_a_while_stops_at_the_cap_the_person_set_in_their_shell(tmp_path: Path) -> None:
    host = Scripted(tmp_path, **persons_settings({"SLASHKIT_LOOP_CAP": "3"}))
    events = typed(host, "while /check; do /fix; done")

    assert host.sent == ["/check", "/fix"] * 3
    assert lines(events)[-2] == "while stopped: its body ran 3 times, its cap (SLASHKIT_LOOP_CAP raises it)"


def test_a_harness_sets_the_cap_as_a_number(tmp_path: Path) -> None:
    host = Scripted(tmp_path, loop_cap=2)
    typed(host, "while /check; do /fix; done")

    assert host.sent == ["/check", "/fix"] * 2


def test_a_typed_until_decided_by_a_real_shell_runs_the_step_in_the_project_never_as_a_query(tmp_path: Path) -> None:
    (tmp_path / "flaky.sh").write_text('n=$(cat runs 2>/dev/null || echo 0); echo $((n+1)) > runs; [ "$n" -ge 1 ]\n')
    host = Scripted(tmp_path)

    events = typed(host, "until !sh flaky.sh; do /fix; done")

    assert host.sent == ["/fix"]
    assert (tmp_path / "runs").read_text() == "2\n"
    assert "!sh failed: it exited with status 1" in lines(events)
    assert isinstance(events[-1], ChainEnded) and events[-1].ok


def test_text_the_harness_did_not_mark_as_the_persons_runs_no_shell_step(tmp_path: Path) -> None:
    host = Scripted(tmp_path)

    async def run() -> list[Event | object]:
        return [event async for event in host.run("/x a && !touch made", by_person=False)]

    events = asyncio.run(run())

    assert not (tmp_path / "made").exists()
    assert any("a shell step runs only on the person's word" in line for line in lines(events))
