"""slashkit's hooks in the real Gemini CLI 0.61.0 (`gemini -p LINE` in a trusted project where `slashkit gemini
install PROJECT_DIR` put them), offline against a scripted Gemini API: each chain as the person sees it (the hooks'
lines on stderr) and as the model is handed it, in every request."""

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from slashkit.adapters.gemini.resident import FAIL_TOOL
from slashkit.core import texts
from slashkit.core.chain import Step
from tests.support.gemini_cli import Gemini, available
from tests.support.gemini_server import GeminiServer, Request, Turn, call, http_error, text

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not available(), reason="no Gemini CLI: scripts/setup.sh installs @google/gemini-cli 0.61.0"),
]

COMMANDS = {"greet": "Greet {{args}} warmly.", "bye": "Say goodbye.", "echo": "Echo: {{args}}"}


class Ran:
    """A `gemini -p` run: its exit status, its output, the hooks' lines, and the model's requests."""

    def __init__(self, status: int, stdout: str, stderr: str, requests: list[Request]) -> None:
        self.status, self.stdout, self.stderr = status, stdout, stderr
        self.requests = requests

    @property
    def lines(self) -> list[str]:
        """What the hooks said ("Hook system message: ..." on stderr, measured on 0.61.0)."""
        prefix = "Hook system message: "
        return [line[len(prefix) :] for line in self.stderr.splitlines() if line.startswith(prefix)]

    def last_user(self, index: int) -> str:
        """The last user text of the main request `index`, without the session's context Gemini puts ahead of the
        first prompt in `-p` (measured on 0.61.0)."""
        contents = (self.requests[index].body or {}).get("contents") or []
        users = [m for m in contents if m.get("role") == "user" and any("text" in p for p in m.get("parts") or [])]
        said = "".join(p.get("text", "") for p in users[-1].get("parts") or []) if users else ""
        return said.rpartition("</session_context>")[2].lstrip("\n")

    def everything(self) -> str:
        return "\n".join(json.dumps(r.body) for r in self.requests)


def _run(tmp_path: Path, line: str, script: Sequence[Turn], **extra: str) -> Ran:
    with GeminiServer(script) as model:
        gemini = Gemini(tmp_path).setup(COMMANDS)
        done = gemini.run(line, model.url, extra)
        return Ran(done.returncode, done.stdout, done.stderr, model.main)


