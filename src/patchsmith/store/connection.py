"""Opening the database: one configured, trusted, migrated SQLite connection.

The store runs in WAL mode with a busy timeout, and every write is one
`BEGIN IMMEDIATE` transaction, so two processes may record at once. Every connection
runs with `PRAGMA trusted_schema = OFF`, and a database this machine's patchsmith did
not create is moved aside before anything else reads it (`origin`).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from patchsmith.store.errors import io_failure
from patchsmith.store.origin import move_aside, untrusted
from patchsmith.store.schema import MIGRATIONS, migrate

__all__ = ["BUSY_TIMEOUT_MS", "connect"]

BUSY_TIMEOUT_MS = 10_000
"""How long a connection waits for another process's write lock."""


def connect(db_file: Path) -> sqlite3.Connection:
    """A configured, migrated connection; retried while another process creates the store.

    Two processes opening a brand-new database race to switch it to WAL, and
    SQLite answers the loser "database is locked" at once (its busy handler is
    not consulted for that lock upgrade), so the whole setup is retried.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    moved = 0
    while True:
        # `timeout` is SQLite's busy timeout (`sqlite3_busy_timeout`, as `PRAGMA
        # busy_timeout` sets it), so no statement is spent on it.
        conn = sqlite3.connect(db_file, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            # Before anything reads the schema: no SQL function a schema names (a trigger,
            # a view, a default, an index expression) may run with side effects.
            conn.execute("PRAGMA trusted_schema = OFF")
            reason = untrusted(conn, db_file)
            if reason is not None:
                conn.close()
                if moved:  # a second foreign database at once: someone is racing us
                    raise io_failure(f"refusing the database {db_file}: {reason}")
                move_aside(db_file, reason)
                moved += 1
                continue
            conn.execute("PRAGMA journal_mode = WAL")
            # With WAL, NORMAL keeps the database consistent after a crash and spares an
            # fsync per commit; a power cut may lose the last record, never corrupt one
            # (docs/decisions/0034: the file commit itself stays durable).
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn, MIGRATIONS)
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
        except BaseException:
            conn.close()
            raise
