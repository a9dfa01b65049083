"""The bridge's wire format (version 1, written down in docs/bridge.md): the events the mod sends, the
replies and effects it gets back, and the one cattrs converter that reads and writes them."""

import json
import math
import re
from itertools import accumulate
from typing import Any, ClassVar, Final

from attrs import frozen
from cattrs import ClassValidationError, transform_error
from cattrs.gen import make_dict_structure_fn
from cattrs.preconf.json import make_converter
from returns.result import Failure, Result, Success

VERSION: Final = 1
#: A request larger than this is refused: no engine event comes near it (tool descriptions are a few KiB).
MAX_BODY: Final = 1 << 20
#: Deepest nesting of arrays and objects read: an event nests 3 deep, and a value the model chose (a fail
#: reason, a stored setting) has room below that; 1,000 deep overflowed the JSON reader's recursion.
MAX_DEPTH: Final = 64
#: Longest number literal read, in characters: JavaScript's JSON.stringify writes none longer than 24
#: (`-1.7976931348623157e+308`), and an integer of more than 4,300 digits is more than Python will convert.
MAX_NUMBER: Final = 32

# Events (mod → helper); field names are the engine's


@frozen
class CommandTyped:
    """`command.run` whose args hold `&& /<name>`; `stored` is `$.store.get("enabled")` as read just now."""

    command: str
    args: str
    origin: str
    stored: Any = None


@frozen
class ChainCommand:
    """`/slash-chain args`; `stored` as above."""

    args: str
    stored: Any = None


@frozen
class FailCall:
    """`tool.call` of `mcp__slash-chain__fail`."""

    reason: Any = None
    agentId: str | None = None


@frozen
class SkillPrompt:
    """`skill.prompt`, after the engine answered: the text the model would get."""

    text: str


@frozen
class UiOpen:
    """`ui.open`, after the engine answered."""

    id: str
    focus: bool
    isPlaced: bool


@frozen
class UiClose:
    """`ui.close`."""

    id: str


@frozen
class TurnComplete:
    """`turn.complete`."""

    reason: str
    agentId: str | None = None
    answer: str = ""


@frozen
class PromptSubmit:
    """`prompt.submit`."""

    text: str
    origin: str | None = None


@frozen
class Timer:
    """A timer an `after` effect started has fired; `applied` says the mod already carried out the `fires`
    effects the `after` effect carried."""

    token: int
    applied: bool = False


@frozen
class RunDone:
    """A run a `run` effect (or a `run` reply) asked for resolved with the text `output`, or threw `error`;
    `applied` says the mod already carried out the `then` effects it carried."""

    token: int
    error: str | None = None
    applied: bool = False
    output: str = ""


@frozen
class SessionStart:
    """`session.start`, after the engine answered."""

    isInteractive: bool


@frozen
class ToolDescribe:
    """`tool.describe`, after the engine answered."""

    tool: str
    description: str


@frozen
class CommandInfo:
    """One row of `$.command.list()`."""

    name: str
    source: str


@frozen
class SkillAnswered:
    """`tool.call` of `Skill` after the tool answered with an error."""

    skill: Any
    isError: bool
    commands: tuple[CommandInfo, ...]
    args: Any = None


@frozen
class ControlAnswered:
    """`tool.call` of `mcp__lich__control_session` after lich answered with an error."""

    isError: bool
    commands: tuple[CommandInfo, ...]
    session: Any = None
    action: Any = None
    value: Any = None
    args: Any = None


@frozen
class Request:
    """One event as the mod sent it: `seq` counts the events the mod has sent this helper, from 1."""

    seq: int | None
    event: "Event"


Event = (
    CommandTyped
    | ChainCommand
    | FailCall
    | SkillPrompt
    | UiOpen
    | UiClose
    | TurnComplete
    | PromptSubmit
    | Timer
    | RunDone
    | SessionStart
    | ToolDescribe
    | SkillAnswered
    | ControlAnswered
)

