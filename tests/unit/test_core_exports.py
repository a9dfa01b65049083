"""The public names: the parser is importable from `slashkit.core` itself (issue 2, "Deliver" 2), and each harness
host's package exports the events every harness host shares and its own session."""

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


def test_each_harness_hosts_package_exports_the_shared_events_and_its_own_names() -> None:
    events = {"ChainEnded", "CommandStarted", "Line", "Notice", "Output", "StepEnded", "StepStarted"}
    shared = events | {"Outcome", "Tally"}
    own = {
        "slashkit.adapters.codex": {"CodexGone", "CodexSession", "Event", "Raw"},
        "slashkit.adapters.sdk": {"Event", "Message", "SlashSession"},
    }
    harness = importlib.import_module("slashkit.adapters.harness")
    for name, names in own.items():
        package = importlib.import_module(name)
        assert set(package.__all__) == shared | names
        assert all(hasattr(package, each) for each in names)
        assert all(getattr(package, each) is getattr(harness, each) for each in shared)
