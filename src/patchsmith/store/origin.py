"""Whether a database is a store this machine made (docs/decisions/0031), and moving one
that is not aside.

Each store records, when it is created, the inode number of its file (`store_origin`),
which a database that arrived by `git clone`, an archive or a copy cannot know. One
without that record, with another number, or holding a trigger or view (patchsmith makes
none) is moved to `.patchsmith/quarantine/store-<hex>/` so that a new store is made.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from patchsmith.runtime.atomic import fsync_directory, write_new_file
from patchsmith.runtime.statedir import ensure_subdir
from patchsmith.store.layout import SQLITE_SIDE_FILES
from patchsmith.store.records import utc_now

__all__ = ["move_aside", "record_origin", "untrusted"]

_ORIGIN_TABLE = "store_origin"
_QUARANTINE = "quarantine"
_UNTRUSTED_SCHEMA_TYPES = ("trigger", "view")


def _main_file(conn: sqlite3.Connection) -> str:
    """The path of the connection's main database file."""
    for _seq, name, path in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return str(path)
    raise sqlite3.OperationalError("no main database")  # pragma: no cover - SQLite always has one


def record_origin(conn: sqlite3.Connection) -> None:
    """Bind a new store to its file: its inode number, which a copy or a clone cannot know."""
    conn.execute(f"CREATE TABLE {_ORIGIN_TABLE} (inode INTEGER NOT NULL, created_at TEXT NOT NULL)")
    inode = os.stat(_main_file(conn)).st_ino
    conn.execute(f"INSERT INTO {_ORIGIN_TABLE} VALUES (?, ?)", (inode, utc_now()))


def untrusted(conn: sqlite3.Connection, db_file: Path) -> str | None:
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


def move_aside(db_file: Path, reason: str) -> Path:
    """Move an untrusted database and its side files to `quarantine/store-<hex>/`; returns it."""
    state_dir = db_file.parent
    folder = ensure_subdir(state_dir / _QUARANTINE) / f"store-{os.urandom(8).hex()}"
    os.mkdir(folder, 0o700)
    for suffix in ("", *SQLITE_SIDE_FILES):
        try:
            os.rename(state_dir / (db_file.name + suffix), folder / (db_file.name + suffix))
        except FileNotFoundError:
            continue
    note = f"patchsmith moved this database out of {state_dir}: {reason}\n"
    write_new_file(folder / "REASON.txt", note.encode("utf-8"), 0o600)
    fsync_directory(state_dir)
    return folder
