"""Tests for tests/support/seed.py: where seed 003 is looked for, the skip that names the path, and the
transform that takes the seed's parser out of its TypeScript as JavaScript Node runs."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import seed
from tests.support.seed import SeedFormatError, found_or_skip, matcher_js, parser_js

# A chain.ts written for these tests in the seed's shape: types on parseChain's signature, around other code.
CHAIN_TS = """/** Steps. */
export type Step = { command: string; args: string }

const SEPARATOR = /&&\\/(\\w+)/g

/** Splits at each separator. */
export function parseChain(args: string, limit: number): Chain {
  const marks = [...args.matchAll(SEPARATOR)].slice(0, limit)
  if (marks.length === 0) return { head: args, rest: [] }
  return { head: args.slice(0, marks[0].index), rest: marks.map(m => ({ command: m[1], args: '' })) }
}

export function stepName(step: Step): string {
  return `/${step.command}`
}
"""


def run_node(source: str) -> object:
    """Runs `source` under Node and reads back the JSON it prints."""
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    done = subprocess.run([node, "-e", source], capture_output=True, text=True, check=True, timeout=30)
    return json.loads(done.stdout)


class TestParserJs:
    def test_keeps_the_separator_and_the_body_and_drops_export_and_types(self) -> None:
        assert parser_js(CHAIN_TS) == (
            "const SEPARATOR = /&&\\/(\\w+)/g\n"
            "function parseChain(args, limit) {\n"
            "  const marks = [...args.matchAll(SEPARATOR)].slice(0, limit)\n"
            "  if (marks.length === 0) return { head: args, rest: [] }\n"
            "  return { head: args.slice(0, marks[0].index), rest: marks.map(m => ({ command: m[1], args: '' })) }\n"
            "}\n"
        )

    def test_what_it_gives_runs_under_node(self) -> None:
        answer = run_node(parser_js(CHAIN_TS) + "console.log(JSON.stringify(parseChain('x&&/a', 5)))")
        assert answer == {"head": "x", "rest": [{"command": "a", "args": ""}]}

    @pytest.mark.parametrize(
        ("change", "why"),
        [
            (("const SEPARATOR", "const SPLITTER"), "one `const SEPARATOR = /…/` line, and it holds 0"),
            (("export function parseChain", "export const parseChain"), "no `export function parseChain(…) {`"),
            (("): Chain {", "): Chain<Step> {"), "return type is not a plain name: ': Chain<Step>'"),
            (("limit: number", "limit: number = 3"), "not `name` or `name: Type`: 'limit: number = 3'"),
            (("args: string, ", "{ args }: Input, "), "not `name` or `name: Type`: '{ args }: Input'"),
        ],
    )
    def test_refuses_a_shape_it_does_not_know(self, change: tuple[str, str], why: str) -> None:
        with pytest.raises(SeedFormatError, match=why.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
            parser_js(CHAIN_TS.replace(*change))

    def test_refuses_a_second_separator(self) -> None:
        with pytest.raises(SeedFormatError, match="it holds 2"):
            parser_js(CHAIN_TS + "const SEPARATOR = /y/g\n")

    def test_the_seeds_parser_runs_under_node(self, seed_parser_js: str) -> None:
        probe = "console.log(JSON.stringify([parseChain('x && /b y && /c'), MATCHER.test('a && /b')]))"
        assert run_node(seed_parser_js + probe) == [
            {"head": "x", "rest": [{"command": "b", "args": "y"}, {"command": "c", "args": ""}]},
            True,
        ]


class TestMatcherJs:
    def test_takes_the_args_matcher_of_the_command_run_hook(self) -> None:
        register_ts = "  on('session.start', {}, f)\n  on('command.run', { args: /a&&b/ }, async ($, e) => {\n"
        assert matcher_js(register_ts) == "const MATCHER = /a&&b/\n"

    @pytest.mark.parametrize("hooks", [0, 2])
    def test_refuses_anything_but_one_such_hook(self, hooks: int) -> None:
        with pytest.raises(SeedFormatError, match=f"not {hooks}"):
            matcher_js("  on('command.run', { args: /x/ }, f)\n" * hooks)


class TestWhereTheSeedIs:
    def test_the_folder_slashkit_seeds_names_comes_first(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("SLASHKIT_SEEDS", str(tmp_path))
        assert seed.seed_path() == tmp_path / "003_e3cd542c3666b0ba.txt"

    def test_without_it_the_seeds_are_looked_for_beside_the_clone(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("SLASHKIT_SEEDS", raising=False)
        assert seed.seed_path() == seed.REPO_ROOT.parent / "shared" / "seeds" / "003_e3cd542c3666b0ba.txt"

    def test_a_missing_seed_skips_the_test_naming_the_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv(seed.REQUIRE_VARIABLE, raising=False)
        missing = tmp_path / "003_e3cd542c3666b0ba.txt"
        with pytest.raises(pytest.skip.Exception, match=f"seed 003 is not at {missing}: .*SLASHKIT_SEEDS"):
            found_or_skip(missing)

    def test_a_missing_seed_fails_the_test_where_seeds_are_required(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(seed.REQUIRE_VARIABLE, "1")
        with pytest.raises(pytest.fail.Exception, match="seed 003 is not at"):
            found_or_skip(tmp_path / "003_e3cd542c3666b0ba.txt")

    def test_a_seed_that_is_there_is_given_back(self, tmp_path: Path) -> None:
        there = tmp_path / "003_e3cd542c3666b0ba.txt"
        there.write_text("slash-chain\n", encoding="utf-8")
        assert found_or_skip(there) == there
