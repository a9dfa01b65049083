"""The parser agrees with the seed's own regex run by Node on 12,000 generated strings: one Node process
applies seed 003's `SEPARATOR` and `parseChain`, taken out of the seed at test time, to all of them, and every
result is compared where the text holds no `||`, `;` or `|` before a `/name` (the seed knows `&&` alone; there
slashkit must read text as it does). Without the seed these tests skip, naming where they looked
(tests/support/seed.py)."""

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

from slashkit.core.chain import SEPARATOR_JS, holds_chain, parse_chain
from tests.support import seed

# Reads the strings from the file in argv[1], and writes the seed's answer for each to the file in argv[2]: its
# parse, and whether the engine's matcher takes the string.
HARNESS = r"""
const inputs = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))
const out = inputs.map(s => {
  const c = parseChain(s)
  return [c.head, c.rest.map(r => [r.command, r.args]), MATCHER.test(s)]
})
require('fs').writeFileSync(process.argv[2], JSON.stringify(out))
"""

COUNT = 12_000
PIECES = [
    "&&", "&", " ", "  ", "/", "\t", "\n", "\r", "\x0b", "\x0c", "||", ";", "|", "\x1c", "\x1d", "\x1e", "\x1f",
    "\x85", "\ufeff", "\u00a0", "\u1680", "\u2000", "\u2007", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f",
    "\u3000", "\u180e", "\u200b", "\U0001f600", "é", "&& /", "&&/", " && /",
]  # fmt: skip
NAME = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:.-"


def any_char(rng: random.Random) -> str:
    """A random code point, never a lone surrogate (JSON and the two string models would part there)."""
    while True:
        c = rng.choice(
            [rng.randrange(0x20, 0x7F), rng.randrange(0, 0x100), rng.randrange(0, 0x10000), rng.randrange(0, 0x110000)]
        )
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


SPACES = [" ", "\t", "\n", "\u00a0", "\ufeff", "\u2028", "\u3000", "\x1c", "\x1f", "\x85", "\u180e", ""]


def separator(rng: random.Random) -> str:
    """`&&`, spaces, a slash and a name, each part sometimes spoiled by a space only one language has."""
    name = "".join(rng.choice(NAME) for _ in range(rng.randrange(1, 5)))
    return "".join([rng.choice(SPACES), "&&", rng.choice(SPACES), "/", name, rng.choice(SPACES)])


def generated(rng: random.Random) -> str:
    """A string biased toward separators: pieces of `&&`, slashes, names and both languages' spaces."""
    parts = []
    for _ in range(rng.randrange(0, 12)):
        roll = rng.random()
        if roll < 0.3:
            parts.append(separator(rng))
        elif roll < 0.6:
            parts.append(rng.choice(PIECES))
        elif roll < 0.85:
            parts.append("".join(rng.choice(NAME) for _ in range(rng.randrange(1, 6))))
        else:
            parts.append(any_char(rng))
    return "".join(parts)


def test_the_separator_the_engine_is_given_is_the_seeds_literal_with_the_other_operators_beside_and(
    seed_003: Path,
) -> None:
    chain_ts = seed.seed_sources(seed_003)["chain.ts"]
    [literal] = re.findall(r"^const SEPARATOR = (/.+/)g$", chain_ts, re.MULTILINE)
    # The seed captures the name alone; slashkit captures the operator first, then the name, or a word of the
    # language that starts a command (a loop, a group, break, continue, sleep), which the seed knows nothing of.
    words = r"(?:\/([A-Za-z0-9_:.-]+)|while|until|for|\{|break|continue|sleep|!\S+)"
    assert literal == SEPARATOR_JS.replace(r"(&&|\|\||;|\|)", "&&").replace(words, r"\/([A-Za-z0-9_:.-]+)")


def test_the_parser_agrees_with_the_seeds_regex_run_by_node(tmp_path: Path, seed_parser_js: str) -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH: this test runs the seed's regex under Node and must not be skipped"
    rng = random.Random(20260329)
    inputs = [generated(rng) for _ in range(COUNT)]
    inputs += ["", "&& /a", "a\x1c&& /b", "\ufeff&& /b\ufeff", "a && /b\x85c", "a\u2028&&\u2029/b\u3000c"]
    source, result = tmp_path / "inputs.json", tmp_path / "out.json"
    source.write_text(json.dumps(inputs), encoding="utf-8")

    subprocess.run([node, "-e", seed_parser_js + HARNESS, str(source), str(result)], check=True, timeout=120)
    answers = json.loads(result.read_text(encoding="utf-8"))

    assert len(answers) == len(inputs)
    chains = sum(1 for _, rest, _ in answers if rest)
    assert chains > COUNT // 10, "too few generated strings hold a separator to test the parser"
    mismatches = []
    compared = 0
    for args, (head, rest, holds) in zip(inputs, answers, strict=True):
        chain = parse_chain(args)
        if any(step.op != "&&" for step in chain.rest):
            continue
        compared += 1
        ours = (chain.head, [[s.command, s.args] for s in chain.rest], holds_chain(args))
        if ours != (head, rest, holds):
            mismatches.append((args, ours, (head, rest, holds)))
    assert mismatches == []
    assert compared > COUNT // 2, "too few generated strings hold `&&` alone to compare with the seed"
