"""Self-commands: when they are active, the tool-description notes, and what to do after a native refusal
(queue a built-in, deny /model and /effort, or leave the native answer untouched). Pure decisions."""

from collections.abc import Collection
from typing import Final

from attrs import frozen

from slashkit.core import texts
from slashkit.core.chain import holds_chain
from slashkit.core.equal_fold import equal_fold, go_trim_space
from slashkit.core.js_text import js_trim, js_trim_end
from slashkit.core.policy import DEFAULT_RULE, Denied, Rule, is_refused
from slashkit.core.texts import Key

SKILL_TOOL: Final = "Skill"
CONTROL_TOOL: Final = "mcp__lich__control_session"


@frozen
class Identity:
    """Who lich says this session is (`lich whoami --json`): its card label and its roster name."""

    label: str
    name: str


@frozen
class Lich:
    """An active self-command session: its lich id and the language of its texts."""

    session_id: str
    lang: str


@frozen
class Request:
    """A command the model asked for, normalised: the name without one leading slash, trimmed args (their start
    kept when a line break stands before their end, which `decide` refuses)."""

    name: str
    args: str

    @property
    def label(self) -> str:
        """`/compact keep the plan`, or `/compact`: what runs, as the notes and lines show it (`texts.shown`: one
        line, bounded)."""
        return texts.shown("/" + " ".join(part for part in (self.name, self.args) if part))

    @property
    def shown_name(self) -> str:
        """The name as a refusal shows it: bounded, so a huge name is never echoed back whole."""
        return texts.shown(self.name)


@frozen
class Queue:
    """Run this command from a timer once the hook answered, and answer the call as queued; `lang` is the language
    of the lines that say it was queued and that it runs."""

    request: Request
    lang: str = texts.ENGLISH


#: None: the native answer reaches the model untouched.
Decision = Denied | Queue | None


@frozen
class SkillQueued:
    """Answer the skill call as a loaded skill named `command`, with this note as context for the model."""

    command: str
    note: str


@frozen
class ControlQueued:
    """Answer the control_session call with this text (not an error)."""

    text: str


#: None: the native answer reaches the model untouched.
ToolReply = SkillQueued | ControlQueued | Denied | None


@frozen
class Taken:
    """What becomes of a tool's native answer: the reply the call gets instead (None: the native one stays), and
    the command to queue (in the language of its lines), which runs from a timer once the hook answered."""

    reply: ToolReply = None
    queued: Queue | None = None


def activation(interactive: bool, session_id: str | None, prompt_lang: str | None) -> Lich | None:
    """Activates only in an interactive session inside lich: a `claude -p` inherits lich's variables."""
    if not interactive or not session_id:
        return None
    return Lich(session_id=session_id, lang=texts.language(prompt_lang))


def described(lich: Lich, tool: str, description: str) -> str | None:
    """Appends the note for the Skill tool or lich's control tool; None leaves other tools' text alone."""
    if tool == SKILL_TOOL:
        note = texts.text(lich.lang, Key.SKILL_NOTE)
    elif tool == CONTROL_TOOL:
        note = texts.text(lich.lang, Key.CONTROL_NOTE, session_id=lich.session_id)
    else:
        return None
    return f"{description}\n\n{note}"


def request(value: str, args: object) -> Request:
    """Normalises a command the model named: trimmed, one leading `/` dropped, args trimmed or empty. Args with a
    line break before their end keep their start, so `decide` sees the break: trimmed, `"\n/model x"` would show
    as `/compact /model x`, which reads as a second command. Line breaks at their end go, as the seed's do."""
    name = js_trim(value).removeprefix("/")
    if not isinstance(args, str):
        return Request(name, "")
    kept = js_trim_end(args)
    return Request(name, kept if texts.breaks_line(kept) else js_trim(kept))


