"""Every text slashkit writes: the chain's transcript lines, refusals and status (exactly the reference's),
and the self-command notes in each prompt language lich exports."""

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Final, Literal

from slashkit.core.chain import Operator, Step
from slashkit.core.js_text import JS_WHITESPACE

# Chains (wording fixed by seed 003: users and tools read these lines)

#: The command this library adds to the engine, and the plugin that owns the fail tool.
CHAIN_COMMAND: Final = "slash-chain"
CHAIN_COMMAND_DESCRIPTION: Final = "Runs /a && /b one after another: status, stop, on, off (slash-chain)"
CHAIN_COMMAND_HINT: Final = (
    "[stop | on | off | list | steps | add /CMD | drop N | allow NAME | resume | forget | builtin on | builtin off]"
)
USAGE: Final = (
    "expects nothing (the status), stop, on, off, list, steps, add /CMD, drop N, allow NAME, resume, forget, "
    "builtin on or builtin off"
)
NO_CHAIN_RUNS: Final = "no chain runs"
ON_TEXT: Final = "on: /a && /b runs /b once /a ended well"
OFF_TEXT: Final = "off: the engine runs the first command alone, as it does without the mod"
#: The word `/slash-chain` takes before `on` or `off` for the switch of the model's self-commands: the tool's name.
BUILTIN_WORD: Final = "builtin"
BUILTIN_ON_TEXT: Final = "builtin on: the model may queue an allowed built-in (/compact) to run once its turn ends"
BUILTIN_OFF_TEXT: Final = "builtin off: the model's built-in commands are refused in every session until builtin on"

#: The tool the model calls when a step it was handed failed. The engine gives a turn no exit code, so a model
#: that says it failed and ends its turn normally would run the next step (measured on the reference's engine).
FAIL_TOOL: Final = "fail"
FAIL_TOOL_ID: Final = f"mcp__{CHAIN_COMMAND}__{FAIL_TOOL}"
#: Its name where a host names its tools itself (opencode's plugin tools, pi's): as if the `slash-chain` MCP server
#: served it, `<server>_<tool>` (opencode's naming of MCP tools, measured on opencode 1.18.33).
FAIL_TOOL_NAME: Final = f"{CHAIN_COMMAND}_{FAIL_TOOL}"
FAIL_DESCRIPTION: Final = (
    "Stops the running slash-chain (/a && /b) because the step you were handed failed, so the commands after "
    "it do not run. Call it only while a slash-chain step waits on your turn, and only when you could not do "
    "what that step asked; a step you did does not need it."
)
FAIL_SCHEMA: Final[Mapping[str, object]] = {
    "type": "object",
    "properties": {"reason": {"type": "string", "description": "Why the step failed, in one sentence."}},
    "required": ["reason"],
}
#: The tool the model calls to queue one of the session's built-ins (a self-command), beside the fail tool on every
#: host: `mcp__slash-chain__builtin` where an MCP server serves it (Claude Code's plugin, the Agent SDK host's
#: in-process server), `slash-chain_builtin` where a host names its tools itself (opencode, pi, omp, Codex).
#: Its description is Key.SELF_TOOL_NOTE, in the session's language.
BUILTIN_TOOL: Final = "builtin"
BUILTIN_TOOL_ID: Final = f"mcp__{CHAIN_COMMAND}__{BUILTIN_TOOL}"
#: Its name where a host names its tools itself, with no MCP server before it (Codex's dynamic tools, opencode, pi).
BUILTIN_TOOL_NAME: Final = f"{CHAIN_COMMAND}_{BUILTIN_TOOL}"
BUILTIN_SCHEMA: Final[Mapping[str, object]] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The built-in's name, without the slash: compact."},
        "args": {"type": "string", "description": "Its arguments, if any."},
    },
    "required": ["command"],
}
FAIL_STOPPED: Final = "The chain stopped; the steps after this one do not run."
FAIL_NOTHING_WAITS: Final = "no slash-chain step waits on this turn, so there is nothing to stop"
FAIL_NEEDS_REASON: Final = "reason is required: say in one sentence why the step failed"

Wait = Literal["run", "turn", "pane"]
_WAITING: Final[Mapping[Wait, str]] = {
    "run": "running",
    "turn": "waiting for its turn",
    "pane": "waiting for its pane to close",
}


