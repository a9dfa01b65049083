"""What every test folder shares: the `engine` mark of tests/engine, and seed 003, which lives outside the repository
(tests/support/seed.py)."""

from pathlib import Path
from typing import Final

import pytest
from hypothesis import settings

from tests.support import seed

# scripts/mutate runs the fast tests with `--hypothesis-profile=mutation`: no example database, so that an example
# saved while one mutant ran is not replayed against the next ones (issue 21: one that failed on the unchanged code
# "killed" hundreds of mutants); and no deadline, since an example that is slow under mutmut's trampolines on a busy
# machine is no behaviour a test checks (it "killed" an equivalent mutant of policy once).
settings.register_profile("mutation", database=None, deadline=None)


ENGINE_TESTS: Final = Path(__file__).parent / "engine"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of tests/engine runs a real host: marked `engine`, which `scripts/test --quick` leaves out."""
    for item in items:
        if item.path.is_relative_to(ENGINE_TESTS):
            item.add_marker(pytest.mark.engine)


@pytest.fixture(scope="session")
def seed_003() -> Path:
    """The path of seed 003. Without it the test is skipped, the reason naming the path looked at (failed
    instead when SLASHKIT_REQUIRE_SEEDS is set)."""
    return seed.found_or_skip(seed.seed_path())


@pytest.fixture(scope="session")
def seed_parser_js(seed_003: Path) -> str:
    """Seed 003's parser as JavaScript that Node runs: `SEPARATOR` and `parseChain` from its chain.ts, and
    `MATCHER`, the `args` matcher its register.ts gives the engine for the `command.run` hook."""
    sources = seed.seed_sources(seed_003)
    return seed.parser_js(sources["chain.ts"]) + seed.matcher_js(sources["register.ts"])
