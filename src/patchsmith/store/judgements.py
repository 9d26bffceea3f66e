"""The `judgements` table: each judgement of an attempt or a run (`patchsmith judge`), its
score and verdict to query, and the whole judgement as JSON, as it was printed."""

from __future__ import annotations

import sqlite3

from patchsmith.store.records import utc_now

__all__ = ["insert", "select"]


def insert(
    conn: sqlite3.Connection,
    subject: str,
    subject_kind: str,
    score: float,
    verdict: str,
    judgement_json: str,
) -> int:
    """Insert one judgement of an attempt or a run, dated now; return its number."""
    cursor = conn.execute(
        "INSERT INTO judgements (subject, subject_kind, created_at, score, verdict,"
        " judgement_json) VALUES (?, ?, ?, ?, ?, ?)",
        (subject, subject_kind, utc_now(), score, verdict, judgement_json),
    )
    return int(cursor.lastrowid or 0)


def select(conn: sqlite3.Connection, subject: str) -> list[tuple[int, str, str]]:
    """`(number, created_at, judgement_json)` of each judgement of `subject`, oldest first."""
    rows = conn.execute(
        "SELECT id, created_at, judgement_json FROM judgements WHERE subject = ? ORDER BY id",
        (subject,),
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]
