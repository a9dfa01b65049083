"""The interpreter's state (`slashkit.core.interpreter.Run`) as plain data and back, through cattrs: what a journal
writes after each move and reads to resume a run. A program's nodes are written with a `node` tag naming their
kind, since several kinds have the same fields (`break` and `continue`)."""

from functools import cache
from typing import Any

from cattrs import Converter
from cattrs.strategies import configure_tagged_union

from slashkit.core.interpreter import Run
from slashkit.core.program import Node


@cache
def converter() -> Converter:
    """The converter, made once: a program's nodes tagged by kind."""
    made = Converter(forbid_extra_keys=True)
    configure_tagged_union(Node, made, tag_name="node")
    return made


def written(run: Run) -> dict[str, Any]:
    """A run as plain data (JSON's types)."""
    data: dict[str, Any] = converter().unstructure(run)
    return data


def read(data: object) -> Run:
    """A run from plain data that `written` made; raises cattrs' errors on anything else."""
    return converter().structure(data, Run)
