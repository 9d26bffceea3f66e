"""The store's schema: every table, as the migrations that made it, and the migrating step.

Migrations only ever add (tables, columns, indexes); a database whose schema is newer
than this patchsmith's is refused, never downgraded.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from patchsmith.store.errors import io_failure
from patchsmith.store.origin import record_origin

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate"]

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


Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: tuple[Migration, ...] = (
    _migration_1_attempts,
    _migration_2_runs_proposals_moves,
    _migration_3_evidence,
    _migration_4_judgements,
    _migration_5_run_tasks,
    _migration_6_dry_runs,
)
SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this patchsmith writes."""


def _current_version(conn: sqlite3.Connection) -> int | None:
    """The recorded schema version, read without taking the write lock (None: no table)."""
    try:
        row = conn.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else int(row[0])


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...]) -> None:
    """Bring the database to `len(migrations)` in one transaction; refuse a newer schema."""
    if _current_version(conn) == len(migrations):
        return  # the common case: nothing to do, so no write transaction either
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
            record_origin(conn)
        current = 0 if row is None else int(row[0])
        if current > len(migrations):
            raise io_failure(
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
