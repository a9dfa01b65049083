"""The Codex host: a `codex app-server` thread whose typed slash chains run one turn a step, with the fail tool and
the self-command tool as dynamic tools. The harness loop (`slashkit.adapters.harness.loop`) drives the core's
session; this module says how one step runs in Codex and how its turn ended.

`/name args` is, in order: a built-in the app-server exposes (`slashkit.core.allowlist.CODEX`: /compact, /review,
/new), else the skill `name` (its SKILL.md goes to the model with the args), else a failing step with a line.
"""

import contextlib
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, Unpack

from attrs import frozen

from slashkit.adapters import __version__
from slashkit.adapters.codex.protocol import (
    DynamicToolCallResponse,
    FunctionDynamicToolSpec,
    SkillUserInput,
    TextUserInput,
    UserInput,
)
from slashkit.adapters.codex.rpc import AppServer, CodexGone, Notification, RpcError, ServerRequest
from slashkit.adapters.harness.events import Event, Output
from slashkit.adapters.harness.loop import Ended, Harness, SessionSettings, step_note, typed_command
from slashkit.core import chain_machine as m
from slashkit.core import texts
from slashkit.core.allowlist import CODEX
from slashkit.core.texts import BUILTIN_TOOL_NAME, CHAIN_COMMAND, FAIL_TOOL, Key

#: What the client calls itself in `initialize` (Codex sends it as the `originator` header).
CLIENT: Final = {"name": "slashkit", "title": "slashkit", "version": __version__}
#: The approval requests the app-server may send; slashkit has no person to ask, so it declines each: a policy
#: that asks is never answered yes by slashkit (with `approval_policy = "never"` none comes, measured on 0.169.0).
_APPROVALS: Final = {
    "item/commandExecution/requestApproval": {"decision": "decline"},
    "item/fileChange/requestApproval": {"decision": "decline"},
    "execCommandApproval": {"decision": "denied"},
    "applyPatchApproval": {"decision": "denied"},
}
#: How a turn's `status` reads in the core's words (measured on 0.169.0: completed, interrupted, failed).
_STATUS: Final = {"completed": "answer", "interrupted": "aborted", "failed": "error"}
#: The longest a turn may take before the step fails (a harness's own timeout is usually shorter).
TURN_TIMEOUT: Final = 3600.0


@frozen
class Raw:
    """A notification of the app-server, as it came, for a harness that shows everything."""

    notification: Notification