EVENTS: Final[dict[str, type[Event]]] = {
    "command.typed": CommandTyped,
    "command.chain": ChainCommand,
    "tool.fail": FailCall,
    "skill.prompt": SkillPrompt,
    "ui.open": UiOpen,
    "ui.close": UiClose,
    "turn.complete": TurnComplete,
    "prompt.submit": PromptSubmit,
    "timer": Timer,
    "run.done": RunDone,
    "session.start": SessionStart,
    "tool.describe": ToolDescribe,
    "skill.refused": SkillAnswered,
    "control.refused": ControlAnswered,
}

# Effects and replies (helper → mod): each carries its `kind`


@frozen
class Log:
    KIND: ClassVar = "log"
    text: str


@frozen
class Toast:
    KIND: ClassVar = "toast"
    text: str


@frozen
class After:
    """Start a timer; when it fires, send `timer` with this token.

    `fires` holds what the helper does when the timer fires (runs, lines), foreseen: the core is
    deterministic, so if the helper handles no other event first, that is what it will do. The mod then
    carries it out at once, as the seed's in-process timer does, instead of waiting a round trip
    (`claude -p` exits once the session is idle, measured on 2.1.328), and says so with `applied`.
    """

    KIND: ClassVar = "after"
    ms: int
    token: int
    fires: "tuple[Log | Run, ...] | None" = None


@frozen
class Run:
    """Run `/command args` now; when it resolved or threw, send `run.done` with this token.

    `then` holds what the helper does when the run resolves well (lines, timers), when that is all it
    does: the mod carries it out at once if the helper has handled nothing since (see `After`).
    """

    KIND: ClassVar = "run"
    command: str
    args: str
    token: int
    then: "tuple[Log | After, ...] | None" = None


@frozen
class StoreSet:
    KIND: ClassVar = "store.set"
    key: str
    value: Any


@frozen
class Invalidate:
    """Redraw the tool descriptions."""

    KIND: ClassVar = "invalidate"


Effect = Log | Toast | After | Run | StoreSet | Invalidate


@frozen
class RunArgs:
    """Reply to `command.typed`: run the typed command with these args, then send `run.done` with the token;
    `then` as for `Run`."""

    KIND: ClassVar = "run"
    args: str
    token: int
    then: "tuple[Log | After, ...] | None" = None


@frozen
class Text:
    """Reply: answer the command with this text, or the tool call with it as its result."""

    KIND: ClassVar = "text"
    text: str


@frozen
class Deny:
    KIND: ClassVar = "deny"
    text: str


@frozen
class PromptText:
    KIND: ClassVar = "prompt"
    text: str


@frozen
class Description:
    KIND: ClassVar = "description"
    text: str


@frozen
class SkillLoaded:
    """Reply to `skill.refused`: answer as a loaded skill `{success: true, commandName}` with a context note."""

    KIND: ClassVar = "skill"
    commandName: str
    context: str


Answered = RunArgs | Text | Deny | PromptText | Description | SkillLoaded
Reply = Answered | None


@frozen
class Answer:
    """What the helper sends back for one event; `version` counts the events it has handled."""

    version: int
    wants: frozenset[str]
    reply: Reply
    effects: tuple[Effect, ...]


# The converter

_converter: Final = make_converter()


def _exactly(kind: type[Any]) -> Any:
    """A structure hook that takes a JSON value of this type as it is: no `str(42)`, no `bool("false")`."""

    def structure(value: Any, _: type[Any]) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


for _scalar in (str, int, bool):
    _converter.register_structure_hook(_scalar, _exactly(_scalar))
# Strict: a key the helper does not know means the mod and the helper are out of step. Made on first use,
# since a session meets few of the events and the helper's start is on the first chain's path.
_converter.register_structure_hook_factory(
    lambda kind: kind in EVENTS.values(),
    lambda kind: make_dict_structure_fn(kind, _converter, _cattrs_forbid_extra_keys=True),
)


