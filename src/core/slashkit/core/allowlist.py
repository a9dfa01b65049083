"""The built-ins each host version has, and the few of them anyone but the person may run, each with why it is
safe: it changes nothing the person set and reaches nothing new. Measured, never guessed; a built-in a later
version adds is on no list here, and a host that lists its commands (`Rule.knowing`) has it refused until it is
measured and added. `slashkit.core.policy` applies these."""

from collections.abc import Mapping
from typing import Final

from attrs import frozen


@frozen
class Allowlist:
    """One host version's built-ins (names and aliases) and the ones that are safe for anyone, with why; and whether
    a chain's step can run one there at all (`chained`: a host that runs a built-in only from the person's own
    prompt cannot, and a chain holding one is refused whole)."""

    host: str
    builtins: frozenset[str]
    safe: Mapping[str, str]
    chained: bool = True


_READS_ONLY: Final = "shows a report of the session and changes nothing"
_PROMPT: Final = (
    "a prompt-type built-in: it hands the model a prompt, and whatever the model then does goes through the "
    "person's own permissions"
)

#: Claude Code 2.1.328. The built-ins are what `get_server_info()` lists with `builtin: true` in an SDK session
#: (measured on 2.1.328 through claude-agent-sdk 0.2.184, 2026-12-01), and those only the interactive session
#: has, found by queueing each as the model and diffing every file under HOME and the project (issue 16). Among
#: what that attack found: `config` (alias `settings`) saves the model and the permission mode, `output-style`
#: writes the project's settings and the user's git ignore, `autocompact` and `auto-mode-setup` change settings,
#: `plugin marketplace add` and `mcp enable` reach new code, `export` writes a file wherever it is told.
CLAUDE_CODE: Final = Allowlist(
    host="Claude Code 2.1.328",
    builtins=frozenset(
        {
            # listed by get_server_info() in an SDK session
            *("__remote-workflow", "agents", "auto-mode-setup", "autocompact", "batch", "claude-api", "clear"),
            *("reset", "new", "code-review", "review", "color", "compact", "config", "settings", "context"),
            *("dataviz", "debug", "deep-research", "doctor", "checkup", "effort", "fast", "fewer-permission-prompts"),
            *("focus", "goal", "heapdump", "init", "insights", "list-agents", "peers", "loop", "proactive", "mcp"),
            *("model", "output-style", "plugin-authoring", "recap", "reload-plugins", "reload-skills", "rename"),
            *("name", "run", "run-skill-generator", "security-review", "simplify", "team-onboarding"),
            *("update-config", "usage", "cost", "stats", "verify", "workflow-authoring", "workflow-launch-exec"),
            # the interactive session's own, as the attack of issue 16 ran them
            *("add-dir", "background", "cd", "exit", "export", "help", "hooks", "ide", "keybindings", "login"),
            *("logout", "memory", "permissions", "plugin", "rewind", "sandbox", "theme", "tui"),
        }
    ),
    safe={
        "compact": "summarises the conversation so far in its place; no setting changes (self-commands' example)",
        "context": _READS_ONLY + " (how the context window is used)",
        "usage": _READS_ONLY + " (cost and usage)",
        "cost": _READS_ONLY + " (an alias of usage)",
        "stats": _READS_ONLY + " (an alias of usage)",
        "help": _READS_ONLY + " (the commands there are)",
        "code-review": _PROMPT,
        "review": _PROMPT + " (an alias of code-review)",
        "security-review": _PROMPT,
    },
)

#: opencode 1.18.33: the TUI's built-ins are not server commands (the server answers 500 for them, measured), so a
#: plugin runs only the ones it runs itself, and slashkit's runs `compact` alone (as the server's summarize).
OPENCODE: Final = Allowlist(
    host="opencode 1.18.33",
    builtins=frozenset({"compact"}),
    safe={"compact": "the TUI's /compact, run as the server's summarize; no setting changes"},
)

#: pi 1.6.0: the built-ins are the TUI's (`BUILTIN_SLASH_COMMANDS` in its dist/core/slash-commands.js, read on
#: 1.6.0); an extension runs only `compact` (`ctx.compact()`), so slashkit's extension runs that one alone.
PI: Final = Allowlist(
    host="pi 1.6.0",
    builtins=frozenset(
        {
            *("settings", "model", "tree", "thinking", "scoped-models", "export", "import", "share", "bug", "copy"),
            *("name", "session", "changelog", "hotkeys", "fork", "clone", "trust", "login", "logout", "new"),
            *("compact", "resume", "reload", "quit"),
        }
    ),
    safe={"compact": "pi's /compact, run through the extension API's ctx.compact(); no setting changes"},
)

#: Codex 0.169.0 (`codex app-server`): slash commands do not exist there (a typed `/compact` is text to the model),
#: so the built-ins are the app-server methods slashkit's Codex host runs for a `/name` (measured on 0.169.0,
#: docs/codex.md): `compact` (`thread/compact/start`), `review` (`review/start`, a review turn of the model) and
#: `new` (`thread/start`: the steps after it run in a fresh thread, without the conversation so far).
CODEX: Final = Allowlist(
    host="Codex 0.169.0",
    builtins=frozenset({"compact", "review", "new"}),
    safe={
        "compact": "thread/compact/start: summarises the thread so far in its place; no setting changes",
        "review": _PROMPT + " (review/start: the model reviews, under the thread's own sandbox and approvals)",
    },
)

#: Gemini CLI 0.61.0: the built-ins are its `BuiltinCommandLoader`'s (read in its npm bundle, with their aliases).
#: No hook output runs one (docs/gemini.md), so none is safe to run for anyone, and a chain holding one is refused.
GEMINI: Final = Allowlist(
    host="Gemini CLI 0.61.0",
    builtins=frozenset(
        {
            *("about", "agents", "auth", "login", "logout", "signin", "signout", "bug", "chat", "clear", "new"),
            *("commands", "compress", "summarize", "compact", "config", "copy", "corgi", "directory", "dir", "docs"),
            *("editor", "export-session", "extensions", "footer", "statusline", "help", "hooks", "ide", "init"),
            *("mcp", "memory", "model", "permissions", "plan", "policies", "privacy", "quit", "exit", "restore"),
            *("resume", "rewind", "settings", "setup-github", "shortcuts", "skills", "stats", "usage", "tasks"),
            *("bg", "background", "terminal-setup", "theme", "tools", "trust", "upgrade", "vim", "voice"),
        }
    ),
    safe={},
    chained=False,
)

#: Every host's list, by the name a shim's installer passes the helper (`--host`).
HOSTS: Final[Mapping[str, Allowlist]] = {"claude-code": CLAUDE_CODE, "opencode": OPENCODE, "pi": PI, "gemini": GEMINI}
