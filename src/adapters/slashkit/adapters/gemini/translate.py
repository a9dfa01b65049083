"""slashkit's Gemini CLI hooks past their thin entry (`slashkit.adapters.gemini.hook`, one process per hook
event, which hands on only what may concern the core): Gemini's payloads as the core's events, the core's answers
as Gemini's hook outputs. A driver only: every rule is the core's, reached through the session's resident helper
(`slashkit.adapters.gemini.resident`). The facts it relies on were measured on Gemini CLI 0.61.0 (docs/gemini.md):

- a typed `/a x && /b y` is one custom command `/a` with args `x && /b y`; the transcript's user record keeps the
  line as typed (`displayContent`), written after BeforeAgent and before the turn's first BeforeModel, so the
  chain is read at that BeforeModel (`ChainTyped`); a typed program (`until /check; do /fix; done`) is a prompt
  to Gemini, read there too (`LineTyped`);
- BeforeModel may rewrite the request's messages (merged by index): every request of the session gets step 1's
  text with the chain's tail taken out, since Gemini keeps what it expanded in its history;
- AfterAgent answering `{"decision": "deny", "reason": R}` goes on with R as the next user message: the next
  step's expansion (`slashkit.adapters.gemini.commands`); a turn that ends in an API error fires no AfterAgent,
  only SessionEnd, where the step's end is told and the lines of what did not run are shown;
- SessionStart says `source: "resume"` for `--resume`, with the session's own id (`Continued`: the journal holds
  what its killed process left cut off), and its `systemMessage` is shown in `-p` and in the TUI.

Every failure is answered: when the helper cannot answer, the request goes on as Gemini made it, with one line.
"""

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from slashkit.adapters.bridge import protocol
from slashkit.adapters.bridge.shim import xdg_home
from slashkit.adapters.files import read_regular
from slashkit.adapters.gemini import commands, resident
from slashkit.adapters.gemini.hook import last_typed, resumed, session_id
from slashkit.core import session as core_session
from slashkit.core import texts
from slashkit.core.allowlist import GEMINI
from slashkit.core.chain import SEPARATOR
from slashkit.core.chain_machine import STEP_OUTPUT
from slashkit.core.grammar import starts_program

Json = dict[str, Any]
#: A step's run the core asked for: its command, its args, its token.
Run = tuple[str, str, object]
#: How many typed lines of a session are kept rewritten in its requests (the newest).
MAX_SWAPS: Final = 32
#: The settings file in `$XDG_STATE_HOME/slashkit/` (the on/off setting), as on the Node hosts.
STORE_FILE: Final = "gemini-store.json"


def handled(payload: Json) -> Json:
    """The hook's output for one payload, a failure included: one line saying the chain is unavailable."""
    try:
        return answer(payload)
    except resident.Unavailable as gone:
        return _said([texts.CHAIN_UNAVAILABLE.format(why=str(gone))])
    except Exception as failed:
        return _said([texts.CHAIN_UNAVAILABLE.format(why=f"{type(failed).__name__}: {failed}"[:300])])


def unread(why: str) -> Json:
    """The hook's output for a payload that could not be read within the bounds: one line saying why (the person
    sees a hook's `systemMessage`), and the turn goes on as Gemini made it."""
    return _said([texts.CHAIN_UNAVAILABLE.format(why=f"this hook's input was not read: {why}")])


def answer(payload: Json) -> Json:
    """The hook's output for one payload."""
    sid = session_id(payload.get("session_id"))
    event = payload.get("hook_event_name")
    if sid is None:
        return {}
    if resumed(payload):
        return continued(sid)
    if not resident.exists(sid):
        # A session where no chain was typed yet has no state: only a chain typed now makes one (so a session
        # without chains, or whose state folder is gone, is left alone at every other hook).
        typed = last_typed(payload.get("transcript_path"))
        if event != "BeforeModel" or typed is None or not _ours(typed[2], Path(str(payload.get("cwd") or "."))):
            return {}
    if event == "SessionEnd":
        return ended(sid)
    if event == "BeforeModel":
        with resident.opened(sid) as held:
            return shown(held, before_model(held, payload))
    if event == "AfterAgent":
        with resident.opened(sid) as held:
            return shown(held, after_agent(held, payload))
    return {}


