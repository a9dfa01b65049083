"""What the property tests share: one bash process per test module, the oracle of the tests that run what bash
runs (`Bash`)."""

from collections.abc import Iterator

import pytest

from tests.property.test_operators_bash import BASH, Bash


@pytest.fixture(scope="module")
def bash() -> Iterator[Bash]:
    """A bash kept open for a module's examples; without bash on PATH its tests are skipped, saying why."""
    if BASH is None:
        pytest.skip("bash is the oracle of this test and is not on PATH")
    shell = Bash(BASH)
    yield shell
    shell.close()
