"""The artifact store: every attempt, its diffs, failures and guard decisions, in SQLite.

The database lives at `<root>/.patchsmith/patchsmith.db`, next to a `.gitignore`
holding `*` so the directory never shows in `git status`. It runs in WAL mode
with a busy timeout, and every write is one `BEGIN IMMEDIATE` transaction, so two
processes may record at once. Records are only ever inserted, never updated.

A database this machine's patchsmith did not create is data, not the store
(docs/decisions/0031): each store records, when it is created, the inode number of its
file (`store_origin`), which a database that arrived by `git clone`, an archive or a
copy cannot know. One without that record, with another number, or holding a trigger
or view (patchsmith makes none) is moved aside to `.patchsmith/quarantine/store-<hex>/`
and a new store is made. Every connection runs with `PRAGMA trusted_schema = OFF`.

`sqlite3` and `OSError` failures become `PatchRefused` carrying an `IO_ERROR`
`PatchFailure` here, at this seam; misuse (a closed store, a duplicate id)
raises `ValueError`/`RuntimeError`, and unknown errors pass through untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.runtime.atomic import fsync_directory, write_new_file
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.statedir import (
    StateDirUnsafe,
    check_entry,
    ensure_subdir,
    prepare_state_dir,
    unsafe_failure,
)

if TYPE_CHECKING:
    from patchsmith.model.evidence import Evidence

__all__ = [
    "DB_FILE_NAME",
    "MAX_LIST_LIMIT",
    "SCHEMA_VERSION",
    "STATE_DIR_NAME",
    "UNIQUE_ID_PREFIX",
    "AttemptKind",
    "AttemptRecord",
    "AttemptStatus",
    "FileRecord",
    "GuardDecision",
    "RunRecord",
    "RunTurnRecord",
    "Store",
    "keep_open",
    "new_attempt_id",
]

DB_FILE_NAME = "patchsmith.db"
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
MAX_LIST_LIMIT = 1_000_000_000
"""The most attempts `list_attempts` returns at once (SQLite integers are 64-bit)."""
_BUSY_TIMEOUT_MS = 10_000
_ID_PREFIX = "a-"

UNIQUE_ID_PREFIX = 8
"""`a-` and the next six characters name one attempt of a store, always."""

_ID_TRIES = 64
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class AttemptKind(StrEnum):
    """What produced an attempt."""

    APPLY = "apply"
    PROPOSE = "propose"
    WRITE = "write"
    RECIPE = "recipe"
    REVERT = "revert"


class AttemptStatus(StrEnum):
    """How an attempt ended. `CHECKED` is a dry run: everything but the write."""

    APPLIED = "applied"
    REFUSED = "refused"
    PARTIAL = "partial"
    ALREADY_APPLIED = "already_applied"
    CHECKED = "checked"


@dataclass(frozen=True)
class FileRecord:
    """One touched file: its action and its sha256 before and after (`None` when absent)."""

    path: str
    action: Action
    before_sha256: str | None
    after_sha256: str | None
    old_path: str | None = None
    """The source path of a MOVE; `None` otherwise."""

    @classmethod
    def from_change(cls, change: FileChange) -> FileRecord:
        """The record of a staged change, hashing its old and new bytes."""
        return cls(
            path=change.path,
            action=change.action,
            before_sha256=_sha256(change.old_bytes),
            after_sha256=_sha256(change.new_bytes),
            old_path=change.old_path if change.action is Action.MOVE else None,
        )

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output."""
        return {
            "path": self.path,
            "action": self.action.value,
            "old_path": self.old_path,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
        }