#: What breaks a line where a transcript line is shown: a terminal (`\n`, `\r`, and `\v`, `\f` as line feeds), a
#: TUI or a page (U+0085, U+2028, U+2029). Python's `str.splitlines` also splits at U+001C-U+001E, which nothing
#: shows as a break: they stay, as in the reference's lines.
_LINE_BREAK: Final = re.compile("\r\n|[\n\r\v\f\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """`text` with its line breaks written as escapes, so a transcript line that holds text from outside (a fail
    reason the model wrote, a message a command threw, arguments someone else typed) stays one line and no part
    of it passes for a line of slashkit's own.

    >>> print(one_line("no\\n2/2: /review deploy\\r\\nall 2 command(s) ran\\u2028"))
    no\\n2/2: /review deploy\\r\\nall 2 command(s) ran\\u2028
    """
    return _LINE_BREAK.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), text)


def breaks_line(text: str) -> bool:
    """Tells whether a text holds a line break, as `one_line` sees one.

    >>> breaks_line("keep the plan"), breaks_line("\\n/model x"), breaks_line("a\u2028b")
    (False, True, True)
    """
    return _LINE_BREAK.search(text) is not None


#: The most characters of a text from outside (a command the model named, its arguments) that a line or an answer
#: shows; past it the text is cut and ends with an ellipsis, so a huge call is never echoed into a context.
MAX_SHOWN: Final = 200

#: The most characters each text of a call of slashkit's tools may hold (the fail tool's `reason`, the self-command
#: tool's `command` and `args`): they are echoed into the answer the model reads and into the person's lines, and a
#: /compact's instructions or a reason in one sentence are far shorter. Past it a self-command is refused whole, never
#: cut: a cut instruction is one the model did not give (a 1 MiB one left omp 18.2.3 spinning, issue 34).
MAX_TOOL_TEXT: Final = 4_000


#: A code point no text holds: half of a UTF-16 pair, alone (a Python string decoded from JSON keeps a pair whole as
#: one code point, so any of these in one is alone). Written out, it becomes U+FFFD or fails to encode.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def is_text(text: str) -> bool:
    """Tells whether a string is valid text: it holds no lone surrogate.

    >>> is_text("keep the plan \U0001f600"), is_text("keep \\ud800")
    (True, False)
    """
    return _SURROGATE.search(text) is None


def shown(text: str) -> str:
    """`text` as a line or an answer shows it: one line (`one_line`), a lone surrogate written as its escape (no
    screen can show one), cut to MAX_SHOWN characters with `…`.

    >>> shown("compact keep the plan"), len(shown("x" * 10_000)), shown("x\\udc80")
    ('compact keep the plan', 200, 'x\\\\udc80')
    """
    text = _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", one_line(text))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


#: A terminal's escape sequences, 7-bit and 8-bit: CSI (`ESC [ ... m`), OSC, DCS, SOS, PM and APC strings (to their
#: BEL or string terminator, or the text's end), and the two-character escapes (`ESC c` resets the terminal).
_ESCAPE: Final = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
#: What is left to take out once the sequences are gone: C0, DEL and C1, which a menu would act on or show as boxes,
#: and the line and paragraph separators, which would break its one line.
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_SPACES: Final = re.compile(" {2,}")


def menu_text(text: str) -> str:
    """A text from a file as a host's command menu shows it (a saved chain's description and argument hint): its
    escape sequences and control characters taken out, a line break or tab a space, cut to MAX_SHOWN characters
    with `…`. The file is not the person's typing: 60,000 characters of escapes once reached a menu whole.

    >>> menu_text("\\x1b[2J\\x1b]0;pwned\\x07Ships\\tit\\x9b31m now\\x7f"), len(menu_text("x" * 60_000))
    ('Ships it now', 200)
    """
    text = _SPACES.sub(" ", _CONTROL.sub(" ", _ESCAPE.sub("", text))).strip(" ")
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _not_run(steps: Iterable[Step]) -> str:
    """`; not run: /b, /c`, or nothing after the last step."""
    names = [one_line(s.head) for s in steps]
    return f"; not run: {', '.join(names)}" if names else ""


def step_text(index: int, total: int, step: Step) -> str:
    """The line before a step runs: `2/3: /test2`. The engine adds the plugin name in front."""
    return f"{index}/{total}: {one_line(step.name)}"


def done_text(total: int) -> str:
    """The line after the last step: `all 3 command(s) ran`."""
    return f"all {total} command(s) ran"


def thrown_why(message: str) -> str:
    """Why a step whose run threw stopped the chain; the engine's own `slash-chain: ` prefix is dropped."""
    prefix = f"{CHAIN_COMMAND}: "
    return f"it failed: {one_line(message.removeprefix(prefix))}"


def turn_why(reason: str) -> str:
    """Why a step whose turn ended without an answer stopped the chain."""
    return f"its turn ended with {one_line(reason)}"


def failed_why(reason: str) -> str:
    """Why a step the model reported as failed stopped the chain."""
    return f"the model reported it failed: {one_line(reason)}"


def stopped_text(step: Step, why: str, left: Iterable[Step]) -> str:
    """`stopped after /a: <why>; not run: /b, /c`."""
    return f"stopped after {step.head}: {why}{_not_run(left)}"


def cancelled_text(left: Iterable[Step]) -> str:
    """`cancelled; not run: /b`."""
    return f"cancelled{_not_run(left)}"


def fail_note(index: int, total: int, left: Iterable[Step], tool: str = FAIL_TOOL_ID) -> str:
    """The line the model reads after a chained step's prompt: how to stop the steps after it, naming the fail
    tool as the host names it to the model (`tool`)."""
    after = ", ".join(f"/{s.command}" for s in left) or "none"
    return (
        f"[slash-chain] This is step {index}/{total} of a chain; after it: {after}. If you could not do what "
        f"this step asks, call the {tool} tool with the reason before you end your turn, and the steps "
        "after it do not run."
    )


def status_text(enabled: bool, running: tuple[int, int, Step, Wait] | None) -> str:
    """The `/slash-chain` answer: `on · no chain runs`, or `on · 2/3 /b x, waiting for its turn`."""
    head = "on" if enabled else "off"
    if running is None:
        return f"{head} · {NO_CHAIN_RUNS}"
    index, total, step, wait = running
    return f"{head} · {index}/{total} {one_line(step.name)}, {_WAITING[wait]}"


# Chains beyond the seed: operators other than `&&`, and steps refused for who typed them (worded here)

