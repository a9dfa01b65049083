"""The opencode harness itself (tests/support/opencode_cli.py) against the real opencode 1.18.33, with no
plugin: it starts isolated and offline, reads the event stream, tells title requests apart, and stops."""

import http.client
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, text
from tests.support.opencode_cli import OpencodeServer, opencode_path, write_project

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(opencode_path() is None, reason="no opencode: scripts/setup.sh installs opencode-ai 1.18.33"),
]


def test_a_typed_chain_without_the_plugin_reaches_the_model_whole_and_the_harness_sees_it_end(tmp_path: Path) -> None:
    with OpenAIServer([text("Hello")]) as model:
        project = write_project(tmp_path / "p", model.url, {"greet": "Greet $1 warmly. All: $ARGUMENTS"})
        with OpencodeServer(project, tmp_path) as server:
            session = server.create_session()
            answered = server.command(session, "greet", "Bob && /greet Carol").wait()
            server.wait_event("session.idle", session)
            server.wait_quiet(session, quiet=1.0)
            executed = server.wait_event("command.executed", session)
            process = server._process
        assert answered.status == 200
        assert executed["properties"]["arguments"] == "Bob && /greet Carol"
        # Measured on 1.18.33: the last positional placeholder takes the rest of the arguments.
        assert [r.last_user_text() for r in model.main_requests] == [
            "Greet Bob && /greet Carol warmly. All: Bob && /greet Carol"
        ]
        assert [r.kind for r in model.requests].count("title") == 1
        assert list((project / ".opencode").glob("plugins/*")) == []
    assert process is not None and process.poll() is not None
    connection = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=2)
    with pytest.raises(OSError):
        connection.request("GET", "/session")


def test_a_server_that_exits_before_listening_is_reported_with_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "opencode"
    fake.write_text("#!/bin/sh\necho 'no such provider'\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SLASHKIT_OPENCODE", str(fake))
    server = OpencodeServer(tmp_path, tmp_path, start_timeout=10)
    with pytest.raises(RuntimeError, match="no such provider"):
        server.start()
    server.stop()