def continued(sid: str) -> Json:
    """Gemini resumed the session (`--resume`, the same session id: docs/gemini.md): the helper looks in its journal
    for the chain the session's previous process left cut off, and the core says what it was; only the person's
    `/slash-chain resume` runs it. What that process left in the session's state (a killed one leaves it) is dropped,
    its helper's session gone with it, but for the rewrites of its typed chains: the resumed history still holds them
    as Gemini expanded them. With nothing cut off, the session is left without state, as one without chains is."""
    with resident.opened(sid) as held:
        swaps = held.notes.get("swaps")
        held.forget()
        held.state.clear()
        if isinstance(swaps, list):
            held.notes["swaps"] = swaps
        lines = _carry(held, held.ask("Continued", {}))[0]
    if not lines:
        resident.close(sid)
    return _said(lines)


def shown(held: resident.Session, out: Json) -> Json:
    """The hook's output with the lines the fail tool left for it (`fail_tool` has no way to show any) first."""
    waiting = [str(line) for line in held.notes.pop("lines", None) or []]
    if not waiting:
        return out
    return {**out, **_said([*waiting, *str(out.get("systemMessage", "")).splitlines()])}


def before_model(held: resident.Session, payload: Json) -> Json:
    """A request to the model: a chain typed just now goes to the core; the request is sent trimmed."""
    notes, lines = held.notes, []
    # The fail tool's server, a child of the Gemini process, finds the session by it (`fail_tool`).
    held.state["gemini"] = os.getppid()
    typed = last_typed(payload.get("transcript_path"))
    if typed is not None and typed[0] != notes.get("seen"):
        notes["seen"] = typed[0]
        if typed[1] != notes.get("sent"):
            lines = _typed(held, typed[2], typed[1], Path(str(payload.get("cwd") or ".")))
    request = payload.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    swaps = notes.get("swaps") or []
    out: Json = _said(lines)
    answered = notes.pop("answer", None)
    if isinstance(answered, str):
        # The line was answered without the model (the core's own answer, or a refusal): Gemini takes a hook's
        # synthetic response only with a deny (`fireBeforeModelEvent`, read in the bundle), in its form
        # (`fromHookLLMResponse`).
        candidate = {"content": {"role": "model", "parts": [answered]}, "finishReason": "STOP", "index": 0}
        out.update(decision="deny", reason=answered)
        out["hookSpecificOutput"] = {
            "hookEventName": "BeforeModel",
            "llm_response": {"text": answered, "candidates": [candidate]},
        }
        return out
    if isinstance(messages, list) and swaps:
        trimmed = [_swapped(m, swaps) for m in messages]
        if trimmed != messages:
            out["hookSpecificOutput"] = {"hookEventName": "BeforeModel", "llm_request": {"messages": trimmed}}
    return out


def _typed(held: resident.Session, line: str, full: str, project: Path) -> list[str]:
    """The person typed `line` (Gemini sent `full` for it): a chain or a program goes to the core; anything else is
    Gemini's."""
    head, own = _chained(line), _own(line)
    home = Path.home()
    known = commands.find(project, home)
    saved = _saved(line, known)
    if head is None and own is None and saved is None and not starts_program(line):
        return []
    notes = held.notes
    notes.update(answered=0, sent=None, project=str(project))
    if head is None and own is None and saved is None:
        e = {"text": line, "origin": "composer", "enabled": _enabled(), "builtins": []}
        return _begun(held, held.ask("LineTyped", {**e, "commands": sorted(known)[:1000]}), full)
    if head is None and own is None and saved is not None:
        return _saved_chain(held, saved, full, known)
    if own is not None:
        said = held.ask("ChainCommandTyped", {"args": own, "enabled": _enabled(), "origin": "composer"})
        lines, run = _carry(held, said)
        reply = said.get("reply") or {}
        text = str(reply.get("text", "")) if reply.get("kind") == "command.answer" else ""
        # `/slash-chain resume` starts the cut-off chain's step: it takes this turn's place, as a saved chain's first
        # step does, and the core's lines (its answer among them) are shown.
        lines, step = _started(held, lines, run)
        if step is not None:
            _swap(notes, full, step)
            return lines
        _swap(notes, full, text, answered=True)
        return lines
    assert head is not None
    command, args = head
    e = {"command": command, "args": args, "origin": "composer", "enabled": _enabled(), "builtins": []}
    said = held.ask("ChainTyped", {**e, "commands": sorted(known)[:1000]})
    lines, _ = _carry(held, said)
    reply = said.get("reply") or {}
    if reply.get("kind") == "command.answer":
        # The core answered the line itself (a refusal): the model gets nothing of the chain.
        text = str(reply.get("text", ""))
        _swap(notes, full, text, answered=True)
        return lines
    if reply.get("kind") != "run.typed":
        return lines
    try:
        text = commands.expansion(command, str(reply.get("args", "")), project, home, known)
    except commands.Unexpandable:
        text = full
    text, more = _handed(held, text)
    _swap(notes, full, text)
    ended = held.ask("RunEnded", {"token": reply.get("token"), "error": None, "applied": False})
    return [*lines, *more, *_carry(held, ended)[0]]