@dataclass(frozen=True)
class GuardDecision:
    """One guard's verdict on a staged change; `code` is what it refuses with."""

    name: str
    code: FailureCode
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output."""
        return {
            "name": self.name,
            "code": self.code.value,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True, kw_only=True)
class AttemptRecord:
    """Everything known about one attempt to change a workspace.

    Timestamps are UTC ISO 8601 strings. Diffs are git-format text (empty when
    there is none), replayable with `git apply`. An empty `id` asks
    `Store.record_attempt` to assign one.
    """

    id: str = ""
    run_id: str
    proposal_id: str
    attempt_no: int
    kind: AttemptKind
    status: AttemptStatus
    created_at: str
    finished_at: str
    base_commit: str | None = None
    input_text: str = ""
    staged_diff: str = ""
    applied_diff: str = ""
    files: tuple[FileRecord, ...] = field(default_factory=tuple)
    failures: tuple[PatchFailure, ...] = field(default_factory=tuple)
    decisions: tuple[GuardDecision, ...] = field(default_factory=tuple)
    proposal_json: str | None = None
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    """Verification runs (profile, argv, exit code, duration, failures, output digest)."""
    dry_run: bool = False
    """A check (`--check`, a recipe's dry run): nothing was to be written, whatever its status.
    A run's checks are kept, but never judged as its attempts."""

    @property
    def is_check(self) -> bool:
        """A dry run: status `checked`, or a dry run that was refused."""
        return self.dry_run or self.status is AttemptStatus.CHECKED

    def summary_json(self) -> dict[str, object]:
        """The JSON object `log --json` prints: everything but the texts and decisions."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "proposal_id": self.proposal_id,
            "attempt_no": self.attempt_no,
            "kind": self.kind.value,
            "status": self.status.value,
            "dry_run": self.is_check,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "base_commit": self.base_commit,
            "files": [f.to_json() for f in self.files],
            "failures": [f.to_json() for f in self.failures],
        }

    def to_json(self) -> dict[str, object]:
        """The JSON object `show --json` prints: every field."""
        return {
            **self.summary_json(),
            "decisions": [d.to_json() for d in self.decisions],
            "evidence": [e.to_json() for e in self.evidence],
            "input_text": self.input_text,
            "staged_diff": self.staged_diff,
            "applied_diff": self.applied_diff,
            "proposal_json": self.proposal_json,
        }


@dataclass(frozen=True, kw_only=True)
class RunTurnRecord:
    """One turn of a repair loop run: what the source sent and what became of it.

    `attempt_id` is the attempt the turn made, or for a duplicate (a proposal the run
    had already seen refused, answered from memory) the attempt that refused it first.
    """

    seq: int
    created_at: str
    milestone: str
    attempt_no: int
    attempt_id: str | None
    outcome: str
    fingerprint: str
    strategy: str | None
    selection_json: str
    feedback: str

    def to_json(self) -> dict[str, object]:
        """The JSON object `patchsmith run --json` and the store print."""
        return {
            "seq": self.seq,
            "created_at": self.created_at,
            "milestone": self.milestone,
            "attempt_no": self.attempt_no,
            "attempt_id": self.attempt_id,
            "outcome": self.outcome,
            "fingerprint": self.fingerprint,
            "strategy": self.strategy,
            "selection": json.loads(self.selection_json),
            "feedback": self.feedback,
        }


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """A repair loop run as recorded: task, budget, turns, and (once ended) its outcome."""

    run_id: str
    created_at: str
    task_json: str
    budget_json: str
    turns: tuple[RunTurnRecord, ...] = ()
    finished_at: str | None = None
    status: str | None = None
    result_json: str | None = None


def new_attempt_id() -> str:
    """A random id: `a-` + 18 Crockford base-32 characters (90 bits).

    Random from the first character, so ids made a millisecond apart differ where a
    person starts typing; `Store.record_attempt` also keeps the first
    `UNIQUE_ID_PREFIX` characters unique within a store.
    """
    # 90 random bits as `secrets.randbits(90)` draws them, without importing `random`
    return _ID_PREFIX + _base32(int.from_bytes(os.urandom(12)) >> 6, 18)


def _base32(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return "".join(reversed(chars))


def _sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _io_failure(message: str) -> PatchRefused:
    return PatchRefused([PatchFailure(code=FailureCode.IO_ERROR, message=message)])


@contextmanager
def _mapped_errors(action: str) -> Iterator[None]:
    """Turn storage errors into an `IO_ERROR` refusal; let misuse and unknown errors through."""
    try:
        yield
    except (sqlite3.InterfaceError, sqlite3.ProgrammingError, sqlite3.IntegrityError):
        # These mean patchsmith used SQLite wrongly: a bug to see, not a condition to report.
        raise
    except sqlite3.Error as exc:
        raise _io_failure(f"{action}: {exc}") from exc
    except OSError as exc:
        raise _io_failure(f"{action}: {exc.strerror or exc}") from exc


# Migrations, oldest first. Migration N (1-based) takes a database at schema
# version N-1 to version N; each runs inside the migrating transaction, so
# statements must not commit (no `executescript`).


def _migration_1_attempts(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE attempts (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            proposal_id TEXT NOT NULL,
            attempt_no INTEGER NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            base_commit TEXT,
            input_text TEXT NOT NULL,
            staged_diff TEXT NOT NULL,
            applied_diff TEXT NOT NULL,
            proposal_json TEXT
        )"""
    )
    conn.execute("CREATE INDEX attempts_by_time ON attempts (created_at, id)")
    conn.execute(
        """CREATE TABLE attempt_files (
            attempt_id TEXT NOT NULL REFERENCES attempts (id),
            seq INTEGER NOT NULL,
            path TEXT NOT NULL,
            action TEXT NOT NULL,
            before_sha256 TEXT,
            after_sha256 TEXT,
            PRIMARY KEY (attempt_id, seq)
        )"""
    )
    conn.execute(
        """CREATE TABLE failures (
            attempt_id TEXT NOT NULL REFERENCES attempts (id),
            seq INTEGER NOT NULL,
            code TEXT NOT NULL,
            message TEXT NOT NULL,
            file TEXT,
            hunk INTEGER,
            hint TEXT,
            excerpt TEXT,
            current_sha256 TEXT,
            rule TEXT,
            PRIMARY KEY (attempt_id, seq)
        )"""
    )
    conn.execute(
        """CREATE TABLE decisions (
            attempt_id TEXT NOT NULL REFERENCES attempts (id),
            seq INTEGER NOT NULL,
            name TEXT NOT NULL,
            code TEXT NOT NULL,
            passed INTEGER NOT NULL,
            detail TEXT NOT NULL,
            PRIMARY KEY (attempt_id, seq)
        )"""
    )


