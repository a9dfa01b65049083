"""The in-process host on the Claude Agent SDK: a `ClaudeSDKClient` session whose typed slash chains run one
query a step, with the fail tool and the step note in-process, and (when turned on) a tool the model calls to
run one of the session's built-ins. The core's session decides everything: each hook, tool and step moves it by one
event (`slashkit.adapters.harness.agenda`), and `slashkit.adapters.sdk.mapping` translates."""

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Collection, Mapping
from pathlib import Path
from typing import Any, Final, Unpack, cast

import anyio.abc
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIJSONDecodeError,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    McpSdkServerConfig,
    ResultMessage,
    TextBlock,
    create_sdk_mcp_server,
    tool,
)

from slashkit.adapters.bridge.bridge import HARNESS_VARIABLE
from slashkit.adapters.harness.events import Output
from slashkit.adapters.harness.loop import HARNESS_ORIGIN, Ended, Harness, SessionSettings, step_note
from slashkit.adapters.sdk.events import Event, Message
from slashkit.adapters.sdk.mapping import QueryEnd, step_end
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.allowlist import CLAUDE_CODE
from slashkit.core.texts import BUILTIN_TOOL, BUILTIN_TOOL_ID, CHAIN_COMMAND, FAIL_TOOL, FAIL_TOOL_ID, Key

#: The model a local command's answer carries (measured on Claude Code 2.1.328).
SYNTHETIC: Final = "<synthetic>"
#: Set in the environment of the Claude Code this host drives (slashkit.adapters.bridge.bridge.HARNESS_VARIABLE):
#: a slashkit plugin installed for good, and so loaded into this session too, reads each step this host sends as
#: the harness's text, never as the person's typing, and starts no chain of its own from it.
HARNESS_MARK: Final = {HARNESS_VARIABLE: "sdk"}
#: The longest line of Claude Code's the SDK reads, where the harness's options do not say (the SDK's own default
#: is 1 MiB). A line is one message: a model's answer, or its tool call whole, so a call of slashkit's tools with
#: 1 MiB of arguments would end the SDK's reader and with it the session and its running chain (measured on
#: claude-agent-sdk 0.2.184 with Claude Code 2.1.328) before the call could be refused (MAX_TOOL_TEXT).
MAX_LINE: Final = 16 << 20
#: The most characters `run` takes. Claude Code writes a query's text back in one JSON line, and the SDK reads no
#: line over its `max_buffer_size` (1 MiB by default): a 1.1 MB text ends its reader, a 1.0 MB one runs (measured
#: on claude-agent-sdk 0.2.184 with Claude Code 2.1.328). JSON writes a control character in 6 bytes, so this
#: many characters stay under 1 MiB whatever they are; a person types far fewer, and `slashkit run`'s argument
#: can hold at most 128 KiB (Linux's bound on one argument).
MAX_TYPED: Final = 100_000


