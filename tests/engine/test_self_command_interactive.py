"""The self-command plugin in the real, interactive Claude Code 2.1.328 (tmux), offline, against a scripted model.

Each test types one prompt into a fresh session whose environment says what lich would (LICH_SESSION_ID,
LICH_BIN, LICH_PROMPT_LANG), lets the scripted model call the Skill tool or lich's control_session (a stub
`lich` MCP server), and reads what came back: the requests the model server got (tool descriptions, tool
results, the hook's context note), the session's transcript (compact boundary, commands that ran, plugin
lines), the settings files, the helper process, and how the fake `lich` was run.

Measured on 2.1.328 while writing these (the docstrings of the tests say which one proves what):

- A hook's `context` reaches the model as a message of role `system` right after the tool_result, text
  `tool.call hook additional context: <note>`; the transcript keeps it as a `hook_additional_context` attachment.
- lich's control_session (an MCP tool) is deferred behind ToolSearch: it is not in the first request's tool
  list, yet a tool_use naming it runs it. `ToolSearch {"query": "select:<name>"}` puts it in the next
  request's tools (`defer_loading: true`), with the description the mod drew.
- In the default permission mode (auto) an MCP tool call waits on a server-side safety check that an offline
  session cannot reach ("Auto mode can't check actions in this session"): the tests allow the tool with
  `--allowedTools`. The Skill tool needs no such check.
- `/model opus` and `/effort high`, run by a plugin's `$.command.run` (and typed by a person alike), are saved
  in `$CLAUDE_CONFIG_DIR/settings.json` as `model` and `modelSettings.<model id>.effortLevel` ("saved as your
  default for new sessions"). Typed mid-conversation, /model first asks "Switch model?".
- A command that ran leaves a user entry `<command-name>/x</command-name> … <command-args>…</command-args>` in
  the transcript; the `queue-operation` enqueue entries carry the command's text only sometimes.
- A queued /compact was enqueued ~60 ms after the asking turn's `turn_duration` entry, and compacted (one
  `summary` request, a `compact_boundary` with `trigger: manual`) ~100-300 ms later.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from slashkit.adapters.bridge.shim import START_TIMEOUT_MS
from slashkit.adapters.claude_code.plugins import plugin_dir
from slashkit.core import texts
from slashkit.core.chain import Step
from slashkit.core.texts import CATALOGS, Key
from tests.support import lich_mcp_stub
from tests.support.claude_cli import Isolation, JsonObject, cli_available, single_module_plugin, validate
from tests.support.fake_lich import WHOAMI, FakeLich, Mode, write_fake_lich
from tests.support.model_server import ModelServer, RecordedRequest, Turn, text, tool_use
from tests.support.tmux_claude import TMUX, TmuxClaude, TranscriptPredicate, system_texts

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed"),
    pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed"),
]

SKILL: Final = "Skill"
CONTROL: Final = "mcp__lich__control_session"
SESSION_ID: Final = WHOAMI["id"]
LABEL: Final = WHOAMI["label"]
NAME: Final = WHOAMI["name"]
PEER: Final = {"id": "lich-2", "label": "auth-fix", "name": "lich-plugin-c3d4"}
STUB: Final = Path(lich_mcp_stub.__file__).resolve()

EN: Final = CATALOGS["en"]
PT: Final = CATALOGS["pt-BR"]
#: The Skill tool's own refusal of a built-in (2.1.328).
NATIVE_REFUSAL: Final = "compact is a built-in CLI command, not a skill"
CONTROL_QUEUED_COMPACT: Final = "/compact is queued on this session and runs once this turn ends. End the turn now."
#: Where the engine puts a tool.call hook's `context` (2.1.328).
CONTEXT_PREFIX: Final = "tool.call hook additional context: "
COMMAND: Final = re.compile(
    r"<command-name>(?P<name>/[^<]*)</command-name>[\s\S]*?<command-args>(?P<args>[^<]*)</command-args>"
)
UNAVAILABLE_LINE: Final = "self-command: unavailable: "

#: Bounded waits: a session is ready in ~1 s and a scripted turn with a compact ends in ~2 s (2.1.328).
TURN_TIMEOUT: Final = 30.0
#: How long a test that expects nothing to run waits after the turn ended: a queued /compact was enqueued
#: ~60 ms after the turn's end and compacted ~100 ms later (2.1.328).
QUIET: Final = 2.5


# --- setup -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The self-command plugin, laid out with this interpreter, validated by the CLI."""
    folder = plugin_dir("self-command", tmp_path_factory.mktemp("marketplace"))
    checked = validate(folder)
    assert checked.ok, checked.describe()
    return folder