#: Why a step did not run: the operator before it and the last status, or who typed the chain.
SKIP_WHY: Final[Mapping[Operator, str]] = {
    "&&": "the last command failed",
    "||": "the last command succeeded",
    "|": "the command before it did not end well",
}
REFUSED_WHY: Final = "only the person may run /{command}, and this came from {origin}"
HANDED_REFUSED_WHY: Final = "only the person may give /{command} its arguments, and a | would hand it output"
SHELL_REFUSED_WHY: Final = "a shell step runs only on the person's word, and this came from {origin}"
#: The word of `/slash-chain allow NAME`, which approves a project's saved chain's shell steps.
ALLOW_WORD: Final = "allow"
#: The words of `/slash-chain resume` and `/slash-chain forget`: the program a session's previous run left cut off.
RESUME_WORD: Final = "resume"
FORGET_WORD: Final = "forget"
NOTHING_CUT_OFF: Final = "no chain was cut off in this session: nothing to resume"

# The running program, listed and edited by the person (`/slash-chain steps`, `add`, `drop`)

#: The words of `/slash-chain steps`, `/slash-chain add /x args` and `/slash-chain drop N`.
STEPS_WORD: Final = "steps"
ADD_WORD: Final = "add"
DROP_WORD: Final = "drop"
#: How a listed step stands: by how it went (`slashkit.core.interpreter.history`), running, or not reached yet.
STEP_STATES: Final[Mapping[str, str]] = {
    "success": "done",
    "failure": "failed",
    "refused": "refused",
    "skipped": "skipped",
    "running": "running",
    "pending": "pending",
    "unreached": "not run",
}
ADD_USAGE: Final = (
    f"{ADD_WORD} takes one slash command or shell step to run after the rest: /{CHAIN_COMMAND} {ADD_WORD} /review"
)
DROP_USAGE: Final = f"{DROP_WORD} takes the number of a pending step, as /{CHAIN_COMMAND} {STEPS_WORD} lists it"
NOTHING_TO_EDIT: Final = f"{NO_CHAIN_RUNS}: {ADD_WORD} and {DROP_WORD} change a running chain"


def steps_text(listed: Sequence[tuple[int, Step, str]]) -> str:
    """The running program's steps, one a line, each with how it stands: `2. /tiny b · running`."""
    return "\n".join(f"{number}. {one_line(step.name)} · {STEP_STATES[state]}" for number, step, state in listed)


def added_text(number: int, step: Step) -> str:
    """The answer to `/slash-chain add`: the step's number, and when it runs."""
    return f"added {number}. {one_line(step.name)}: it runs after the rest, whatever their status"


def full_text(steps: int) -> str:
    """The answer to `/slash-chain add` when the program holds as many steps as one may."""
    return f"the chain holds {steps} steps, as many as one may: nothing was added"


def dropped_text(number: int, step: Step) -> str:
    """The answer to `/slash-chain drop N`."""
    return f"dropped {number}. {one_line(step.name)}: it will not run"


def not_pending_text(number: int, step: Step) -> str:
    """The answer to `/slash-chain drop N` for a step that runs or ran (in a loop: in an earlier iteration)."""
    return f"{number}. {one_line(step.name)} is not pending (it runs or ran): only a step not reached yet is dropped"


def undroppable_text(number: int, step: Step) -> str:
    """The answer to `/slash-chain drop N` for the whole condition or body of a loop."""
    return f"{number}. {one_line(step.name)} is all of a loop's condition or body: stop the chain instead"


def cut_off_text(number: int, total: int, step: Step) -> str:
    """The line when a continued session's previous run left a program cut off."""
    return (
        f"the chain stopped at {_cut_at(number, total, step)} when the session ended; "
        f"/{CHAIN_COMMAND} {RESUME_WORD} runs the rest, /{CHAIN_COMMAND} {FORGET_WORD} forgets it"
    )


def _cut_at(number: int, total: int, step: Step) -> str:
    """Where a program was cut off: `2/3 /b x`; in a `sleep`, which is no step of the count, the step it follows
    (`sleep 4m after step 1/3`) or, first in the program, the one it comes before."""
    if not step.is_nap:
        return f"{number}/{total} {one_line(step.name)}"
    return f"{step.name} after step {number}/{total}" if number > 0 else f"{step.name} before step 1/{total}"


def resumed_text(number: int, total: int, step: Step) -> str:
    """The line when the person resumes it: the interrupted step runs again."""
    return f"resumed: {_cut_at(number, total, step)} was interrupted and runs again, then the rest"


def forgot_text(number: int, total: int, step: Step) -> str:
    """The answer to `/slash-chain forget`."""
    return f"forgot the chain cut off at {_cut_at(number, total, step)}"


#: Why a shell step failed on a host that runs none.
NO_SHELL_WHY: Final = "this host runs no shell steps"
#: The longest output one command hands the next through `|`; past it the text is cut and says so.
MAX_HANDED: Final = 16_384
HANDED_CUT: Final = "[slash-chain: the output handed on was cut to {limit} characters]"


def refused_why(step: Step, origin: str) -> str:
    """Why a command only the person may run (`slashkit.core.policy`) was not run for this origin."""
    return REFUSED_WHY.format(command=step.command, origin=one_line(origin) or "an unnamed origin")


def handed_refused_why(step: Step) -> str:
    """Why a command only the person may run was not run after a `|`, in the person's own chain."""
    return HANDED_REFUSED_WHY.format(command=step.command)


def shell_refused_why(origin: str) -> str:
    """Why a shell step did not run: it came from neither the person's typing nor a file they trust."""
    return SHELL_REFUSED_WHY.format(origin=one_line(origin) or "an unnamed origin")


def shell_output_text(output: str) -> str:
    """A shell step's output as its lines show it (the runner bounded it), or nothing when it printed nothing."""
    return output.rstrip("\n")


def unapproved_text(name: str, source: str) -> str:
    """The answer to a project's saved chain holding shell steps whose content the person has not approved."""
    where = one_line(source)
    return (
        f"/{name} was not run: {where} comes with the project and holds shell steps, so nothing of it runs until "
        f"you approve its content as it is now: type /{CHAIN_COMMAND} {ALLOW_WORD} {name}"
    )


