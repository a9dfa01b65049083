"""What the Claude Code tests of the slash-chain plugin share: the plugin, laid out and validated once a module."""

from pathlib import Path

import pytest

from tests.support.claude_cli import validated_plugin


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slash-chain plugin, validated by the CLI (a module with another plugin names its own fixture so)."""
    return validated_plugin("slash-chain", tmp_path_factory.mktemp("marketplace"))
