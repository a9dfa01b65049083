"""The grammar of a chain line or a saved chain's body: a recursive-descent parser from text to a program
(`slashkit.core.program`). Bash's grammar is the reference for the subset it reads:

    program   = list END
    list      = and_or { SEP and_or } [ SEP ]             SEP: `;`, or a newline in a file
    and_or    = pipeline { ("&&" | "||") pipeline }
    pipeline  = command { "|" command }                  only slash commands take part in a pipe
    command   = slash | shell | group | loop | for | "break" [N] | "continue" [N] | "sleep" DURATION
    group     = "{" list "}"
    loop      = ("while" | "until") list "do" list "done"
    for       = "for" NAME "in" { WORD } SEP "do" list "done"
    slash     = "/" NAME ARGS                            NAME: [A-Za-z0-9_:.-]+
    shell     = "!" TEXT                                 TEXT: from a non-space to the first `&&`, `||`, `|`,
                                                         `;` (or newline, in a file) outside quotes
    DURATION  = digits [ "s" | "m" | "h" ]

A slash command's arguments are free text, as a person types them, so an operator ends them only where it stands
as the reference's `&&` does: at the start or after whitespace, followed by `/name` (or by a word of the language
that starts a command); and `;` ends them, written on the word before it too, where the word after it closes what
is open (`/check; do`, `/fix; done`, `/b; }`). Everywhere else the text is the command's: `/review fix it; done
means green` keeps all of it, outside a loop. Whitespace is JavaScript's, as in the reference.

A shell step's text is the shell's, so it ends as a shell reads it: at the first operator outside quotes (`'...'`,
`"..."`, a backslash), whatever follows; `!sh -c 'a && b'` keeps its `&&`. It takes no text from a `|` before it:
what a pipe hands on is data, never a shell's words.
"""

import re
from collections.abc import Callable
from typing import Final

from attrs import frozen
from returns.result import Failure, Result, Success

from slashkit.core.js_text import JS_WHITESPACE, js_trim
from slashkit.core.program import (
    SHELL,
    AndOr,
    Break,
    Command,
    Continue,
    For,
    Group,
    Joint,
    Loop,
    Node,
    Pipeline,
    Sequence,
    Sleep,
    numbered,
)

#: How deep compound commands may nest.
MAX_NESTING: Final = 16
#: The longest text read as a program: past what any host hands a command (the SDK host's 100,000 characters a
#: query), so a bound here never refuses a line a host let through; a saved chain's file is smaller still.
MAX_TEXT: Final = 256 * 1024
#: The longest wait `sleep` takes: a day.
MAX_SLEEP: Final = 24 * 3600
#: The words that start a command of the language (besides `/name`), after an operator.
STARTERS: Final = ("while", "until", "for", "{", "break", "continue", "sleep")
#: The words that open a compound command at the start of a typed line: such a line is a program only when it
#: parses whole as one; any other line is the person's prompt.
OPENERS: Final = ("while", "until", "for", "{")
#: `starts_program` as the source of a JavaScript RegExp, for a host's shim to test a prompt before it asks the helper
#: (so a prompt that opens no program never starts Python).
PROGRAM_START: Final = r"^\s*(?:while|until|for|\{)(?=\s|;|$)"

_NAME: Final = re.compile(r"[A-Za-z0-9_:.-]+")
_VARIABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DURATION: Final = re.compile(r"([0-9]{1,6})([smh]?)")
_NUMBER: Final = re.compile(r"[1-9][0-9]{0,2}")
_FOR_HEAD: Final = re.compile(rf"[A-Za-z_][A-Za-z0-9_]*[{JS_WHITESPACE}]+in(?:[{JS_WHITESPACE};]|$)")
_UNITS: Final = {"": 1, "s": 1, "m": 60, "h": 3600}


@frozen
class ParseError:
    """Why a text is no program, and where: the offset into the text, and its line and column (1-based)."""

    why: str
    offset: int
    line: int
    column: int

    @property
    def where(self) -> str:
        """`line 2, column 5`, or `column 5` in a text of one line."""
        return f"column {self.column}" if self.line == 1 else f"line {self.line}, column {self.column}"


class _Refused(Exception):
    def __init__(self, why: str, offset: int) -> None:
        super().__init__(why)
        self.why = why
        self.offset = offset


