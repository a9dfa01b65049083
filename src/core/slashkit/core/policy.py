"""Who may run what, one rule every path goes through: the person's own typing runs anything; everything else (a
self-command, a chain another plugin or a harness starts, text a `|` hands on, a step a host sends on a chain's
behalf) runs only what changes nothing the person set and reaches nothing new. A built-in runs for anyone but
the person only when it is on the allowlist of its host (`slashkit.core.allowlist`) or one the person added;
`/model` and `/effort` (the seeds' rule) never do."""

import re
from collections.abc import Iterable
from typing import Final

import attrs
from attrs import frozen

from slashkit.core.allowlist import CLAUDE_CODE, Allowlist
from slashkit.core.js_text import JS_WHITESPACE, js_trim
from slashkit.core.texts import (
    ADD_WORD,
    ALLOW_WORD,
    BUILTIN_WORD,
    CHAIN_COMMAND,
    DROP_WORD,
    FORGET_WORD,
    RESUME_WORD,
)

#: Never run for anyone but the person, whatever a list says: run from a plugin, Claude Code saves what they set
#: as the default for every new session (measured on Claude Code 2.1.288 and 2.1.289, and again on 2.1.328 by
#: tests/engine/test_self_command_interactive.py).
REFUSED: Final = frozenset({"model", "effort"})

#: The prompt origins that are the person's own typing (Claude Code's `PromptOrigin` kinds, 2.1.328): Enter at
#: the terminal (`composer`), the Remote Control bridge (`bridge`), and the SDK's own turn (`sdk`: the prompt of
#: `claude -p` or of a harness on the Agent SDK). Every other kind (`plugin`, `peer`, `channel`,
#: `scheduled-trigger`, `unclassified`, ...) is not the person typing.
PERSON_TYPING: Final = frozenset({"composer", "bridge", "sdk"})

#: The origins whose prompt cancels a running chain: the seed's (seed 003 keeps `sdk` out, so a headless
#: session's next message does not cancel the chain it started).
PERSON: Final = frozenset({"composer", "bridge"})

#: The origin a slashkit harness (the Agent SDK host) sends its own steps from: Claude Code calls them `sdk`, as it
#: calls a person's `claude -p`. In a session such a harness drives, that text is the harness's, never typing.
HARNESS_STEPS: Final = "sdk"

# Both languages' whitespace (JavaScript's and Python's), so that no reading of a name slips past.
_SPACES: Final = JS_WHITESPACE + "\x1c\x1d\x1e\x1f\x85"
_ANY_SPACE: Final = "[" + re.escape(_SPACES) + "]"
_JS_SPACES: Final = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")
#: The `/slash-chain` arguments that change a setting every session shares (`chain_words`): chaining on or off,
#: and the model's self-commands on or off. The person's alone.
SETTINGS: Final = frozenset({("on",), ("off",), (BUILTIN_WORD, "on"), (BUILTIN_WORD, "off")})
#: How many times a `while` or `until` runs its body unless the person sets another cap, and the most they may set.
DEFAULT_LOOP_CAP: Final = 10
MAX_LOOP_CAP: Final = 1000
#: What may separate the names a person lists to allow (`SLASHKIT_ALLOW="doctor, clear"`).
_LIST_SEPARATORS: Final = re.compile(r"[\s,]+")


def command_name(text: str) -> str:
    """The name a command's text runs, as the rule compares names: its first word, without slashes around it,
    case-folded, whatever spaces of either language stand around or after it.

    >>> command_name(" /Model/ opus"), command_name("\\x85effort\\x1chigh"), command_name("compact")
    ('model', 'effort', 'compact')
    """
    first = re.split(_ANY_SPACE, text.lstrip("/" + _SPACES), maxsplit=1)[0]
    return first.rstrip("/").casefold()


def is_refused(name: str) -> bool:
    """Tells whether a name is /model or /effort, in any casing, with any slashes, spaces or args around it.

    >>> is_refused("Model"), is_refused(" /effort high"), is_refused("models")
    (True, True, False)
    """
    return command_name(name) in REFUSED


def chain_words(args: str) -> tuple[str, ...]:
    """`/slash-chain`'s arguments as the command reads them: words between JavaScript's whitespace. The rule
    reads them the same way, so no spelling of a setting reads as one to the command and as none to the rule.

    >>> chain_words(" builtin\u3000off "), chain_words(""), chain_words("stop")
    (('builtin', 'off'), (), ('stop',))
    """
    trimmed = js_trim(args)
    return tuple(_JS_SPACES.split(trimmed)) if trimmed else ()


