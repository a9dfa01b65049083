"""The journal of running programs (issue 35): after each step a program starts, its state is written to SQLite
(`$XDG_STATE_HOME/slashkit/runs.sqlite3`, or `~/.local/state/slashkit/` when that is unset), keyed by host, session and
project, so a run cut off by a crash or a closed terminal can be resumed when the person asks, and never by itself.

The standard library's sqlite3, in WAL mode with a busy timeout, so sessions that journal at once wait for each other
rather than fail. The schema is versioned (`PRAGMA user_version`) and migrated forward on open. Finished runs are
kept KEEP_DAYS days and at most KEEP_RUNS rows, then pruned. A database that is corrupt, locked past the timeout or
cannot be written is one `JournalError` the caller turns into one line, and the program runs on in memory.
"""

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from attrs import frozen

from slashkit.core.chain_machine import ChainEnded, ChainState, Cut, cut_of
from slashkit.core.ports import Environment
from slashkit.core.session import Moved, StepStarted

if TYPE_CHECKING:
    import sqlite3

#: The file's name in the person's state folder.
FILE: Final = "runs.sqlite3"
#: How long a write waits for another session's, in seconds.
BUSY_S: Final = 5.0
#: Opening a journal (the WAL switch, the migrations) is done by one connection of a process at a time, and tried
#: this many times across processes: two connections turning a new database to WAL at once deadlock, and SQLite
#: answers one of them "database is locked" at once, without waiting out its busy timeout (seen with two opencode
#: sessions' first chains in one shared helper; tests/adapters/test_journal.py).
OPEN_TRIES: Final = 5
_opening = threading.Lock()
#: Finished runs kept: this many days, and at most this many rows.
KEEP_DAYS: Final = 7
KEEP_RUNS: Final = 1000
#: The largest state written (a program is at most 256 KiB of text; its statuses at most 1000).
MAX_STATE: Final = 4 << 20

#: The schema's migrations, in order: the Nth brings the database from version N to N + 1.
MIGRATIONS: Final[tuple[str, ...]] = (
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        session TEXT NOT NULL,
        project TEXT NOT NULL,
        state TEXT,
        started REAL NOT NULL,
        updated REAL NOT NULL,
        finished REAL
    );
    CREATE INDEX runs_by_session ON runs (host, session, project, finished);
    CREATE INDEX runs_by_project ON runs (project, finished);
    """,
)


class JournalError(Exception):
    """The journal cannot be read or written (corrupt, locked too long, no room, no permission)."""


@frozen
class Entry:
    """One run as the journal holds it: its id, where it ran, its state (None once finished) and when it was last
    written (seconds since the epoch)."""

    id: str
    host: str
    session: str
    project: str
    state: object
    updated: float


def path_of(env: Environment) -> Path:
    """`$XDG_STATE_HOME/slashkit/runs.sqlite3`, or under `~/.local/state` when it is unset."""
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home(), ".local", "state"))
    return Path(state, "slashkit", FILE)


class Journal:
    """The journal at one path, each call one transaction. It keeps one connection, opened at its first call (a session
    with no chain opens none) and again when an error closed it or the file was replaced; a write then costs a
    transaction, not an open and a migration check (docs/performance.md)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        # A helper serves a session's events one at a time, but its threads may differ: one transaction at a time.
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None

    def write(self, run_id: str, where: tuple[str, str, str], state: object) -> None:
        """Writes a running program's state (JSON's types) under its id; `where` is (host, session, project)."""
        text = json.dumps(state, separators=(",", ":"))
        if len(text) > MAX_STATE:
            raise JournalError(f"the run's state is {len(text):,} bytes, over {MAX_STATE:,}")
        now = self._clock()
        host, session, project = where
        with self._connected() as db:
            db.execute(
                "INSERT INTO runs (id, host, session, project, state, started, updated) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated = excluded.updated, finished = NULL",
                (run_id, host, session, project, text, now, now),
            )

    def finish(self, run_id: str) -> None:
        """Marks a run finished (ended, stopped or forgotten): it is never offered again, and pruned in time."""
        now = self._clock()
        with self._connected() as db:
            db.execute("UPDATE runs SET state = NULL, finished = ?, updated = ? WHERE id = ?", (now, now, run_id))
            self._prune(db, now)

    def cut_off(self, where: tuple[str, str, str], within_s: float) -> Entry | None:
        """The newest run of this host, session and project that did not finish, written within `within_s`."""
        host, session, project = where
        since = self._clock() - within_s
        with self._connected() as db:
            row = db.execute(
                "SELECT id, host, session, project, state, updated FROM runs WHERE host = ? AND session = ? AND"
                " project = ? AND finished IS NULL AND updated >= ? ORDER BY updated DESC LIMIT 1",
                (host, session, project, since),
            ).fetchone()
        return None if row is None else _entry(row)

    def of_run(self, run_id: str) -> Entry | None:
        """The newest program of the run `run_id` (`slashkit run`'s id, which starts each of its programs' names, and
        those of its resumed runs) that did not finish."""
        with self._connected() as db:
            row = db.execute(
                "SELECT id, host, session, project, state, updated FROM runs WHERE substr(id, 1, length(?) + 1) = ?"
                " AND finished IS NULL ORDER BY updated DESC LIMIT 1",
                (run_id, f"{run_id}-"),
            ).fetchone()
        return None if row is None else _entry(row)

    @contextlib.contextmanager
    def _connected(self) -> "Iterator[sqlite3.Connection]":
        """One transaction, committed on a clean exit; every sqlite3 error (and the folder's) is a JournalError, after
        which the connection is closed, so the next call opens it again."""
        # Imported with the first chain's first write, not with the helper: ~5 ms off its start (CPython 3.11.7).
        import sqlite3

        with self._lock:
            try:
                db = self._open()
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except (sqlite3.Error, OSError) as err:
                self.close()
                raise JournalError(f"{self.path}: {err}") from None

    def _open(self) -> "sqlite3.Connection":
        """The kept connection, or a new one (migrated) when there is none or the file is not the one it opened."""
        import sqlite3

        try:
            inode: int | None = self.path.stat().st_ino
        except FileNotFoundError:
            inode = None
        if self._db is not None and inode == self._inode:
            return self._db
        self.close()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for tried in range(1, OPEN_TRIES + 1):
            db = sqlite3.connect(self.path, timeout=BUSY_S, isolation_level=None, check_same_thread=False)
            try:
                with _opening:
                    db.execute(f"PRAGMA busy_timeout = {int(BUSY_S * 1000)}")
                    db.execute("PRAGMA journal_mode = WAL")
                    db.execute("PRAGMA synchronous = NORMAL")  # with WAL: a crashed process loses no committed write
                    _migrate(db)
                break
            except sqlite3.Error as err:
                db.close()  # any failed open, not only a locked one: a corrupt file's connection is not kept either
                if tried == OPEN_TRIES or not (isinstance(err, sqlite3.OperationalError) and "locked" in str(err)):
                    raise
                time.sleep(0.02 * tried)
        self._db = db
        self._inode = self.path.stat().st_ino
        return db

    def close(self) -> None:
        """Closes the kept connection, if any (the next call opens one again)."""
        db, self._db, self._inode = self._db, None, None
        if db is not None:
            db.close()

    def _prune(self, db: "sqlite3.Connection", now: float) -> None:
        db.execute("DELETE FROM runs WHERE finished IS NOT NULL AND finished < ?", (now - KEEP_DAYS * 86400,))
        db.execute(
            "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE finished IS NOT NULL"
            " ORDER BY finished DESC LIMIT -1 OFFSET ?)",
            (KEEP_RUNS,),
        )


