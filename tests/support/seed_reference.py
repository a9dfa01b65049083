"""Seed 003's parser as JavaScript (`chain.ts`: the `SEPARATOR` regex literal and `parseChain`, character
for character), for running the reference under Node beside slashkit's parser."""

from typing import Final

PARSE_CHAIN_JS: Final = r"""
const SEPARATOR = /(?:^|\s)&&\s*\/([A-Za-z0-9_:.-]+)(?=\s|$)/g
function parseChain(args) {
  const marks = [...args.matchAll(SEPARATOR)]
  const first = marks[0]
  if (first === undefined) return { head: args, rest: [] }
  const rest = marks.map((m, i) => ({
    command: m[1] ?? '',
    args: args.slice(m.index + m[0].length, marks[i + 1]?.index ?? args.length).trim(),
  }))
  return { head: args.slice(0, first.index).trim(), rest }
}
"""