def allowed_text(name: str, source: str, digest: str) -> str:
    """The answer to `/slash-chain allow NAME`: the file and the content approved."""
    return f"approved /{name} ({one_line(source)}, sha256 {digest[:12]}): its shell steps run until the file changes"


def approval_failed_text(source: str, why: str) -> str:
    """The line when an approval could not be written to the person's state."""
    return f"slashkit: the approval of {one_line(source)} could not be saved ({one_line(why)}); it is not approved"


def allow_own_text(name: str, source: str) -> str:
    """The answer to `/slash-chain allow NAME` for one of the person's own saved chains."""
    return f"/{name} is your own ({one_line(source)}): its shell steps run without approval"


def allow_unknown_text(name: str) -> str:
    """The answer to `/slash-chain allow NAME` when no saved chain has that name."""
    return f"no saved chain is named /{shown(name)}; /{CHAIN_COMMAND} list names them"


ALLOW_USAGE: Final = f"{ALLOW_WORD} takes the name of one saved chain: /{CHAIN_COMMAND} {ALLOW_WORD} NAME"


def refused_text(step: Step, origin: str) -> str:
    """The answer to a typed command that was not run for who typed it: `/config was not run: ...`."""
    return f"/{step.command} was not run: {refused_why(step, origin)}"


def skipped_text(index: int, total: int, step: Step, why: str) -> str:
    """The line for a step that does not run: `skipped 2/3: /rollback (the last command succeeded)`."""
    return f"skipped {index}/{total}: {one_line(step.name)} ({why})"


def failed_text(step: Step, why: str) -> str:
    """The line for a step that failed in a chain that goes on by its operators: `/deploy failed: <why>`."""
    return f"{one_line(step.head)} failed: {why}"


def ended_text(succeeded: int, failed: int, skipped: int) -> str:
    """The last line of a chain where not every command ran well: `ended: 1 succeeded, 1 failed, 2 skipped`."""
    return f"ended: {succeeded} succeeded, {failed} failed, {skipped} skipped"


#: A host's syntax that only its person's typing may carry: omp reads every step as the person's own text, and
#: there a whitespace-delimited `^provider/model` token tags a model as the person's, which omp's `task` tool then
#: offers subagents pinned to (`MODEL_MENTION_RE`, `/(^|\s)\^([^\s^]+)(?=\s|$)/g`, in omp 18.2.3's
#: session/model-mention-syntax.ts). Whitespace is either language's, so no reading of it slips past.
_ANY_SPACE: Final = "[" + re.escape(JS_WHITESPACE + "\x1c\x1d\x1e\x1f\x85") + "]"
USER_ONLY_MARK: Final = re.compile(r"(?:^|(?<=" + _ANY_SPACE + r"))\^(?=[^^])")
#: omp's magic keywords (omp 18.2.3, read in pi-coding-agent's src/modes/ultrathink.ts, orchestrate.ts, workflow.ts
#: and magic-keyword-boundary.ts): `ultrathink` (the most thinking, and a hidden notice), `orchestrate` (a notice to
#: dispatch subagents), `workflowz` (a notice for an eval workflow), each attributed to the person when their
#: lowercase word stands alone in a user message. omp's own boundaries are Unicode letters, digits, `_ . / \ -`,
#: `::` before and `(`, `.x` after; only their ASCII part stops a match here, so this finds every word omp would
#: (and, next to a non-ASCII letter, a few it would not). A keyword is made inert by its capital: omp matches
#: lowercase only ("Ultrathink never triggers", its own comment), and the model still reads the word.
MAGIC_KEYWORD: Final = re.compile(
    r"(?<![A-Za-z0-9_./\\-])(?<!::)(ultrathink|orchestrate|workflowz)(?![A-Za-z0-9_/\\-])(?!\.[A-Za-z0-9_-])(?!\()"
)
#: omp's turn budget (`TURN_BUDGET`, `/(?:^|\s)\+(\d+(?:\.\d+)?)([km])?(!)?(?=\s|$)/i` in src/modes/turn-budget.ts,
#: omp 18.2.3): a standalone `+500k` sets the turn's output budget, `+500k!` a hard one. Made inert as a mark is,
#: its sign doubled (`++500k` is no budget).
TURN_BUDGET: Final = re.compile(
    r"(?:^|(?<=" + _ANY_SPACE + r"))\+(?=[0-9]+(?:\.[0-9]+)?[kKmM]?!?(?:" + _ANY_SPACE + r"|\Z))"
)


def inert(text: str) -> str:
    """Text that is not the person's, with every host's user-only syntax in it made plain text: a mark's caret
    doubled, which no selector takes (`^^fake/model` tags nothing), a magic keyword capitalised, a turn budget's
    sign doubled.

    >>> inert("use ^fake/other-model now, 2^10 stays")
    'use ^^fake/other-model now, 2^10 stays'
    >>> inert("ultrathink, then orchestrate +500k! (workflowz.ts, ultrathinking and c+1 stay)")
    'Ultrathink, then Orchestrate ++500k! (workflowz.ts, ultrathinking and c+1 stay)'
    """
    text = MAGIC_KEYWORD.sub(lambda found: found[0].capitalize(), text)
    return TURN_BUDGET.sub("++", USER_ONLY_MARK.sub("^^", text))


