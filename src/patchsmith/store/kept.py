"""Connections kept open between uses: `Store.shared`, and `keep_open` for a long-running
process (one per thread and state directory, the least recently used closed first)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from patchsmith.runtime.statedir import check_entry
from patchsmith.store.connection import connect
from patchsmith.store.errors import mapped_errors
from patchsmith.store.layout import DB_FILE_NAME

__all__ = [
    "SHARED_PER_THREAD",
    "close_shared",
    "is_kept_open",
    "keep_open",
    "shared_connection",
    "still_kept",
]

SHARED_PER_THREAD = 4
"""Stores one thread keeps open through `Store.shared` (the least recently used is closed)."""


class _Kept(NamedTuple):
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

_KEPT_OPEN: set[str] = set()
"""State directories (real paths) whose `Store.open` answers with `Store.shared`."""


def _kept_stores() -> dict[Path, _Kept]:
    if _KEPT.pid != os.getpid():  # a forked child: the parent's connections are not ours
        _INHERITED.extend(_KEPT.by_dir.values())
        _KEPT.by_dir = {}
        _KEPT.pid = os.getpid()
    return _KEPT.by_dir


def _file_id(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def still_kept(state_dir: Path) -> sqlite3.Connection | None:
    """This thread's kept connection to the store in `state_dir` when it may be used as it
    is: the state directory is still a real directory of this user's and the database file
    is still the one the connection holds open; else `None` (the caller checks and opens).

    SQLite holds the database, its log and its shared-memory file open for as long as the
    connection lives, so a link planted at one of their names is never followed by it: only
    a new connection needs `check_state_dir`'s look at each name.
    """
    kept = _kept_stores()
    found = kept.get(state_dir)
    if found is None:
        return None
    try:
        check_entry(state_dir, directory=True)
        current = _file_id(state_dir / DB_FILE_NAME)
    except OSError:  # unsafe or gone: the full check says why
        return None
    if current != found.file_id:
        return None
    kept[state_dir] = kept.pop(state_dir)  # most recently used last
    return found.conn


def shared_connection(state_dir: Path) -> sqlite3.Connection:
    """This thread's kept connection to the store in `state_dir` (the caller has checked
    the directory), opened if there is none or the database file is no longer its own."""
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
        with mapped_errors(f"cannot open the store in {state_dir}"):
            conn = connect(state_dir / DB_FILE_NAME)
            try:
                found = _Kept(conn, _file_id(state_dir / DB_FILE_NAME))
            except OSError:
                conn.close()
                raise
    kept[state_dir] = found  # most recently used last
    while len(kept) > SHARED_PER_THREAD:
        kept.pop(next(iter(kept))).conn.close()
    return found.conn


def close_shared(state_dir: Path | None = None) -> None:
    """Close the connection this thread keeps for `Store.shared` to the store in
    `state_dir` (as `Store.shared` was given it), or with no `state_dir` every one."""
    kept = _kept_stores()
    if state_dir is not None:
        found = kept.pop(state_dir, None)
        if found is not None:
            found.conn.close()
        return
    while kept:
        kept.popitem()[1].conn.close()


def is_kept_open(state_dir: Path) -> bool:
    """Whether a `keep_open` block holds `state_dir` open."""
    return bool(_KEPT_OPEN) and os.path.realpath(state_dir) in _KEPT_OPEN


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
        close_shared()