class CodexSession(Harness[Raw]):
    """A `codex app-server` thread that runs what the harness types, plus slash chains: `async with
    CodexSession(cwd=".") as session: async for event in session.run("/greet Bob && /compact")`.

    `codex` is the command that starts Codex (its path, or a list of words); `config` are `-c key=value`
    overrides passed as they are; `approval_policy` and `sandbox` go to `thread/start` as given (None: Codex's own
    configuration decides), and slashkit never widens them. `self_commands=True` offers the model a tool to run one
    of the session's built-ins (/compact) when the user asks; `allow` widens the allowlist for the person.
    """

    def __init__(
        self,
        codex: str | Sequence[str] = "codex",
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        config: Iterable[str] = (),
        approval_policy: str | None = None,
        sandbox: str | None = None,
        **settings: Unpack[SessionSettings],
    ) -> None:
        super().__init__(CODEX, settings, harness=True, fail_tool=FAIL_TOOL)
        words = [codex] if isinstance(codex, str) else list(codex)
        self._argv = [*words, *(part for item in config for part in ("-c", item)), "app-server"]
        self._cwd, self._env = cwd, env
        self._project = None if cwd is None else Path(cwd)
        self._approval_policy, self._sandbox = approval_policy, sandbox
        self._server: AppServer | None = None
        self._thread = ""
        self._turn: str | None = None
        self._skills: dict[str, str] = {}

    # Lifecycle

    async def connect(self) -> None:
        """Starts the app-server, lists the project's skills and starts the session's thread."""
        self._server = await AppServer.start(self._argv, env=self._env, cwd=self._cwd)
        try:
            await self._server.request("initialize", {"clientInfo": CLIENT, "capabilities": {"experimentalApi": True}})
            await self._server.notify("initialized")
            listed = await self._server.request("skills/list", {"cwds": [self._cwd] if self._cwd else []})
            self._skills = skill_paths(listed)
            await self._new_thread()
        except (CodexGone, RpcError):
            await self.disconnect()
            raise
        self._builtins = CODEX.builtins
        self._known = frozenset({CHAIN_COMMAND, *CODEX.builtins, *self._skills})

    async def disconnect(self) -> None:
        """Ends the app-server; nothing of it is left running."""
        if self._server is not None:
            await self._server.close()

    async def interrupt(self) -> None:
        """Interrupts the running turn: a chain whose step it was stops (its turn ended as `interrupted`)."""
        if self._server is not None and self._turn is not None:
            with contextlib.suppress(RpcError):  # the turn ended meanwhile: nothing is left to interrupt
                await self._server.request("turn/interrupt", {"threadId": self._thread, "turnId": self._turn})

    @property
    def thread(self) -> str:
        """The id of the thread the session's turns run in."""
        return self._thread

    async def _new_thread(self) -> str:
        assert self._server is not None
        params: dict[str, object] = {"dynamicTools": self._tools()}
        if self._cwd is not None:
            params["cwd"] = self._cwd
        if self._approval_policy is not None:
            params["approvalPolicy"] = self._approval_policy
        if self._sandbox is not None:
            params["sandbox"] = self._sandbox
        started = await self._server.request("thread/start", params)
        thread = started.get("thread")
        ident = thread.get("id") if isinstance(thread, dict) else None
        if not isinstance(ident, str):
            raise CodexGone("codex app-server started a thread with no id")
        self._thread = ident
        return ident

    def _tools(self) -> list[FunctionDynamicToolSpec]:
        fail: FunctionDynamicToolSpec = {
            "type": "function",
            "name": FAIL_TOOL,
            "description": texts.FAIL_DESCRIPTION,
            "inputSchema": dict(texts.FAIL_SCHEMA),
        }
        if not self._self_commands:
            return [fail]
        described = texts.text(self._agenda.session.language, Key.SELF_TOOL_NOTE)
        run: FunctionDynamicToolSpec = {
            "type": "function",
            "name": BUILTIN_TOOL_NAME,
            "description": described,
            "inputSchema": dict(texts.BUILTIN_SCHEMA),
        }
        return [fail, run]

    # One step: the harness loop sends each run the core asks for through this

    async def _send(self, text: str, index: int, *, is_step: bool) -> AsyncIterator[Event | Raw | Ended]:
        if self._server is None or self._server.gone is not None:
            why = self._server.gone if self._server is not None else None
            yield Ended("failed", str(why) if why else "the Codex session is not connected")
            return
        command, args = typed_command(text)
        try:
            if command in CODEX.builtins:
                async for item in self._builtin_step(command, args, index):
                    yield item
                return
            items: list[UserInput] = [_text(args if command else text)]
            if command:
                if command not in self._skills:
                    yield Ended("failed", self._unknown(command))
                    return
                skill: SkillUserInput = {"type": "skill", "name": command, "path": self._skills[command]}
                items = [_text(args or text), skill]
            prompted = False
            if is_step:
                note = step_note(text, self._agenda.move(m.PromptHanded(text)).reply)
                prompted = True
                if note is not None:
                    items.append(_text(note))
            started = await self._server.request("turn/start", {"threadId": self._thread, "input": items})
            async for item in self._turn_of(started, index, prompted):
                yield item
        except (CodexGone, RpcError) as error:
            yield Ended("failed", str(error))

    async def _builtin_step(self, command: str, args: str, index: int) -> AsyncIterator[Event | Raw | Ended]:
        assert self._server is not None
        match command:
            case "new":
                thread = await self._new_thread()
                yield Output(index, f"new thread {thread}")
                yield Ended("ran", "")
                return
            case "compact":
                started = await self._server.request("thread/compact/start", {"threadId": self._thread})
            case _:
                target = {"type": "custom", "instructions": args} if args else {"type": "uncommittedChanges"}
                started = await self._server.request("review/start", {"threadId": self._thread, "target": target})
        async for item in self._turn_of(started, index, prompted=False, local=command == "compact"):
            yield item

    async def _turn_of(
        self, started: Mapping[str, object], index: int, prompted: bool, local: bool = False
    ) -> AsyncIterator[Event | Raw | Ended]:
        """Reads the thread's messages until its turn completed: the model's messages as output, slashkit's tools
        answered, approvals declined. `local`: a built-in that is no model turn (a compaction) ran, or failed."""
        assert self._server is not None
        turn = started.get("turn")
        self._turn = turn.get("id") if isinstance(turn, dict) and isinstance(turn.get("id"), str) else None
        last = ""
        try:
            while True:
                message = await self._server.next_message(TURN_TIMEOUT)
                if isinstance(message, ServerRequest):
                    await self._answer_request(message)
                    continue
                yield Raw(message)
                params = message.params
                if params.get("threadId") not in (None, self._thread):
                    continue
                match message.method:
                    case "turn/started":
                        # The running turn is the one started here: a review's differs from the one its
                        # review/start answered with, and only this one can be interrupted (measured on 0.169.0).
                        turn = params.get("turn")
                        ident = turn.get("id") if isinstance(turn, dict) else None
                        self._turn = ident if isinstance(ident, str) else self._turn
                    case "item/completed":
                        item = params.get("item")
                        if isinstance(item, dict) and item.get("type") == "agentMessage":
                            said = item.get("text")
                            if isinstance(said, str) and said:
                                last = said
                                yield Output(index, said)
                    case "turn/completed":
                        done = params.get("turn")
                        if not isinstance(done, dict):
                            continue
                        status = done.get("status")
                        if local:
                            yield Ended("ran", "") if status == "completed" else Ended("failed", _why(done))
                        elif status == "completed":
                            yield Ended("answer", last, prompted)
                        else:
                            how = _STATUS.get(status if isinstance(status, str) else "", "error")
                            yield Ended(how, _why(done) if how == "error" else last, prompted)  # type: ignore[arg-type]
                        return
        except TimeoutError:
            yield Ended("failed", f"Codex's turn did not end within {TURN_TIMEOUT:g} s")
        finally:
            self._turn = None

    async def _answer_request(self, request: ServerRequest) -> None:
        assert self._server is not None
        if request.method in _APPROVALS:
            await self._server.respond(request, _APPROVALS[request.method])
            return
        if request.method != "item/tool/call":
            await self._server.respond_error(request, -32601, f"slashkit does not answer {request.method}")
            return
        tool, arguments = request.params.get("tool"), request.params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        if tool == FAIL_TOOL:
            text, refused = self._fail_called(arguments)
        elif tool == BUILTIN_TOOL_NAME and self._self_commands:
            text, refused = self._builtin_called(arguments)
        else:
            # Its name as the call gave it, cut: the answer goes back into the model's context.
            text, refused = f"no tool {json.dumps(tool)[:100]} in this session", True
        answer: DynamicToolCallResponse = {
            "contentItems": [{"type": "inputText", "text": text}],
            "success": not refused,
        }
        await self._server.respond(request, dict(answer))

    def _unknown(self, command: str) -> str:
        return f"/{command} is neither a Codex built-in ({', '.join(sorted(CODEX.builtins))}) nor a skill"


def _text(text: str) -> TextUserInput:
    return {"type": "text", "text": text, "text_elements": []}


def _why(turn: Mapping[str, object]) -> str:
    error = turn.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return texts.one_line(message) if isinstance(message, str) and message else f"the turn {turn.get('status')}"


def skill_paths(listed: Mapping[str, object]) -> dict[str, str]:
    """Each enabled skill's name and the path `turn/start` takes, from `skills/list`'s answer (the first of a
    name wins, as the project's come before the user's and the system's)."""
    paths: dict[str, str] = {}
    entries = listed.get("data")
    for entry in entries if isinstance(entries, list) else []:
        skills = entry.get("skills") if isinstance(entry, dict) else None
        for skill in skills if isinstance(skills, list) else []:
            if not isinstance(skill, dict) or skill.get("enabled") is False:
                continue
            name, path = skill.get("name"), skill.get("path")
            if isinstance(name, str) and isinstance(path, str) and name not in paths:
                paths[name] = path
    return paths
