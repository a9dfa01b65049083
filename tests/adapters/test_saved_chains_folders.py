"""Where saved chains are read from (issue 28): the person's folder, then the project's, which shadows it; bounded,
and never blocked by what a folder holds."""

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from slashkit.adapters.codex import CodexSession
from slashkit.adapters.harness import loop as harness_loop
from slashkit.adapters.harness.loop import Harness
from slashkit.adapters.saved_chains import MAX_FILES, load, person_folder
from slashkit.adapters.sdk import SlashSession
from slashkit.core.saved_chain import MAX_FILE, Library


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


def test_a_fifo_swapped_in_while_the_folder_is_read_never_blocks_a_read(tmp_path: Path) -> None:
    # Attack of issue 34: a FIFO swapped in for `race.md` between a check that it was a regular file and its open
    # blocked 4 of 500 reads for good. One thread swaps a file and a FIFO in turn while another reads the folder.
    chains = tmp_path / ".slashkit/chains"
    write(chains, "good.md", "/greet")
    stash = tmp_path / "stash"
    stash.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    stop, reads = threading.Event(), []
    fifos: list[Path] = []

    def swap() -> None:
        while not stop.is_set() and len(fifos) < 20_000:
            write(tmp_path, "next", "/greet race")
            os.rename(tmp_path / "next", chains / "race.md")
            # Each FIFO keeps a name of its own in the stash, so that a read it blocks can be let go at the end.
            fifo = stash / f"f{len(fifos)}"
            os.mkfifo(fifo)
            fifos.append(fifo)
            os.link(fifo, tmp_path / "next")
            os.rename(tmp_path / "next", chains / "race.md")

    def read() -> None:
        for _ in range(1_000):
            reads.append(load(tmp_path, env))

    swapper, reader = threading.Thread(target=swap, daemon=True), threading.Thread(target=read, daemon=True)
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns often, as two processes' would
    try:
        swapper.start()
        reader.start()
        reader.join(timeout=30)
        blocked = reader.is_alive()
        stop.set()
        swapper.join()
    finally:
        sys.setswitchinterval(switching)
    while reader.is_alive():  # a blocked read, let go by a writer that comes and goes
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=0.1)

    assert not blocked, f"a read blocked after {len(reads)} of 1,000"
    assert all([c.name for c in found.chains] in (["good"], ["good", "race"]) for found in reads)
    assert {p.text for found in reads for p in found.problems} <= {
        f"saved chain {chains / 'race.md'}: it could not be read"
    }


def test_a_link_named_like_a_chain_is_not_followed(tmp_path: Path) -> None:
    target = write(tmp_path, "elsewhere.md", "/greet")
    chains = tmp_path / ".slashkit/chains"
    chains.mkdir(parents=True)
    (chains / "link.md").symlink_to(target)

    found = load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    assert (found.chains, [p.text for p in found.problems]) == (
        (),
        [f"saved chain {chains / 'link.md'}: it could not be read"],
    )


@pytest.mark.parametrize("host", [lambda: SlashSession(ClaudeAgentOptions()), lambda: CodexSession("codex")])
def test_the_harness_hosts_read_the_folders_off_their_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: Callable[[], Harness[Any]]
) -> None:
    # The SDK's and the app-server's messages run on the event loop: a read that waited there would stop them all.
    write(tmp_path / ".slashkit/chains", "ship.md", "/greet")
    readers: list[int] = []

    def read(project: Path | None) -> Library:
        readers.append(threading.get_ident())
        return load(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "none")})

    monkeypatch.setattr(harness_loop, "load", read)

    async def listed() -> tuple[int, list[object]]:
        return threading.get_ident(), [event async for event in host().run("/slash-chain list")]

    on_loop, events = asyncio.run(listed())

    assert readers and on_loop not in readers
    assert any("/ship" in str(event) for event in events)