class SlashSession(Harness[Message]):
    """A Claude Agent SDK session that runs what the harness types the way a person's Claude Code would, plus
    slash chains: `async for event in session.run("/review && /test")`.

    Pass your own `ClaudeAgentOptions`, or a `ClaudeSDKClient` that is not connected yet (slashkit adds its
    tools and hooks to its options and connects it). `self_commands=True` offers the model a tool to run one
    of the session's built-ins (such as /compact) when the user asks; `language` picks its texts (en, pt-BR,
    zh-CN, es). Only the person may run a built-in off the allowlist (slashkit.core.allowlist): `allow` names the
    ones the person adds for themselves (never /model or /effort). Iterate each `run` to its end: the session
    sends one query at a time.
    """

    def __init__(
        self,
        options: ClaudeAgentOptions | None = None,
        *,
        client: ClaudeSDKClient | None = None,
        **settings: Unpack[SessionSettings],
    ) -> None:
        super().__init__(CLAUDE_CODE, settings)
        self._lock = asyncio.Lock()
        self._in_flight: str | None = None
        self._is_step = False
        self._prompted = False
        #: Why the SDK stopped reading the session, once it did.
        self._unreadable: str | None = None
        base = client.options if client is not None else (options or ClaudeAgentOptions())
        self._project = None if base.cwd is None else Path(base.cwd)
        amended = self._amend(base)
        if client is None:
            client = ClaudeSDKClient(amended)
        else:
            client.options = amended
        self.client = client

    # Lifecycle

    async def connect(self) -> None:
        """Starts the session and reads its command list, against which every step is checked before it runs."""
        await self.client.connect()
        known, builtins = command_names(await self.client.get_server_info())
        self._known = known
        self._builtins = builtins

    async def disconnect(self) -> None:
        """Ends the session."""
        unread = _cli_process(self.client) if self._unreadable is not None else None
        await self.client.disconnect()
        if unread is not None:
            await unread.aclose()

    async def interrupt(self) -> None:
        """Interrupts the model's turn: a chain whose step it was stops (its turn ended with `aborted`)."""
        await self.client.interrupt()

    # One query: the harness loop (slashkit.adapters.harness.loop) sends each run the core asks for through this

    async def _send(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | Ended]:
        async for item in self._query(text, index, is_step=is_step):
            if isinstance(item, QueryEnd):
                how, output = step_end(item)
                yield Ended(how, output, item.prompted)
            else:
                yield item

    async def _query(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | QueryEnd]:
        """Sends one query and yields its messages and output until its ResultMessage, then how it ended. Once the
        SDK stopped reading the session, every query fails at once, saying why."""
        async with self._lock:
            if self._unreadable is not None:
                yield unread(self._unreadable)
                return
            self._in_flight, self._is_step = text, is_step
            self._prompted = self._reported_failed = False
            synthetic: list[str] = []
            await self.client.query(text)
            try:
                async for message in self.client.receive_response():
                    yield Message(message)
                    if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                        words = [block.text for block in message.content if isinstance(block, TextBlock)]
                        if message.model == SYNTHETIC:
                            synthetic += words
                        for word in words:
                            yield Output(index, word)
                    if isinstance(message, ResultMessage):
                        yield query_end(message, "\n".join(synthetic), self._prompted)
            except CLIJSONDecodeError as error:
                # Claude Code wrote a line the SDK does not read (one over its buffer: a model's answer over 1 MiB,
                # measured on claude-agent-sdk 0.2.184), and its reader ended: nothing of this session comes again.
                self._unreadable = f"Claude Code sent a message the SDK cannot read ({error.original_error})"[:300]
                yield unread(self._unreadable)
            self._in_flight = None

    # Hooks and tools: the SDK calls these on the session's event loop

    async def _prompt_submitted(
        self, hook_input: HookInput, _tool_use_id: str | None, _ctx: HookContext
    ) -> HookJSONOutput:
        prompt = cast(dict[str, Any], hook_input).get("prompt")
        if not isinstance(prompt, str):
            return {}
        if prompt != self._in_flight:
            # A prompt that did not come through `run` (the harness's own client.query): the person's.
            self._agenda.move(m.PromptSubmitted(prompt, HARNESS_ORIGIN))
            return {}
        self._prompted = True
        if not self._is_step:
            return {}
        note = step_note(prompt, self._agenda.move(m.PromptHanded(prompt)).reply)
        if note is None:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": note}}

    async def _fail_from_subagent(
        self, hook_input: HookInput, _tool_use_id: str | None, _ctx: HookContext
    ) -> HookJSONOutput:
        raw = cast(dict[str, Any], hook_input)
        agent = raw.get("agent_id")
        if not isinstance(agent, str):
            return {}
        tool_input = raw.get("tool_input")
        text, _ = self._fail_called(tool_input if isinstance(tool_input, dict) else {}, agent)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }

    async def _fail(self, args: dict[str, Any]) -> dict[str, Any]:
        return mcp_answer(*self._fail_called(args))

    async def _run_builtin(self, args: dict[str, Any]) -> dict[str, Any]:
        return mcp_answer(*self._builtin_called(args))

    def _amend(self, options: ClaudeAgentOptions) -> ClaudeAgentOptions:
        """The harness's options plus slashkit's in-process tools (allowed, always loaded) and hooks: one server,
        `slash-chain`, with the fail tool and (with self-commands) the self-command tool, the names the slash-chain
        plugin gives its own. With the plugin installed too, the model is offered each name once and its call
        reaches this session (measured on Claude Code 2.1.328, tests/engine/test_sdk_who_may_run_what.py)."""
        tools = [tool(FAIL_TOOL, texts.FAIL_DESCRIPTION, dict(texts.FAIL_SCHEMA))(self._fail)]
        allowed = [FAIL_TOOL_ID]
        if self._self_commands:
            described = texts.text(self._agenda.session.language, Key.SELF_TOOL_NOTE)
            tools.append(tool(BUILTIN_TOOL, described, dict(texts.BUILTIN_SCHEMA))(self._run_builtin))
            allowed.append(BUILTIN_TOOL_ID)
        if not isinstance(options.mcp_servers, dict):
            raise TypeError("slashkit adds its in-process tools to mcp_servers, so pass them as a dict, not a path")
        server = create_sdk_mcp_server(CHAIN_COMMAND, tools=tools)
        # Kept out of tool search, or the model never sees them (measured on Claude Code 2.1.328).
        loaded = {CHAIN_COMMAND: cast(McpSdkServerConfig, {**server, "alwaysLoad": True})}
        hooks = {key: list(value) for key, value in (options.hooks or {}).items()}
        hooks.setdefault("UserPromptSubmit", []).append(HookMatcher(hooks=[self._prompt_submitted]))
        hooks.setdefault("PreToolUse", []).append(HookMatcher(matcher=FAIL_TOOL_ID, hooks=[self._fail_from_subagent]))
        return dataclasses.replace(
            options,
            env={**options.env, **HARNESS_MARK},
            max_buffer_size=options.max_buffer_size or MAX_LINE,
            mcp_servers={**options.mcp_servers, **loaded},
            allowed_tools=[*options.allowed_tools, *allowed],
            hooks=hooks,
        )