def _entry(row: tuple[str, str, str, str, str | None, float]) -> Entry:
    run_id, host, session, project, state, updated = row
    try:
        data = None if state is None else json.loads(state)
    except ValueError as err:
        raise JournalError(f"run {run_id}'s state is not JSON: {err}") from None
    return Entry(run_id, host, session, project, data, updated)


def _migrate(db: "sqlite3.Connection") -> None:
    """Brings the schema to the newest version, one migration at a time, each in its own transaction."""
    import sqlite3

    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > len(MIGRATIONS):
        raise sqlite3.DatabaseError(f"its schema is version {version}, newer than this slashkit's {len(MIGRATIONS)}")
    for number in range(version, len(MIGRATIONS)):
        db.execute("BEGIN IMMEDIATE")
        (again,) = db.execute("PRAGMA user_version").fetchone()
        if again > number:  # another session migrated it meanwhile
            db.execute("ROLLBACK")
            continue
        for statement in filter(str.strip, MIGRATIONS[number].split(";")):
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {number + 1}")
        db.execute("COMMIT")


def default(env: Environment = os.environ) -> Journal:
    """The person's journal."""
    return Journal(path_of(env))


#: How long a cut-off run is offered to resume unless the person sets another (SLASHKIT_RESUME_HOURS).
RESUME_HOURS: Final = 24
#: The person's setting of it, in whole hours from 1 to a year's.
RESUME_VARIABLE: Final = "SLASHKIT_RESUME_HOURS"
#: The variable that names each host's session, so a continued session finds its own runs: Claude Code's keeps its id
#: on `--continue` and `--resume` (measured on 2.1.328), pi's on `--continue`, `--session` and `/resume` (docs/pi.md,
#: measured on 1.6.0), whose extension brings it. One variable a host: another host's, inherited by a process its
#: shell started (pi exports `PI_SESSION_ID` to its `bash` tool), names no session of this one. A host with none
#: journals nothing. Gemini CLI's keeps its id on `--resume` and gives it to every hook as `GEMINI_SESSION_ID`
#: (measured on 0.61.0); slashkit's hooks name it from the payload's `session_id` (slashkit.adapters.gemini.resident).
#: opencode names no session in any variable: its plugin brings the id opencode gives the session, which stays the same
#: when a later server reopens it (docs/opencode.md, measured on 1.18.33).
SESSION_VARIABLES: Final[Mapping[str, str]] = {
    "claude-code": "CLAUDE_CODE_SESSION_ID",
    "pi": "PI_SESSION_ID",
    "gemini": "GEMINI_SESSION_ID",
    "opencode": "OPENCODE_SESSION_ID",
}


