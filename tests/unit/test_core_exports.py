"""The core's public names: the parser is importable from `slashkit.core` itself (issue 2, "Deliver" 2)."""

import importlib


def test_the_parser_and_its_values_are_exported_from_slashkit_core() -> None:
    core = importlib.import_module("slashkit.core")

    assert callable(getattr(core, "parse_chain", None))
    assert core.parse_chain("x && /b") == core.Chain(head="x", rest=(core.Step("b", ""),))


def test_no_bare_core_or_adapters_package_is_installed() -> None:
    for bare in ("core", "adapters"):
        try:
            importlib.import_module(bare)
        except ModuleNotFoundError:
            continue
        raise AssertionError(f"a top-level {bare!r} package is importable")