def decide(lang: str, asked: Request, builtins: Collection[str], rule: Rule = DEFAULT_RULE) -> Decision:
    """Decides a command the model asked this session to run (the model, never the person: `slashkit.core.policy`).
    /model and /effort are denied before anything else, with the seeds' reason; a name that is no built-in of the
    host's list keeps the native answer; a built-in the rule keeps for the person is denied, and so is one whose
    arguments would start a chain (only the person chains commands) or hold a line break (what runs and what the
    notes show must be one line, the same); any other built-in is queued. A name or arguments that are no text (a
    lone surrogate, which a host writes as U+FFFD: `/compact \ufffd` compacted with that as its instructions) and
    arguments over MAX_TOOL_TEXT are refused whole, on every path, never cut or mended into what the model did not
    ask."""
    name = asked.shown_name
    if is_refused(asked.name):
        return Denied(texts.text(lang, Key.DENY_DEFAULT_SAVED, name=name))
    if not (texts.is_text(asked.name) and texts.is_text(asked.args)):
        return Denied(texts.text(lang, Key.DENY_NOT_TEXT, name=name))
    if asked.name not in builtins:
        return None
    if rule.knowing(builtins).restricted(asked.name):
        return Denied(texts.text(lang, Key.DENY_NOT_ALLOWED, name=name))
    if len(asked.args) > texts.MAX_TOOL_TEXT:
        length, limit = f"{len(asked.args):,}", f"{texts.MAX_TOOL_TEXT:,}"
        return Denied(texts.text(lang, Key.DENY_TOO_LONG, name=name, length=length, limit=limit))
    if holds_chain(asked.args):
        return Denied(texts.text(lang, Key.DENY_CHAINED, name=name))
    if texts.breaks_line(asked.args):
        return Denied(texts.text(lang, Key.DENY_LINE_BREAK, name=name))
    return Queue(asked, lang)


def control_takes(action: object, value: object, is_error: bool) -> bool:
    """Tells whether a control_session answer may be taken: an error answer to `command` naming a string."""
    return is_error and action == "command" and isinstance(value, str)


def needs_whoami(lich: Lich, target: object) -> bool:
    """Tells whether lich must be asked who this session is: the id was not named exactly."""
    return target != lich.session_id


def is_this_session(lich: Lich, target: object, identity: Identity | None) -> bool:
    """Tells whether a control target names this session: its id exactly, or (when lich said who this session
    is) its label or name as lich compares names: trimmed, then equal under simple case folding."""
    if target == lich.session_id:
        return True
    if identity is None or not isinstance(target, str):
        return False
    wanted = go_trim_space(target)
    return equal_fold(wanted, identity.label) or equal_fold(wanted, identity.name)


def skill_queued(lich: Lich, asked: Request) -> str:
    """The context note a queued Skill call carries."""
    return texts.text(lich.lang, Key.SKILL_QUEUED, queued=asked.label)


def control_queued(lich: Lich, asked: Request) -> str:
    """The answer a queued control_session call gets."""
    return texts.text(lich.lang, Key.CONTROL_QUEUED, queued=asked.label)


def skill_answered(
    lich: Lich | None, skill: object, args: object, is_error: bool, builtins: Collection[str], rule: Rule = DEFAULT_RULE
) -> Taken:
    """The Skill tool answered first; only its refusal of a built-in is taken. `builtins` names the host's
    built-in commands, as listed just now; `rule` is the session's (`decide`)."""
    if lich is None or not is_error or not isinstance(skill, str):
        return Taken()
    asked = request(skill, args)
    return _taken(decide(lich.lang, asked, builtins, rule), SkillQueued(asked.name, skill_queued(lich, asked)))


def skill_refused(
    lang: str, skill: object, args: object, is_error: bool, builtins: Collection[str], rule: Rule = DEFAULT_RULE
) -> Taken:
    """Outside lich, the Skill tool answered first (the slash-chain plugin hears it): its refusal of a built-in
    is taken as `skill_answered` takes it inside lich, with the texts in `lang`; /model and /effort are denied
    without lich's reason (which points to lich's own override)."""
    if not is_error or not isinstance(skill, str):
        return Taken()
    asked = request(skill, args)
    if is_refused(asked.name):
        return Taken(Denied(texts.text(lang, Key.DENY_PERSON_ONLY, name=asked.shown_name)))
    note = texts.text(lang, Key.SKILL_QUEUED, queued=asked.label)
    return _taken(decide(lang, asked, builtins, rule), SkillQueued(asked.name, note))


def control_answered(
    lich: Lich,
    call: tuple[object, object, object, object],
    builtins: Collection[str],
    known: Identity | None,
    rule: Rule = DEFAULT_RULE,
) -> Taken:
    """lich's control_session refused a command (`control_takes`, which the caller asks first, since only such a
    refusal may need lich asked who this session is); it is taken when it is aimed at this session. `call` is the
    call's (target, action, value, args); `known` is who lich said this session is, asked only for a refusal that
    did not name the id (`needs_whoami`), None when it could not tell (then only the id counts)."""
    target, _, value, args = call
    if not isinstance(value, str) or not is_this_session(lich, target, known):
        return Taken()
    asked = request(value, args)
    return _taken(decide(lich.lang, asked, builtins, rule), ControlQueued(control_queued(lich, asked)))


def _taken(decision: Decision, queued: SkillQueued | ControlQueued) -> Taken:
    match decision:
        case Denied():
            return Taken(decision)
        case Queue():
            return Taken(queued, decision)
    return Taken()