def mcp_answer(text: str, refused: bool) -> dict[str, Any]:
    """A tool's answer as an in-process MCP tool returns it."""
    return {"content": [{"type": "text", "text": text}], "is_error": refused}


def query_end(result: ResultMessage, synthetic: str, prompted: bool) -> QueryEnd:
    """The plain values of a query's ResultMessage the mapping reads.

    The SDK hands on the CLI's JSON fields without checking their types, so each is read here, once: a value of
    the wrong type counts as absent (`is_error` is true only as `true`; `num_turns` a count, else 0; the
    reasons words, else none), except where it is text a person reads (`result`, each of `errors`), which
    shows as its JSON. A step then ends by the core's rules, never with a TypeError.
    """
    return QueryEnd(
        is_error=result.is_error is True,
        num_turns=_count(result.num_turns),
        result=_text(result.result),
        terminal_reason=_word(result.terminal_reason),
        stop_reason=_word(result.stop_reason),
        errors=_texts(result.errors),
        synthetic=synthetic,
        prompted=prompted,
    )


def unread(why: str) -> QueryEnd:
    """The end of a query whose messages the SDK could not read: a step that failed (it threw), saying why."""
    return QueryEnd(is_error=True, num_turns=0, result=why, errors=(why,))


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _word(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: object) -> str:
    """Text as it came, nothing for none, anything else as its JSON (`5`, `{"message": "boom"}`).

    >>> _text({"message": "boom"}), _text(None), _text(5)
    ('{"message": "boom"}', '', '5')
    """
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False, default=str)


def _texts(value: object) -> tuple[str, ...]:
    """The `errors` list's texts; one text alone counts as a list of it."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    return tuple(text for text in map(_text, items) if text)


def command_names(info: Mapping[str, Any] | None) -> tuple[frozenset[str] | None, Collection[str]]:
    """The names the session knows (with aliases and `/slash-chain`), and its built-ins, from
    `get_server_info()`; None when it listed no commands, so no step is refused for being unknown."""
    commands = info.get("commands") if info is not None else None
    if not isinstance(commands, list):
        return None, frozenset()
    known: set[str] = {CHAIN_COMMAND}
    builtins: set[str] = set()
    for command in commands:
        if not isinstance(command, dict) or not isinstance(command.get("name"), str):
            continue
        aliases = command.get("aliases")
        names = {command["name"], *(a for a in aliases if isinstance(a, str))} if isinstance(aliases, list) else set()
        names.add(command["name"])
        known |= names
        if command.get("builtin") is True:
            builtins |= names
    return frozenset(known), frozenset(builtins)


def _cli_process(client: ClaudeSDKClient) -> anyio.abc.Process | None:
    """The CLI's process as the SDK's transport holds it, taken before the SDK lets go of it. Once the SDK's reader
    ended on a line over its buffer, asyncio reads no more of the CLI's stdout (its buffer is full), so that pipe never
    hears the CLI's end, and the SDK's close leaves it open (measured on claude-agent-sdk 0.2.184 and 0.2.189): closed
    by the collector after the event loop, it raises "Event loop is closed". anyio's close of the process closes its
    pipes, on the session's own loop."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    return process if isinstance(process, anyio.abc.Process) else None
