"""A Claude Code user installs slashkit as Claude Code installs plugins: the real `claude plugin marketplace add`
on a fresh clone of this repository and `claude plugin install`, in an isolated config, with no slashkit on
PATH and no pip step. The plugin makes its own Python environment on first use (from the package index, which
this test reaches), and a chain runs; the next session starts from that environment at once."""

import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.claude_cli import (
    Isolation,
    JsonObject,
    StreamingRun,
    claude_path,
    cli_available,
    isolated_env,
    ui_log_texts,
    validate,
)
from tests.support.model_server import ModelServer

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(not cli_available(), reason="the pinned Claude Code CLI is not installed (scripts/setup.sh)"),
]

ROOT = Path(__file__).resolve().parents[2]
#: A PATH with the system's tools (sh, python3, node) and nothing of slashkit's; and no proxy, which the offline
#: isolation points at the model server, so that pip reaches the package index.
PROXIES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
USER_ENV: dict[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin"} | dict.fromkeys(PROXIES, "")
ENDS = re.compile(r"^(all \d+ command\(s\) ran|stopped after|cancelled|unavailable|ended: )")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this repository's last commit."""
    folder = tmp_path_factory.mktemp("clone") / "slashkit"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
    return folder


def lines(events: Sequence[JsonObject]) -> list[str]:
    return ui_log_texts(events, "slash-chain")


def test_the_committed_marketplace_validates_with_no_warning(clone: Path) -> None:
    checked = validate(clone)
    assert checked.ok and checked.warnings == (), checked.describe()


def test_a_clone_added_as_a_marketplace_installs_a_plugin_that_runs_a_chain_with_no_pip_step(
    clone: Path, tmp_path: Path
) -> None:
    iso = installed(clone, tmp_path)
    project = iso.root / "project"
    [copied] = (iso.config_dir / "plugins" / "cache" / "slashkit" / "slash-chain").iterdir()
    assert (copied / "slashkit" / "src").is_dir() and not (copied / "slashkit" / "src").is_symlink()

    first = session(iso, project, timeout=900)
    assert first[0].startswith("slashkit: making its Python environment in "), first
    assert first[1:] == ["1/2: /context", "2/2: /usage", "all 2 command(s) ran"]

    started = time.monotonic()
    again = session(iso, project, timeout=120)
    assert again == ["1/2: /context", "2/2: /usage", "all 2 command(s) ran"]
    assert time.monotonic() - started < 60


def test_without_the_package_index_the_plugin_says_in_one_line_why_and_the_commands_run_as_typed(
    clone: Path, tmp_path: Path
) -> None:
    iso = installed(clone, tmp_path)
    # The offline isolation's proxies point at the model server, so pip cannot reach the index.
    offline = {"PATH": USER_ENV["PATH"]}
    first = session(iso, iso.root / "project", timeout=600, env=offline)
    data = iso.config_dir / "plugins" / "data" / "slash-chain-slashkit"
    assert first[0] == f"slashkit: making its Python environment in {data} (first use, a minute or two)"
    assert re.fullmatch(
        rf"unavailable: cannot make its Python environment in {re.escape(str(data))} \(ERROR: .+\); set "
        r"SLASHKIT_PYTHON to a Python with slashkit; commands run as typed until it is back",
        first[1],
    ), first
    assert len(first) == 2
    # Nothing half made is left to be taken for an environment.
    assert [p.name for p in data.iterdir() if p.name.startswith("python-")] == []


def installed(clone: Path, tmp_path: Path) -> Isolation:
    """An isolation in which the real claude plugin commands added the clone and installed slash-chain."""
    iso = Isolation.create(tmp_path)
    project = iso.root / "project"
    project.mkdir()
    with ModelServer() as model:
        env = isolated_env(iso, model.url, extra_env=USER_ENV)
        for argv in (["marketplace", "add", str(clone)], ["install", "slash-chain@slashkit"]):
            added = subprocess.run(
                [str(claude_path()), "plugin", *argv], cwd=project, env=env, capture_output=True, text=True
            )
            assert added.returncode == 0, added.stdout + added.stderr
    return iso


def session(iso: Isolation, project: Path, timeout: float, env: dict[str, str] = USER_ENV) -> list[str]:
    """Types a chain of local commands into a headless session with the installed plugins; its lines."""
    with (
        ModelServer() as model,
        StreamingRun([], project, model=model, isolation=iso, extra_env=env) as running,
    ):
        running.send("/context && /usage")
        ended = running.wait_until(lambda events: any(ENDS.match(line) for line in lines(events)), timeout=timeout)
        result = running.finish()
    assert ended, result.describe()
    return lines(result.events)
