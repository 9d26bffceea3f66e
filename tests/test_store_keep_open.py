"""`keep_open`: one store connection for a long-running process."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from patchsmith.store import Store, keep_open


class TestKeepOpen:
    def test_one_connection(self, tmp_path: Path) -> None:
        """Inside the block every open returns the same store, and closing it keeps it open."""
        state = tmp_path / ".patchsmith"
        with keep_open(state):
            with Store.open(state) as first:
                connection = first._conn
            second = Store.open(state)

            assert connection is not None
            assert connection is second._conn
            assert [] == second.list_attempts()
        with pytest.raises(sqlite3.ProgrammingError):  # closed when the block ends
            connection.execute("select 1")

    def test_lazy(self, tmp_path: Path) -> None:
        """Nothing is created until a store is opened."""
        state = tmp_path / ".patchsmith"
        with keep_open(state):
            pass

        assert not state.exists()

    def test_not_twice(self, tmp_path: Path) -> None:
        """Keeping one directory open twice at once is a programming error."""
        with keep_open(tmp_path), pytest.raises(RuntimeError), keep_open(tmp_path):
            pass

    def test_other_directories_unaffected(self, tmp_path: Path) -> None:
        """Stores elsewhere open and close as usual."""
        with keep_open(tmp_path / "a"):
            other = Store.open(tmp_path / "b")
            other.close()

            assert other._conn is None
