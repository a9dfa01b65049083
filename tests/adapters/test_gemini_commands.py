"""Gemini CLI's custom commands as slashkit finds and expands them for a chain's next step (the real CLI's own
expansion of the same files is compared in tests/engine/test_gemini_expansion.py)."""

import contextlib
import os
import threading
from pathlib import Path

import pytest

from slashkit.adapters.gemini import commands
from slashkit.adapters.gemini.commands import Unexpandable, expansion


def _command(folder: Path, name: str, prompt: str) -> None:
    path = folder / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"prompt = '''{prompt}'''\n")


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


def test_args_fill_the_placeholder_and_without_one_the_typed_line_follows(places: tuple[Path, Path]) -> None:
    project, home = places
    _command(project / ".gemini" / "commands", "greet", "Greet {{args}}, then {{args}} again.")
    _command(project / ".gemini" / "commands", "bye", "Say goodbye.")
    assert expansion("greet", "Bob", project, home) == "Greet Bob, then Bob again."
    assert expansion("bye", "now please", project, home) == "Say goodbye.\n\n/bye now please"
    assert expansion("bye", "", project, home) == "Say goodbye."


def test_folders_by_precedence_and_names_by_path(places: tuple[Path, Path]) -> None:
    project, home = places
    _command(home / ".gemini" / "commands", "greet", "user's")
    _command(home / ".gemini" / "commands", "mine", "only the user's")
    _command(project / ".gemini" / "commands", "greet", "project's")
    _command(project / ".gemini" / "commands" / "git", "commit", "commit it")
    _command(home / ".gemini" / "extensions" / "tools" / "commands", "lint", "lint it")
    found = commands.find(project, home)
    assert sorted(found) == ["git:commit", "greet", "lint", "mine"]
    assert expansion("greet", "", project, home) == "project's"
    assert expansion("git:commit", "", project, home) == "commit it"
    assert commands.command_name(Path("a b/c?.toml")) == "a_b:c_"


def test_a_file_is_brought_in_and_a_missing_one_stays_as_written(places: tuple[Path, Path]) -> None:
    project, home = places
    (project / "notes.txt").write_text("NOTES")
    _command(project / ".gemini" / "commands", "read", "Read @{notes.txt} and @{missing.txt} for {{args}}")
    assert expansion("read", "me", project, home) == "Read NOTES and @{missing.txt} for me"
    _command(project / ".gemini" / "commands", "out", "Read @{../../etc/passwd}")
    assert expansion("out", "", project, home) == "Read @{../../etc/passwd}"


def test_what_cannot_be_expanded_says_why_in_one_line(places: tuple[Path, Path]) -> None:
    project, home = places
    folder = project / ".gemini" / "commands"
    _command(folder, "shell", "Status: !{git status}")
    _command(folder, "open", "Read @{notes.txt")
    (folder / "bad.toml").write_text("prompt = [")
    (folder / "number.toml").write_text("prompt = 3")
    (folder / "big.toml").write_bytes(b'prompt = "' + b"x" * commands.MAX_FILE + b'"')
    for name, says in [
        ("shell", "shell command"),
        ("open", "unclosed"),
        ("bad", "no command file"),
        ("number", "not a string"),
        ("big", "over"),
        ("nothing", "no custom command"),
    ]:
        with pytest.raises(Unexpandable, match=says) as raised:
            expansion(name, "x", project, home)
        assert "\n" not in str(raised.value)


def test_a_folder_of_commands_is_read_up_to_its_bound(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = places
    for n in range(5):
        _command(project / ".gemini" / "commands", f"c{n}", "x")
    monkeypatch.setattr(commands, "MAX_COMMANDS", 3)
    assert len(commands.find(project, home)) == 3


def test_a_fifo_as_a_command_file_or_a_file_it_brings_in_blocks_nothing(places: tuple[Path, Path]) -> None:
    # Attack of issue 34: a FIFO where a file is read waits for a writer that never comes, and the hook with it.
    project, home = places
    folder = project / ".gemini" / "commands"
    _command(folder, "read", "Read @{fifo.txt} for {{args}}")
    os.mkfifo(project / "fifo.txt")
    os.mkfifo(folder / "piped.toml")
    done: list[str] = []

    def expand() -> None:
        done.append(expansion("read", "me", project, home))
        with pytest.raises(Unexpandable, match=r"^piped.toml cannot be read: it is not a regular file$"):
            expansion("piped", "", project, home)
        done.append("refused")

    reader = threading.Thread(target=expand, daemon=True)
    reader.start()
    reader.join(timeout=10)
    for fifo in (project / "fifo.txt", folder / "piped.toml"):  # let a blocked read go, should one be
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    assert done == ["Read @{fifo.txt} for me", "refused"]