def handed(args: str, output: str) -> str:
    """The arguments of a step after `|`: its own, then the output handed to it, cut to MAX_HANDED characters,
    its user-only syntax made inert (the output is a command's, often the model's, never the person's typing).

    >>> handed("x", "review: fine")
    'x\\n\\nreview: fine'
    >>> handed("", "")
    ''
    """
    if len(output) > MAX_HANDED:
        output = f"{output[:MAX_HANDED]}\n{HANDED_CUT.format(limit=MAX_HANDED)}"
    return "\n\n".join(part for part in (args, inert(output)) if part)


def _names(steps: Iterable[Step]) -> str:
    return ", ".join(f"/{s.command}" for s in steps) or "none"


def after_failure(runs_next: Step | None, skipped: Iterable[Step]) -> str:
    """What a failure of the running step leads to: the step that runs next, and those skipped before it."""
    passed = list(skipped)
    if runs_next is None:
        return "after a failure none of them runs"
    head = f"after a failure /{runs_next.command} runs next"
    if not passed:
        return head
    return f"{head}, and {_names(passed)} {'does' if len(passed) == 1 else 'do'} not"


def mixed_fail_note(index: int, total: int, left: Iterable[Step], failure: str, tool: str = FAIL_TOOL_ID) -> str:
    """The line the model reads after a step's prompt in a chain with operators besides `&&` (`tool` as in
    `fail_note`)."""
    return (
        f"[slash-chain] This is step {index}/{total} of a chain; after it: {_names(left)}. If you could not do what "
        f"this step asks, call the {tool} tool with the reason before you end your turn: {failure}."
    )


def fail_marked_text(failure: str) -> str:
    """The fail tool's answer in a chain with operators besides `&&`: the step counts as failed at its turn's end."""
    return f"The step is marked as failed; once this turn ends, the chain goes on by its operators: {failure}."


def queued_status_text(queued: str, runs: bool) -> str:
    """What the `/slash-chain` status adds while a self-command is held: ` · the model queued /compact, ...`."""
    return f" · the model queued {queued}, " + ("which runs now" if runs else "to run once its turn ends")


def queued_stop_text(queued: str, runs: bool) -> str:
    """What `/slash-chain stop` says of a self-command it found: cancelled, or already running."""
    if runs:
        return f"{queued}, which the model queued, already runs and cannot be stopped"
    return f"cancelled {queued}, which the model queued"


def next_text(step: Step) -> str:
    """The status's note on what waits after the running step: `; next: || /rollback`."""
    return f"; next: {step.op} {one_line(step.head)}"


# Saved chains (slashkit.core.saved_chain)

#: The word `/slash-chain` takes to list the saved chains.
LIST_WORD: Final = "list"


def unchainable_text(step: Step) -> str:
    """The answer to a chain holding a built-in on a host that runs one only from the person's own prompt."""
    return f"/{shown(step.command)} is a built-in that no chain can run on this host, so nothing of this chain ran"


def saved_started_text(call: Step, steps: int) -> str:
    """The answer to a saved chain's name typed as a command: `/ship Bob runs 3 command(s)`."""
    return f"{shown(call.name)} runs {steps} command(s)"


def saved_off_text(name: str) -> str:
    """The answer to a saved chain's name while chains are off."""
    return f"/{shown(name)} is a saved chain, and slash chains are off: /{CHAIN_COMMAND} on runs it"


def progress_text(index: int, total: int, step: Step, after: Step | None) -> str:
    """What a host's status area shows while a step runs: `chain 2/3: /test · next /commit` (the operator before
    the next step when it is not `&&`: `· next || /rollback`)."""
    now = f"chain {index}/{total}: {shown(step.name)}"
    if after is None:
        return now
    op = "" if after.op == "&&" else f"{after.op} "
    return f"{now} · next {op}{shown(after.head)}"


def loop_progress_text(kind: str, iteration: int, cap: int, step: Step, after: Step | None) -> str:
    """What the status area shows while a step of a loop runs: `until 3/10 · /fix · next /check`."""
    now = f"{kind} {iteration}/{cap} · {shown(step.name)}"
    return now if after is None else f"{now} · next {shown(after.head)}"


def napping_text(left: int, then: Step | None) -> str:
    """What the status area shows while a `sleep` waits: `sleep 4m left · then /check-ci`."""
    now = f"sleep {duration(left)} left"
    return now if then is None else f"{now} · then {shown(then.head)}"


def duration(seconds: int) -> str:
    """A wait as a person writes it: `45s`, `4m`, `4m 30s`, `2h`, `1h 5m`.

    >>> duration(45), duration(240), duration(270), duration(7500)
    ('45s', '4m', '4m 30s', '2h 5m')
    """
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs and not hours else ""]
    return " ".join(part for part in parts if part) or "0s"


def iteration_text(kind: str, iteration: int, cap: int, word: str | None) -> str:
    """The line that starts an iteration of a loop: `until 2/10`, or `for 2/3: b` with the word it takes."""
    return f"{kind} {iteration}/{cap}" if word is None else f"{kind} {iteration}/{cap}: {shown(word)}"


def capped_text(kind: str, cap: int) -> str:
    """The line of a `while` or `until` that ran its body as often as its cap allows, and ends failing."""
    return f"{kind} stopped: its body ran {cap} times, its cap (SLASHKIT_LOOP_CAP raises it)"


def bounded_text(steps: int) -> str:
    """The line of a program that ran as many steps as one may, and ends failing."""
    return f"stopped: the program ran {steps} steps, as many as one program may"


def unparsed_text(why: str, where: str) -> str:
    """The answer to a chain that is no program: `not run: done was expected, not the end (column 31)`."""
    return f"not run: {one_line(why)} ({where})"


def program_started_text(steps: int) -> str:
    """The answer to a typed program (a line that starts with a loop or a group)."""
    return f"a program of {steps} command(s) runs"