def parse(text: str, file: bool = False) -> Result[Node, ParseError]:
    """Reads a chain line (`file`: a saved chain's body, where a newline is `;` and a line starting with `#` is a
    comment) as a program, or says where it is none.

    >>> parse("/a x && /b y").unwrap().rest
    (('&&', Command(command='b', args='y', number=2, by=None)),)
    >>> parse("until /check; do /fix; done").unwrap().condition
    Command(command='check', args='', number=1, by=None)
    >>> parse("/a && break").failure().why
    'break is not inside a loop'
    """
    if len(text) > MAX_TEXT:
        return Failure(_error(text, f"it is over {MAX_TEXT // 1024} KiB", 0))
    source = _without_comments(text) if file else text
    reader = _Reader(source, file)
    try:
        node = reader.program()
    except _Refused as refused:
        return Failure(_error(text, refused.why, refused.offset))
    return Success(numbered(node))


def starts_program(text: str) -> bool:
    """Tells whether a typed line starts with a word that opens a compound command (`while`, `until`, `for`, `{`),
    so it is worth parsing as a program before it is taken as a prompt."""
    head = text.lstrip(JS_WHITESPACE)
    return any(head.startswith(word) and _ends_word(head, len(word)) for word in OPENERS)


def looks_like_program(text: str) -> bool:
    """Tells whether a typed line that does not parse was still meant as a program, so it is answered with where
    it went wrong rather than handed to the model: its opening word is followed by a slash command (`while /a`,
    `{ /a`) or by another that looks like one (`{ { /a`), or `for` by a name and `in`.

    >>> looks_like_program("until /check; do /fix"), looks_like_program("while you are at it, fix it; done")
    (True, False)
    """
    head = text.lstrip(JS_WHITESPACE)
    word = next((w for w in OPENERS if head.startswith(w) and _ends_word(head, len(w))), None)
    if word is None:
        return False
    rest = head[len(word) :].lstrip(JS_WHITESPACE)
    if word == "for":
        return _FOR_HEAD.match(rest) is not None
    return rest.startswith("/") or _shell_at(rest, 0) or looks_like_program(rest)


def _shell_at(text: str, at: int) -> bool:
    """Tells whether a shell step starts at `at`: `!` followed at once by a non-space."""
    return text.startswith("!", at) and at + 1 < len(text) and text[at + 1] not in JS_WHITESPACE


def _ends_word(text: str, at: int) -> bool:
    return at == len(text) or text[at] in JS_WHITESPACE or text[at] == ";"


def _without_comments(text: str) -> str:
    """The text with each comment line blanked (its line kept, so a line number still points at the file's)."""
    return "\n".join("" if line.lstrip(JS_WHITESPACE).startswith("#") else line for line in text.split("\n"))


def _error(text: str, why: str, offset: int) -> ParseError:
    before = text[:offset]
    line = before.count("\n") + 1
    return ParseError(why, offset, line, offset - (before.rfind("\n") + 1) + 1)


