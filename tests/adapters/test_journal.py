"""The journal of running programs (issue 35), a real SQLite database: what is written is read back, a finished run
is never offered again, two processes journaling at once lose no row and see no lock error, a corrupt file and a
newer schema are one error, an old schema is migrated, finished runs are pruned, any interpreter state
round-trips through it, and a session's journal keeps the person's edits of its running program."""

import multiprocessing
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from slashkit.adapters.journal import KEEP_DAYS, KEEP_RUNS, MIGRATIONS, Journal, JournalError, SessionJournal, path_of
from slashkit.adapters.memory import Command, Local, MemoryHost, Prompt
from slashkit.adapters.run_codec import read, read_cut, written
from slashkit.core.chain_machine import ChainCommandTyped
from slashkit.core.grammar import parse
from slashkit.core.interpreter import Run
from slashkit.core.session import on_event
from tests.property.test_programs_bash import programs

WHERE = ("claude-code", "session-1", "/work/p")


def test_a_written_run_is_read_back_until_it_finishes(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite3")

    journal.write("r1", WHERE, {"step": 1})
    journal.write("r1", WHERE, {"step": 2})

    found = journal.cut_off(WHERE, within_s=3600)
    assert found is not None and (found.id, found.state) == ("r1", {"step": 2})
    assert journal.cut_off(("claude-code", "session-2", "/work/p"), within_s=3600) is None

    journal.finish("r1")
    assert journal.cut_off(WHERE, within_s=3600) is None


def test_a_slashkit_run_is_found_by_its_id_newest_program_first_and_only_while_cut_off(tmp_path: Path) -> None:
    now = [1000.0]
    journal = Journal(tmp_path / "runs.sqlite3", clock=lambda: now[0])
    journal.write("run_1-1", WHERE, {"step": 1})
    now[0] += 1
    # A resumed run's programs: the run's id, then a part of their own.
    journal.write("run_1-ab12-1", WHERE, {"step": 2})
    # Another run whose id the first one's starts, and one whose id would match it as a LIKE pattern.
    journal.write("run_10-1", WHERE, {"step": 9})
    journal.write("runX1-1", WHERE, {"step": 9})

    found = journal.of_run("run_1")
    assert found is not None and (found.id, found.state) == ("run_1-ab12-1", {"step": 2})
    journal.finish("run_1-ab12-1")
    journal.finish("run_1-1")
    assert journal.of_run("run_1") is None
    assert journal.of_run("run") is None


def test_a_run_older_than_the_limit_is_not_offered(tmp_path: Path) -> None:
    now = [1000.0]
    journal = Journal(tmp_path / "runs.sqlite3", clock=lambda: now[0])
    journal.write("r1", WHERE, {})
    now[0] += 24 * 3600 + 1

    assert journal.cut_off(WHERE, within_s=24 * 3600) is None


def _journal_many(path: str, worker: int) -> None:
    journal = Journal(Path(path))
    for n in range(50):
        journal.write(f"w{worker}-{n}", ("claude-code", f"s{worker}", "/p"), {"n": n})


def test_two_processes_journaling_at_once_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_journal_many, args=(str(path), w)) for w in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0

    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (100,)


def test_a_corrupt_database_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    path.write_bytes(b"this is not a database" * 100)

    with pytest.raises(JournalError, match=r"runs\.sqlite3"):
        Journal(path).write("r1", WHERE, {})
    assert not _held_open(path)


def test_a_journal_whose_file_was_removed_or_broke_writes_to_the_file_there_now(tmp_path: Path) -> None:
    # The journal keeps its connection between calls: one to a file the person removed would write where no one
    # reads, and one an error closed must open again.
    path = tmp_path / "runs.sqlite3"
    journal = Journal(path)
    journal.write("r1", WHERE, {"step": 1})
    for made in tmp_path.glob("runs.sqlite3*"):
        made.unlink()

    journal.write("r2", WHERE, {"step": 2})
    found = Journal(path).cut_off(WHERE, within_s=3600)
    assert found is not None and (found.id, found.state) == ("r2", {"step": 2})

    for made in tmp_path.glob("runs.sqlite3*"):
        made.unlink()
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalError):
        journal.write("r3", WHERE, {})
    path.unlink()
    journal.write("r4", WHERE, {"step": 4})
    found = Journal(path).cut_off(WHERE, within_s=3600)
    assert found is not None and found.id == "r4"


def test_a_folder_that_cannot_be_written_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError):
        Journal(Path("/proc/nope/runs.sqlite3")).write("r1", WHERE, {})


