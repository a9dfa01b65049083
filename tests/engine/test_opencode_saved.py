"""Saved chains (`.slashkit/chains/*.md`) in the real opencode 1.18.33 (`opencode serve`, offline, a scripted model):
each runs by its name through the server's command API as the TUI sends it, as the person sees it (the transcript
lines the model never sees) and as the model is handed it."""

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from slashkit.adapters.opencode.install import config_dir, install
from tests.support.openai_server import OpenAIServer, Turn, text
from tests.support.opencode_cli import OpencodeServer, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

COMMANDS = {"greet": "Greet $1 warmly."}
#: The project's saved chains, name → file text.
CHAINS = {
    "ship": "---\ndescription: Greet someone, then say done\nargument-hint: <who>\n---\n/greet $1 && /greet done\n",
    "release": "/check $1 && /greet shipped\n",
    "check": "/greet $1 || /greet fixed\n",
    "loop": "/loop2 $ARGUMENTS\n",
    "loop2": "/greet first ; /loop\n",
    "risky": "/greet before ; /undo ; /greet after\n",
    # A name opencode has (the project's command file): opencode's stays.
    "greet": "---\ndescription: never offered\n---\n/ship $1\n",
}


class Run:
    """One opencode server with the plugin and the saved chains, its model, and one session."""

    def __init__(self, server: OpencodeServer, model: OpenAIServer) -> None:
        self.server = server
        self.model = model
        self.session = server.create_session()

    def typed(self, name: str, args: str) -> int | None:
        """The person runs `/name args` (the TUI sends it so); the status the server answered."""
        return self.server.command(self.session, name, args).wait().status

    def lines(self) -> list[str]:
        return self.server.ignored_lines(self.session)

    def asked(self) -> list[str]:
        """What each main request handed the model last (without the fail note), in order."""
        return [r.last_user_text().split("\n\n")[0] for r in self.model.main_requests]


def write_chains(project: Path, chains: Mapping[str, str]) -> None:
    folder = project / ".slashkit" / "chains"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in chains.items():
        (folder / f"{name}.md").write_text(body)


Start = Callable[..., Run]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """`start(script, chains=CHAINS)` gives a Run on a project with COMMANDS and these saved chains; everything stops
    when the test ends."""
    runs: list[Iterator[Run]] = []

    def begin(script: Sequence[Turn], chains: Mapping[str, str] = CHAINS) -> Run:
        def made() -> Iterator[Run]:
            with OpenAIServer(script) as model:
                project = write_project(tmp_path / "project", model.url, COMMANDS)
                write_chains(project, chains)
                install(config_dir(project), sys.executable)
                with OpencodeServer(project, tmp_path) as server:
                    yield Run(server, model)

        runs.append(made())
        return next(runs[-1])

    yield begin
    for left in runs:
        for _ in left:
            pass


def test_a_saved_chain_is_listed_with_its_description_and_runs_its_two_steps_by_name(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello done")])
    listed = {c["name"]: c for c in run.server.request("GET", "/command")[1]}
    assert listed["ship"]["description"] == "Greet someone, then say done (<who>)"
    assert listed["greet"]["description"] == "greet (test command)"
    # Answered without a turn of its own (the plugin's hook throws, opencode's only way: HTTP 500 to the caller).
    assert run.typed("ship", "Bob") == 500
    run.server.wait_quiet(run.session, quiet=2.5)
    assert run.asked() == ["Greet Bob warmly.", "Greet done warmly."]
    assert run.lines() == ["1/2: /greet Bob", "/ship Bob runs 2 command(s)", "2/2: /greet done", "all 2 command(s) ran"]


def test_a_saved_chain_in_a_typed_chain_runs_then_the_next_command(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello done"), text("Hello Alice")])
    run.typed("ship", "Bob && /greet Alice")
    run.server.wait_quiet(run.session, quiet=2.5)
    assert run.asked() == ["Greet Bob warmly.", "Greet done warmly.", "Greet Alice warmly."]
    assert run.lines()[-1] == "all 3 command(s) ran"


def test_a_saved_chain_calling_another_runs_it_as_a_function(start: Start) -> None:
    run = start([text("Hello Ann"), text("Hello shipped")])
    run.typed("release", "Ann")
    run.server.wait_quiet(run.session, quiet=2.5)
    # check's `||` fallback is skipped (its /greet Ann ended well), and release goes on.
    assert run.asked() == ["Greet Ann warmly.", "Greet shipped warmly."]
    assert run.lines() == [
        "1/3: /greet Ann",
        "/release Ann runs 3 command(s)",
        "skipped 2/3: /greet fixed (the last command succeeded)",
        "3/3: /greet shipped",
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]


def test_a_cycle_of_saved_chains_runs_nothing_and_asks_the_model_nothing(start: Start) -> None:
    run = start([text("never")])
    run.typed("loop", "x")
    run.server.wait_quiet(run.session, quiet=2.5)
    # Not even a title: the name's own command never reached a turn.
    assert run.model.requests == []
    assert run.lines() == ["saved chains call each other in a cycle (loop -> loop2 -> loop); nothing ran"]


def test_a_built_in_step_from_a_file_is_refused_with_its_line_and_the_semicolon_goes_on(start: Start) -> None:
    run = start([text("Hello before"), text("Hello after")])
    run.typed("risky", "")
    run.server.wait_quiet(run.session, quiet=2.5)
    # The TUI's /undo is opencode's (no server command lists it), and only the person may run it.
    assert run.asked() == ["Greet before warmly.", "Greet after warmly."]
    assert run.lines() == [
        "1/3: /greet before",
        "/risky runs 3 command(s)",
        "skipped 2/3: /undo (only the person may run /undo, and this came from saved chain risky)",
        "3/3: /greet after",
        "ended: 2 succeeded, 0 failed, 1 skipped",
    ]


def test_a_bad_file_is_one_line_in_the_session_and_every_other_saved_chain_still_runs(start: Start) -> None:
    run = start([text("Hello Bob"), text("Hello done")], {"ship": CHAINS["ship"], "empty": ""})
    run.typed("ship", "Bob")
    run.server.wait_quiet(run.session, quiet=2.5)
    assert run.asked() == ["Greet Bob warmly.", "Greet done warmly."]
    [bad, *chain] = run.lines()
    assert "empty.md" in bad
    assert chain == ["1/2: /greet Bob", "/ship Bob runs 2 command(s)", "2/2: /greet done", "all 2 command(s) ran"]