@pytest.fixture(scope="module")
def chain_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slash-chain plugin beside it, as a person who loaded both has it."""
    return plugin_dir("slash-chain", tmp_path_factory.mktemp("chain-marketplace"))


@pytest.fixture(scope="module")
def broken_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin laid out with an interpreter that does not exist: its helper can never start."""
    return plugin_dir("self-command", tmp_path_factory.mktemp("broken-marketplace"), python="/nonexistent/python")


#: A plugin of the test's own that runs any command from a timer, as the self-command plugin would queue one:
#: `/probe-run model opus`. It shows where a /model or /effort run by a plugin lands. A word `AND` in its args
#: becomes `&&`, so it can run a chain the person's typed text does not hold.
PROBE_MOD: Final = """\
import type { Register } from 'claude-code'

export const register: Register = on => {
  on('session.start', async ($, e, next) => {
    const started = await next(e)
    await $.command.register({ name: 'probe-run', description: 'Runs a command from a timer (slashkit test)' })
    return started
  })
  on('command.run', { command: 'probe-run' }, async ($, e) => {
    const [command = '', ...rest] = e.args.trim().replace(/\\bAND\\b/g, '&&').split(/\\s+/)
    $.clock.after(0, () => {
      void $.command.run({ command, args: rest.join(' ') }).then(
        () => $.ui.log(`ran /${command}`),
        err => $.ui.log(`/${command} failed: ${String(err)}`),
      )
    })
    return { text: `queued /${command}` }
  })
}
"""


@pytest.fixture(scope="module")
def probe_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return single_module_plugin(tmp_path_factory.mktemp("probe-run"), "probe-run", PROBE_MOD)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@dataclass(frozen=True)
class LichStub:
    """The stub `lich` MCP server, as registered with `--mcp-config`, and the log of the calls it got."""

    config: Path
    log: Path

    def calls(self) -> list[JsonObject]:
        if not self.log.exists():
            return []
        return [json.loads(line)["arguments"] for line in self.log.read_text().splitlines() if line.strip()]


def lich_stub(folder: Path) -> LichStub:
    """Writes the roster (this session is lich-1, `fix/x`, `lich-plugin-a1b2`, as the fake whoami says) and the
    MCP config naming the server `lich`."""
    folder.mkdir(parents=True, exist_ok=True)
    roster = folder / "roster.json"
    roster.write_text(json.dumps({"self": {"id": SESSION_ID, "label": LABEL, "name": NAME}, "peer": PEER}))
    log = folder / "lich-calls.jsonl"
    config = folder / "mcp.json"
    server = {"command": sys.executable, "args": [str(STUB), str(roster), str(log)]}
    config.write_text(json.dumps({"mcpServers": {"lich": server}}))
    return LichStub(config, log)


@dataclass
class Run:
    """One interactive session and what it talks to."""

    cli: TmuxClaude
    model: ModelServer
    iso: Isolation
    project: Path

    def describe(self) -> str:
        return self.cli.describe()

    # the model's side

    def mains(self, count: int) -> list[RecordedRequest]:
        """Waits (bounded) for `count` main-loop requests and returns the first `count`."""
        try:
            self.model.wait_for(lambda rs: sum(r.kind == "main" for r in rs) >= count, timeout=TURN_TIMEOUT)
        except TimeoutError as err:
            raise AssertionError(f"{err}\n{self.describe()}") from None
        return self.model.main_requests[:count]

    # the transcript

    def entries(self) -> list[JsonObject]:
        return self.cli.transcript_entries()

    def wait_turns(self, count: int = 1) -> list[JsonObject]:
        """Waits for `count` ended turns (the transcript's `turn_duration` lines)."""
        return self.cli.wait_for_transcript(
            lambda es: sum(is_entry(e, "system", "turn_duration") for e in es) >= count,
            timeout=TURN_TIMEOUT,
            what=f"{count} ended turn(s)",
        )

    def wait_compacted(self) -> list[JsonObject]:
        return self.cli.wait_for_transcript(
            lambda es: any(is_entry(e, "system", "compact_boundary") for e in es),
            timeout=TURN_TIMEOUT,
            what="a compact boundary",
        )

    def quiet(self) -> list[JsonObject]:
        """After the turn ended, gives a queued command time to start, and returns the transcript."""
        self.wait_turns()
        time.sleep(QUIET)
        return self.entries()

    def assert_not_compacted(self) -> None:
        entries = self.quiet()
        assert not any(is_entry(e, "system", "compact_boundary") for e in entries), self.describe()
        assert not commands_run(entries), self.describe()
        assert not self.model.of_kind("summary"), self.describe()
        assert self.model.unscripted == 0, f"the model was asked for more turns than scripted\n{self.describe()}"

    # processes

    def helpers(self) -> list[int]:
        """The slashkit helpers running for the CLI (tests.support.tmux_claude)."""
        return self.cli.helpers()


