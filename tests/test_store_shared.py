"""`Store.shared`: one connection per thread and state directory, kept between uses."""

from __future__ import annotations

import multiprocessing
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.test_store import make_record

from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.store import Store
from patchsmith.store.kept import SHARED_PER_THREAD


@pytest.fixture(name="state_dir")
def _state_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / ".patchsmith"
    Store.close_shared()


def _connection(store: Store) -> object:
    return store._conn


class TestShared:
    def test_same_connection_between_uses(self, state_dir: Path) -> None:
        """Two uses share one connection; leaving `with` does not close it."""
        with Store.shared(state_dir) as first:
            conn = _connection(first)
            attempt_id = first.record_attempt(make_record())

        with Store.shared(state_dir) as again:
            assert conn is _connection(again)
            assert again.get(attempt_id) is not None
        with Store.open(state_dir) as other:  # and what it wrote is in the database
            assert [attempt_id] == [a.id for a in other.list_attempts()]

    def test_recreated_database_gets_a_new_connection(self, state_dir: Path) -> None:
        """A state directory deleted and made again is not written through the old file."""
        with Store.shared(state_dir) as first:
            conn = _connection(first)
            first.record_attempt(make_record())
        shutil.rmtree(state_dir)

        with Store.shared(state_dir) as again:
            assert conn is not _connection(again)
            attempt_id = again.record_attempt(make_record())
        with Store.open(state_dir) as other:
            assert [attempt_id] == [a.id for a in other.list_attempts()]

    def test_unsafe_state_dir_is_refused_even_when_kept(
        self, state_dir: Path, tmp_path: Path
    ) -> None:
        """The state directory is checked on every use: a symlink put in its place refuses."""
        Store.shared(state_dir).close()
        elsewhere = tmp_path / "elsewhere"
        state_dir.rename(elsewhere)
        state_dir.symlink_to(elsewhere)

        with pytest.raises(PatchRefused) as refused:
            Store.shared(state_dir)

        assert [FailureCode.STATE_DIR_UNSAFE] == [f.code for f in refused.value.failures]

    def test_a_kept_connection_is_used_without_the_full_check(
        self, state_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Once open, a use looks at the state directory and the database file only."""
        Store.shared(state_dir).close()
        checked: list[Path] = []
        monkeypatch.setattr("patchsmith.store.store.check_state_dir", checked.append)

        with Store.shared(state_dir) as store:
            store.record_attempt(make_record())

        assert [] == checked

    def test_a_foreign_state_dir_is_refused_even_when_kept(
        self, state_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The owner is part of the look at a kept connection's state directory."""
        Store.shared(state_dir).close()
        monkeypatch.setattr("os.geteuid", lambda: 12345)

        with pytest.raises(PatchRefused) as refused:
            Store.shared(state_dir)

        assert [FailureCode.STATE_DIR_UNSAFE] == [f.code for f in refused.value.failures]

    def test_least_recently_used_is_closed(self, tmp_path: Path) -> None:
        """A thread keeps a few stores open; the one unused longest is closed first."""
        dirs = [tmp_path / f"ws{n}" / ".patchsmith" for n in range(SHARED_PER_THREAD + 1)]
        first = _connection(Store.shared(dirs[0]))
        for folder in dirs[1:]:
            Store.shared(folder)

        assert first is not _connection(Store.shared(dirs[0]))
        Store.close_shared()

    def test_close_shared_closes(self, state_dir: Path) -> None:
        """`close_shared` closes this thread's connections; the next use opens afresh."""
        conn = _connection(Store.shared(state_dir))

        Store.close_shared()

        assert conn is not _connection(Store.shared(state_dir))

    def test_close_shared_of_one_store(self, tmp_path: Path) -> None:
        """Given a state directory, `close_shared` closes that store's connection alone,
        and its log is checkpointed away (a store not kept is left as it was)."""
        done, busy = tmp_path / "done" / ".patchsmith", tmp_path / "busy" / ".patchsmith"
        with Store.shared(done) as store:
            store.record_attempt(make_record())
        kept = _connection(Store.shared(busy))
        assert (done / "patchsmith.db-wal").exists()

        Store.close_shared(done)
        Store.close_shared(tmp_path / "never" / ".patchsmith")

        assert not (done / "patchsmith.db-wal").exists()
        assert kept is _connection(Store.shared(busy))
        with Store.open(done) as reopened:
            assert len(reopened.list_attempts()) == 1
        Store.close_shared()

    def test_each_thread_has_its_own(self, state_dir: Path) -> None:
        """SQLite connections stay in their thread: another thread gets its own."""
        mine = _connection(Store.shared(state_dir))
        theirs: list[object] = []

        def use() -> None:
            with Store.shared(state_dir) as store:
                theirs.append(_connection(store))
                store.record_attempt(make_record())
            Store.close_shared()

        thread = threading.Thread(target=use)
        thread.start()
        thread.join()

        assert [True] == [conn is not mine for conn in theirs]
        assert 1 == len(Store.shared(state_dir).list_attempts())

    def test_forked_child_opens_its_own(self, state_dir: Path) -> None:
        """A forked child never uses the connection its parent kept."""
        Store.shared(state_dir).record_attempt(make_record())
        ctx = multiprocessing.get_context("fork")
        child = ctx.Process(
            target=_record_in_child, args=(str(state_dir), id(_connection(Store.shared(state_dir))))
        )
        child.start()
        child.join(timeout=60)

        assert 0 == child.exitcode
        assert 2 == len(Store.shared(state_dir).list_attempts())


def _record_in_child(state_dir: str, parent_conn: int) -> None:
    with Store.shared(Path(state_dir)) as store:
        if id(_connection(store)) == parent_conn:
            raise SystemExit(3)
        store.record_attempt(make_record())
