"""The bridge's wire format, version 3 (written down in docs/bridge.md): the events a host's shim sends, the
replies and effects it gets back, how they are read and written.

One vocabulary from the wire to the core: the events are `slashkit.core.session`'s, by name and by field
(`ChainTyped`, `TimerFired`, `WhoamiAnswered`, ...), read straight into its classes, and so are the effects and
replies written back, each with a `kind` of its own. Reading is strict and bounded; the cattrs converter that
reads events is built on first use, and writing needs none, so the helper is ready before any of it is paid for.
"""

import json
import math
from typing import TYPE_CHECKING, Any, Final, get_args

import attrs
from attrs import frozen
from returns.result import Failure, Result, Success

from slashkit.adapters.json_depth import too_deep
from slashkit.core import chain_machine as m
from slashkit.core import session as s
from slashkit.core.policy import Denied
from slashkit.core.saved_chain import Library
from slashkit.core.self_command import ControlQueued, SkillQueued

if TYPE_CHECKING:
    from cattrs import Converter

VERSION: Final = 3
#: A request larger than this is refused: no host event comes near it (tool descriptions are a few KiB).
MAX_BODY: Final = 1 << 20
#: The most of one text from outside that a client sends on (a prompt's start, a turn's answer, a run's text), in
#: UTF-16 code units as JavaScript counts them: far under MAX_BODY however JSON writes it (at most 6 bytes a
#: unit), and far over texts.MAX_HANDED, so the core still sees that a text a `|` hands on was cut.
MAX_TEXT: Final = 65_536
#: Deepest nesting of arrays and objects read: an event nests 3 deep, and a value the model chose (a fail
#: reason, a stored setting) has room below that; 1,000 deep overflowed the JSON reader's recursion.
MAX_DEPTH: Final = 64
#: Longest number literal read, in characters: JavaScript's JSON.stringify writes none longer than 24
#: (`-1.7976931348623157e+308`), and an integer of more than 4,300 digits is more than Python will convert.
MAX_NUMBER: Final = 32

#: The keys of a request body; any other is refused.
REQUEST_KEYS: Final = frozenset({"v", "seq", "event", "e"})

#: The events a host sends: every one of the session's (`BuiltinAsked` is pi's self-command tool's call).
Event = s.Event

#: Every event, by the name it has on the wire: its class's name.
EVENTS: Final[dict[str, type[Event]]] = {kind.__name__: kind for kind in get_args(s.Event)}


@frozen
class Envelope:
    """One event as the host sent it: `seq` counts the events the host has sent this helper, from 1."""

    seq: int | None
    event: Event


# Effects and replies (helper → host): the session's own, each with its `kind` on the wire. A `Report` has none:
# the wire does not carry it.

KINDS: Final[dict[type[Any], str]] = {
    m.Log: "log",
    s.Toast: "toast",
    s.After: "after",
    s.Run: "run",
    s.Shell: "shell",
    m.SaveEnabled: "save.enabled",
    s.SaveBuiltin: "save.builtin",
    s.Invalidate: "invalidate",
    s.RunTyped: "run.typed",
    m.CommandAnswer: "command.answer",
    m.ToolAnswered: "tool.answer",
    m.PromptText: "prompt",
    Denied: "deny",
    s.Description: "description",
    SkillQueued: "skill",
    ControlQueued: "control",
    s.AskWhoami: "whoami",
    s.Progress: "progress",
    s.SavedListed: "saved",
}


@frozen
class Answer:
    """What the helper sends back for one event; `version` counts the events it has handled."""

    version: int
    wants: frozenset[str]
    reply: s.Reply
    effects: tuple[s.Effect, ...]


# Writing: by hand, so that answering needs no converter


def _written(value: Any) -> dict[str, Any]:
    fields = attrs.asdict(value, recurse=False)
    for name in ("fires", "then"):
        if fields.get(name) is not None:
            fields[name] = [_written(nested) for nested in fields[name]]
    if isinstance(value, s.SavedListed):
        fields["chains"] = [attrs.asdict(offered) for offered in value.chains]
    return {"kind": KINDS[type(value)], **fields}


def encode(answer: Answer) -> bytes:
    """Writes one answer, as ASCII: a string holding a lone surrogate (which JSON can carry and Python reads)
    goes back as a `\\udcff` escape that JavaScript's JSON.parse reads as the same string."""
    return json.dumps(
        {
            "v": VERSION,
            "version": answer.version,
            "wants": sorted(answer.wants),
            "reply": None if answer.reply is None else _written(answer.reply),
            "effects": [_written(effect) for effect in answer.effects if not isinstance(effect, s.Report)],
        },
    ).encode()


def encode_shell(error: str | None, output: str) -> bytes:
    """Writes the end of a shell step, for the host waiting on it (`/v1/shell`), as ASCII as `encode` does."""
    return json.dumps({"v": VERSION, "error": error, "output": output}).encode()


def encode_error(message: str) -> bytes:
    """Writes the answer to a request the helper could not read."""
    return json.dumps({"v": VERSION, "error": message}).encode()