@contextlib.contextmanager
def session(
    tmp_path: Path,
    project: Path,
    plugin: Path | Sequence[Path],
    script: Sequence[Turn],
    *,
    env: Mapping[str, str],
    stub: LichStub | None = None,
) -> Iterator[Run]:
    """A fresh interactive CLI with the plugin (and lich's MCP stub, allowed without a prompt, when given)."""
    iso = Isolation.create(tmp_path)
    with ModelServer(script) as model:
        cli = TmuxClaude(
            cwd=project,
            isolation=iso,
            model=model,
            plugin_dirs=[plugin] if isinstance(plugin, Path) else list(plugin),
            mcp_configs=[stub.config] if stub else [],
            extra_env=dict(env),
            args=["--allowedTools", CONTROL] if stub else [],
            lifetime=180,
        )
        try:
            with cli:
                yield Run(cli, model, iso, project)
        finally:
            iso.cleanup()


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# --- reading requests and transcripts ----------------------------------------------------------------


def is_entry(entry: JsonObject, type_: str, subtype: str) -> bool:
    return entry.get("type") == type_ and entry.get("subtype") == subtype


def commands_run(entries: Sequence[JsonObject]) -> list[str]:
    """The slash commands that ran in the session, as `/name args`: the user entries the engine writes for a
    command (`<command-name>/compact</command-name> … <command-args></command-args>`)."""
    ran = []
    for e in entries:
        content = (e.get("message") or {}).get("content") if e.get("type") == "user" else None
        found = COMMAND.search(content) if isinstance(content, str) else None
        if found is not None:
            ran.append(" ".join(part for part in (found["name"], found["args"].strip()) if part))
    return ran


def logged(line: str) -> TranscriptPredicate:
    """A transcript predicate: a plugin's `$.ui.log` line (a system entry `<plugin>: <text>`) is there."""
    return lambda entries: line in system_texts(entries)


def description(request: RecordedRequest, tool: str) -> str:
    found = request.tool(tool)
    assert found is not None, f"{tool} is not in the request's tools: {request.tool_names}"
    return str(found.get("description"))


def result_of(request: RecordedRequest, index: int = -1) -> JsonObject:
    """A tool_result block the request carries (the last by default)."""
    results = request.tool_results()
    assert results, f"the request carries no tool_result: {request.last_user_text()[:500]}"
    return results[index]


def result_text(block: JsonObject) -> str:
    content: Any = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def messages_after_result(request: RecordedRequest) -> list[JsonObject]:
    """The messages after the one holding the last tool_result: where the engine puts a hook's context."""
    messages = request.messages
    last = max(
        i
        for i, m in enumerate(messages)
        if isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
    )
    return messages[last + 1 :]


def flat(message: JsonObject) -> str:
    content: Any = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text")) for b in content or [] if isinstance(b, dict) and "text" in b)


def settings_paths(run: Run) -> list[Path]:
    """The settings files the CLI reads and writes: user (`$CLAUDE_CONFIG_DIR`, which is `$HOME/.claude` here)
    and project (`.claude/settings*.json`)."""
    return [
        run.iso.config_dir / "settings.json",
        run.iso.config_dir / "settings.local.json",
        run.iso.home / ".claude" / "settings.json",
        run.project / ".claude" / "settings.json",
        run.project / ".claude" / "settings.local.json",
    ]


def model_settings(run: Run) -> dict[str, object]:
    """Every `model`/`modelSettings`/`effortLevel` key in the settings files."""
    found: dict[str, object] = {}

    def walk(where: str, value: object) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in ("model", "modelSettings", "effortLevel"):
                    found[f"{where}:{key}"] = inner
                walk(where, inner)

    for path in settings_paths(run):
        if path.exists():
            walk(str(path), json.loads(path.read_text() or "{}"))
    return found


def settings_files(run: Run) -> dict[str, str]:
    """Every settings file, by path, as it is now."""
    return {str(path): path.read_text() for path in settings_paths(run) if path.exists()}


def skill(name: str, args: str | None = None) -> Turn:
    return tool_use(SKILL, {"skill": name} if args is None else {"skill": name, "args": args})


def control(target: str, value: str, args: str | None = None) -> Turn:
    arguments = {"session": target, "action": "command", "value": value}
    return tool_use(CONTROL, arguments if args is None else {**arguments, "args": args})


