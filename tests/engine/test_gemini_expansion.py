"""slashkit expands a chain's next step as the real Gemini CLI 0.61.0 expands the same command typed alone: each
custom command below is typed in `gemini -p` and what the model got is compared with
`slashkit.adapters.gemini.commands.expansion` of the same file."""

from pathlib import Path

import pytest

from slashkit.adapters.gemini.commands import expansion
from tests.support.gemini_cli import Gemini, available
from tests.support.gemini_server import GeminiServer, text

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not available(), reason="no Gemini CLI: scripts/setup.sh installs @google/gemini-cli 0.61.0"),
]

COMMANDS = {
    "greet": "Greet {{args}} warmly, {{args}}.",
    "bye": "Say goodbye.",
    "read": "Read @{notes.txt} for {{args}}.",
    "git/commit": "Commit {{args}}",
}


@pytest.mark.parametrize(
    ("line", "command", "args"),
    [
        ("/greet Bob and Ann", "greet", "Bob and Ann"),
        ("/bye now please", "bye", "now please"),
        ("/read me", "read", "me"),
        ("/git:commit the fix", "git:commit", "the fix"),
    ],
)
def test_gemini_sends_what_slashkit_expands(tmp_path: Path, line: str, command: str, args: str) -> None:
    gemini = Gemini(tmp_path).setup(COMMANDS, install=False)
    (gemini.project / "notes.txt").write_text("THE NOTES\n")
    with GeminiServer([text("ok")]) as model:
        done = gemini.run(line, model.url, {})
        sent = model.main
    assert done.returncode == 0, done.stderr
    parts = (sent[0].body or {})["contents"][-1]["parts"]
    said = "".join(p.get("text", "") for p in parts).rpartition("</session_context>")[2]
    assert said == expansion(command, args, gemini.project, gemini.home)