def status_line(enabled: bool, where: str) -> str:
    """The `/slash-chain` answer while a loop or a `sleep` runs: `on · until 3/10 · /fix · next /check`."""
    return f"{'on' if enabled else 'off'} · {where}"


NO_SAVED_CHAINS: Final = "no saved chains: write one as .slashkit/chains/<name>.md (a chain line, or a program)"


#: The line a plugin logs when its Python helper cannot answer, and what the person gets meanwhile.
CHAIN_UNAVAILABLE: Final = "unavailable: {why}; commands run as typed until it is back"
SELF_COMMAND_UNAVAILABLE: Final = "unavailable: {why}; tool answers reach the model as the engine gave them"


# Self-commands (worded here; lich exports the language as LICH_PROMPT_LANG)


class Key(Enum):
    """The self-command texts that follow the prompt language."""

    SKILL_NOTE = "skill_note"
    CONTROL_NOTE = "control_note"
    DENY_DEFAULT_SAVED = "deny_default_saved"
    SKILL_QUEUED = "skill_queued"
    CONTROL_QUEUED = "control_queued"
    SELF_TOOL_NOTE = "self_tool_note"
    DENY_PERSON_ONLY = "deny_person_only"
    NOT_BUILTIN = "not_builtin"
    DENY_NOT_ALLOWED = "deny_not_allowed"
    DENY_CHAINED = "deny_chained"
    DENY_LINE_BREAK = "deny_line_break"
    DENY_NOT_TEXT = "deny_not_text"
    DENY_TOO_LONG = "deny_too_long"
    DENY_ONE_QUEUED = "deny_one_queued"
    DENY_SWITCHED_OFF = "deny_switched_off"
    LOG_QUEUED = "log_queued"
    LOG_RUNS = "log_runs"


ENGLISH: Final = "en"

