"""The example of docs/embedding.md, run as a harness author would run it (the SDK's own CLI, found as the SDK
finds it), offline against a scripted model."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.claude_cli import REPO_ROOT, Isolation, isolated_env
from tests.support.model_server import ModelServer, text

pytestmark = pytest.mark.engine

DOC = REPO_ROOT / "docs" / "embedding.md"


def example() -> str:
    """The first Python block of docs/embedding.md."""
    found = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None, "docs/embedding.md has no python block"
    return found.group(1)


def test_the_embedding_example_runs_review_then_test(tmp_path: Path) -> None:
    iso = Isolation.create(tmp_path)
    project = iso.root / "project"
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Reviews the change\n---\nReview the change.\n")
    (commands / "test.md").write_text("---\ndescription: Runs the tests\n---\nRun the tests.\n")
    (project / "harness.py").write_text(example())
    with ModelServer([text("Reviewed: fine."), text("Tests pass.")]) as model:
        ran = subprocess.run(
            [sys.executable, "harness.py"],
            cwd=project,
            env=isolated_env(iso, model.url),
            capture_output=True,
            text=True,
            timeout=120,
        )
        asked = [r.last_user_text() for r in model.main_requests]
    assert (ran.returncode, ran.stdout.splitlines()) == (
        0,
        ["1/2: /review", "Reviewed: fine.", "2/2: /test", "Tests pass.", "all 2 command(s) ran"],
    ), ran.stderr
    assert "Review the change." in asked[0] and "Run the tests." in asked[1]