def _with_kind(value: Effect | Answered) -> dict[str, Any]:
    written: dict[str, Any] = {"kind": value.KIND, **_converter.unstructure(value)}
    nested = value.fires if isinstance(value, After) else value.then if isinstance(value, Run | RunArgs) else None
    if nested is not None:
        written["fires" if isinstance(value, After) else "then"] = [_with_kind(effect) for effect in nested]
    return written


def decode(body: bytes) -> Result[Request, str]:
    """Reads one request body; a Failure says, in one line, what is wrong with it."""
    return _load(body).bind(_request)


def _request(message: Any) -> Result[Request, str]:
    if not isinstance(message, dict) or not _whole(message.get("v"), VERSION):
        return Failure(f"request is not a version {VERSION} bridge message")
    name = message.get("event")
    kind = EVENTS.get(name) if isinstance(name, str) else None
    if kind is None:
        return Failure(f"unknown event {name!r}")
    seq = message.get("seq")
    if seq is not None and not _whole(seq):
        return Failure(f"seq is {seq!r}, not a whole number from 1")
    try:
        return Success(Request(seq, _converter.structure(message.get("e"), kind)))
    except (ClassValidationError, TypeError, ValueError, AttributeError) as err:
        return Failure(f"bad {name} event: {_explain(err)}")


def seq_of(body: bytes) -> int | None:
    """Reads the `seq` of a request `decode` refused, when the body is readable enough to hold one."""
    match _load(body):
        case Success({"seq": seq}) if _whole(seq):
            return int(seq)
    return None


def encode(answer: Answer) -> bytes:
    """Writes one answer, as ASCII: a string holding a lone surrogate (which JSON can carry and Python reads)
    goes back as a `\\udcff` escape that JavaScript's JSON.parse reads as the same string."""
    return json.dumps(
        {
            "v": VERSION,
            "version": answer.version,
            "wants": sorted(answer.wants),
            "reply": None if answer.reply is None else _with_kind(answer.reply),
            "effects": [_with_kind(effect) for effect in answer.effects],
        },
    ).encode()


def encode_error(message: str) -> bytes:
    """Writes the answer to a request the helper could not read."""
    return json.dumps({"v": VERSION, "error": message}).encode()


# Reading JSON within bounds

_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]")
_NESTING: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


class _Unreadable(Exception):
    """A JSON value past a bound, raised from inside the JSON reader."""


def _load(body: bytes) -> Result[Any, str]:
    """Reads a JSON body within the bounds: size, nesting depth, number length, finite numbers."""
    if len(body) > MAX_BODY:
        return Failure(f"request of {len(body)} bytes is over the {MAX_BODY} byte limit")
    try:
        text = body.decode()
        if _too_deep(text):
            return Failure(f"request nests deeper than {MAX_DEPTH} levels")
        return Success(json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return Failure(f"request is not JSON: {err}")
    except _Unreadable as err:
        return Failure(str(err))


def _too_deep(text: str) -> bool:
    """Tells whether arrays and objects nest deeper than the bound, before reading; brackets inside strings do
    not count. On JSON the string pattern finds exactly its strings; on anything else the count may be off, and
    reading fails anyway."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # the usual event: too few brackets to scan for
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_NESTING.__getitem__, brackets)), default=0) > MAX_DEPTH


def _int(literal: str) -> int:
    _short(literal)
    return int(literal)


def _float(literal: str) -> float:
    _short(literal)
    value = float(literal)
    if not math.isfinite(value):
        raise _Unreadable(f"request holds the number {literal}, which is not finite")
    return value


def _constant(name: str) -> float:
    raise _Unreadable(f"request holds the number {name}, which JSON does not have")


def _short(literal: str) -> None:
    if len(literal) > MAX_NUMBER:
        raise _Unreadable(f"request holds a number of more than {MAX_NUMBER} characters")


def _whole(value: object, only: int | None = None) -> bool:
    """Tells whether a JSON value is a whole number from 1 (and `only`, if given): not true, not 1.0."""
    return type(value) is int and value >= 1 and (only is None or value == only)


def _explain(err: Exception) -> str:
    if isinstance(err, ClassValidationError):
        return "; ".join(transform_error(err))
    return str(err)
