"""slashkit's opencode plugin in the real opencode 1.18.33 (`opencode serve`, offline, a scripted model): each
chain as the person sees it (the transcript lines the model never sees) and as the model is handed it."""

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from slashkit.adapters.opencode.install import config_dir, install
from slashkit.core.chain import Step
from slashkit.core.texts import fail_note
from tests.support.openai_server import OpenAIServer, Turn, text
from tests.support.opencode_cli import OpencodeServer, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

GREET = "Greet $1 warmly."
COMMANDS = {"greet": GREET, "review": "Review $ARGUMENTS carefully."}


class Run:
    """One opencode server with the plugin installed, its model, and one session."""

    def __init__(self, server: OpencodeServer, model: OpenAIServer) -> None:
        self.server = server
        self.model = model
        self.session = server.create_session()

    def lines(self) -> list[str]:
        return self.server.ignored_lines(self.session)

    def asked(self) -> list[str]:
        """What each main request handed the model last, in order."""
        return [r.last_user_text() for r in self.model.main_requests]

    def quiet(self) -> None:
        self.server.wait_quiet(self.session, quiet=2.5)


def _start(tmp_path: Path, script: Sequence[Turn], python: str = sys.executable) -> Iterator[Run]:
    with OpenAIServer(script) as model:
        project = write_project(tmp_path / "project", model.url, COMMANDS)
        install(config_dir(project), python)
        with OpencodeServer(project, tmp_path) as server:
            yield Run(server, model)


Start = Callable[..., Run]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """`start(script, python=...)` gives a Run; everything stops when the test ends."""
    runs: list[Iterator[Run]] = []

    def begin(script: Sequence[Turn], python: str = sys.executable) -> Run:
        made = _start(tmp_path / f"run{len(runs)}", script, python)
        runs.append(made)
        return next(made)

    yield begin
    for made in runs:
        for _ in made:
            pass


def test_a_two_step_chain_runs_the_second_command_once_the_first_turn_ended(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello Carol")])
    run.server.command(run.session, "greet", "Bob && /greet Carol").wait()
    run.quiet()
    note = fail_note(1, 2, [Step("greet", "Carol")])
    assert run.asked() == [f"Greet Bob warmly.\n\n{note}", "Greet Carol warmly."]
    assert run.lines() == ["1/2: /greet Bob", "2/2: /greet Carol", "all 2 command(s) ran"]