def test_two_steps_run_as_two_turns_and_no_request_holds_the_chain_tail(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob && /greet Alice", [text("Hello Bob"), text("Hello Alice")])
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 2
    assert ran.last_user(0).startswith("Greet Bob warmly.")
    assert ran.last_user(1) == "Greet Alice warmly."
    assert "&& /greet" not in ran.everything() and "Alice warmly" not in json.dumps(ran.requests[0].body)
    assert "1/2: /greet Bob" in ran.lines
    assert "Hello Bob" in ran.stdout and "Hello Alice" in ran.stdout


def test_three_steps_with_a_tool_call_keep_every_later_request_trimmed(tmp_path: Path) -> None:
    script: list[Turn] = [call("list_directory", {"dir_path": "."}), text("Hi Bob"), text("Hi Alice"), text("Hi Carol")]
    ran = _run(tmp_path, "/greet Bob && /greet Alice && /greet Carol", script)
    assert ran.status == 0, ran.stderr
    assert [ran.last_user(i).split("\n")[0] for i in (0, 2, 3)] == [
        "Greet Bob warmly.",
        "Greet Alice warmly.",
        "Greet Carol warmly.",
    ]
    # The tool's follow-up (request 1) and each later step carry step 1 as trimmed, never the chain's tail.
    assert len(ran.requests) == 4
    for request in ran.requests:
        assert "&& /greet" not in json.dumps(request.body)
        assert "Greet Bob && " not in json.dumps(request.body)
    assert "all 3 command(s) ran" in ran.lines


def test_an_api_error_stops_and_and_says_what_did_not_run(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob && /greet Alice", [http_error(400, "scripted refusal"), text("Hello Alice")])
    assert len(ran.requests) == 1
    assert "Alice" not in ran.everything()
    assert "stopped after /greet: its turn ended with error; not run: /greet" in ran.lines


def test_the_fail_tool_stops_and_and_or_runs_its_fallback(tmp_path: Path) -> None:
    failing: list[Turn] = [call(FAIL_TOOL, {"reason": "no Bob here"}), text("could not"), text("Bye now")]
    stopped = _run(tmp_path / "and", "/greet Bob && /greet Alice", failing)
    assert FAIL_TOOL in stopped.requests[0].tool_names
    assert len(stopped.requests) == 2
    assert "Alice" not in stopped.everything()
    assert "stopped after /greet: the model reported it failed: no Bob here; not run: /greet" in stopped.lines
    fallback = _run(tmp_path / "or", "/greet Bob || /bye", failing)
    assert len(fallback.requests) == 3
    assert fallback.last_user(2).startswith("Say goodbye.")
    assert "/greet failed: the model reported it failed: no Bob here" in fallback.lines


def test_semicolon_runs_on_after_a_failed_step_and_pipe_hands_the_answer_on(tmp_path: Path) -> None:
    failing: list[Turn] = [call(FAIL_TOOL, {"reason": "nope"}), text("could not"), text("Bye now")]
    ran = _run(tmp_path / "semi", "/greet Bob ; /bye", failing)
    assert len(ran.requests) == 3
    assert ran.last_user(2).startswith("Say goodbye.")
    piped = _run(tmp_path / "pipe", "/greet Bob | /echo", [text("PIPED-ANSWER"), text("done")])
    assert len(piped.requests) == 2
    assert piped.last_user(1).startswith("Echo: ") and "PIPED-ANSWER" in piped.last_user(1)


def test_a_lone_command_is_left_to_gemini(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob", [text("Hello Bob")])
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 1
    assert ran.last_user(0).endswith("Greet Bob warmly.")
    assert ran.lines == []


def test_the_helper_down_lets_the_line_go_on_as_typed_with_one_line(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob && /greet Alice", [text("Hello")], TMPDIR=str(tmp_path / "gone"))
    assert ran.status == 0, ran.stderr
    assert len(ran.requests) == 1
    assert ran.last_user(0).endswith("Greet Bob && /greet Alice warmly.")
    unavailable = [line for line in ran.lines if line.startswith(texts.CHAIN_UNAVAILABLE.split("{why}")[0])]
    assert len(unavailable) == 1, ran.lines


def test_no_python_found_is_one_line_at_the_start_and_gemini_goes_on(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob && /greet Alice", [text("Hello")], SLASHKIT_PYTHON="")
    assert ran.status == 0, ran.stderr
    assert ran.last_user(0).endswith("Greet Bob && /greet Alice warmly.")
    assert [line for line in ran.lines if "slashkit-helper" in line] == [
        texts.CHAIN_UNAVAILABLE.format(
            why="no slashkit-helper on PATH: install slashkit there, or set SLASHKIT_PYTHON to a Python with it"
        )
    ]


def test_a_chain_holding_a_built_in_is_refused_naming_it_and_nothing_runs(tmp_path: Path) -> None:
    ran = _run(tmp_path, "/greet Bob && /compress", [text("Hello Bob")])
    assert ran.requests == []
    assert texts.unchainable_text(Step("compress", "")) in ran.stdout


def test_slash_chain_answers_without_the_model_and_off_leaves_a_chain_to_gemini(tmp_path: Path) -> None:
    off = _run(tmp_path, "/slash-chain off", [])
    assert off.requests == [] and off.stdout.startswith("off: ")
    typed = _run(tmp_path, "/greet Bob && /greet Alice", [text("Hello")])
    assert len(typed.requests) == 1 and typed.last_user(0).endswith("Greet Bob && /greet Alice warmly.")
    assert typed.lines == []
    on = _run(tmp_path, "/slash-chain on", [])
    assert on.requests == [] and on.stdout.startswith("on: ")


def test_a_saved_chain_runs_by_name_its_first_step_in_place_of_the_typed_line(tmp_path: Path) -> None:
    chains = tmp_path / "project" / ".slashkit" / "chains"
    chains.mkdir(parents=True)
    (chains / "twice.md").write_text("---\ndescription: greet twice\n---\n/greet $1 && /greet $1 again\n")
    ran = _run(tmp_path, "/twice Bob", [text("Hello Bob"), text("Hello again")])
    assert ran.status == 0, ran.stderr
    assert ran.last_user(0).startswith("Greet Bob warmly.\n\n[slash-chain] This is step 1/2")
    assert ran.last_user(1) == "Greet Bob again warmly."
    assert "/twice" not in ran.everything()
    assert "all 2 command(s) ran" in ran.lines
