"""Where saved chains are read from (issue 28): the person's folder, then the project's, which shadows it; bounded,
and never blocked by what a folder holds."""

import os
from pathlib import Path

from slashkit.adapters.saved_chains import MAX_FILES, load, person_folder
from slashkit.core.saved_chain import MAX_FILE


def write(folder: Path, name: str, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_the_projects_saved_chain_shadows_the_persons(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    write(tmp_path / "config/slashkit/chains", "ship.md", "/person")
    write(tmp_path / "config/slashkit/chains", "mine.md", "/only-mine")
    write(tmp_path / "project/.slashkit/chains", "ship.md", "/project")

    found = load(tmp_path / "project", env)

    assert [(c.name, c.body) for c in found.chains] == [("mine", "/only-mine"), ("ship", "/project")]
    assert found.chains[1].source == str(tmp_path / "project/.slashkit/chains/ship.md")


def test_the_persons_folder_is_under_the_home_config_when_xdg_is_unset(tmp_path: Path) -> None:
    assert person_folder({"HOME": str(tmp_path)}) == tmp_path / ".config/slashkit/chains"
    assert person_folder({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/slashkit/chains")


def test_the_project_is_the_working_directory_unless_named(tmp_path: Path) -> None:
    write(tmp_path / "named/.slashkit/chains", "ship.md", "/named")

    found = load(None, {"SLASHKIT_PROJECT": str(tmp_path / "named"), "XDG_CONFIG_HOME": str(tmp_path)})

    assert [c.body for c in found.chains] == ["/named"]


def test_no_folder_is_no_saved_chains(tmp_path: Path) -> None:
    found = load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    assert (found.chains, found.problems) == ((), ())


def test_a_fifo_or_a_folder_named_like_a_chain_is_not_read_and_blocks_nothing(tmp_path: Path) -> None:
    chains = tmp_path / ".slashkit/chains"
    chains.mkdir(parents=True)
    os.mkfifo(chains / "fifo.md")  # reading it would wait for a writer forever
    (chains / "folder.md").mkdir()
    write(chains, "good.md", "/greet")

    found = load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    assert [c.name for c in found.chains] == ["good"]
    assert sorted(p.text for p in found.problems) == [
        f"saved chain {chains / 'fifo.md'}: it could not be read",
        f"saved chain {chains / 'folder.md'}: it could not be read",
    ]


def test_a_huge_file_is_read_no_further_than_shows_it_is_too_large(tmp_path: Path) -> None:
    write(tmp_path / ".slashkit/chains", "big.md", b"/" + b"a" * (8 * MAX_FILE))

    found = load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    assert [p.why for p in found.problems] == ["it is over 64 KiB"]


def test_past_the_most_files_one_line_says_the_rest_were_not_read(tmp_path: Path) -> None:
    chains = tmp_path / ".slashkit/chains"
    for n in range(MAX_FILES + 3):
        write(chains, f"c{n:04}.md", "/greet")

    found = load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    assert len(found.chains) == MAX_FILES
    assert [p.text for p in found.problems] == [
        f"saved chain {chains}: holds {MAX_FILES + 3} files; the ones after the first {MAX_FILES} were not read"
    ]
