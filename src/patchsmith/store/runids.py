"""The `runs` table: every run id seen, whether an attempt or a repair loop named it.

Apart from `runs`, which owns a repair loop run's own record: every recorded attempt
notes its run here, and a check should not load the repair loop's records to do so.
"""

from __future__ import annotations

import sqlite3

__all__ = ["note_run"]


def note_run(conn: sqlite3.Connection, run_id: str, first_seen_at: str) -> None:
    """Add `run_id` to the runs seen, unless it is there already."""
    conn.execute(
        "INSERT OR IGNORE INTO runs (id, first_seen_at) VALUES (?, ?)", (run_id, first_seen_at)
    )