def _migration_2_runs_proposals_moves(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE attempt_files ADD COLUMN old_path TEXT")
    conn.execute(
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            first_seen_at TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            first_seen_at TEXT NOT NULL
        )"""
    )
    # The idempotence lookup searches applied attempts by proposal.
    conn.execute("CREATE INDEX attempts_by_proposal ON attempts (proposal_id, status)")
    conn.execute(
        "INSERT OR IGNORE INTO runs SELECT run_id, MIN(created_at) FROM attempts GROUP BY run_id"
    )
    conn.execute(
        "INSERT OR IGNORE INTO proposals"
        " SELECT proposal_id, MIN(run_id), MIN(created_at) FROM attempts GROUP BY proposal_id"
    )


def _migration_3_evidence(conn: sqlite3.Connection) -> None:
    # One row per verification run: the columns a query needs, plus the whole run as JSON
    # (argv, parsed failures, bounded output) so that `show` prints it as it was.
    conn.execute(
        """CREATE TABLE evidence (
            attempt_id TEXT NOT NULL REFERENCES attempts(id),
            seq INTEGER NOT NULL,
            profile TEXT NOT NULL,
            side TEXT NOT NULL,
            exit_code INTEGER,
            duration_s REAL NOT NULL,
            passed INTEGER NOT NULL,
            output_sha256 TEXT NOT NULL,
            run_json TEXT NOT NULL,
            PRIMARY KEY (attempt_id, seq)
        )"""
    )


def _migration_4_judgements(conn: sqlite3.Connection) -> None:
    # One row per judgement of an attempt or a run: the score and verdict to query, and
    # the rubric (and the caller's hook verdict) as JSON, as `patchsmith judge` printed it.
    conn.execute(
        """CREATE TABLE judgements (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            subject TEXT NOT NULL,
            subject_kind TEXT NOT NULL,
            created_at TEXT NOT NULL,
            score REAL NOT NULL,
            verdict TEXT NOT NULL,
            judgement_json TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX judgements_by_subject ON judgements (subject, id)")


def _migration_5_run_tasks(conn: sqlite3.Connection) -> None:
    # A repair loop run (`run_task`): its task and budget when it starts, one row per turn
    # (the selector's inputs and reason, the attempt it made or the duplicate it refused
    # without one, the feedback sent back), and its outcome when it ends.
    conn.execute(
        """CREATE TABLE run_tasks (
            run_id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            task_json TEXT NOT NULL,
            budget_json TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE run_turns (
            run_id TEXT NOT NULL REFERENCES run_tasks(run_id),
            seq INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            milestone TEXT NOT NULL,
            attempt_no INTEGER NOT NULL,
            attempt_id TEXT,
            outcome TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            strategy TEXT,
            selection_json TEXT NOT NULL,
            feedback TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        )"""
    )
    conn.execute(
        """CREATE TABLE run_results (
            run_id TEXT PRIMARY KEY REFERENCES run_tasks(run_id),
            finished_at TEXT NOT NULL,
            status TEXT NOT NULL,
            result_json TEXT NOT NULL
        )"""
    )


def _migration_6_dry_runs(conn: sqlite3.Connection) -> None:
    # A refused dry run was stored as plain `refused`: mark checks, so that a run's
    # judgement never counts one as its attempt. Older rows are attempts (0), except the
    # `checked` ones, which always were dry runs.
    conn.execute("ALTER TABLE attempts ADD COLUMN dry_run INTEGER NOT NULL DEFAULT 0")
    conn.execute("UPDATE attempts SET dry_run = 1 WHERE status = 'checked'")


_Migration = Callable[[sqlite3.Connection], None]
_MIGRATIONS: tuple[_Migration, ...] = (
    _migration_1_attempts,
    _migration_2_runs_proposals_moves,
    _migration_3_evidence,
    _migration_4_judgements,
    _migration_5_run_tasks,
    _migration_6_dry_runs,
)
SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema version this patchsmith writes."""


def _current_version(conn: sqlite3.Connection) -> int | None:
    """The recorded schema version, read without taking the write lock (None: no table)."""
    try:
        row = conn.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else int(row[0])


def _migrate(conn: sqlite3.Connection, migrations: tuple[_Migration, ...]) -> None:
    """Bring the database to `len(migrations)` in one transaction; refuse a newer schema."""
    if _current_version(conn) == len(migrations):
        return  # the common case: nothing to do, so no write transaction either
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
            _record_origin(conn)
        current = 0 if row is None else int(row[0])
        if current > len(migrations):
            raise _io_failure(
                f"the store has schema version {current}, newer than the {len(migrations)} "
                "this patchsmith understands; upgrade patchsmith"
            )
        for step in migrations[current:]:
            step(conn)
        conn.execute("UPDATE schema_version SET version = ?", (len(migrations),))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_ORIGIN_TABLE = "store_origin"
_QUARANTINE = "quarantine"
_UNTRUSTED_SCHEMA_TYPES = ("trigger", "view")


def _main_file(conn: sqlite3.Connection) -> str:
    """The path of the connection's main database file."""
    for _seq, name, path in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return str(path)
    raise sqlite3.OperationalError("no main database")  # pragma: no cover - SQLite always has one


def _record_origin(conn: sqlite3.Connection) -> None:
    """Bind a new store to its file: its inode number, which a copy or a clone cannot know."""
    conn.execute(f"CREATE TABLE {_ORIGIN_TABLE} (inode INTEGER NOT NULL, created_at TEXT NOT NULL)")
    inode = os.stat(_main_file(conn)).st_ino
    conn.execute(f"INSERT INTO {_ORIGIN_TABLE} VALUES (?, ?)", (inode, _utc_now()))


def _untrusted(conn: sqlite3.Connection, db_file: Path) -> str | None:
    """Why the database `conn` opened is not a store this machine made (None: it is, or is new).

    Read with `trusted_schema` off and nothing but SELECTs, so no trigger can run.
    """
    kinds = [row[0] for row in conn.execute("SELECT type FROM sqlite_master").fetchall()]
    if not kinds:
        return None  # empty: a new store (or one another process is creating right now)
    foreign = sorted({k for k in kinds if k in _UNTRUSTED_SCHEMA_TYPES})
    if foreign:
        return f"it holds {' and '.join(foreign)}s, which patchsmith never creates"
    try:
        row = conn.execute(f"SELECT inode FROM {_ORIGIN_TABLE}").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is None:
        return "it has no record of being created on this machine"
    if row[0] != os.stat(db_file).st_ino:
        return "it was created for another file (copied, cloned or restored from elsewhere)"
    return None


def _move_aside(db_file: Path, reason: str) -> Path:
    """Move an untrusted database and its side files to `quarantine/store-<hex>/`; returns it."""
    state_dir = db_file.parent
    folder = ensure_subdir(state_dir / _QUARANTINE) / f"store-{os.urandom(8).hex()}"
    os.mkdir(folder, 0o700)
    for suffix in ("", *_SQLITE_SIDE_FILES):
        try:
            os.rename(state_dir / (db_file.name + suffix), folder / (db_file.name + suffix))
        except FileNotFoundError:
            continue
    note = f"patchsmith moved this database out of {state_dir}: {reason}\n"
    write_new_file(folder / "REASON.txt", note.encode("utf-8"), 0o600)
    fsync_directory(state_dir)
    return folder


_E = TypeVar("_E", bound=Enum)


def _enum(cls: type[_E], value: object) -> _E:
    try:
        return cls(value)
    except ValueError:
        raise _io_failure(
            f"the store holds an unknown {cls.__name__} {value!r}; upgrade patchsmith"
        ) from None


def _check_state_dir(state_dir: Path) -> None:
    """Make (or check) the state directory and the database's files; never through a link."""
    try:
        # Never through a symlink: the store holds model inputs and file contents.
        prepare_state_dir(state_dir)
        for name in (DB_FILE_NAME, *(DB_FILE_NAME + s for s in _SQLITE_SIDE_FILES)):
            check_entry(state_dir / name, directory=False)
    except StateDirUnsafe as exc:
        raise PatchRefused([unsafe_failure(exc)]) from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise _io_failure(f"cannot open the store in {state_dir}: {reason}") from exc


def _kept_stores() -> dict[Path, _Kept]:
    if _KEPT.pid != os.getpid():  # a forked child: the parent's connections are not ours
        _INHERITED.extend(_KEPT.by_dir.values())
        _KEPT.by_dir = {}
        _KEPT.pid = os.getpid()
    return _KEPT.by_dir


def _connect(db_file: Path) -> sqlite3.Connection:
    """A configured, migrated connection; retried while another process creates the store.

    Two processes opening a brand-new database race to switch it to WAL, and
    SQLite answers the loser "database is locked" at once (its busy handler is
    not consulted for that lock upgrade), so the whole setup is retried.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    moved = 0
    while True:
        conn = sqlite3.connect(db_file, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            # Before anything reads the schema: no SQL function a schema names (a trigger,
            # a view, a default, an index expression) may run with side effects.
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            reason = _untrusted(conn, db_file)
            if reason is not None:
                conn.close()
                if moved:  # a second foreign database at once: someone is racing us
                    raise _io_failure(f"refusing the database {db_file}: {reason}")
                _move_aside(db_file, reason)
                moved += 1
                continue
            conn.execute("PRAGMA journal_mode = WAL")
            # With WAL, NORMAL keeps the database consistent after a crash and spares an
            # fsync per commit; a power cut may lose the last record, never corrupt one.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            _migrate(conn, _MIGRATIONS)
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
        except BaseException:
            conn.close()
            raise


_SHARED_PER_THREAD = 4
"""Stores one thread keeps open through `Store.shared` (the least recently used is closed)."""


@dataclass
class _Kept:
    """A connection `Store.shared` keeps open, and the database file it was opened on."""

    conn: sqlite3.Connection
    file_id: tuple[int, int]


class _KeptStores(threading.local):
    """Each thread's open connections by state directory (SQLite connections stay in the
    thread that made them), and the process that opened them."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.by_dir: dict[Path, _Kept] = {}


_KEPT = _KeptStores()
_INHERITED: list[_Kept] = []
"""Connections a forked child inherited: never used, never closed (closing one in the child
could checkpoint the parent's database under it), only kept from being collected."""


def _file_id(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


_KEPT_OPEN: set[str] = set()
"""State directories (real paths) whose `Store.open` answers with `Store.shared`."""


@contextmanager
def keep_open(state_dir: Path) -> Iterator[None]:
    """Within this block, `Store.open(state_dir)` uses this thread's shared connection.

    For a long-running process (the MCP server) that records many attempts and reads
    the log: one connection, opened on first use (nothing is created before something
    is recorded), closed when the block ends. SQLite binds a connection to the thread
    that opened it, so use the store from the thread that enters the block.
    """
    key = os.path.realpath(state_dir)
    if key in _KEPT_OPEN:
        raise RuntimeError(f"the store in {state_dir} is already kept open")
    _KEPT_OPEN.add(key)
    try:
        yield
    finally:
        _KEPT_OPEN.discard(key)
        Store.close_shared()


class Store:
    """An open artifact store. Use `Store.open(state_dir)`; close it, or use it in `with`."""

    def __init__(self, conn: sqlite3.Connection, state_dir: Path, *, kept: bool = False) -> None:
        self._conn: sqlite3.Connection | None = conn
        self.state_dir = state_dir
        self._kept = kept

    @classmethod
    def open(cls, state_dir: Path) -> Store:
        """Open (creating on first use) the store in `state_dir`, migrated to `SCHEMA_VERSION`."""
        if _KEPT_OPEN and os.path.realpath(state_dir) in _KEPT_OPEN:
            return cls.shared(state_dir)
        _check_state_dir(state_dir)
        with _mapped_errors(f"cannot open the store in {state_dir}"):
            conn = _connect(state_dir / DB_FILE_NAME)
        return cls(conn, state_dir)

    @classmethod
    def shared(cls, state_dir: Path) -> Store:
        """The store in `state_dir` on a connection this thread keeps open between calls.

        For callers that use a store again and again (`apply` reads it, then records; a
        server or an agent loop records attempt after attempt): each use checks the state
        directory as `open` does and that the database file is still the one the
        connection has open, instead of opening, configuring and migrating SQLite and
        checkpointing its log on close. Closing the returned store (or leaving its `with`)
        keeps the connection; `close_shared()` closes this thread's.
        """
        _check_state_dir(state_dir)
        kept = _kept_stores()
        found = kept.pop(state_dir, None)
        if found is not None:
            try:
                current: tuple[int, int] | None = _file_id(state_dir / DB_FILE_NAME)
            except OSError:
                current = None
            # The connection holds its file open, so no other file can have its inode
            # number: the same (device, inode) is the same database, not a new one.
            if current != found.file_id:
                found.conn.close()
                found = None
        if found is None:
            with _mapped_errors(f"cannot open the store in {state_dir}"):
                conn = _connect(state_dir / DB_FILE_NAME)
                try:
                    found = _Kept(conn, _file_id(state_dir / DB_FILE_NAME))
                except OSError:
                    conn.close()
                    raise
        kept[state_dir] = found  # most recently used last
        while len(kept) > _SHARED_PER_THREAD:
            kept.pop(next(iter(kept))).conn.close()
        return cls(found.conn, state_dir, kept=True)

    @staticmethod
    def close_shared() -> None:
        """Close every connection this thread keeps for `Store.shared`."""
        kept = _kept_stores()
        while kept:
            kept.popitem()[1].conn.close()

    def close(self) -> None:
        """Close the connection (a shared one stays open for the next use); harmless twice."""
        if self._conn is not None:
            if not self._kept:
                self._conn.close()
            self._conn = None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self, action: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        if self._conn is None:
            raise RuntimeError("the store is closed")
        conn = self._conn
        with _mapped_errors(action):
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def record_attempt(self, rec: AttemptRecord) -> str:
        """Insert `rec` with its files, failures and decisions in one transaction; return its id.

        Raises `ValueError` if a record with the same id exists.
        """
        with self._transaction("cannot record the attempt", write=True) as conn:
            attempt_id = rec.id or _fresh_id(conn)
            if conn.execute("SELECT 1 FROM attempts WHERE id = ?", (attempt_id,)).fetchone():
                raise ValueError(f"attempt {attempt_id} is already recorded")
            conn.execute(
                "INSERT INTO attempts (id, run_id, proposal_id, attempt_no, kind, status,"
                " created_at, finished_at, base_commit, input_text, staged_diff, applied_diff,"
                " proposal_json, dry_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt_id,
                    rec.run_id,
                    rec.proposal_id,
                    rec.attempt_no,
                    rec.kind.value,
                    rec.status.value,
                    rec.created_at,
                    rec.finished_at,
                    rec.base_commit,
                    rec.input_text,
                    rec.staged_diff,
                    rec.applied_diff,
                    rec.proposal_json,
                    int(rec.is_check),
                ),
            )
            conn.execute(
                "INSERT OR IGNORE INTO runs (id, first_seen_at) VALUES (?, ?)",
                (rec.run_id, rec.created_at),
            )
            conn.execute(
                "INSERT OR IGNORE INTO proposals (id, run_id, first_seen_at) VALUES (?, ?, ?)",
                (rec.proposal_id, rec.run_id, rec.created_at),
            )
            conn.executemany(
                "INSERT INTO attempt_files (attempt_id, seq, path, action, before_sha256,"
                " after_sha256, old_path) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        attempt_id,
                        seq,
                        f.path,
                        f.action.value,
                        f.before_sha256,
                        f.after_sha256,
                        f.old_path,
                    )
                    for seq, f in enumerate(rec.files)
                ],
            )
            conn.executemany(
                "INSERT INTO failures (attempt_id, seq, code, message, file, hunk, hint, excerpt,"
                " current_sha256, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        attempt_id,
                        seq,
                        f.code.value,
                        f.message,
                        f.file,
                        f.hunk,
                        f.hint,
                        f.excerpt,
                        f.current_sha256,
                        f.rule,
                    )
                    for seq, f in enumerate(rec.failures)
                ],
            )
            conn.executemany(
                "INSERT INTO decisions (attempt_id, seq, name, code, passed, detail)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (attempt_id, seq, d.name, d.code.value, int(d.passed), d.detail)
                    for seq, d in enumerate(rec.decisions)
                ],
            )
            conn.executemany(
                "INSERT INTO evidence (attempt_id, seq, profile, side, exit_code, duration_s,"
                " passed, output_sha256, run_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        attempt_id,
                        seq,
                        e.profile,
                        e.side.value,
                        e.exit_code,
                        e.duration_s,
                        int(e.passed),
                        e.output_sha256,
                        e.dumps(),
                    )
                    for seq, e in enumerate(rec.evidence)
                ],
            )
        return attempt_id

    def find_ids(self, prefix: str, limit: int = 10) -> tuple[str, ...]:
        """Ids equal to or starting with `prefix` (also tried with `a-` prepended), oldest first."""
        if not prefix:
            return ()
        candidates = [prefix]
        if not prefix.startswith(_ID_PREFIX):
            candidates.append(_ID_PREFIX + prefix)
        with self._transaction("cannot read the store", write=False) as conn:
            for candidate in candidates:
                rows = conn.execute(
                    "SELECT id FROM attempts WHERE substr(id, 1, ?) = ?"
                    " ORDER BY created_at, id LIMIT ?",
                    (len(candidate), candidate, limit),
                ).fetchall()
                exact = [r[0] for r in rows if r[0] == candidate]
                if exact:
                    return (exact[0],)
                if rows:
                    return tuple(str(r[0]) for r in rows)
        return ()

    def get(self, attempt_id: str) -> AttemptRecord | None:
        """The record with this id or unique id prefix; `None` if none or several match."""
        ids = self.find_ids(attempt_id, limit=2)
        if len(ids) != 1:
            return None
        with self._transaction("cannot read the store", write=False) as conn:
            return _load(conn, ids[0])

    def list_attempts(self, limit: int = 50) -> list[AttemptRecord]:
        """Up to `limit` records, newest first."""
        if not 1 <= limit <= MAX_LIST_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_LIST_LIMIT}")
        return self._records(
            "SELECT id FROM attempts ORDER BY created_at DESC, id DESC LIMIT ?", (limit,)
        )

    def find_applied(
        self, proposal_id: str, after_hashes: Mapping[str, str | None]
    ) -> AttemptRecord | None:
        """The newest applied attempt of `proposal_id` whose files ended with exactly these hashes.

        `after_hashes` maps each touched path to its sha256 after the change
        (`None` for a deleted file). A match means the proposal is already applied.
        """
        wanted = dict(after_hashes)
        return self._newest_applied(
            proposal_id, lambda rec: {f.path: f.after_sha256 for f in rec.files} == wanted
        )

    def find_still_applied(
        self, proposal_id: str, current_sha256: Callable[[str], str | None]
    ) -> AttemptRecord | None:
        """The newest applied attempt of `proposal_id` whose files are still as it left them.

        `current_sha256(path)` is the file's sha256 now (`None` when absent); every file
        the attempt wrote must hash to its recorded result, and a moved file's old path
        must still be gone. For callers that cannot name the files up front (a patch
        whose file path is inferred).
        """
        return self._newest_applied(
            proposal_id,
            lambda rec: bool(rec.files) and all(_still(f, current_sha256) for f in rec.files),
        )

    def _newest_applied(
        self, proposal_id: str, keep: Callable[[AttemptRecord], bool]
    ) -> AttemptRecord | None:
        """The newest applied attempt of `proposal_id` that `keep` accepts, read one by one."""
        with self._transaction("cannot read the store", write=False) as conn:
            rows = conn.execute(
                "SELECT id FROM attempts WHERE proposal_id = ? AND status = ?"
                " ORDER BY created_at DESC, id DESC",
                (proposal_id, AttemptStatus.APPLIED.value),
            ).fetchall()
            for (attempt_id,) in rows:
                rec = _load(conn, str(attempt_id))
                if keep(rec):
                    return rec
        return None

    def _records(self, sql: str, params: tuple[object, ...]) -> list[AttemptRecord]:
        """The attempts whose ids `sql` selects, in its order."""
        with self._transaction("cannot read the store", write=False) as conn:
            rows = conn.execute(sql, params).fetchall()
            return [_load(conn, str(r[0])) for r in rows]

    def run_attempts(self, run_id: str, *, checks: bool = True) -> list[AttemptRecord]:
        """Every attempt recorded under `run_id`, oldest first; without `checks`, the dry
        runs (`--check`, checked or refused) are left out."""
        only = "" if checks else " AND dry_run = 0"
        return self._records(
            f"SELECT id FROM attempts WHERE run_id = ?{only} ORDER BY created_at, id", (run_id,)
        )

    def applied_since(self, created_at: str) -> list[AttemptRecord]:
        """Attempts that wrote files (applied, partial) at or after `created_at`, oldest first."""
        return self._records(
            "SELECT id FROM attempts WHERE created_at >= ? AND status IN (?, ?)"
            " ORDER BY created_at, id",
            (created_at, AttemptStatus.APPLIED.value, AttemptStatus.PARTIAL.value),
        )

    def record_judgement(
        self, subject: str, subject_kind: str, score: float, verdict: str, judgement_json: str
    ) -> int:
        """Insert one judgement of an attempt or a run; return its number."""
        with self._transaction("cannot record the judgement", write=True) as conn:
            cursor = conn.execute(
                "INSERT INTO judgements (subject, subject_kind, created_at, score, verdict,"
                " judgement_json) VALUES (?, ?, ?, ?, ?, ?)",
                (subject, subject_kind, _utc_now(), score, verdict, judgement_json),
            )
            return int(cursor.lastrowid or 0)

    def judgements(self, subject: str) -> list[tuple[int, str, str]]:
        """`(number, created_at, judgement_json)` of each judgement of `subject`, oldest first."""
        with self._transaction("cannot read the store", write=False) as conn:
            rows = conn.execute(
                "SELECT id, created_at, judgement_json FROM judgements WHERE subject = ?"
                " ORDER BY id",
                (subject,),
            ).fetchall()
            return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def record_run_task(
        self, run_id: str, created_at: str, task_json: str, budget_json: str
    ) -> None:
        """Record the start of a repair loop run; `ValueError` if the run id is taken."""
        with self._transaction("cannot record the run", write=True) as conn:
            if conn.execute("SELECT 1 FROM run_tasks WHERE run_id = ?", (run_id,)).fetchone():
                raise ValueError(f"run {run_id} is already recorded")
            conn.execute(
                "INSERT INTO run_tasks (run_id, created_at, task_json, budget_json)"
                " VALUES (?, ?, ?, ?)",
                (run_id, created_at, task_json, budget_json),
            )
            conn.execute(
                "INSERT OR IGNORE INTO runs (id, first_seen_at) VALUES (?, ?)", (run_id, created_at)
            )

    def record_run_turn(self, run_id: str, turn: RunTurnRecord) -> None:
        """Record one turn of a run started with `record_run_task`."""
        with self._transaction("cannot record the run's turn", write=True) as conn:
            conn.execute(
                "INSERT INTO run_turns (run_id, seq, created_at, milestone, attempt_no,"
                " attempt_id, outcome, fingerprint, strategy, selection_json, feedback)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    turn.seq,
                    turn.created_at,
                    turn.milestone,
                    turn.attempt_no,
                    turn.attempt_id,
                    turn.outcome,
                    turn.fingerprint,
                    turn.strategy,
                    turn.selection_json,
                    turn.feedback,
                ),
            )

    def record_run_result(
        self, run_id: str, finished_at: str, status: str, result_json: str
    ) -> None:
        """Record how a run ended (once)."""
        with self._transaction("cannot record the run's result", write=True) as conn:
            conn.execute(
                "INSERT INTO run_results (run_id, finished_at, status, result_json)"
                " VALUES (?, ?, ?, ?)",
                (run_id, finished_at, status, result_json),
            )

    def get_run(self, run_id: str) -> RunRecord | None:
        """The recorded run with this id, its turns in order; `None` if there is none."""
        with self._transaction("cannot read the store", write=False) as conn:
            row = conn.execute(
                "SELECT run_id, created_at, task_json, budget_json FROM run_tasks WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                return None
            turns = tuple(
                RunTurnRecord(
                    seq=r[0],
                    created_at=r[1],
                    milestone=r[2],
                    attempt_no=r[3],
                    attempt_id=r[4],
                    outcome=r[5],
                    fingerprint=r[6],
                    strategy=r[7],
                    selection_json=r[8],
                    feedback=r[9],
                )
                for r in conn.execute(
                    "SELECT seq, created_at, milestone, attempt_no, attempt_id, outcome,"
                    " fingerprint, strategy, selection_json, feedback FROM run_turns"
                    " WHERE run_id = ? ORDER BY seq",
                    (run_id,),
                )
            )
            end = conn.execute(
                "SELECT finished_at, status, result_json FROM run_results WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        return RunRecord(
            run_id=row[0],
            created_at=row[1],
            task_json=row[2],
            budget_json=row[3],
            turns=turns,
            finished_at=None if end is None else end[0],
            status=None if end is None else end[1],
            result_json=None if end is None else end[2],
        )


def _utc_now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _fresh_id(conn: sqlite3.Connection) -> str:
    """A new id whose first `UNIQUE_ID_PREFIX` characters no recorded id shares.

    Checked inside the writing transaction, so two processes cannot both take one.
    """
    for _ in range(_ID_TRIES):
        candidate = new_attempt_id()
        clash = conn.execute(
            "SELECT 1 FROM attempts WHERE substr(id, 1, ?) = ? LIMIT 1",
            (UNIQUE_ID_PREFIX, candidate[:UNIQUE_ID_PREFIX]),
        ).fetchone()
        if clash is None:
            return candidate
    # 30 random bits per prefix: only a store of about a billion attempts gets here.
    raise sqlite3.OperationalError("no free attempt id prefix")


def _still(record: FileRecord, current_sha256: Callable[[str], str | None]) -> bool:
    if current_sha256(record.path) != record.after_sha256:
        return False
    return record.old_path is None or current_sha256(record.old_path) is None


def _load(conn: sqlite3.Connection, attempt_id: str) -> AttemptRecord:
    row = conn.execute(
        "SELECT id, run_id, proposal_id, attempt_no, kind, status, created_at, finished_at,"
        " base_commit, input_text, staged_diff, applied_diff, proposal_json, dry_run"
        " FROM attempts WHERE id = ?",
        (attempt_id,),
    ).fetchone()
    files = tuple(
        FileRecord(
            path=path,
            action=_enum(Action, action),
            before_sha256=before,
            after_sha256=after,
            old_path=old_path,
        )
        for path, action, before, after, old_path in conn.execute(
            "SELECT path, action, before_sha256, after_sha256, old_path"
            " FROM attempt_files WHERE attempt_id = ? ORDER BY seq",
            (attempt_id,),
        )
    )
    failures = tuple(
        PatchFailure(
            code=_enum(FailureCode, code),
            message=message,
            file=file,
            hunk=hunk,
            hint=hint,
            excerpt=excerpt,
            current_sha256=current,
            rule=rule,
        )
        for code, message, file, hunk, hint, excerpt, current, rule in conn.execute(
            "SELECT code, message, file, hunk, hint, excerpt, current_sha256, rule"
            " FROM failures WHERE attempt_id = ? ORDER BY seq",
            (attempt_id,),
        )
    )
    decisions = tuple(
        GuardDecision(name=name, code=_enum(FailureCode, code), passed=bool(passed), detail=detail)
        for name, code, passed, detail in conn.execute(
            "SELECT name, code, passed, detail FROM decisions WHERE attempt_id = ? ORDER BY seq",
            (attempt_id,),
        )
    )
    evidence = tuple(
        _evidence(text)
        for (text,) in conn.execute(
            "SELECT run_json FROM evidence WHERE attempt_id = ? ORDER BY seq", (attempt_id,)
        )
    )
    return AttemptRecord(
        id=row[0],
        run_id=row[1],
        proposal_id=row[2],
        attempt_no=row[3],
        kind=_enum(AttemptKind, row[4]),
        status=_enum(AttemptStatus, row[5]),
        created_at=row[6],
        finished_at=row[7],
        base_commit=row[8],
        input_text=row[9],
        staged_diff=row[10],
        applied_diff=row[11],
        files=files,
        failures=failures,
        decisions=decisions,
        proposal_json=row[12],
        evidence=evidence,
        dry_run=bool(row[13]),
    )


def _evidence(text: str) -> Evidence:
    from patchsmith.model.evidence import Evidence  # read back only when a record holds some

    try:
        return Evidence.loads(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise _io_failure(f"the store holds unreadable verification evidence: {exc}") from None