def after_agent(held: resident.Session, payload: Json) -> Json:
    """A turn ended well: the core hears how, and the next step goes on as the turn's continuation."""
    if not held.running or not held.wants("TurnEnded"):
        return {}
    notes = held.notes
    response = str(payload.get("prompt_response") or "")
    new = response[int(notes.get("answered") or 0) :].lstrip("\n")
    notes["answered"] = len(response)
    given = new[: protocol.MAX_TEXT] if held.wants(STEP_OUTPUT) else ""
    said = held.ask("TurnEnded", {"reason": "answer", "agent": None, "answer": given})
    lines, text = _started(held, *_carry(held, said))
    if text is None:
        return _said(lines)
    return {**_said(lines), "decision": "deny", "reason": text}


def _started(held: resident.Session, lines: list[str], run: Run | None) -> tuple[list[str], str | None]:
    """Starts the step the core runs next, if any: its text as the model is to get it (None: no step runs), and
    the lines so far. A step this cannot expand fails at once, and the core says what follows."""
    notes = held.notes
    while run is not None:
        command, args, token = run
        try:
            text = commands.expansion(command, args, Path(str(notes.get("project") or ".")), Path.home())
        except commands.Unexpandable as why:
            failed = held.ask("RunEnded", {"token": token, "error": str(why), "applied": False})
            lines, run = _also(lines, _carry(held, failed))
            continue
        text, more = _handed(held, text)
        notes["sent"] = text
        ended = held.ask("RunEnded", {"token": token, "error": None, "applied": False})
        return [*lines, *more, *_carry(held, ended)[0]], text
    return lines, None


def ended(sid: str) -> Json:
    """The session ended; when a step was still running, its turn ended in an error (Gemini fires no AfterAgent
    then): the core stops the chain, and the lines say what did not run."""
    lines: list[str] = []
    with resident.opened(sid) as held:
        if held.running and held.wants("TurnEnded"):
            with contextlib.suppress(resident.Unavailable):
                lines = _carry(held, held.ask("TurnEnded", {"reason": "error", "agent": None, "answer": ""}))[0]
    resident.close(sid)
    return _said(lines)


def _carry(held: resident.Session, said: Json) -> tuple[list[str], Run | None]:
    """Carries out an answer's effects: lines are shown, timers fire at once (a hook waits for nothing), settings
    are stored, a shell step is waited for (the helper runs it); a step's run is handed back to the hook that can
    start it."""
    lines: list[str] = []
    run: Run | None = None
    for effect in said.get("effects") or []:
        kind = effect.get("kind") if isinstance(effect, dict) else None
        if kind in ("log", "toast"):
            lines.append(str(effect.get("text", "")))
        elif kind == "save.enabled":
            _store(core_session.ENABLED_KEY, effect.get("enabled") is not False)
        elif kind == "after":
            fired = held.ask("TimerFired", {"token": effect.get("token"), "applied": False})
            more, then = _carry(held, fired)
            lines, run = [*lines, *more], then or run
        elif kind == "run":
            run = (str(effect.get("command", "")), str(effect.get("args", "")), effect.get("token"))
        elif kind == "shell":
            # The helper runs the step; this hook waits for its end (Gemini's hook timeout bounds it too).
            error, output = held.shell_ended(effect.get("token"))
            e = {"token": effect.get("token"), "error": error, "output": output[: protocol.MAX_TEXT]}
            more, then = _carry(held, held.ask("RunEnded", {**e, "applied": False}))
            lines, run = [*lines, *more], then or run
    return lines, run


def _also(lines: list[str], carried: tuple[list[str], Run | None]) -> tuple[list[str], Run | None]:
    return [*lines, *carried[0]], carried[1]


def _handed(held: resident.Session, text: str) -> tuple[str, list[str]]:
    """The step's prompt as handed to the model: the core may add its fail note."""
    if not held.wants("PromptHanded"):
        return text, []
    said = held.ask("PromptHanded", {"text": text[: protocol.MAX_TEXT]})
    reply = said.get("reply") or {}
    lines, _ = _carry(held, said)
    return (str(reply.get("text")) if reply.get("kind") == "prompt" else text), lines


