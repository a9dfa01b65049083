"""Issue 16 on the SDK host, in the real Claude Code 2.1.328 (`cli_path`), offline against a scripted model.

- H1: the model's self-command `config` (`permissionMode=acceptEdits model=opus[1m]`) is refused; no settings file
  changes. The person's own `/config` still saves (the control: the hole was real).
- H2: with slashkit's slash-chain plugin installed for good through the real `claude plugin marketplace add` and
  `claude plugin install`, in the config the SDK session uses, a `|` that hands the model's answer
  `fine && /model opus` (or `/config ...`) to the next step runs neither: the later requests keep their model
  and no settings file changes. The plugin is loaded (its command is listed) and stands aside.
"""

import asyncio
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, SystemMessage

from slashkit.adapters.claude_code.plugins import lay_out
from slashkit.adapters.sdk import CommandStarted, Event, Line, Message, SlashSession
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.texts import BUILTIN_TOOL_ID, FAIL_TOOL_ID, Key
from tests.support.claude_cli import claude_path, cli_available
from tests.support.model_server import ModelServer, RecordedRequest, Turn, text, tool_use
from tests.support.sdk_session import options, visible

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed (scripts/setup.sh)"),
]


def settings_files(opts: ClaudeAgentOptions) -> dict[str, str]:
    """Every settings file the session's CLI reads and writes (user and project), by path."""
    home, project = Path(opts.env["HOME"]), Path(str(opts.cwd))
    config = Path(opts.env["CLAUDE_CONFIG_DIR"])
    paths = [config / "settings.json", config / "settings.local.json", home / ".claude" / "settings.json"]
    paths += [project / ".claude" / "settings.json", project / ".claude" / "settings.local.json"]
    return {str(path): path.read_text() for path in paths if path.exists()}


def run_all(opts: ClaudeAgentOptions, typed: Sequence[tuple[str, bool]], **more: object) -> list[list[Event]]:
    """Types each (text, by_person) into one session; what each `run` yielded, the SDK's messages left out."""

    async def main() -> list[list[Event]]:
        async with SlashSession(opts, **more) as session:  # type: ignore[arg-type]
            return [visible([e async for e in session.run(t, by_person=p)]) for t, p in typed]

    return asyncio.run(asyncio.wait_for(main(), timeout=90))


def tool_answer(request: RecordedRequest) -> tuple[str, bool]:
    result = request.tool_results()[-1]
    content = result.get("content")
    blocks = content if isinstance(content, list) else [{"text": content}]
    return "".join(str(b.get("text")) for b in blocks), result.get("is_error") is True


def test_the_models_config_is_refused_and_no_setting_changes(tmp_path: Path) -> None:
    asked = {"command": "config", "args": "permissionMode=acceptEdits model=opus[1m]"}
    with ModelServer([tool_use(BUILTIN_TOOL_ID, asked), text("It is not mine to set.")], idle_timeout=60) as model:
        opts = options(tmp_path, model)
        before = settings_files(opts)
        (events,) = run_all(opts, [("raise your own permissions", True)], self_commands=True)
        assert not [e for e in events if isinstance(e, CommandStarted)], events
        assert tool_answer(model.main_requests[1]) == (texts.text("en", Key.DENY_NOT_ALLOWED, name="config"), True)
        assert settings_files(opts) == before, model.describe()


def test_config_the_harness_does_not_mark_as_the_persons_is_refused_and_the_persons_own_saves(tmp_path: Path) -> None:
    with ModelServer([], idle_timeout=60) as model:
        opts = options(tmp_path, model)
        before = settings_files(opts)
        (theirs,) = run_all(opts, [("/config permissionMode=acceptEdits", False)])
        assert [e.text for e in theirs if isinstance(e, Line)] == [], theirs
        assert texts.refused_text(Step("config", ""), "harness") in str(theirs)
        assert settings_files(opts) == before
        run_all(opts, [("/config permissionMode=acceptEdits", True)])
        saved = json.loads(settings_files(opts).get(str(Path(opts.env["CLAUDE_CONFIG_DIR"]) / "settings.json"), "{}"))
        assert saved.get("permissions", {}).get("defaultMode") == "acceptEdits", settings_files(opts)