# Reading: one cattrs converter, strict, made on first use


_converter: "Converter | None" = None


def converter() -> "Converter":
    """The converter that reads events: a JSON value of exactly the declared type (no `str(42)`, no
    `bool("false")`, no string or object for an array), and no key the helper does not know (the host and the
    helper would be out of step)."""
    global _converter
    if _converter is None:
        from cattrs import Converter
        from cattrs.cols import is_sequence
        from cattrs.gen import make_dict_structure_fn

        made = Converter()
        for scalar in (str, int, bool):
            made.register_structure_hook(scalar, _exactly(scalar))
        made.register_structure_hook_factory(is_sequence, _array_only)
        # A value the model chose (a fail reason) comes as it is, of any type.
        made.register_structure_hook_func(lambda kind: kind is object, lambda value, _: value)
        made.register_structure_hook(Library, _not_sent)
        made.register_structure_hook(m.Cut, _not_sent)
        made.register_structure_hook_factory(
            lambda kind: kind in EVENTS.values(),
            lambda kind: make_dict_structure_fn(kind, made, _cattrs_forbid_extra_keys=True),
        )
        _converter = made
    return _converter


def _exactly(kind: type[Any]) -> Any:
    def structure(value: Any, _: type[Any]) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _not_sent(value: Any, kind: type[Any]) -> Any:
    """The saved chains and a cut-off program are read by the helper from disk, never taken from the wire."""
    what = "the saved chains are" if kind is Library else "a cut-off program is"
    raise ValueError(f"{what} the helper's to read, not the host's to send")


def _array_only(kind: Any, made: "Converter") -> Any:
    """Reads a sequence field (`builtins`) from a JSON array only: cattrs' own hook takes any iterable, so the
    string `"model"` would read as `('m', 'o', 'd', 'e', 'l')` and an object as its keys."""
    from cattrs.cols import list_structure_factory

    items = list_structure_factory(kind, made)
    whole = tuple if getattr(kind, "__origin__", None) is tuple else list

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not list:
            raise TypeError(f"expected an array, got {type(value).__name__}")
        return whole(items(value, kind))

    return structure


def decode(body: bytes) -> Result[Envelope, str]:
    """Reads one request body; a Failure says, in one line, what is wrong with it."""
    return load_json(body).bind(_envelope)


def _envelope(message: Any) -> Result[Envelope, str]:
    if not isinstance(message, dict) or not _whole(message.get("v"), VERSION):
        return Failure(f"request is not a version {VERSION} bridge message")
    if unknown := message.keys() - REQUEST_KEYS:
        # Refused as an unknown key in `e` is: the client and the helper ship together, so a key the helper does
        # not know means they are out of step (docs/bridge.md, "Request").
        return Failure(f"unknown request key(s) {', '.join(map(repr, sorted(unknown)))}")
    name = message.get("event")
    kind = EVENTS.get(name) if isinstance(name, str) else None
    if kind is None:
        return Failure(f"unknown event {name!r}")
    seq = message.get("seq")
    if seq is not None and not _whole(seq):
        return Failure(f"seq is {seq!r}, not a whole number from 1")
    e = message.get("e")
    if not isinstance(e, dict):
        return Failure(f"bad {name} event: e is {type(e).__name__}, not an object")
    from cattrs import ClassValidationError

    try:
        return Success(Envelope(seq, converter().structure(e, kind)))
    except (ClassValidationError, TypeError, ValueError, AttributeError) as err:
        return Failure(f"bad {name} event: {_explain(err)}")


def seq_of(body: bytes) -> int | None:
    """Reads the `seq` of a request `decode` refused, when the body is readable enough to hold one."""
    match load_json(body):
        case Success({"seq": seq}) if _whole(seq):
            return int(seq)
    return None


# Reading JSON within bounds


class _Unreadable(Exception):
    """A JSON value past a bound, raised from inside the JSON reader."""


def load_json(body: bytes) -> Result[Any, str]:
    """Reads a JSON body within the bounds: size, nesting depth, number length, finite numbers, each key of an
    object once."""
    if len(body) > MAX_BODY:
        return Failure(f"request of {len(body)} bytes is over the {MAX_BODY} byte limit")
    try:
        text = body.decode()
        if too_deep(text, MAX_DEPTH):
            return Failure(f"request nests deeper than {MAX_DEPTH} levels")
        return Success(
            json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant, object_pairs_hook=_keys_once)
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return Failure(f"request is not JSON: {err}")
    except _Unreadable as err:
        return Failure(str(err))


def _keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Python's reader keeps the last of a key given twice, another reader may keep the first: a request has
    # exactly its keys (docs/bridge.md, "Request"), so one that names a key twice, at any level, is refused.
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Unreadable(f"request names the key {key[:64]!r} twice in one object")
        found[key] = value
    return found


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
    from cattrs import ClassValidationError, transform_error

    if isinstance(err, ClassValidationError):
        return "; ".join(transform_error(err))
    return str(err)