def _chained(line: str) -> tuple[str, str] | None:
    """The command and args of a typed `/name args` whose args hold a chain, else None."""
    name, _, args = line.strip()[1:].partition(" ") if line.startswith("/") else ("", "", "")
    args = args.strip()
    return (name, args) if name and SEPARATOR.search(args) else None


def _ours(line: str, project: Path) -> bool:
    """Whether a typed line is for the core: a chain, `/slash-chain`, a name that may be a saved chain's, or a line
    that may be a program."""
    if _chained(line) is not None or _own(line) is not None or starts_program(line):
        return True
    return line.startswith("/") and _saved(line, commands.find(project, Path.home())) is not None


def _saved(line: str, known: Mapping[str, Path]) -> tuple[str, str] | None:
    """A typed `/name args` whose name is no command of Gemini's (then Gemini sent the line as typed): it may be a
    saved chain, which only the core knows."""
    name, _, args = line.strip().partition(" ")
    if not name.startswith("/") or len(name) < 2 or name[1:] in known or name[1:] in GEMINI.builtins:
        return None
    return name[1:], args.strip()


def _saved_chain(held: resident.Session, saved: tuple[str, str], full: str, known: Mapping[str, Path]) -> list[str]:
    """Runs a saved chain typed by name."""
    offered = held.ask("SavedAsked", {"commands": sorted(known)[:1000]}).get("reply") or {}
    chains = offered.get("chains")
    if not isinstance(chains, list) or saved[0] not in [c.get("name") for c in chains if isinstance(c, dict)]:
        return []
    command, args = saved
    e = {"command": command, "args": args, "origin": "composer", "enabled": _enabled(), "builtins": []}
    return _begun(held, held.ask("ChainTyped", {**e, "commands": sorted(known)[:1000]}), full)


def _begun(held: resident.Session, said: Json, full: str) -> list[str]:
    """A saved chain or a program the core answered (`said`): its first step takes this turn's place (the request
    is rewritten to it), the next ones follow as any chain's; with no step to run, the core's lines answer the line
    without the model. No answer (a line that is no program): the line is Gemini's, as typed."""
    reply = said.get("reply") or {}
    if reply.get("kind") != "command.answer":
        return _carry(held, said)[0]
    told = [str(reply.get("text", ""))]
    carried, run = _carry(held, said)
    lines, text = _started(held, [*told, *carried], run)
    notes = held.notes
    if text is None:
        _swap(notes, full, "\n".join(lines), answered=True)
        return []
    _swap(notes, full, text)
    return lines


def _swap(notes: Json, full: str, text: str, answered: bool = False) -> None:
    """From now on every request of the session carries `text` where Gemini stored `full` (its history keeps
    every chain typed so far); `answered`: the line is answered with `text` without the model."""
    swaps = notes.get("swaps")
    notes["swaps"] = [*(swaps if isinstance(swaps, list) else []), [full, text]][-MAX_SWAPS:]
    if answered:
        notes["answer"] = text


def _own(line: str) -> str | None:
    """The args of a typed `/slash-chain args`, else None."""
    name, _, args = line.strip().partition(" ")
    return args.strip() if name == f"/{texts.CHAIN_COMMAND}" else None


def _swapped(message: object, swaps: list[Any]) -> object:
    """A message of the request with each chain's text as Gemini expanded it replaced by its first step's."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        return message
    content = message["content"]
    for pair in swaps:
        if isinstance(pair, list) and len(pair) == 2 and pair[0]:
            content = content.replace(str(pair[0]), str(pair[1]))
    return {**message, "content": content}


def _said(lines: list[str]) -> Json:
    shown = [line for line in lines if line]
    return {"systemMessage": "\n".join(shown)} if shown else {}


def _store_path() -> Path:
    return xdg_home("XDG_STATE_HOME", ".local/state") / "slashkit" / STORE_FILE


def _enabled() -> bool:
    try:
        stored = json.loads(read_regular(_store_path(), 65536))
    except (OSError, ValueError):
        return True
    return not (isinstance(stored, dict) and stored.get(core_session.ENABLED_KEY) is False)


def _store(key: str, value: object) -> None:
    path = _store_path()
    try:
        stored = json.loads(read_regular(path, 65536))
    except (OSError, ValueError):
        stored = {}
    stored = {**(stored if isinstance(stored, Mapping) else {}), key: value}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored))
    except OSError:
        pass
