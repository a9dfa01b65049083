"""The interpreter's state (`slashkit.core.interpreter.Run`), and a running program as a journal keeps it
(`slashkit.core.chain_machine.Cut`), as plain data and back, through cattrs: what a journal writes after each step
and reads to resume a run. A program's nodes are written with a `node` tag naming their kind, since several kinds
have the same fields (`break` and `continue`)."""

from functools import cache
from typing import Any

from cattrs import Converter
from cattrs.strategies import configure_tagged_union

from slashkit.core.chain_machine import Cut
from slashkit.core.interpreter import Run
from slashkit.core.program import Node


@cache
def converter() -> Converter:
    """The converter, made once: a program's nodes tagged by kind."""
    made = Converter(forbid_extra_keys=True)
    configure_tagged_union(Node, made, tag_name="node")
    # A set of names (the saved chains a cut-off program trusts) as JSON's array, sorted so the same set writes alike.
    made.register_unstructure_hook_func(
        lambda kind: kind is frozenset or getattr(kind, "__origin__", None) is frozenset, lambda names: sorted(names)
    )
    return made


def written(run: Run) -> dict[str, Any]:
    """A run as plain data (JSON's types)."""
    data: dict[str, Any] = converter().unstructure(run)
    return data


def read(data: object) -> Run:
    """A run from plain data that `written` made; raises cattrs' errors on anything else."""
    return converter().structure(data, Run)


def written_cut(cut: Cut) -> dict[str, Any]:
    """A cut-off program as plain data, its journal key left out (the journal names it)."""
    data: dict[str, Any] = converter().unstructure(cut)
    del data["key"]
    return data


def read_cut(data: object, key: str) -> Cut:
    """A cut-off program from plain data that `written_cut` made, named `key`; raises cattrs' errors on anything
    else."""
    if not isinstance(data, dict):
        raise TypeError(f"a cut-off program is an object, not {type(data).__name__}")
    return converter().structure({**data, "key": key}, Cut)