def session_of(host: str, env: Environment) -> str:
    """The session id `host` gives in `env`, or "" when it gives none.

    >>> given = {"PI_SESSION_ID": "p1", "CLAUDE_CODE_SESSION_ID": "c1"}
    >>> session_of("pi", given), session_of("claude-code", given), session_of("opencode", given)
    ('p1', 'c1', '')
    >>> session_of("lich", {"OPENCODE_SESSION_ID": "o1"})
    ''
    """
    variable = SESSION_VARIABLES.get(host)
    return (env.get(variable) or "") if variable is not None else ""


def resume_within_s(env: Environment) -> float:
    """How long a cut-off run is offered, in seconds (`RESUME_VARIABLE`, else RESUME_HOURS).

    >>> resume_within_s({"SLASHKIT_RESUME_HOURS": "2"}), resume_within_s({"SLASHKIT_RESUME_HOURS": "x"})
    (7200.0, 86400.0)
    """
    written = (env.get(RESUME_VARIABLE) or "").strip()
    hours = int(written) if written.isdigit() and 1 <= int(written) <= 24 * 366 else RESUME_HOURS
    return hours * 3600.0


class SessionJournal:
    """The journal as one session keeps it: after each move, the program that started a step is written (its state
    before that step ended, so a resume runs the step again), and the one that ended is marked finished; a continued
    session is offered the run its previous process left cut off (`offered`), which the core holds until the person
    resumes or forgets it. Without a session id (a host that names none) nothing is journaled. A journal that cannot
    be used is one line, once, and the programs run on in memory."""

    def __init__(
        self, journal: Journal | None, where: tuple[str, str, str], within_s: float, prefix: str | None = None
    ) -> None:
        """`prefix` starts the name of each program journaled (by default the session's id and a random part):
        `slashkit run` gives its run's id, so that `--resume RUN_ID` finds it."""
        self._journal = journal if where[1] else None
        self._where = where
        self._within_s = within_s
        #: This process's runs are named apart from any earlier process's of the same session.
        # os.urandom, not secrets: the name needs no secrecy, and secrets (hmac, hashlib) would be imported before the
        # helper's first answer (~3 ms, CPython 3.11.7).
        self._prefix = prefix or f"{where[1]}-{os.urandom(4).hex()}"
        self._told = False

    def close(self) -> None:
        """Closes the journal's connection as the session ends (a helper outlives many sessions)."""
        if self._journal is not None:
            self._journal.close()

    def offered(self) -> tuple[Cut | None, list[str]]:
        """The run this session's previous process left cut off, if any, and a line if the journal failed."""
        if self._journal is None:
            return None, []
        # The codec (cattrs) is imported once a session needs it, not with the helper (~20 ms, CPython 3.11.7).
        from cattrs import ClassValidationError

        from slashkit.adapters.run_codec import read_cut

        try:
            entry = self._journal.cut_off(self._where, self._within_s)
            return (None if entry is None else read_cut(entry.state, entry.id)), []
        except (JournalError, ValueError, TypeError, ClassValidationError) as err:
            return None, self._failed(err)

    def moved(self, before: ChainState, moved: Moved) -> list[str]:
        """Journals what one move did; returns the line to show if the journal failed (once a session)."""
        after = moved.session.chains
        started_or_ended = any(isinstance(e, StepStarted | ChainEnded) for e in moved.effects)
        cut_settled = before.cut is not None and after.cut is None
        # The person's `/slash-chain add` or `drop` makes a new program (a move of the same step keeps its object).
        edited = (
            before.running is not None
            and after.running is not None
            and before.running.chain == after.running.chain
            and before.running.run.program is not after.running.run.program
        )
        if self._journal is None or not (started_or_ended or cut_settled or edited):
            return []
        from slashkit.adapters.run_codec import written_cut

        try:
            if edited and after.running is not None:
                self._journal.write(
                    f"{self._prefix}-{after.running.chain}", self._where, written_cut(cut_of(after.running))
                )
            for effect in moved.effects:
                match effect:
                    case StepStarted(chain=chain) if after.running is not None and after.running.chain == chain:
                        self._journal.write(f"{self._prefix}-{chain}", self._where, written_cut(cut_of(after.running)))
                    case ChainEnded(chain=chain):
                        self._journal.finish(f"{self._prefix}-{chain}")
            if before.cut is not None and after.cut is None:
                self._journal.finish(before.cut.key)  # resumed (its run goes on under a new name) or forgotten
        except JournalError as err:
            return self._failed(err)
        return []

    def _failed(self, err: Exception) -> list[str]:
        if self._told:
            return []
        self._told = True
        return [f"slashkit: the journal of running chains is unavailable ({err}); chains still run, kept in memory"]
