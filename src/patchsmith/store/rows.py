"""The rows an attempt owns in its child tables (files, failures, decisions, evidence),
keyed by the attempt's id and their order (`seq`), written and read in that order."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

__all__ = ["insert_rows", "select_rows"]


def insert_rows(
    conn: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    attempt_id: str,
    rows: Iterable[tuple[object, ...]],
) -> None:
    """Insert `rows` (values for `columns`) into `table` under `attempt_id`, numbered from 0."""
    values = [(attempt_id, seq, *row) for seq, row in enumerate(rows)]
    if not values:
        return  # most attempts have no failures and no evidence: no statement for them
    marks = ", ".join("?" * (len(columns) + 2))
    conn.executemany(
        f"INSERT INTO {table} (attempt_id, seq, {', '.join(columns)}) VALUES ({marks})", values
    )


def select_rows(
    conn: sqlite3.Connection, table: str, columns: tuple[str, ...], attempt_id: str
) -> list[tuple[Any, ...]]:
    """The `columns` of `attempt_id`'s rows in `table`, in the order they were inserted."""
    return conn.execute(
        f"SELECT {', '.join(columns)} FROM {table} WHERE attempt_id = ? ORDER BY seq",
        (attempt_id,),
    ).fetchall()