def test_a_newer_schema_is_refused_and_an_older_one_migrated(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(JournalError, match="newer than this slashkit"):
        Journal(newer).write("r1", WHERE, {})

    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).close()  # version 0: no table yet
    Journal(empty).write("r1", WHERE, {"n": 1})
    with sqlite3.connect(empty) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)


def test_finished_runs_are_pruned_by_age_and_by_number(tmp_path: Path) -> None:
    now = [0.0]
    journal = Journal(tmp_path / "runs.sqlite3", clock=lambda: now[0])
    journal.write("old", WHERE, {})
    journal.finish("old")
    now[0] += KEEP_DAYS * 86400 + 1
    for n in range(KEEP_RUNS + 5):
        journal.write(f"r{n}", WHERE, {})
    for n in range(KEEP_RUNS + 5):
        now[0] += 1
        journal.finish(f"r{n}")

    with sqlite3.connect(journal.path) as db:
        ids = {row[0] for row in db.execute("SELECT id FROM runs")}
    assert "old" not in ids
    assert len(ids) == KEEP_RUNS
    assert "r0" not in ids and f"r{KEEP_RUNS + 4}" in ids


def test_the_journal_lives_in_the_persons_state() -> None:
    assert path_of({"XDG_STATE_HOME": "/s"}) == Path("/s/slashkit/runs.sqlite3")
    assert path_of({"HOME": "/h"}) == Path("/h/.local/state/slashkit/runs.sqlite3")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(programs())
def test_any_interpreter_state_round_trips_through_the_journal(tmp_path: Path, program: tuple[str, object]) -> None:
    run = Run(parse(program[0]).unwrap(), ("success", "failure", None), "out", 7)
    journal = Journal(tmp_path / "runs.sqlite3")

    journal.write("r", WHERE, written(run))

    found = journal.cut_off(WHERE, within_s=60)
    assert found is not None and read(found.state) == run


def test_the_persons_edit_of_the_running_program_is_journaled(tmp_path: Path) -> None:
    h = MemoryHost(commands={"a": Command(Local()), "b": Command(Prompt("do b")), "c": Command(Local())})
    h.type("/a && /b x")
    h.settle()
    journal = SessionJournal(Journal(tmp_path / "runs.sqlite3"), WHERE, within_s=3600)
    before = h.session

    moved = on_event(before, ChainCommandTyped("add /c", enabled=True, origin="composer"))

    assert journal.moved(before.chains, moved) == []
    entry = Journal(tmp_path / "runs.sqlite3").cut_off(WHERE, within_s=3600)
    assert entry is not None
    assert [step.name for step in read_cut(entry.state, entry.id).steps] == ["/a", "/b x", "/c"]


def _held_open(path: Path) -> bool:
    """Whether this process holds the database (or its WAL files) open."""
    fds = Path("/proc/self/fd")
    return any(os.path.realpath(fd).startswith(str(path)) for fd in fds.iterdir())


def test_a_session_that_ends_leaves_no_connection_to_the_journal_open(tmp_path: Path) -> None:
    # The shared helper outlives many sessions: each one's connection is closed as it ends, not left to the collector.
    path = tmp_path / "runs.sqlite3"
    journal = Journal(path)
    session = SessionJournal(journal, WHERE, within_s=3600)
    journal.write("r1", WHERE, {"step": 1})
    assert _held_open(path)

    session.close()
    assert not _held_open(path)
    found = Journal(path).cut_off(WHERE, within_s=3600)
    assert found is not None and found.id == "r1"


def _first_write(n: int, journal: Journal, start: "threading.Barrier", failed: list[str]) -> None:
    start.wait()
    try:
        journal.write(f"r{n}", WHERE, {"n": n})
    except JournalError as err:
        failed.append(str(err))


def test_sessions_whose_first_writes_open_a_new_journal_at_once_all_write(tmp_path: Path) -> None:
    """Two connections turning a new database to WAL at the same moment deadlock, and SQLite answers one of them
    "database is locked" at once, past its busy timeout (seen with two opencode sessions' first chains)."""
    for attempt in range(40):
        path = tmp_path / f"runs-{attempt}.sqlite3"
        journals = [Journal(path) for _ in range(6)]
        start = threading.Barrier(len(journals))
        failed: list[str] = []
        threads = [threading.Thread(target=_first_write, args=(n, j, start, failed)) for n, j in enumerate(journals)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failed == [], failed
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM runs").fetchone() == (len(journals),)
        for journal in journals:
            journal.close()
