"""The `evidence` table: an attempt's verification runs, one row each (the columns a query
needs, plus the whole run as JSON so that `show` prints it as it was)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING

from patchsmith.store.errors import io_failure
from patchsmith.store.rows import insert_rows, select_rows

if TYPE_CHECKING:
    from patchsmith.model.evidence import Evidence

__all__ = ["insert", "load"]

_COLUMNS = ("profile", "side", "exit_code", "duration_s", "passed", "output_sha256", "run_json")


def insert(conn: sqlite3.Connection, attempt_id: str, evidence: Iterable[Evidence]) -> None:
    """Record `attempt_id`'s verification runs, in order."""
    insert_rows(
        conn,
        "evidence",
        _COLUMNS,
        attempt_id,
        (
            (
                e.profile,
                e.side.value,
                e.exit_code,
                e.duration_s,
                int(e.passed),
                e.output_sha256,
                e.dumps(),
            )
            for e in evidence
        ),
    )


def load(conn: sqlite3.Connection, attempt_id: str) -> tuple[Evidence, ...]:
    """`attempt_id`'s verification runs, in order."""
    return tuple(
        _evidence(text) for (text,) in select_rows(conn, "evidence", ("run_json",), attempt_id)
    )


def _evidence(text: str) -> Evidence:
    from patchsmith.model.evidence import Evidence  # read back only when a record holds some

    try:
        return Evidence.loads(text)
    except (ValueError, KeyError, TypeError) as exc:
        raise io_failure(f"the store holds unreadable verification evidence: {exc}") from None
