"""The `attempts` table and the rows each attempt owns (`attempt_files`, `failures`,
`decisions`, `evidence`): one `AttemptRecord` written in the caller's transaction, and
read back whole."""

from __future__ import annotations

import sqlite3

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.store import evidence
from patchsmith.store.errors import stored_enum
from patchsmith.store.ids import fresh_id
from patchsmith.store.records import (
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
)
from patchsmith.store.rows import insert_rows, select_rows
from patchsmith.store.runids import note_run

__all__ = ["insert", "load"]

_ATTEMPT_COLUMNS = (
    "id",
    "run_id",
    "proposal_id",
    "attempt_no",
    "kind",
    "status",
    "created_at",
    "finished_at",
    "base_commit",
    "input_text",
    "staged_diff",
    "applied_diff",
    "proposal_json",
    "dry_run",
)
_FILE_COLUMNS = ("path", "action", "before_sha256", "after_sha256", "old_path")
_FAILURE_COLUMNS = ("code", "message", "file", "hunk", "hint", "excerpt", "current_sha256", "rule")
_DECISION_COLUMNS = ("name", "code", "passed", "detail")


def insert(conn: sqlite3.Connection, rec: AttemptRecord) -> str:
    """Insert `rec` with everything it owns; return its id (a fresh one if `rec.id` is empty).

    Raises `ValueError` if a record with the same id exists.
    """
    attempt_id = rec.id or fresh_id(conn)  # a fresh id is one no record has
    if rec.id and conn.execute("SELECT 1 FROM attempts WHERE id = ?", (attempt_id,)).fetchone():
        raise ValueError(f"attempt {attempt_id} is already recorded")
    conn.execute(
        f"INSERT INTO attempts ({', '.join(_ATTEMPT_COLUMNS)})"
        f" VALUES ({', '.join('?' * len(_ATTEMPT_COLUMNS))})",
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
    note_run(conn, rec.run_id, rec.created_at)
    conn.execute(
        "INSERT OR IGNORE INTO proposals (id, run_id, first_seen_at) VALUES (?, ?, ?)",
        (rec.proposal_id, rec.run_id, rec.created_at),
    )
    insert_rows(
        conn,
        "attempt_files",
        _FILE_COLUMNS,
        attempt_id,
        ((f.path, f.action.value, f.before_sha256, f.after_sha256, f.old_path) for f in rec.files),
    )
    insert_rows(
        conn,
        "failures",
        _FAILURE_COLUMNS,
        attempt_id,
        (
            (f.code.value, f.message, f.file, f.hunk, f.hint, f.excerpt, f.current_sha256, f.rule)
            for f in rec.failures
        ),
    )
    insert_rows(
        conn,
        "decisions",
        _DECISION_COLUMNS,
        attempt_id,
        ((d.name, d.code.value, int(d.passed), d.detail) for d in rec.decisions),
    )
    evidence.insert(conn, attempt_id, rec.evidence)
    return attempt_id


def load(conn: sqlite3.Connection, attempt_id: str) -> AttemptRecord:
    """The whole record of `attempt_id`, which must exist."""
    row = conn.execute(
        f"SELECT {', '.join(_ATTEMPT_COLUMNS)} FROM attempts WHERE id = ?", (attempt_id,)
    ).fetchone()
    files = tuple(
        FileRecord(
            path=path,
            action=stored_enum(Action, action),
            before_sha256=before,
            after_sha256=after,
            old_path=old_path,
        )
        for path, action, before, after, old_path in select_rows(
            conn, "attempt_files", _FILE_COLUMNS, attempt_id
        )
    )
    failures = tuple(
        PatchFailure(
            code=stored_enum(FailureCode, code),
            message=message,
            file=file,
            hunk=hunk,
            hint=hint,
            excerpt=excerpt,
            current_sha256=current,
            rule=rule,
        )
        for code, message, file, hunk, hint, excerpt, current, rule in select_rows(
            conn, "failures", _FAILURE_COLUMNS, attempt_id
        )
    )
    decisions = tuple(
        GuardDecision(
            name=name, code=stored_enum(FailureCode, code), passed=bool(passed), detail=detail
        )
        for name, code, passed, detail in select_rows(
            conn, "decisions", _DECISION_COLUMNS, attempt_id
        )
    )
    return AttemptRecord(
        id=row[0],
        run_id=row[1],
        proposal_id=row[2],
        attempt_no=row[3],
        kind=stored_enum(AttemptKind, row[4]),
        status=stored_enum(AttemptStatus, row[5]),
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
        evidence=evidence.load(conn, attempt_id),
        dry_run=bool(row[13]),
    )