class _Reader:
    """The parser's position in the text, and what is open around it: the loops (for `break`) and the word that
    closes the innermost compound command (`do`, `done` or `}`), which a `;` may stand right before."""

    def __init__(self, text: str, file: bool) -> None:
        self.text = text
        self.file = file
        self.at = 0
        self.loops = 0
        self.depth = 0
        self.closer: str | None = None
        self.blank = JS_WHITESPACE.replace("\n", "") if file else JS_WHITESPACE

    # Reading

    def program(self) -> Node:
        self._skip(newlines=True)
        if self.at == len(self.text):
            raise _Refused("it holds no command", self.at)
        node = self._list(None)
        if self.at != len(self.text):
            raise _Refused(f"{self._seen()} was not expected", self.at)
        return node

    def _list(self, closer: str | None) -> Node:
        outer, self.closer = self.closer, closer
        items = [self._and_or()]
        while True:
            self._skip()
            if not self._separator():
                break
            self._skip(newlines=True)
            if self.at == len(self.text) or (closer is not None and self._word_at(self.at, closer)):
                break
            items.append(self._and_or())
        self.closer = outer
        return items[0] if len(items) == 1 else Sequence(tuple(items))

    def _separator(self) -> bool:
        if self.at < len(self.text) and (self.text[self.at] == ";" or (self.file and self.text[self.at] == "\n")):
            self.at += 1
            return True
        return False

    def _and_or(self) -> Node:
        first = self._pipeline()
        rest: list[tuple[Joint, Node]] = []
        while True:
            self._skip()
            joint = self._joint()
            if joint is None:
                break
            self._skip(newlines=True)
            rest.append((joint, self._pipeline()))
        return first if not rest else AndOr(first, tuple(rest))

    def _joint(self) -> Joint | None:
        for joint in ("&&", "||"):
            if self.text.startswith(joint, self.at):
                self.at += 2
                return "&&" if joint == "&&" else "||"
        return None

    def _pipeline(self) -> Node:
        start = self.at
        parts = [self._command()]
        while True:
            self._skip()
            if not (self.text.startswith("|", self.at) and not self.text.startswith("||", self.at)):
                break
            self.at += 1
            self._skip(newlines=True)
            parts.append(self._command())
        if len(parts) == 1:
            return parts[0]
        if not all(isinstance(part, Command) for part in parts):
            raise _Refused("only slash commands take part in a pipe (|)", start)
        if any(isinstance(part, Command) and part.command == SHELL for part in parts[1:]):
            raise _Refused("a shell step takes no text from a pipe (|): put it first, or after && or ;", start)
        return Pipeline(tuple(parts))

    def _command(self) -> Node:
        at = self.at
        if self.at < len(self.text) and self.text[self.at] == "/":
            return self._slash()
        if _shell_at(self.text, at):
            return self._shell()
        if self._word_at(at, "while"):
            return self._nested(lambda: self._loop(until=False))
        if self._word_at(at, "until"):
            return self._nested(lambda: self._loop(until=True))
        if self._word_at(at, "for"):
            return self._nested(self._for)
        if self._word_at(at, "{"):
            return self._nested(self._group)
        for word in ("break", "continue"):
            if self._word_at(at, word):
                return self._jump(word)
        if self._word_at(at, "sleep"):
            return self._sleep()
        raise _Refused(f"a command was expected, not {self._seen()}", at)

    def _nested(self, read: Callable[[], Node]) -> Node:
        if self.depth >= MAX_NESTING:
            raise _Refused(f"it nests more than {MAX_NESTING} deep", self.at)
        self.depth += 1
        node = read()
        self.depth -= 1
        return node

    def _slash(self) -> Command:
        name = _NAME.match(self.text, self.at + 1)
        if name is None or not self._name_ends(name.end()):
            raise _Refused(f"{self._seen()} is no slash command", self.at)
        self.at = name.end()
        start = self.at
        end = self._args_end(start)
        self.at = end
        return Command(name[0], js_trim(self.text[start:end]))

    def _shell(self) -> Command:
        """`!TEXT`: the text up to the first operator outside quotes, or a newline in a file."""
        text, at = self.text, self.at + 1
        quote: str | None = None
        opened = at
        while at < len(text):
            c = text[at]
            if quote == "'":
                quote = None if c == "'" else quote
            elif c == "\\":
                at += 1
            elif quote == '"':
                quote = None if c == '"' else quote
            elif c in "'\"":
                quote, opened = c, at
            elif (c in "&|;" and (c != "&" or text.startswith("&&", at))) or (self.file and c == "\n"):
                break
            at += 1
        if quote is not None:
            raise _Refused(f"the quote {quote} opened here is not closed", opened)
        at = min(at, len(text))
        shell = js_trim(text[self.at + 1 : at])
        self.at = at
        return Command(SHELL, shell)

    def _name_ends(self, at: int) -> bool:
        return at == len(self.text) or self.text[at] in JS_WHITESPACE or self._closes_after(at)

    def _args_end(self, start: int) -> int:
        """Where a slash command's arguments end: at the first operator that stands as the reference's `&&` does
        before a command, at a `;` before the word that closes what is open, at a newline in a file, or at the end."""
        text = self.text
        for i in range(start, len(text)):
            c = text[i]
            if self.file and c == "\n":
                return i
            if c == ";" and self._closes_after(i):
                return i
            if c in "&|;" and text[i - 1] in JS_WHITESPACE and self._operator_before_command(i):
                return i
        return len(text)

    def _operator_before_command(self, at: int) -> bool:
        op = next((op for op in ("&&", "||", "|", ";") if self.text.startswith(op, at)), None)
        return op is not None and self._command_at(self._skipped(at + len(op), JS_WHITESPACE))

    def _command_at(self, at: int) -> bool:
        """Tells whether a command starts at `at`: `/name` as a word of its own, or a word that starts one."""
        if at < len(self.text) and self.text[at] == "/":
            name = _NAME.match(self.text, at + 1)
            return name is not None and self._name_ends(name.end())
        return _shell_at(self.text, at) or any(self._word_at(at, word) for word in STARTERS)

    def _closes_after(self, at: int) -> bool:
        """Tells whether a `;` at `at` ends a command inside a compound one (where bash reads every `;`), written on
        the word before it too: before the word that closes what is open (`/check; do`) or before a command.
        Outside one, a `;` keeps the reference's reading of `&&`: after whitespace, before `/name`."""
        if self.text[at] != ";" or self.closer is None:
            return False
        after = self._skipped(at + 1, JS_WHITESPACE)
        return self._word_at(after, self.closer) or self._command_at(after)

    def _loop(self, until: bool) -> Loop:
        self.at += 5
        self._skip(newlines=True)
        condition = self._list("do")
        self._expect("do")
        self.loops += 1
        body = self._body()
        self.loops -= 1
        return Loop(until, condition, body)

    def _for(self) -> For:
        self.at += 3
        self._skip()
        name = _VARIABLE.match(self.text, self.at)
        if name is None:
            raise _Refused(f"for takes a name, not {self._seen()}", self.at)
        self.at = name.end()
        self._skip()
        self._expect("in")
        words: list[str] = []
        while True:
            self._skip()
            if self.at == len(self.text) or not self._word_char(self.at):
                break
            end = self.at
            while end < len(self.text) and self._word_char(end):
                end += 1
            words.append(self.text[self.at : end])
            self.at = end
        if not self._separator():
            raise _Refused("for's words end with ; or a new line before do", self.at)
        self._expect("do")
        self.loops += 1
        body = self._body()
        self.loops -= 1
        return For(name[0], tuple(words), body)

    def _word_char(self, at: int) -> bool:
        c = self.text[at]
        return c not in JS_WHITESPACE and c != ";"

    def _body(self) -> Node:
        self._skip(newlines=True)
        body = self._list("done")
        self._expect("done")
        return body

    def _group(self) -> Group:
        self.at += 1
        self._skip(newlines=True)
        body = self._list("}")
        self._expect("}")
        return Group(body)

    def _jump(self, word: str) -> Node:
        at = self.at
        if self.loops == 0:
            raise _Refused(f"{word} is not inside a loop", at)
        self.at += len(word)
        self._skip()
        levels = 1
        number = _NUMBER.match(self.text, self.at)
        if number is not None and self._ends(number.end()):
            levels = int(number[0])
            self.at = number.end()
        return Break(levels) if word == "break" else Continue(levels)

    def _sleep(self) -> Sleep:
        self.at += 5
        self._skip()
        duration = _DURATION.match(self.text, self.at)
        if duration is None or not self._ends(duration.end()):
            raise _Refused(f"sleep takes a duration such as 30s, 5m or 1h, not {self._seen()}", self.at)
        seconds = int(duration[1]) * _UNITS[duration[2]]
        if not 0 < seconds <= MAX_SLEEP:
            raise _Refused(f"sleep takes from 1 second to {MAX_SLEEP // 3600} hours", self.at)
        self.at = duration.end()
        return Sleep(seconds, duration[0])

    # The text

    def _expect(self, word: str) -> None:
        self._skip(newlines=True)
        if not self._word_at(self.at, word):
            raise _Refused(f"{word} was expected, not {self._seen()}", self.at)
        self.at += len(word)

    def _word_at(self, at: int, word: str) -> bool:
        return self.text.startswith(word, at) and self._ends(at + len(word))

    def _ends(self, at: int) -> bool:
        text = self.text
        return at == len(text) or text[at] in JS_WHITESPACE or text[at] == ";"

    def _skip(self, newlines: bool = False) -> None:
        self.at = self._skipped(self.at, JS_WHITESPACE if newlines else self.blank)

    def _skipped(self, at: int, spaces: str) -> int:
        while at < len(self.text) and self.text[at] in spaces:
            at += 1
        return at

    def _seen(self) -> str:
        if self.at >= len(self.text):
            return "the end"
        word = self.text[self.at :].split(maxsplit=1)[0] if self.text[self.at :].strip() else self.text[self.at]
        return repr(word[:40])