SEARCH_CONTROL: Final = tool_use("ToolSearch", {"query": f"select:{CONTROL}", "max_results": 1})


def lich_env(fake: FakeLich | None = None, lang: str | None = None) -> dict[str, str]:
    env = {"LICH_SESSION_ID": SESSION_ID}
    if fake is not None:
        env["LICH_BIN"] = str(fake.path)
    if lang is not None:
        env["LICH_PROMPT_LANG"] = lang
    return env


# --- the Skill tool ----------------------------------------------------------------------------------


def test_a_built_in_named_to_the_skill_tool_is_queued_and_compacts_once_the_turn_ends(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """The user says "run /compact": Skill(compact) is answered as a loaded skill with the queued note, the model
    ends its turn, and then /compact runs: a compact boundary, and the summary request after the last main turn."""
    script = [skill("compact"), text("Compacting once this turn ends.")]
    with session(tmp_path, project, plugin, script, env=lich_env()) as run:
        run.cli.send("run /compact")
        first, second = run.mains(2)
        entries = run.wait_compacted()

        assert description(first, SKILL).endswith("\n\n" + EN[Key.SKILL_NOTE]), run.describe()
        answer = result_of(second)
        assert result_text(answer) == "Launching skill: compact", run.describe()
        assert answer.get("is_error") is not True, run.describe()
        note = EN[Key.SKILL_QUEUED].format(queued="/compact")
        assert note == "/compact is queued and runs once this turn ends. End the turn now."
        assert [flat(m) for m in messages_after_result(second)] == [CONTEXT_PREFIX + note], run.describe()
        assert [m.get("role") for m in messages_after_result(second)] == ["system"], run.describe()

        summaries = run.model.of_kind("summary")
        assert summaries, run.describe()
        assert summaries[0].at > second.at, "the summary was asked for before the turn ended"
        assert len(run.model.main_requests) == 2, run.describe()
        assert commands_run(entries) == ["/compact"], run.describe()
        boundary = next(e for e in entries if is_entry(e, "system", "compact_boundary"))
        assert boundary["compactMetadata"]["trigger"] == "manual", boundary
        skill_results = [e for e in entries if e.get("type") == "user" and "toolUseResult" in e]
        assert [e["toolUseResult"] for e in skill_results] == [{"success": True, "commandName": "compact"}]
        assert len(run.helpers()) == 1, f"one helper runs inside lich: {run.helpers()}\n{run.describe()}"


def test_model_and_effort_are_denied_on_both_paths_and_nothing_is_saved(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """Skill(model, opus) and control_session(this session, /effort high) get the deny text as an error
    tool_result; no settings file gains a model or effort, the model and effort of the requests stay, no
    command is queued. Also: control_session's description (after ToolSearch) names this session's id."""
    stub = lich_stub(tmp_path / "lich")
    script = [SEARCH_CONTROL, skill("model", "opus"), control(SESSION_ID, "/effort", "high"), text("Neither ran.")]
    with session(tmp_path, project, plugin, script, env=lich_env(), stub=stub) as run:
        before = model_settings(run)
        run.cli.send("switch to opus at high effort")
        requests = run.mains(4)
        run.assert_not_compacted()

        assert before == {}, before
        assert model_settings(run) == {}, run.describe()
        searched, after_model, after_effort = requests[1], requests[2], requests[3]
        control_note = EN[Key.CONTROL_NOTE].format(session_id=SESSION_ID)
        assert description(searched, CONTROL) == lich_mcp_stub.DESCRIPTION + "\n\n" + control_note, run.describe()
        for request, name in ((after_model, "model"), (after_effort, "effort")):
            answer = result_of(request)
            deny = EN[Key.DENY_DEFAULT_SAVED].format(name=name)
            assert answer.get("is_error") is True, run.describe()
            assert result_text(answer) == f"<tool_use_error>{deny}</tool_use_error>", run.describe()
            assert f"/{name} was not run" in deny
        assert stub.calls() == [{"session": SESSION_ID, "action": "command", "value": "/effort", "args": "high"}]
        bodies = [r.body or {} for r in requests]
        assert {b.get("model") for b in bodies} == {bodies[0].get("model")}, run.describe()
        assert {json.dumps(b.get("output_config")) for b in bodies} == {json.dumps(bodies[0].get("output_config"))}


def test_a_model_and_effort_run_by_a_plugin_are_saved_where_the_deny_test_looks(
    tmp_path: Path, project: Path, probe_plugin: Path
) -> None:
    """The control for the test above, and why the mod denies: a plugin's `$.command.run` of /model or
    /effort saves them in the user settings, as the default for every new session."""
    with session(tmp_path, project, probe_plugin, [], env={}) as run:
        assert model_settings(run) == {}
        for typed, line in (("/probe-run model opus", "ran /model"), ("/probe-run effort high", "ran /effort")):
            run.cli.send(typed)
            run.cli.wait_for_transcript(logged(f"probe-run: {line}"), timeout=TURN_TIMEOUT, what=repr(line))
        saved = model_settings(run)
        where = str(run.iso.config_dir / "settings.json")
        assert saved.get(f"{where}:model") == "opus", f"{saved}\n{run.describe()}"
        assert saved.get(f"{where}:effortLevel") == "high", f"{saved}\n{run.describe()}"
        assert commands_run(run.entries()) == ["/model opus", "/effort high"], run.describe()


def test_outside_lich_the_skill_tool_refuses_a_built_in_untouched_and_no_helper_starts(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """No LICH_SESSION_ID: the descriptions are the engine's and lich's own, Skill(compact) gets the engine's
    refusal, nothing compacts, and no Python helper runs."""
    stub = lich_stub(tmp_path / "lich")
    script = [SEARCH_CONTROL, skill("compact"), text("You can run /compact yourself.")]
    with session(tmp_path, project, plugin, script, env={}, stub=stub) as run:
        run.cli.send("run /compact")
        first, searched, refused = run.mains(3)
        run.assert_not_compacted()

        assert "[lich]" not in description(first, SKILL), run.describe()
        assert description(searched, CONTROL) == lich_mcp_stub.DESCRIPTION, run.describe()
        answer = result_of(refused)
        assert answer.get("is_error") is True, run.describe()
        assert NATIVE_REFUSAL in result_text(answer), run.describe()
        assert not any(CONTEXT_PREFIX in flat(m) for m in messages_after_result(refused)), run.describe()
        assert run.helpers() == [], run.describe()


def test_the_notes_and_the_queued_answer_follow_lich_prompt_lang(tmp_path: Path, project: Path, plugin: Path) -> None:
    """LICH_PROMPT_LANG=pt-BR: both descriptions carry the Portuguese notes, and the queued note too."""
    stub = lich_stub(tmp_path / "lich")
    script = [SEARCH_CONTROL, skill("compact"), text("Compactando ao fim do turno.")]
    with session(tmp_path, project, plugin, script, env=lich_env(lang="pt-BR"), stub=stub) as run:
        run.cli.send("roda /compact pra mim")
        first, searched, answered = run.mains(3)
        run.wait_compacted()

        assert description(first, SKILL).endswith("\n\n" + PT[Key.SKILL_NOTE]), run.describe()
        control_note = PT[Key.CONTROL_NOTE].format(session_id=SESSION_ID)
        assert description(searched, CONTROL) == lich_mcp_stub.DESCRIPTION + "\n\n" + control_note, run.describe()
        note = PT[Key.SKILL_QUEUED].format(queued="/compact")
        assert [flat(m) for m in messages_after_result(answered)] == [CONTEXT_PREFIX + note], run.describe()


# --- lich's control_session --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "whoami_runs"),
    [(SESSION_ID, 0), (LABEL, 1), (NAME.upper(), 1)],
    ids=["by-id", "by-label", "by-name-in-another-case"],
)
def test_lichs_refusal_of_a_command_aimed_at_this_session_is_queued(
    tmp_path: Path, project: Path, plugin: Path, target: str, whoami_runs: int
) -> None:
    """lich refuses the self-target; the mod takes the refusal (asking whoami only when the id was not named)
    and answers it as queued, then /compact runs."""
    stub = lich_stub(tmp_path / "lich")
    fake = write_fake_lich(tmp_path / "lich", "answer")
    script = [control(target, "compact"), text("It runs once this turn ends.")]
    with session(tmp_path, project, plugin, script, env=lich_env(fake), stub=stub) as run:
        run.cli.send("run /compact on yourself")
        _, answered = run.mains(2)
        entries = run.wait_compacted()

        assert stub.calls() == [{"session": target, "action": "command", "value": "compact"}], run.describe()
        answer = result_of(answered)
        assert answer.get("is_error") is not True, run.describe()
        assert result_text(answer) == EN[Key.CONTROL_QUEUED].format(queued="/compact") == CONTROL_QUEUED_COMPACT
        assert commands_run(entries) == ["/compact"], run.describe()
        assert run.model.of_kind("summary"), run.describe()
        runs = fake.invocations()
        assert len(runs) == whoami_runs, runs
        assert all(r.argv[1:] == ("whoami", "--json") for r in runs), runs


def test_a_command_for_a_peer_stays_lichs(tmp_path: Path, project: Path, plugin: Path) -> None:
    """A peer target: lich's success text reaches the model untouched, whoami never runs, nothing compacts."""
    stub = lich_stub(tmp_path / "lich")
    fake = write_fake_lich(tmp_path / "lich", "answer")
    script = [control(PEER["label"], "compact"), text("The peer compacted.")]
    with session(tmp_path, project, plugin, script, env=lich_env(fake), stub=stub) as run:
        run.cli.send("compact the auth-fix session")
        _, answered = run.mains(2)
        run.assert_not_compacted()

        answer = result_of(answered)
        assert answer.get("is_error") is not True, run.describe()
        assert result_text(answer) == f'"{PEER["label"]}" ran /compact.', run.describe()
        assert fake.invocations() == [], fake.invocations()


@pytest.mark.parametrize("mode", ["unknown-command", "hang"])
def test_when_whoami_fails_a_label_target_keeps_lichs_refusal(
    tmp_path: Path, project: Path, plugin: Path, mode: Mode
) -> None:
    """An older lich (no whoami) or one that does not answer within whoami's 2 s: only the id names this
    session, so lich's self-refusal of the label stays, and the helper answered in time (no unavailable line)."""
    stub = lich_stub(tmp_path / "lich")
    fake = write_fake_lich(tmp_path / "lich", mode)
    script = [control(LABEL, "compact"), text("lich refused.")]
    with session(tmp_path, project, plugin, script, env=lich_env(fake), stub=stub) as run:
        run.cli.send("run /compact on yourself")
        _, answered = run.mains(2)
        run.assert_not_compacted()

        answer = result_of(answered)
        assert answer.get("is_error") is True, run.describe()
        refusal = lich_mcp_stub.SELF_REFUSAL.format(label=LABEL)
        assert refusal in result_text(answer), run.describe()
        assert "queued" not in result_text(answer), run.describe()
        assert len(fake.invocations()) == 1, fake.invocations()
        assert stub.calls() == [{"session": LABEL, "action": "command", "value": "compact"}], run.describe()
        assert not [t for t in system_texts(run.entries()) if t.startswith(UNAVAILABLE_LINE)], run.describe()
        left = [pid for r in fake.invocations() for pid in r.pids if alive(pid)]
        assert left == [], f"whoami left {left} running"


# --- fail-safe ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ended:
    """What a finished session left: the main requests, the transcript, the turn's length, the diagnostics."""

    requests: list[RecordedRequest]
    entries: list[JsonObject]
    turn_ms: int
    helpers: list[int]
    described: str


@pytest.fixture(scope="module")
def without_helper(tmp_path_factory: pytest.TempPathFactory, broken_plugin: Path) -> Ended:
    """Inside lich, "run /compact" with a plugin whose helper cannot start (its interpreter does not exist)."""
    tmp = tmp_path_factory.mktemp("without-helper")
    project = tmp / "project"
    project.mkdir()
    script = [skill("compact"), text("You can run /compact yourself.")]
    with session(tmp, project, broken_plugin, script, env=lich_env()) as run:
        run.cli.send("run /compact")
        requests = run.mains(2)
        run.assert_not_compacted()
        entries = run.entries()
        turns = [int(e["durationMs"]) for e in entries if is_entry(e, "system", "turn_duration")]
        return Ended(requests, entries, turns[0], run.helpers(), run.describe())


def unavailable_lines(ended: Ended) -> list[str]:
    return [t for t in system_texts(ended.entries) if t.startswith(UNAVAILABLE_LINE)]


def test_a_helper_that_cannot_start_leaves_the_native_answers_and_says_so_once(without_helper: Ended) -> None:
    """The Skill tool's own refusal reaches the model, the turn ends without waiting out a timeout, and the
    transcript holds one `self-command: unavailable: …` line."""
    first, refused = without_helper.requests
    assert "[lich]" not in description(first, SKILL), without_helper.described
    answer = result_of(refused)
    assert answer.get("is_error") is True, without_helper.described
    assert NATIVE_REFUSAL in result_text(answer), without_helper.described
    assert without_helper.turn_ms < START_TIMEOUT_MS, f"the turn took {without_helper.turn_ms} ms"
    assert without_helper.helpers == [], without_helper.described
    lines = unavailable_lines(without_helper)
    assert len(lines) == 1, f"{lines}\n{without_helper.described}"
    assert "the helper did not start: " in lines[0], lines
    assert lines[0].endswith("; tool answers reach the model as the engine gave them"), lines


def test_the_unavailable_line_names_the_plugin_once(without_helper: Ended) -> None:
    """The engine puts `self-command: ` in front of the failed `$.process.spawn`'s message and again in front of
    the logged line; bridge.ts strips the inner one only when it leads `why`, and here it follows
    `the helper did not start: `."""
    lines = unavailable_lines(without_helper)
    assert len(lines) == 1, f"{lines}\n{without_helper.described}"
    assert lines[0].count("self-command: ") == 1, f"the plugin is named twice in {lines[0]!r}"


def test_a_terminal_hangup_ends_a_helper_of_the_sessions_own_without_leaving_its_socket_folder(
    tmp_path: Path, project: Path, plugin: Path
) -> None:
    """With a helper per session (SLASHKIT_HELPER=session): lich closing a session's terminal is a hangup, and the
    CLI and the helper (in its process group) get SIGHUP. The helper cleans its socket folder on SIGTERM (a /exit)
    and when its parent dies, but SIGHUP kills it first, and `slashkit-*` stays in TMPDIR (a /exit leaves none).
    The shared helper has a session of its own and no terminal: the hangup never reaches it."""
    with session(tmp_path, project, plugin, [text("Hello.")], env={**lich_env(), "SLASHKIT_HELPER": "session"}) as run:
        run.cli.send("hello")
        run.wait_turns()
        helpers = run.helpers()
        assert len(helpers) == 1, run.describe()
        folders = list(run.iso.tmp.glob("slashkit-*"))
        assert len(folders) == 1, folders
        run.cli.close()  # tmux kill-server: the pane's terminal hangs up
        deadline = time.monotonic() + 5
        while (any(alive(p) for p in helpers) or folders[0].exists()) and time.monotonic() < deadline:
            time.sleep(0.1)
        ended = [line for line in run.cli.debug_log().splitlines() if "$.process.spawn (self-command)" in line]
        assert not any(alive(p) for p in helpers), ended
        assert not folders[0].exists(), f"{folders[0]} is left behind; the helper: {ended[-1:]}"


# --- the refusal rule across both plugins (issue 7's attack) ------------------------------------------------


def chain_lines(entries: Sequence[JsonObject]) -> list[str]:
    return [t.removeprefix("slash-chain: ") for t in system_texts(entries) if t.startswith("slash-chain: ")]


def test_a_chain_hidden_in_a_queued_commands_args_is_denied_and_nothing_runs(
    tmp_path: Path, project: Path, plugin: Path, chain_plugin: Path
) -> None:
    """Both plugins loaded, inside lich: the model names `context` to the Skill tool with `&& /effort high &&
    /model opus` as its args. Only the person chains commands: the call is denied with the text that says so,
    nothing is queued, no chain starts, nothing is saved."""
    script = [skill("context", "&& /effort high && /model opus"), text("Denied.")]
    with session(tmp_path, project, [plugin, chain_plugin], script, env=lich_env()) as run:
        run.cli.send("show me the context")
        _, after = run.mains(2)
        entries = run.quiet()
        answer = result_of(after)
        deny = EN[Key.DENY_CHAINED].format(name="context")
        assert answer.get("is_error") is True, run.describe()
        assert result_text(answer) == f"<tool_use_error>{deny}</tool_use_error>", run.describe()
        assert chain_lines(entries) == [], run.describe()
        assert commands_run(entries) == [], run.describe()
        assert model_settings(run) == {}, run.describe()


@pytest.mark.parametrize("call", ["skill", "tool"])
def test_with_both_plugins_inside_lich_one_call_queues_one_compact(
    tmp_path: Path, project: Path, plugin: Path, chain_plugin: Path, call: str
) -> None:
    """Both plugins loaded inside lich, each with its helper: Skill(compact) is the self-command plugin's (its
    note in lich's language: the slash-chain plugin stands aside), and the slash-chain plugin's own tool is its
    alone. Either way /compact runs once: one command row, one compact boundary, one summary request."""
    turn = skill("compact") if call == "skill" else tool_use(texts.BUILTIN_TOOL_ID, {"command": "compact"})
    env = lich_env(lang="pt-BR")
    with session(tmp_path, project, [plugin, chain_plugin], [turn, text("Compacting.")], env=env) as run:
        run.cli.send("run /compact")
        _, after = run.mains(2)
        run.wait_compacted()
        if call == "skill":
            note = PT[Key.SKILL_QUEUED].format(queued="/compact")
            assert [flat(m) for m in messages_after_result(after)] == [CONTEXT_PREFIX + note], run.describe()
        entries = run.quiet()
        assert commands_run(entries) == ["/compact"], run.describe()
        assert sum(is_entry(e, "system", "compact_boundary") for e in entries) == 1, run.describe()
        assert len(run.model.of_kind("summary")) == 1, run.describe()


def test_config_is_denied_on_both_paths_and_no_setting_changes(tmp_path: Path, project: Path, plugin: Path) -> None:
    """Issue 16's H1 inside lich: Skill(config, `model=opus`) and control_session(this session, `/config
    model=opus permissionMode=acceptEdits`) would save the model and raise the permission mode for every future
    session. Both are denied with the text that names /config and says only the user may run it; no settings
    file changes, no command runs. The control test below shows /config run by a plugin does save them."""
    stub = lich_stub(tmp_path / "lich")
    script = [
        SEARCH_CONTROL,
        skill("config", "model=opus"),
        control(SESSION_ID, "/config", "model=opus permissionMode=acceptEdits"),
        text("Neither ran."),
    ]
    with session(tmp_path, project, plugin, script, env=lich_env(), stub=stub) as run:
        before = settings_files(run)
        run.cli.send("switch to opus and stop asking me for edits")
        requests = run.mains(4)
        entries = run.quiet()

        deny = EN[Key.DENY_NOT_ALLOWED].format(name="config")
        for request in requests[2:]:
            answer = result_of(request)
            assert answer.get("is_error") is True, run.describe()
            assert result_text(answer) == f"<tool_use_error>{deny}</tool_use_error>", run.describe()
        assert settings_files(run) == before, run.describe()
        assert commands_run(entries) == [], run.describe()


def test_config_run_by_a_plugin_saves_the_model_and_permission_mode(
    tmp_path: Path, project: Path, probe_plugin: Path
) -> None:
    """The control for the test above: a plugin's `$.command.run` of `/config model=opus
    permissionMode=acceptEdits` writes both into the user's settings (measured on 2.1.328)."""
    with session(tmp_path, project, probe_plugin, [], env={}) as run:
        before = settings_files(run)
        run.cli.send("/probe-run config model=opus permissionMode=acceptEdits")
        run.cli.wait_for_transcript(logged("probe-run: ran /config"), timeout=TURN_TIMEOUT, what="ran /config")
        time.sleep(QUIET)
        after = settings_files(run)
        assert after != before, run.describe()
        saved = json.loads(after.get(str(run.iso.config_dir / "settings.json"), "{}"))
        assert saved.get("model") == "opus", f"{after}\n{run.describe()}"
        assert saved.get("permissions", {}).get("defaultMode") == "acceptEdits", f"{after}\n{run.describe()}"


def test_another_plugins_command_run_never_runs_model_or_effort_through_a_chain(
    tmp_path: Path, project: Path, probe_plugin: Path, chain_plugin: Path
) -> None:
    """Another plugin runs `/context && /model opus` and `/model opus && /effort high && /context` with
    `$.command.run`: slash-chain's matcher hears both (origin `plugin`); /context runs both times, /model and
    /effort never do (the typed /model is answered with the refusal), and no settings file changes."""
    with session(tmp_path, project, [probe_plugin, chain_plugin], [], env={}) as run:
        run.cli.send("/probe-run context AND /model opus")
        first_end = "slash-chain: " + texts.ended_text(1, 0, 1)
        run.cli.wait_for_transcript(logged(first_end), timeout=TURN_TIMEOUT, what=repr(first_end))
        run.cli.send("/probe-run model opus AND /effort high AND /context")
        second_end = "slash-chain: " + texts.ended_text(1, 0, 2)
        entries = run.cli.wait_for_transcript(logged(second_end), timeout=TURN_TIMEOUT, what=repr(second_end))
        time.sleep(QUIET)
        lines = chain_lines(entries)
        for index, total, step in ((2, 2, Step("model", "opus")), (1, 3, Step("model", "opus"))):
            assert texts.skipped_text(index, total, step, texts.refused_why(step, "plugin")) in lines, run.describe()
        effort = Step("effort", "high")
        assert texts.skipped_text(2, 3, effort, texts.refused_why(effort, "plugin")) in lines, run.describe()
        # The engine records the typed /model's row (measured on 2.1.328: with empty args), then slash-chain's
        # answer in its place; /effort never got as far as a row.
        ran = commands_run(run.entries())
        assert "/model opus" not in ran and not any(c.startswith("/effort") for c in ran), ran
        refusal = texts.refused_text(Step("model", "opus"), "plugin")
        outputs = [str(e.get("content")) for e in run.entries() if is_entry(e, "system", "local_command")]
        assert any(f"slash-chain: {refusal}" in out for out in outputs), f"{outputs}\n{run.describe()}"
        assert model_settings(run) == {}, run.describe()
