"""A chain cut off by a crash, resumed only by the person (issue 35), in the real opencode 1.18.33 offline (`opencode
serve`, a scripted model): the server is SIGKILLed while step 2 of 3 waits on the model; a new server in the same
project, at the first thing the person sends to the reopened session, says what was cut off, and the person's
`/slash-chain resume` runs step 2 again and then step 3, never step 1; a new session in the same project resumes
nothing. As the person sees it (the plugin's lines) and as the model is handed it."""

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from slashkit.adapters.opencode.install import config_dir, install
from tests.support import shared_helpers
from tests.support.openai_server import OpenAIServer, text
from tests.support.opencode_cli import OpencodeServer, isolated_env, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]

CUT = (
    "the chain stopped at 2/3 /tiny b when the session ended; /slash-chain resume runs the rest, "
    "/slash-chain forget forgets it"
)
NOTHING = "no chain was cut off in this session: nothing to resume"


def _told(model: OpenAIServer) -> list[str]:
    """Which step each model request asked for (`a`, `b` or `c`; the first step's prompt also holds the fail note)."""
    asked = [r.last_user_text() for r in model.main_requests]
    return ["".join(word for word in "abc" if f"Say something tiny: {word}" in text) for text in asked]


def _wait_until(done: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:g} s")
        time.sleep(0.1)


def test_a_chain_killed_mid_step_resumes_its_step_and_the_rest_on_the_persons_word_in_the_reopened_session(
    tmp_path: Path,
) -> None:
    hold = threading.Event()
    script = [text("A."), text("B, never heard.", hold=hold), text("B."), text("C.")]
    try:
        with OpenAIServer(script) as model:
            project = write_project(tmp_path / "project", model.url, {"tiny": "Say something tiny: $ARGUMENTS"})
            install(config_dir(project), sys.executable)
            with OpencodeServer(project, tmp_path) as killed:
                session = killed.create_session()
                killed.command(session, "tiny", "a && /tiny b && /tiny c")
                _wait_until(lambda: len(model.main_requests) == 2, "request for step 2")
                assert _told(model) == ["a", "b"]
                before = killed.ignored_lines(session)
                assert before[-1] == "2/3: /tiny b", before
                killed.kill()
            asked_before = len(model.main_requests)

            with OpencodeServer(project, tmp_path) as server:
                resumed = server.command(session, "slash-chain", "resume").wait()
                # Answered by the core, with no model turn of its own (the hook throws: HTTP 500 to an API caller).
                assert resumed.status == 500, (resumed.status, resumed.body)
                _wait_until(lambda: "all 3 command(s) ran" in server.ignored_lines(session), "end of the chain")
                server.wait_quiet(session)
                assert server.ignored_lines(session)[len(before) :] == [
                    CUT,
                    "resumed: 2/3 /tiny b was interrupted and runs again, then the rest",
                    "2/3: /tiny b",
                    "3/3: /tiny c",
                    "all 3 command(s) ran",
                ], server.log()
                assert _told(model)[asked_before:] == ["b", "c"]

                # A new session in the same project is offered nothing and resumes nothing.
                fresh = server.create_session()
                nothing = server.command(fresh, "slash-chain", "resume").wait()
                assert nothing.status == 500
                server.wait_quiet(fresh)
                assert server.ignored_lines(fresh) == [NOTHING]
                assert len(model.main_requests) == asked_before + 2
    finally:
        hold.set()
        for pid in shared_helpers(Path(isolated_env(tmp_path)["TMPDIR"])):
            os.kill(pid, signal.SIGTERM)