CATALOGS: Final[Mapping[str, Mapping[Key, str]]] = {
    "en": {
        Key.SKILL_NOTE: (
            "[lich] Built-in slash commands: when the user asks you to run one of the CLI's own slash commands "
            "(such as /compact), you may name it here as the skill (for example `compact`, with its arguments "
            "in `args`). It is queued and runs once this turn ends, so end your turn right after the call."
        ),
        Key.CONTROL_NOTE: (
            "[lich] This session: action `command` is also accepted with this session itself as the target, "
            "named by its lich id {session_id} (LICH_SESSION_ID). The command is queued and runs once this "
            "turn ends."
        ),
        Key.DENY_DEFAULT_SAVED: (
            "/{name} was not run: run from here, Claude Code would save it as the default for every new Claude "
            "Code session. Set it from lich instead, whose model and effort override applies to this session "
            "only."
        ),
        Key.SKILL_QUEUED: "{queued} is queued and runs once this turn ends. End the turn now.",
        Key.CONTROL_QUEUED: "{queued} is queued on this session and runs once this turn ends. End the turn now.",
        Key.SELF_TOOL_NOTE: (
            "Runs one of this session's own built-in slash commands (such as /compact) when the user asks you to: "
            "name it in `command` (for example `compact`) and put its arguments in `args`. It is queued and runs "
            "once this turn ends, so end your turn right after the call. /model and /effort are the user's alone."
        ),
        Key.DENY_PERSON_ONLY: (
            "/{name} was not run: only the user sets this session's model or effort. Ask them to type /{name} "
            "themselves."
        ),
        Key.NOT_BUILTIN: "/{name} was not run: it is not one of this session's built-in slash commands.",
        Key.DENY_NOT_ALLOWED: (
            "/{name} was not run: only the user may run it, because it can change what they set or reach beyond "
            "this session. Ask them to type /{name} themselves."
        ),
        Key.DENY_CHAINED: (
            "/{name} was not run: its arguments hold more commands, and only the user may chain commands. Queue "
            "/{name} alone."
        ),
        Key.DENY_LINE_BREAK: (
            "/{name} was not run: its arguments hold a line break, and only one line runs as a command. Give them "
            "on one line."
        ),
        Key.DENY_NOT_TEXT: (
            "/{name} was not run: its name or arguments hold a lone surrogate (\\ud800-\\udfff), which is not text "
            "and would reach the command as \ufffd. Give them as plain text."
        ),
        Key.DENY_TOO_LONG: (
            "/{name} was not run: its arguments are {length} characters, over the {limit} a queued command may hold. "
            "Give shorter ones."
        ),
        Key.DENY_ONE_QUEUED: (
            "/{name} was not queued: {queued} is already queued, and one command runs per turn. End the turn now."
        ),
        Key.DENY_SWITCHED_OFF: (
            "/{name} was not run: the user has switched off the commands you may queue. Ask them to type /{name} "
            "themselves."
        ),
        Key.LOG_QUEUED: "the model queued {queued}; it runs once this turn ends (/slash-chain stop cancels it)",
        Key.LOG_RUNS: "{queued} runs now: the model queued it",
    },
    "pt-BR": {
        Key.SKILL_NOTE: (
            "[lich] Comandos de barra nativos: quando o usuário pedir para rodar um dos comandos de barra do "
            "próprio CLI (como /compact), você pode nomeá-lo aqui como skill (por exemplo `compact`, com os "
            "argumentos em `args`). Ele entra na fila e roda assim que este turno terminar, então encerre o "
            "turno logo após a chamada."
        ),
        Key.CONTROL_NOTE: (
            "[lich] Esta sessão: a ação `command` também é aceita com a própria sessão como alvo, indicada pelo "
            "seu id do lich {session_id} (LICH_SESSION_ID). O comando entra na fila e roda assim que este "
            "turno terminar."
        ),
        Key.DENY_DEFAULT_SAVED: (
            "/{name} não foi executado: rodado daqui, o Claude Code o salvaria como padrão para toda nova "
            "sessão do Claude Code. Defina-o pelo lich, cuja troca de modelo e esforço vale só para esta sessão."
        ),
        Key.SKILL_QUEUED: "{queued} está na fila e roda assim que este turno terminar. Encerre o turno agora.",
        Key.CONTROL_QUEUED: (
            "{queued} está na fila desta sessão e roda assim que este turno terminar. Encerre o turno agora."
        ),
        Key.SELF_TOOL_NOTE: (
            "Roda um dos comandos de barra nativos desta sessão (como /compact) quando o usuário pedir: informe-o "
            "em `command` (por exemplo `compact`) e os argumentos em `args`. Ele entra na fila e roda assim que "
            "este turno terminar, então encerre o turno logo após a chamada. /model e /effort são só do usuário."
        ),
        Key.DENY_PERSON_ONLY: (
            "/{name} não foi executado: só o usuário define o modelo ou o esforço desta sessão. Peça que ele "
            "digite /{name}."
        ),
        Key.NOT_BUILTIN: "/{name} não foi executado: não é um dos comandos de barra nativos desta sessão.",
        Key.DENY_NOT_ALLOWED: (
            "/{name} não foi executado: só o usuário pode executá-lo, porque ele pode mudar o que o usuário "
            "definiu ou alcançar algo além desta sessão. Peça que ele digite /{name}."
        ),
        Key.DENY_CHAINED: (
            "/{name} não foi executado: os argumentos contêm outros comandos, e só o usuário encadeia comandos. "
            "Coloque /{name} na fila sozinho."
        ),
        Key.DENY_LINE_BREAK: (
            "/{name} não foi executado: os argumentos contêm uma quebra de linha, e só uma linha roda como comando. "
            "Informe-os numa linha só."
        ),
        Key.DENY_NOT_TEXT: (
            "/{name} não foi executado: o nome ou os argumentos contêm um surrogate isolado (\\ud800-\\udfff), que "
            "não é texto e chegaria ao comando como \ufffd. Informe-os como texto simples."
        ),
        Key.DENY_TOO_LONG: (
            "/{name} não foi executado: os argumentos têm {length} caracteres, acima dos {limit} que um comando na "
            "fila pode ter. Informe argumentos mais curtos."
        ),
        Key.DENY_ONE_QUEUED: (
            "/{name} não entrou na fila: {queued} já está na fila, e roda um comando por turno. Encerre o turno agora."
        ),
        Key.DENY_SWITCHED_OFF: (
            "/{name} não foi executado: o usuário desligou os comandos que você pode pôr na fila. Peça que ele "
            "digite /{name}."
        ),
        Key.LOG_QUEUED: "o modelo pôs {queued} na fila; roda assim que este turno terminar (/slash-chain stop cancela)",
        Key.LOG_RUNS: "{queued} roda agora: o modelo o pôs na fila",
    },
    "zh-CN": {
        Key.SKILL_NOTE: (
            "[lich] 内置斜杠命令：当用户要求运行 CLI 自带的斜杠命令（例如 /compact）时，也可以在这里把它当作 skill "
            "指定（例如 `compact`，参数放在 `args` 中）。它会进入队列，在本轮结束后运行，所以调用后请立即结束本轮。"
        ),
        Key.CONTROL_NOTE: (
            "[lich] 本会话：action 为 `command` 时，也接受以本会话自身为目标，用它的 lich id {session_id}"
            "（LICH_SESSION_ID）指定。命令会进入队列，在本轮结束后运行。"
        ),
        Key.DENY_DEFAULT_SAVED: (
            "/{name} 没有运行：从这里运行时，Claude Code 会把它保存为之后每个新 Claude Code 会话的默认值。"
            "请改在 lich 中设置，lich 的模型和推理强度覆盖只作用于本会话。"
        ),
        Key.SKILL_QUEUED: "{queued} 已进入队列，将在本轮结束后运行。请现在结束本轮。",
        Key.CONTROL_QUEUED: "{queued} 已在本会话排队，将在本轮结束后运行。请现在结束本轮。",
        Key.SELF_TOOL_NOTE: (
            "当用户要求时，运行本会话自带的内置斜杠命令（例如 /compact）：在 `command` 中写命令名（例如 `compact`），"
            "参数放在 `args` 中。它会进入队列，在本轮结束后运行，所以调用后请立即结束本轮。"
            "/model 和 /effort 只能由用户设置。"
        ),
        Key.DENY_PERSON_ONLY: "/{name} 没有运行：只有用户可以设置本会话的模型或推理强度。请让用户自己输入 /{name}。",
        Key.NOT_BUILTIN: "/{name} 没有运行：它不是本会话的内置斜杠命令。",
        Key.DENY_NOT_ALLOWED: (
            "/{name} 没有运行：只有用户可以运行它，因为它可能改变用户的设置，或触及本会话之外的东西。"
            "请让用户自己输入 /{name}。"
        ),
        Key.DENY_CHAINED: "/{name} 没有运行：它的参数里还有其他命令，只有用户可以串联命令。请只把 /{name} 单独排队。",
        Key.DENY_LINE_BREAK: "/{name} 没有运行：它的参数里有换行，而只有一行会作为命令运行。请把参数写在一行里。",
        Key.DENY_NOT_TEXT: (
            "/{name} 没有运行：它的名称或参数里有单独的代理项（\\ud800-\\udfff），这不是文本，会以 \ufffd 到达命令。"
            "请用普通文本给出。"
        ),
        Key.DENY_TOO_LONG: (
            "/{name} 没有运行：它的参数有 {length} 个字符，超过了排队命令可容纳的 {limit} 个。请给出更短的参数。"
        ),
        Key.DENY_ONE_QUEUED: "/{name} 没有排队：{queued} 已在队列中，每轮只运行一个命令。请现在结束本轮。",
        Key.DENY_SWITCHED_OFF: "/{name} 没有运行：用户已关闭你可以排队的命令。请让用户自己输入 /{name}。",
        Key.LOG_QUEUED: "模型已将 {queued} 排队；它将在本轮结束后运行（/slash-chain stop 可取消）",
        Key.LOG_RUNS: "{queued} 现在运行：它是模型排队的",
    },
    "es": {
        Key.SKILL_NOTE: (
            "[lich] Comandos de barra integrados: cuando el usuario pida ejecutar uno de los comandos de barra "
            "propios de la CLI (como /compact), puedes nombrarlo aquí como skill (por ejemplo `compact`, con sus "
            "argumentos en `args`). Queda en cola y se ejecuta en cuanto termine este turno, así que termina tu "
            "turno justo después de la llamada."
        ),
        Key.CONTROL_NOTE: (
            "[lich] Esta sesión: la acción `command` también se acepta con esta misma sesión como destino, "
            "nombrada por su id de lich {session_id} (LICH_SESSION_ID). El comando queda en cola y se ejecuta "
            "en cuanto termine este turno."
        ),
        Key.DENY_DEFAULT_SAVED: (
            "/{name} no se ejecutó: ejecutado desde aquí, Claude Code lo guardaría como valor predeterminado "
            "para cada nueva sesión de Claude Code. Ajústalo desde lich, cuyo ajuste de modelo y esfuerzo se "
            "aplica solo a esta sesión."
        ),
        Key.SKILL_QUEUED: "{queued} está en cola y se ejecuta en cuanto termine este turno. Termina el turno ahora.",
        Key.CONTROL_QUEUED: (
            "{queued} está en cola en esta sesión y se ejecuta en cuanto termine este turno. Termina el turno ahora."
        ),
        Key.SELF_TOOL_NOTE: (
            "Ejecuta uno de los comandos de barra integrados de esta sesión (como /compact) cuando el usuario lo "
            "pida: nómbralo en `command` (por ejemplo `compact`) y pon sus argumentos en `args`. Queda en cola y se "
            "ejecuta en cuanto termine este turno, así que termina tu turno justo después de la llamada. /model y "
            "/effort son solo del usuario."
        ),
        Key.DENY_PERSON_ONLY: (
            "/{name} no se ejecutó: solo el usuario ajusta el modelo o el esfuerzo de esta sesión. Pídele que "
            "escriba /{name}."
        ),
        Key.NOT_BUILTIN: "/{name} no se ejecutó: no es uno de los comandos de barra integrados de esta sesión.",
        Key.DENY_NOT_ALLOWED: (
            "/{name} no se ejecutó: solo el usuario puede ejecutarlo, porque puede cambiar lo que el usuario "
            "ajustó o llegar más allá de esta sesión. Pídele que escriba /{name}."
        ),
        Key.DENY_CHAINED: (
            "/{name} no se ejecutó: sus argumentos contienen más comandos, y solo el usuario encadena comandos. "
            "Pon /{name} en cola solo."
        ),
        Key.DENY_LINE_BREAK: (
            "/{name} no se ejecutó: sus argumentos contienen un salto de línea, y solo una línea se ejecuta como "
            "comando. Dalos en una sola línea."
        ),
        Key.DENY_NOT_TEXT: (
            "/{name} no se ejecutó: su nombre o sus argumentos contienen un sustituto suelto (\\ud800-\\udfff), que "
            "no es texto y llegaría al comando como \ufffd. Dalos como texto simple."
        ),
        Key.DENY_TOO_LONG: (
            "/{name} no se ejecutó: sus argumentos tienen {length} caracteres, más de los {limit} que puede tener un "
            "comando en cola. Dalos más cortos."
        ),
        Key.DENY_ONE_QUEUED: (
            "/{name} no quedó en cola: {queued} ya está en cola, y se ejecuta un comando por turno. Termina el turno "
            "ahora."
        ),
        Key.DENY_SWITCHED_OFF: (
            "/{name} no se ejecutó: el usuario desactivó los comandos que puedes poner en cola. Pídele que escriba "
            "/{name}."
        ),
        Key.LOG_QUEUED: (
            "el modelo puso {queued} en cola; se ejecuta en cuanto termine este turno (/slash-chain stop lo cancela)"
        ),
        Key.LOG_RUNS: "{queued} se ejecuta ahora: el modelo lo puso en cola",
    },
}


def language(prompt_lang: str | None) -> str:
    """Picks the catalog for LICH_PROMPT_LANG: an exact, case-sensitive match, else English.

    >>> language("pt-BR"), language("PT-br"), language(None)
    ('pt-BR', 'en', 'en')
    """
    return prompt_lang if prompt_lang is not None and prompt_lang in CATALOGS else ENGLISH


def text(lang: str, key: Key, **slots: str) -> str:
    """Fills one self-command text in a language; a key a language lacks falls back to English."""
    catalog = CATALOGS.get(lang, CATALOGS[ENGLISH])
    return catalog.get(key, CATALOGS[ENGLISH][key]).format(**slots)


def queued_failed_toast(name: str, message: str) -> str:
    """The toast for a queued command that failed once it ran (English only, as the reference's)."""
    return f"/{name} did not run: {one_line(message)}"
