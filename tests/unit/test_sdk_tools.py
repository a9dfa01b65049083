"""The SDK host's tools and hooks as the SDK calls them, on a session that is not connected: what the model
and the harness get back, whatever the input."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookContext, HookMatcher

from slashkit.adapters.memory import DictStore
from slashkit.adapters.sdk import SlashSession
from slashkit.core import texts
from slashkit.core.texts import BUILTIN_TOOL_ID, CHAIN_COMMAND, FAIL_TOOL_ID, MAX_TOOL_TEXT, Key

CONTEXT: HookContext = {"signal": None}


def answer(reply: dict[str, Any]) -> tuple[str, bool]:
    return reply["content"][0]["text"], reply["is_error"]


def session(**kw: Any) -> SlashSession:
    made = SlashSession(ClaudeAgentOptions(), **kw)
    made._builtins = frozenset({"compact", "model", "effort", "clear"})
    return made


@pytest.mark.parametrize("reason", ["no Bob", "", None, 5, {"x": 1}, "\ud800"])
def test_the_fail_tool_refuses_when_no_step_waits_whatever_the_reason(reason: object) -> None:
    assert answer(asyncio.run(session()._fail({"reason": reason}))) == (texts.FAIL_NOTHING_WAITS, True)


@pytest.mark.parametrize(
    ("args", "text", "refused"),
    [
        (
            {"command": "/compact", "args": " keep the plan "},
            texts.text("en", Key.SKILL_QUEUED, queued="/compact keep the plan"),
            False,
        ),
        ({"command": "model", "args": "opus"}, texts.text("en", Key.DENY_PERSON_ONLY, name="model"), True),
        ({"command": " /EFFORT high"}, texts.text("en", Key.DENY_PERSON_ONLY, name="EFFORT high"), True),
        ({"command": "review"}, texts.text("en", Key.NOT_BUILTIN, name="review"), True),
        ({"command": 5}, texts.text("en", Key.NOT_BUILTIN, name=""), True),
        ({}, texts.text("en", Key.NOT_BUILTIN, name=""), True),
    ],
)
def test_the_self_command_tool_queues_built_ins_only(args: dict[str, Any], text: str, refused: bool) -> None:
    host = session(self_commands=True)
    assert answer(asyncio.run(host._run_builtin(args))) == (text, refused)
    assert host._agenda.due == (0 if refused else 1)


def test_the_self_command_texts_follow_the_language() -> None:
    host = session(self_commands=True, language="pt-BR")
    refusal = answer(asyncio.run(host._run_builtin({"command": "model"})))
    assert refusal == (texts.text("pt-BR", Key.DENY_PERSON_ONLY, name="model"), True)


def test_a_prompt_hook_with_no_text_or_no_chain_changes_nothing() -> None:
    host = session()
    for prompt in (None, 5, "hello"):
        hook_input: Any = {"hook_event_name": "UserPromptSubmit", "prompt": prompt}
        assert asyncio.run(host._prompt_submitted(hook_input, None, CONTEXT)) == {}


def test_a_subagents_fail_call_is_denied_and_the_main_loops_passes() -> None:
    host = session()
    sub: Any = {"hook_event_name": "PreToolUse", "agent_id": "a1", "tool_input": {"reason": "x"}}
    denied = asyncio.run(host._fail_from_subagent(sub, None, CONTEXT))
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[typeddict-item]
    main: Any = {"hook_event_name": "PreToolUse", "tool_input": "odd"}
    assert asyncio.run(host._fail_from_subagent(main, None, CONTEXT)) == {}


def test_the_harness_options_keep_theirs_and_gain_slashkits() -> None:
    async def theirs(*_: Any) -> Any:
        return {}

    mine = HookMatcher(hooks=[theirs])
    given = ClaudeAgentOptions(allowed_tools=["Read"], hooks={"UserPromptSubmit": [mine]}, mcp_servers={})
    options = SlashSession(given, self_commands=True).client.options
    assert options.allowed_tools == ["Read", FAIL_TOOL_ID, BUILTIN_TOOL_ID]
    assert options.hooks is not None and options.hooks["UserPromptSubmit"][0] is mine
    assert len(options.hooks["UserPromptSubmit"]) == 2 and len(options.hooks["PreToolUse"]) == 1
    assert isinstance(options.mcp_servers, dict)
    # One server, the slash-chain plugin's name, holds both tools: mcp__slash-chain__fail and __builtin.
    assert {name: dict(c).get("alwaysLoad") for name, c in options.mcp_servers.items()} == {CHAIN_COMMAND: True}
    assert given.allowed_tools == ["Read"], "the harness's own options are not changed"


def test_an_mcp_config_path_is_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="pass them as a dict"):
        SlashSession(ClaudeAgentOptions(mcp_servers=tmp_path / "mcp.json"))


def test_the_self_command_tool_is_off_unless_turned_on() -> None:
    options = SlashSession(ClaudeAgentOptions()).client.options
    assert BUILTIN_TOOL_ID not in options.allowed_tools
    assert isinstance(options.mcp_servers, dict) and set(options.mcp_servers) == {CHAIN_COMMAND}


@pytest.mark.parametrize(
    "args",
    [
        {"command": "compact", "args": "keep " + "x" * (1 << 20)},
        {"command": "compact" + " x" * MAX_TOOL_TEXT},
    ],
)
def test_an_oversized_self_command_is_refused_queues_nothing_and_is_not_echoed(args: dict[str, Any]) -> None:
    host = session(self_commands=True)
    text, refused = answer(asyncio.run(host._run_builtin(args)))
    assert refused and len(text) < 200 and "characters, over the 4,000" in text
    assert host._agenda.due == 0
    fitting = {"command": "compact", "args": "x" * MAX_TOOL_TEXT}
    assert answer(asyncio.run(host._run_builtin(fitting)))[1] is False


def test_an_oversized_fail_reason_is_refused_and_marks_nothing() -> None:
    host = session()
    text, refused = answer(asyncio.run(host._fail({"reason": "no Bob " * 200_000})))
    assert refused and len(text) < 200 and text.startswith("reason is 1,400,000 characters")
    assert not host._reported_failed


def test_a_setting_the_session_does_not_take_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="SlashSession\\(\\) got an unexpected keyword argument 'langauge'"):
        SlashSession(ClaudeAgentOptions(), langauge="es")  # type: ignore[call-arg]


def test_the_sdk_reads_lines_of_16_mib_unless_the_harness_said_otherwise() -> None:
    assert SlashSession(ClaudeAgentOptions()).client.options.max_buffer_size == 16 << 20
    assert SlashSession(ClaudeAgentOptions(max_buffer_size=1 << 20)).client.options.max_buffer_size == 1 << 20


async def _typed(host: SlashSession, line: str, *, by_person: bool = True) -> list[object]:
    return [event async for event in host.run(line, by_person=by_person)]


def test_the_persons_switch_turns_the_models_self_commands_off_for_every_session_sharing_the_store() -> None:
    store = DictStore()
    asyncio.run(_typed(session(self_commands=True, store=store), "/slash-chain builtin off"))
    later = session(self_commands=True, store=store)
    off = texts.text("en", Key.DENY_SWITCHED_OFF, name="compact")
    assert answer(asyncio.run(later._run_builtin({"command": "compact"}))) == (off, True)
    assert later._agenda.due == 0
    asyncio.run(_typed(later, "/slash-chain builtin on"))
    assert answer(asyncio.run(later._run_builtin({"command": "compact"})))[1] is False


def test_text_the_person_did_not_type_cannot_switch_the_models_self_commands_off() -> None:
    store = DictStore()
    asyncio.run(_typed(session(self_commands=True, store=store), "/slash-chain builtin off", by_person=False))
    later = session(self_commands=True, store=store)
    assert answer(asyncio.run(later._run_builtin({"command": "compact"})))[1] is False
