"""`slashkit gemini install|uninstall`: slashkit's entries in Gemini CLI's settings file, every other key left as
it was, no path of the machine in them, and a file it cannot read refused with one line."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from slashkit.adapters import cli
from slashkit.adapters.gemini import install


def _settings(project: Path) -> dict[str, Any]:
    loaded = json.loads((project / ".gemini" / "settings.json").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_install_adds_the_hooks_and_the_fail_tool_beside_the_persons_settings(tmp_path: Path) -> None:
    theirs: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooksConfig": {"enabled": True},
        "hooks": {"AfterAgent": [{"matcher": "*", "hooks": [{"type": "command", "command": "./mine.sh"}]}]},
        "mcpServers": {"other": {"command": "other-server"}},
    }
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(json.dumps(theirs))
    assert cli.main(["gemini", "install", str(tmp_path)]) == 0
    written = (tmp_path / ".gemini" / "settings.json").read_text()
    settings = _settings(tmp_path)
    assert settings["security"] == theirs["security"]
    assert settings["hooksConfig"] == {"enabled": True}
    hooks = settings["hooks"]
    assert sorted(hooks) == sorted(install.EVENTS)
    assert hooks["AfterAgent"][0] == theirs["hooks"]["AfterAgent"][0]
    assert set(settings["mcpServers"]) == {"other", "slash-chain"}
    assert sys.executable not in written and str(tmp_path) not in written
    assert install.install(tmp_path / ".gemini" / "settings.json") == []  # a second run changes nothing
    assert cli.main(["gemini", "uninstall", str(tmp_path)]) == 0
    assert _settings(tmp_path) == theirs


def test_uninstall_takes_a_file_only_slashkit_wrote(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    assert install.install(path) == [path]
    assert install.uninstall(path) == [path]
    assert not path.exists()
    assert install.uninstall(path) == []


@pytest.mark.parametrize("content", ["{ // a comment\n}", "[1]", "\xff"])
def test_a_file_slashkit_cannot_read_is_left_alone_with_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(OSError, match="slashkit does not write over"):
        install.install(path)
    assert path.read_bytes() == content.encode("latin-1")


def test_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / ".gemini").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="symbolic link"):
        install.install(tmp_path / ".gemini" / "settings.json")
    assert not any((tmp_path / "elsewhere").iterdir())


def test_the_extension_holds_the_same_hooks_and_server_and_no_machine_path(tmp_path: Path) -> None:
    assert cli.main(["gemini", "extension", str(tmp_path / "slashkit")]) == 0
    manifest = json.loads((tmp_path / "slashkit" / install.MANIFEST).read_text())
    hooks = json.loads((tmp_path / "slashkit" / "hooks" / "hooks.json").read_text())
    assert manifest["name"] == "slashkit" and manifest["mcpServers"] == install.entries()["mcpServers"]
    assert hooks == {"hooks": install.entries()["hooks"]}
    assert install.extension(tmp_path / "slashkit") == []
    assert sys.executable not in json.dumps([manifest, hooks])