def changes_setting(args: str) -> bool:
    """Tells whether `/slash-chain` with these arguments changes a setting every session shares (`SETTINGS`), or
    does what is the person's alone as well: approving a saved chain's shell steps (`allow NAME`), resuming or
    forgetting a program cut off (`resume`, `forget`), editing the running one (`add`, `drop`)."""
    words = chain_words(args)
    return words in SETTINGS or words[:1] in {(w,) for w in (ALLOW_WORD, RESUME_WORD, FORGET_WORD, ADD_WORD, DROP_WORD)}


@frozen
class Rule:
    """The rule as one session applies it: which names are built-ins (the ones measured on the host's version,
    and the host's list as it gives it), which of them anyone may run (the allowlist, and what the person added),
    which commands the host listed (None: it listed none), which origins are the person's typing there (a
    harness's own steps are not), whether a chain's step can run a built-in there at all (`chained`), and how many
    times the person lets a `while` or `until` run its body (`loop_cap`)."""

    builtins: frozenset[str]
    safe: frozenset[str]
    typing: frozenset[str] = PERSON_TYPING
    commands: frozenset[str] | None = None
    chained: bool = True
    loop_cap: int = DEFAULT_LOOP_CAP

    def typed_by_person(self, origin: str) -> bool:
        """Tells whether a command or prompt of this origin is the person's own typing in this session."""
        return origin in self.typing

    def restricted(self, command: str, args: str = "") -> bool:
        """Tells whether a command runs only for the person: /model and /effort; every built-in that is not on
        the allowlist; and, when the host listed its commands, any name it did not list, since only a list of
        names to allow holds when a later version adds a built-in (or an alias) no list here knows. slashkit's
        own settings are the person's too: `/slash-chain on`, `off`, `builtin on` and `builtin off` (given its
        `args`)."""
        name = command_name(command)
        if name in REFUSED or (name == CHAIN_COMMAND and changes_setting(args)):
            return True
        if name in self.safe:
            return False
        return name in self.builtins or (self.commands is not None and name not in self.commands)

    def may_run(self, command: str, origin: str, handed: bool = False, args: str = "") -> bool:
        """Tells whether a command with these `args` may run for this origin: a restricted one only when the
        person typed it, arguments and all, so never with text a `|` hands it (`handed`): that text is a command's
        output, often the model's (and `/slash-chain` after a `|` would take it for its word)."""
        restricted = self.restricted(command, args) or (handed and command_name(command) == CHAIN_COMMAND)
        return not restricted or (self.typed_by_person(origin) and not handed)

    def knowing(self, builtins: Iterable[str], commands: Iterable[str] = ()) -> "Rule":
        """The same rule, knowing the host's command list as listed just now: `commands`, every name it lists
        (none: it listed nothing), and `builtins`, the built-ins among them."""
        listed = frozenset(map(command_name, commands))
        return attrs.evolve(
            self,
            builtins=self.builtins | frozenset(map(command_name, builtins)),
            commands=listed if listed else self.commands,
        )


def rule_for(host: Allowlist, allowed: str | None = None, harness: bool = False, loop_cap: str | None = None) -> Rule:
    """The rule of a session of `host`: its measured built-ins and allowlist, widened by the names the person
    listed (`allowed`: the `SLASHKIT_ALLOW` of their environment, or a harness's own option; never /model or
    /effort); `harness` says a slashkit harness drives the session, so its steps' origin is not typing; `loop_cap`
    is the cap the person set on loops (`SLASHKIT_LOOP_CAP`), a whole number up to MAX_LOOP_CAP (anything else
    keeps the default).

    >>> sorted(rule_for(CLAUDE_CODE, "doctor, /Model").safe - CLAUDE_CODE.safe.keys())
    ['doctor']
    >>> rule_for(CLAUDE_CODE, loop_cap="25").loop_cap, rule_for(CLAUDE_CODE, loop_cap="1e9").loop_cap
    (25, 10)
    """
    added = {command_name(name) for name in _LIST_SEPARATORS.split(allowed or "") if name} - REFUSED
    typing = PERSON_TYPING - {HARNESS_STEPS} if harness else PERSON_TYPING
    return Rule(host.builtins, frozenset(host.safe) | added, typing, chained=host.chained, loop_cap=_cap(loop_cap))


def _cap(written: str | None) -> int:
    """The loop cap a person wrote, when it is a whole number from 1 to MAX_LOOP_CAP; else the default."""
    text = (written or "").strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_LOOP_CAP:
        return int(text)
    return DEFAULT_LOOP_CAP


#: The rule where nothing else is said: Claude Code's, as measured, with nothing added.
DEFAULT_RULE: Final = rule_for(CLAUDE_CODE)


@frozen
class Denied:
    """Refuse the call with this text; nothing runs. The one refusal every path answers with (the fail tool's
    when nothing waits, a built-in the model asked for that only the person may run)."""

    text: str
