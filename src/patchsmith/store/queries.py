"""Finding attempts: by id prefix, newest first, by run, by time, and the applied attempts
of a proposal (the idempotence lookups). Each reads in the caller's transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from patchsmith.formats.script import Action
from patchsmith.store import attempts
from patchsmith.store.ids import ID_PREFIX
from patchsmith.store.records import AttemptRecord, AttemptStatus, FileRecord

__all__ = [
    "MAX_LIST_LIMIT",
    "applied_since",
    "find_ids",
    "newest",
    "newest_applied",
    "of_run",
    "still_applied_id",
    "still_there",
]

MAX_LIST_LIMIT = 1_000_000_000
"""The most attempts `list_attempts` returns at once (SQLite integers are 64-bit)."""


def find_ids(conn: sqlite3.Connection, prefix: str, limit: int) -> tuple[str, ...]:
    """Ids equal to or starting with `prefix` (also tried with `a-` prepended), oldest first;
    an exact match alone if there is one."""
    candidates = [prefix]
    if not prefix.startswith(ID_PREFIX):
        candidates.append(ID_PREFIX + prefix)
    for candidate in candidates:
        rows = conn.execute(
            "SELECT id FROM attempts WHERE substr(id, 1, ?) = ? ORDER BY created_at, rowid LIMIT ?",
            (len(candidate), candidate, limit),
        ).fetchall()
        exact = [r[0] for r in rows if r[0] == candidate]
        if exact:
            return (exact[0],)
        if rows:
            return tuple(str(r[0]) for r in rows)
    return ()


def newest(conn: sqlite3.Connection, limit: int) -> list[AttemptRecord]:
    """Up to `limit` records, newest first."""
    return _loaded(
        conn, "SELECT id FROM attempts ORDER BY created_at DESC, rowid DESC LIMIT ?", (limit,)
    )


def of_run(conn: sqlite3.Connection, run_id: str, *, checks: bool) -> list[AttemptRecord]:
    """Every attempt recorded under `run_id`, oldest first; the dry runs only with `checks`."""
    only = "" if checks else " AND dry_run = 0"
    return _loaded(
        conn,
        f"SELECT id FROM attempts WHERE run_id = ?{only} ORDER BY created_at, rowid",
        (run_id,),
    )


def applied_since(conn: sqlite3.Connection, created_at: str) -> list[AttemptRecord]:
    """Attempts that wrote files (applied, partial) at or after `created_at`, oldest first."""
    return _loaded(
        conn,
        "SELECT id FROM attempts WHERE created_at >= ? AND status IN (?, ?)"
        " ORDER BY created_at, rowid",
        (created_at, AttemptStatus.APPLIED.value, AttemptStatus.PARTIAL.value),
    )


def newest_applied(
    conn: sqlite3.Connection, proposal_id: str, keep: Callable[[AttemptRecord], bool]
) -> AttemptRecord | None:
    """The newest applied attempt of `proposal_id` that `keep` accepts, read one by one."""
    rows = conn.execute(
        "SELECT id FROM attempts WHERE proposal_id = ? AND status = ?"
        " ORDER BY created_at DESC, rowid DESC",
        (proposal_id, AttemptStatus.APPLIED.value),
    ).fetchall()
    for (attempt_id,) in rows:
        rec = attempts.load(conn, str(attempt_id))
        if keep(rec):
            return rec
    return None


def still_applied_id(
    conn: sqlite3.Connection, proposal_id: str, current_sha256: Callable[[str], str | None]
) -> str | None:
    """The id of the newest applied attempt of `proposal_id` whose files are all still as
    it left them (see `still_there`); one indexed query reads every candidate's files, and
    an attempt that wrote no file is never one."""
    rows = conn.execute(
        "SELECT a.id, f.path, f.after_sha256, f.old_path FROM attempts AS a"
        " JOIN attempt_files AS f ON f.attempt_id = a.id"
        " WHERE a.proposal_id = ? AND a.status = ?"
        " ORDER BY a.created_at DESC, a.rowid DESC, f.seq",
        (proposal_id, AttemptStatus.APPLIED.value),
    ).fetchall()
    hashes: dict[str, str | None] = {}

    def current(path: str) -> str | None:  # each path read once, however many candidates
        if path not in hashes:
            hashes[path] = current_sha256(path)
        return hashes[path]

    candidates: dict[str, bool] = {}
    for attempt_id, path, after, old_path in rows:
        ok = candidates.get(attempt_id, True)
        if ok:
            record = FileRecord(path, Action.UPDATE, None, after, old_path)
            candidates[attempt_id] = still_there(record, current)
    return next((attempt_id for attempt_id, ok in candidates.items() if ok), None)


def still_there(record: FileRecord, current_sha256: Callable[[str], str | None]) -> bool:
    """Whether the file is still as the attempt left it (and a moved file's old path gone)."""
    if current_sha256(record.path) != record.after_sha256:
        return False
    return record.old_path is None or current_sha256(record.old_path) is None


def _loaded(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[AttemptRecord]:
    """The attempts whose ids `sql` selects, in its order."""
    rows = conn.execute(sql, params).fetchall()
    return [attempts.load(conn, str(r[0])) for r in rows]
