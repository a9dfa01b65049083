"""The Claude Code plugins checked by the pinned CLI itself, offline and isolated.

- ``claude plugin test``: the TypeScript tests in ``tests/kit`` run against each laid-out plugin, the kit
  standing in for the engine and a fake helper for Python (the kit cannot start processes). Every request
  body the plugin sent there is then read by the helper's own decoder, so the two ends agree on the wire.
- ``claude plugin validate --json``: both laid-out plugins have no error and no warning.
- The ``command.run`` matcher of the laid-out ``slash-chain`` is ``slashkit.core.chain.SEPARATOR_JS`` written in as a
  literal (``plugins.inline_separator``; the mod holds none of its own), and compiled by Node it finds the same
  separators as ``parse_chain`` and splits the same way.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

import pytest
from returns.pipeline import is_successful

from slashkit.adapters.bridge import protocol
from slashkit.adapters.claude_code import plugins
from slashkit.core import texts
from slashkit.core.chain import SEPARATOR, SEPARATOR_JS, holds_chain, parse_chain
from tests.support import claude_cli
from tests.support.kit import KIT, kit_files, lay_out_kit_tests

#: What the laid-out plugins start; no test here may start Python, so a path that does not exist.
NO_PYTHON: Final = "/nonexistent/python"
#: How many tests each plugin's kit file holds: a test that stops running (or a file that stops loading)
#: shows as a lower count. Update it with the file.
EXPECTED_TESTS: Final = {"slash-chain": 86, "self-command": 25}
#: The bridge events each plugin's kit tests make it send; together, every event of the protocol.
EXPECTED_EVENTS: Final = {
    "slash-chain": {
        "SavedAsked",
        "Continued",
        "ChainTyped",
        "LineTyped",
        "ChainCommandTyped",
        "FailCalled",
        "BuiltinAsked",
        "SkillAnswered",
        "PromptHanded",
        "PaneOpened",
        "PaneClosed",
        "TurnEnded",
        "PromptSubmitted",
        "TimerFired",
        "RunEnded",
    },
    "self-command": {
        "SessionStarted",
        "ToolDescribed",
        "SkillAnswered",
        "ControlAnswered",
        "WhoamiAnswered",
        "TimerFired",
        "RunEnded",
    },
}
KIT_TIMEOUT: Final = 240.0
#: Leads the line tests/kit/fake-helper.ts prints for each request body (WIRE_MARK there).
WIRE_MARK: Final = "slashkit-wire "

requires_cli = pytest.mark.skipif(not claude_cli.cli_available(), reason="the pinned Claude Code CLI is not installed")

_SUMMARY: Final = re.compile(r"^Ran (\d+) tests? across (\d+) files?\.", re.MULTILINE)
_COUNTS: Final = re.compile(r"^\s*(\d+) pass\s*$\s*^\s*(\d+) fail\s*$", re.MULTILINE)
_RESULT: Final = re.compile(r"^\((pass|fail|skip|todo)\) (.+?) \[[\d.]+m?s\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class KitRun:
    """One ``claude plugin test`` run, its output parsed."""

    exit_code: int | None
    output: str
    duration: float
    ran: int | None  # "Ran N tests across M files."
    files: int | None
    passed: int | None  # " N pass"
    failed: int | None  # " N fail"
    results: tuple[tuple[str, str], ...]  # ("pass" | "fail" | ..., test title) per "(pass) title [t]" line
    wire: tuple[str, ...]  # the request bodies the fake helper received, as sent

    def describe(self) -> str:
        return f"exit {self.exit_code} after {self.duration:.1f}s\n{self.output[-12000:]}"


def parse_kit_output(exit_code: int | None, output: str, duration: float, log: str = "") -> KitRun:
    """Reads the counts ``claude plugin test`` prints (measured on 2.1.328: per file a ``<file>:`` line, one
    ``(pass) <describe> > <test> [12.34ms]`` line per test, then `` N pass``, `` N fail`` and
    ``Ran N tests across M files. [1.2s]``, all on stdout). ``log`` is what the test files printed (their
    ``console.log`` reaches the CLI's stderr), where the request bodies are."""
    summary = _SUMMARY.search(output)
    counts = _COUNTS.search(output)
    return KitRun(
        exit_code=exit_code,
        output=output,
        duration=duration,
        ran=int(summary.group(1)) if summary else None,
        files=int(summary.group(2)) if summary else None,
        passed=int(counts.group(1)) if counts else None,
        failed=int(counts.group(2)) if counts else None,
        results=tuple((m.group(1), m.group(2)) for m in _RESULT.finditer(output)),
        wire=tuple(line.removeprefix(WIRE_MARK) for line in log.splitlines() if line.startswith(WIRE_MARK)),
    )


def run_kit(plugin_dir: Path, iso: claude_cli.Isolation, timeout: float = KIT_TIMEOUT) -> KitRun:
    """``claude plugin test <plugin_dir>`` with an isolated HOME, config dir and TMPDIR."""
    argv = [str(claude_cli.claude_path()), "plugin", "test", str(plugin_dir)]
    with claude_cli.model_or_private(None) as server:
        env = claude_cli.isolated_env(iso, server.url)
        started = time.monotonic()
        code, out, err, timed_out = claude_cli.run_bounded(argv, cwd=plugin_dir, env=env, timeout=timeout)
        err += f"\n[killed after {timeout:.0f}s]" if timed_out else ""
    return parse_kit_output(code, out, time.monotonic() - started, log=err + out)


@pytest.fixture
def iso(tmp_path: Path) -> Iterator[claude_cli.Isolation]:
    isolation = claude_cli.Isolation.create(tmp_path)
    yield isolation
    isolation.cleanup()


# --- claude plugin test ------------------------------------------------------------------------------


@pytest.mark.engine
@requires_cli
@pytest.mark.parametrize("plugin", plugins.PLUGINS)
def test_kit_tests_pass(plugin: str, tmp_path: Path, iso: claude_cli.Isolation) -> None:
    root = plugins.lay_out(tmp_path / "marketplace", python=NO_PYTHON)
    folder = root / "plugins" / plugin
    lay_out_kit_tests(folder, plugin, plugins.module_sources(plugin))

    run = run_kit(folder, iso)

    assert run.exit_code == 0, run.describe()
    assert run.ran is not None and run.passed is not None and run.failed is not None, run.describe()
    assert run.ran > 0, run.describe()
    assert run.files == 1, run.describe()
    assert run.failed == 0, run.describe()
    assert [status for status, _ in run.results] == ["pass"] * run.ran, run.describe()
    assert run.passed == run.ran == EXPECTED_TESTS[plugin], run.describe()

    # What the plugin sent is what the helper reads: every body decodes, and every event was exercised.
    decoded = [(body, protocol.decode(body.encode())) for body in run.wire]
    refused = [(body, result.failure()) for body, result in decoded if not is_successful(result)]
    assert refused == [], refused
    sent = {json.loads(body)["event"] for body in run.wire}
    assert sent == EXPECTED_EVENTS[plugin], f"events sent: {sorted(sent)}"


def test_the_kit_covers_every_bridge_event() -> None:
    assert set().union(*EXPECTED_EVENTS.values()) == set(protocol.EVENTS)


def test_kit_output_parser() -> None:
    output = (
        "\ntests/slash-chain.test.ts:\n(pass) effects > after sends timer [1083.26ms]\n"
        "(fail) fail-safe > x [5.00ms]\n  AssertionError: expect(received).toBe()\n\n 1 pass\n 1 fail\n"
        "Ran 2 tests across 1 file. [6.26s]\n"
    )
    log = f'noise\n{WIRE_MARK}{{"v":1,"event":"timer","e":{{"token":1}}}}\n'
    run = parse_kit_output(1, output, 6.3, log)
    assert (run.ran, run.files, run.passed, run.failed) == (2, 1, 1, 1)
    assert run.wire == ('{"v":1,"event":"timer","e":{"token":1}}',)
    assert run.results == (("pass", "effects > after sends timer"), ("fail", "fail-safe > x"))
    assert parse_kit_output(1, "error: no tests found", 0.1).ran is None


def test_kit_files_are_laid_out_per_plugin() -> None:
    for plugin in plugins.PLUGINS:
        names = [p.name for p in kit_files(plugin)]
        assert names[0] == f"{plugin}.test.ts"
        assert (KIT / names[0]).is_file()
        assert "fake-helper.ts" in names


# --- claude plugin validate --------------------------------------------------------------------------


def _findings(report: Mapping[str, Any], key: str) -> list[str]:
    """``key`` ("errors" or "warnings") of the manifest and of every ``contents[]`` entry; each must be there."""
    parts: list[Mapping[str, Any]] = [report["manifest"], *report["contents"]]
    found: list[str] = []
    for part in parts:
        assert isinstance(part.get(key), list), f"no {key} list in {part.get('file')}"
        found += [f"{part.get('file')}: {json.dumps(f)}" for f in part[key]]
    return found


@pytest.mark.engine
@requires_cli
@pytest.mark.parametrize("plugin", plugins.PLUGINS)
def test_validate_finds_no_error_and_no_warning(plugin: str, tmp_path: Path, iso: claude_cli.Isolation) -> None:
    folder = plugins.plugin_dir(plugin, tmp_path / "marketplace", python=NO_PYTHON)
    result = claude_cli.validate(folder, isolation=iso)
    report = result.report
    assert report is not None, result.describe()
    assert result.exit_code == 0 and report.get("success") is True, result.describe()
    kinds = [c.get("type") for c in report["contents"]]
    assert "hooks" in kinds, result.describe()
    assert _findings(report, "errors") == [], result.describe()
    assert _findings(report, "warnings") == [], result.describe()


# --- the separator, as the engine compiles it --------------------------------------------------------

#: `on('command.run', { args: /.../ }, ...)`: a JavaScript regular-expression literal as the matcher.
_MATCHER: Final = re.compile(
    r"""on\(\s*['"]command\.run['"]\s*,\s*\{\s*args:\s*"""
    r"""(?P<literal>/(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\[\n])+/[dgimsuvy]*)\s*\}"""
)

#: Strings where JavaScript and Python could part: whitespace each counts differently (U+0085 and U+001C are
#: `\s` only in Python, U+FEFF only in JavaScript), astral characters (UTF-16 offsets), names that stop short.
SEPARATOR_CASES: Final = (
    "x && /b y",
    "x || /b ; /c | /d",
    "x ||| /b",
    "x ; /b; /c",
    "x |/b || /c",
    "a && b",
    "",
    "&& /b",
    "x&& /b",
    "x &&/b",
    "x &&& /b",
    "x && //b",
    "x && /b/c",
    "x && /é",
    "x && /b&& /c",
    "x && /b.c:d-e_f g",
    "x && /b && /c d  &&  /e",
    "  && /a   ",
    "x &&\t/b\ty",
    "x\n&& /b\nmore",
    "x\u00a0&& /b\u00a0",
    "x\u2028&& /b\u2029y",
    "x\ufeff&& /b\ufeff",
    "x\u0085&& /b",
    "x \u001c&& /b",
    "x && /b\u001c",
    "x && /b\u3000y \u2000&& /c",
    "\U0001f642 && /b \U0001f642 && /c \U0001f600",
)

_NODE_SPLIT: Final = r"""
const re = %s
const strings = JSON.parse(require('fs').readFileSync(0, 'utf8'))
const all = new RegExp(re.source, re.flags.replace('g', '') + 'g')
const out = strings.map(s => {
  const marks = [...s.matchAll(all)].map(m => [m.index, m.index + m[0].length, m[1], m[2]])
  const ends = [...marks.slice(1).map(m => m[0]), s.length]
  const head = marks.length ? s.slice(0, marks[0][0]).trim() : s
  const rest = marks.map((m, i) => [m[3], s.slice(m[1], ends[i]).trim(), m[2]])
  return { matches: re.test(s), marks, head, rest }
})
process.stdout.write(JSON.stringify(out))
"""


def _utf16(text: str, index: int) -> int:
    """A code-point index as the UTF-16 offset JavaScript reports."""
    return len(text[:index].encode("utf-16-le")) // 2


def _python_split(text: str) -> dict[str, object]:
    chain = parse_chain(text)
    marks = [[_utf16(text, m.start()), _utf16(text, m.end()), m.group(1), m.group(2)] for m in SEPARATOR.finditer(text)]
    return {
        "matches": holds_chain(text),
        "marks": marks,
        "head": chain.head,
        "rest": [[step.command, step.args, step.op] for step in chain.rest],
    }


def matcher_literals(source: str) -> list[str]:
    return [m.group("literal") for m in _MATCHER.finditer(source)]


def test_the_laid_out_matcher_is_the_core_separator_and_the_mod_holds_none_of_its_own() -> None:
    mod = (resources.files("slashkit.adapters.claude_code") / "mod" / "slash-chain.ts").read_text()
    assert matcher_literals(mod) == []
    bundled = plugins.marketplace_files(None)[Path("plugins/slash-chain/hooks", plugins.MODULE)].decode()
    assert matcher_literals(bundled) == [SEPARATOR_JS]
    assert "SEPARATOR" not in bundled


def test_the_slash_chain_mods_tool_matchers_name_the_cores_tools() -> None:
    """A matcher is a literal (the engine reads none from an import): each tool's name written in the mod is the
    one the core names it by, the MCP name the engine gives what the plugin registers (`texts.FAIL_TOOL_ID`,
    `texts.BUILTIN_TOOL_ID`): both in the describe hook, each in its call hook."""
    mod = (resources.files("slashkit.adapters.claude_code") / "mod" / "slash-chain.ts").read_text()
    assert mod.count(f"{{ tool: ['{texts.FAIL_TOOL_ID}', '{texts.BUILTIN_TOOL_ID}'] }}") == 1
    assert mod.count(f"{{ tool: '{texts.FAIL_TOOL_ID}' }}") == 1
    assert mod.count(f"{{ tool: '{texts.BUILTIN_TOOL_ID}' }}") == 1
    assert texts.BUILTIN_TOOL_NAME not in mod


def test_inlining_the_separator_refuses_a_mod_without_one_matcher_to_fill() -> None:
    source = f"{plugins.SEPARATOR_IMPORT}on('command.run', {plugins.SEPARATOR_MATCHER}, f)\n"
    assert plugins.inline_separator(source) == f"on('command.run', {{ args: {SEPARATOR_JS} }}, f)\n"
    for broken in (source.replace(plugins.SEPARATOR_IMPORT, ""), source + source):
        with pytest.raises(ValueError, match="expected one"):
            plugins.inline_separator(broken)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_splits_as_parse_chain() -> None:
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "-e", _NODE_SPLIT % SEPARATOR_JS],
        input=json.dumps(SEPARATOR_CASES),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    from_node = json.loads(done.stdout)
    assert len(from_node) == len(SEPARATOR_CASES)
    for text, js in zip(SEPARATOR_CASES, from_node, strict=True):
        assert js == _python_split(text), f"{text!r}: node {js} != python {_python_split(text)}"
    # The cases are worth having: some split, some do not.
    assert any(js["marks"] for js in from_node) and any(not js["marks"] for js in from_node)