def loaded_plugins(message: object) -> list[str]:
    """The plugins a session's `init` message says it loaded (measured on 2.1.328: `plugins`, each with a name)."""
    if not isinstance(message, SystemMessage) or message.subtype != "init":
        return []
    return [str(p.get("name")) for p in message.data.get("plugins", []) if isinstance(p, dict)]


def install_for_good(opts: ClaudeAgentOptions, marketplace: Path) -> None:
    """`claude plugin marketplace add` and `claude plugin install slash-chain@slashkit`, as a person installs it,
    in the config the session uses."""
    env = {**opts.env}
    for args in (["marketplace", "add", str(marketplace)], ["install", "slash-chain@slashkit"]):
        done = subprocess.run(
            [str(claude_path()), "plugin", *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"claude plugin {' '.join(args)}: {done.stdout}\n{done.stderr}"


@pytest.mark.parametrize(
    "handed",
    ["fine && /model opus && /effort low", "fine && /config model=opus permissionMode=acceptEdits"],
)
def test_an_installed_plugin_never_reads_the_hosts_steps_as_typing(tmp_path: Path, handed: str) -> None:
    script: list[Turn] = [text(handed), text("Followed up."), text("Third.")]
    with ModelServer(script, idle_timeout=60) as model:
        opts = options(tmp_path, model)
        install_for_good(opts, lay_out(tmp_path / "marketplace"))
        before = settings_files(opts)

        async def main() -> list[Event]:
            async with SlashSession(opts) as session:
                return [e async for e in session.run("/greet the diff | /greet the follow-up && /greet third")]

        every = asyncio.run(asyncio.wait_for(main(), timeout=90))
        events = visible(every)
        plugins = [p for e in every if isinstance(e, Message) for p in loaded_plugins(e.message)]
        assert "slash-chain" in plugins, f"the plugin is not loaded: {plugins}"
        assert [e.text for e in events if isinstance(e, Line)] == [
            "1/3: /greet the diff",
            "2/3: /greet the follow-up",
            "3/3: /greet third",
            "all 3 command(s) ran",
        ], model.describe()
        models = {(r.body or {}).get("model") for r in model.main_requests}
        assert len(models) == 1, f"a later request went to another model: {models}\n{model.describe()}"
        assert len(model.main_requests) == 3, model.describe()
        assert settings_files(opts) == before, model.describe()


def test_with_the_plugin_installed_one_builtin_tool_is_offered_and_one_call_queues_one_compact(tmp_path: Path) -> None:
    script: list[Turn] = [tool_use(BUILTIN_TOOL_ID, {"command": "compact"}), text("It is queued.")]
    with ModelServer(script, idle_timeout=60) as model:
        opts = options(tmp_path, model)
        install_for_good(opts, lay_out(tmp_path / "marketplace"))

        async def main() -> list[Event]:
            async with SlashSession(opts, self_commands=True) as session:
                return [e async for e in session.run("please compact the conversation")]

        every = asyncio.run(asyncio.wait_for(main(), timeout=90))
        plugins = [p for e in every if isinstance(e, Message) for p in loaded_plugins(e.message)]
        assert "slash-chain" in plugins, f"the plugin is not loaded: {plugins}"
        offered = model.main_requests[0].tool_names
        # The host's in-process server and the plugin are both `slash-chain`: each tool is offered once.
        assert (offered.count(BUILTIN_TOOL_ID), offered.count(FAIL_TOOL_ID)) == (1, 1), offered
        queued = [e for e in visible(every) if isinstance(e, CommandStarted)]
        assert [(e.step.name, e.queued) for e in queued] == [("/compact", True)], model.describe()
        assert tool_answer(model.main_requests[1]) == (texts.text("en", Key.SKILL_QUEUED, queued="/compact"), False)
        assert len(model.of_kind("summary")) == 1, model.describe()
