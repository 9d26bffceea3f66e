"""A database the repository ships is not the audit store (docs/decisions/0031).

Finding 5 of issue 20: a committed `.patchsmith/patchsmith.db` became the clone's
store, and its trigger logged a refused attempt as `applied`.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from tests.test_store import make_record
from tests.workspace_snapshot import make_tree

from patchsmith.cli import main
from patchsmith.errors import PatchRefused
from patchsmith.store import DB_FILE_NAME, Store

SOURCE = b"x = 1\ny = 2\n"
STALE = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 9\n+y = 3\n"
TRIGGER = (
    "CREATE TRIGGER lie AFTER INSERT ON attempts BEGIN "
    "UPDATE attempts SET status = 'applied' WHERE id = NEW.id; END"
)


def _store_elsewhere(tmp_path: Path) -> Path:
    """A real store made in another folder (on another machine, as far as the file knows)."""
    state = tmp_path / "elsewhere" / ".patchsmith"
    with Store.open(state) as store:
        store.record_attempt(make_record(id="a-FROMTHEREPO"))
    return state / DB_FILE_NAME


def _plant(db: Path, root: Path, *, trigger: bool) -> None:
    state = root / ".patchsmith"
    state.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db, state / DB_FILE_NAME)
    if trigger:
        with sqlite3.connect(state / DB_FILE_NAME) as conn:
            conn.execute(TRIGGER)


def _quarantined(root: Path) -> list[Path]:
    folder = root / ".patchsmith" / "quarantine"
    return sorted(folder.glob("store-*")) if folder.exists() else []


def _log(root: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert 0 == main(["log", "-C", str(root), "--json"])
    data = json.loads(capsys.readouterr().out)
    attempts = data["attempts"] if isinstance(data, dict) else data
    assert isinstance(attempts, list)
    return attempts


class TestPlantedDatabase:
    def test_trigger_cannot_log_a_refusal_as_applied(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The committed database is moved aside; the refused attempt is logged as refused."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        _plant(_store_elsewhere(tmp_path), root, trigger=True)
        patch = tmp_path / "reply.diff"
        patch.write_text(STALE)

        code = main(["apply", str(patch), "-C", str(root), "--json"])
        report = json.loads(capsys.readouterr().out)

        assert 1 == code and "refused" == report["status"]
        attempts = _log(root, capsys)
        assert ["refused"] == [a["status"] for a in attempts]
        assert "a-FROMTHEREPO" not in json.dumps(attempts)
        [aside] = _quarantined(root)
        assert (aside / DB_FILE_NAME).is_file()
        assert "trigger" in (aside / "REASON.txt").read_text()

    def test_copied_store_without_trigger_is_moved_aside(self, tmp_path: Path) -> None:
        """A store copied from elsewhere carries another file's origin: not this store."""
        root = make_tree(tmp_path / "ws", {"a.py": SOURCE})
        _plant(_store_elsewhere(tmp_path), root, trigger=False)

        with Store.open(root / ".patchsmith") as store:
            assert [] == store.list_attempts()
        [aside] = _quarantined(root)
        assert "another file" in (aside / "REASON.txt").read_text()

    def test_database_without_origin_is_moved_aside(self, tmp_path: Path) -> None:
        """A database with tables but no origin record (hand-made, or older) is not adopted."""
        state = tmp_path / "ws" / ".patchsmith"
        state.mkdir(parents=True)
        with sqlite3.connect(state / DB_FILE_NAME) as conn:
            conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            conn.execute("INSERT INTO schema_version VALUES (5)")

        with Store.open(state) as store:
            assert [] == store.list_attempts()
        [aside] = _quarantined(tmp_path / "ws")
        assert "no record" in (aside / "REASON.txt").read_text()

    def test_trigger_added_to_our_own_store_is_refused_too(self, tmp_path: Path) -> None:
        """Even this machine's store is moved aside once it holds a trigger or a view."""
        state = tmp_path / "ws" / ".patchsmith"
        Store.open(state).close()
        with sqlite3.connect(state / DB_FILE_NAME) as conn:
            conn.execute("CREATE VIEW v AS SELECT 1")

        with Store.open(state) as store:
            store.record_attempt(make_record(id="a-NEW"))
            assert ["a-NEW"] == [r.id for r in store.list_attempts()]
        [aside] = _quarantined(tmp_path / "ws")
        assert "view" in (aside / "REASON.txt").read_text()

    @pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
    def test_store_committed_to_git_is_not_the_clones_store(self, tmp_path: Path) -> None:
        """`git clone` of a repository that tracks its store: the clone gets a new store."""
        origin = make_tree(tmp_path / "origin", {"a.py": SOURCE})
        with Store.open(origin / ".patchsmith") as store:
            store.record_attempt(make_record(id="a-COMMITTED"))
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
        subprocess.run([*git, "-C", str(origin), "init", "-q"], check=True)
        subprocess.run([*git, "-C", str(origin), "add", "-f", "."], check=True)
        subprocess.run([*git, "-C", str(origin), "commit", "-qm", "x"], check=True)
        clone = tmp_path / "clone"
        subprocess.run([*git, "clone", "-q", str(origin), str(clone)], check=True)
        assert (clone / ".patchsmith" / DB_FILE_NAME).is_file()

        with Store.open(clone / ".patchsmith") as store:
            assert [] == store.list_attempts()
        assert 1 == len(_quarantined(clone))
        with Store.open(origin / ".patchsmith") as store:  # the author's own store stays
            assert ["a-COMMITTED"] == [r.id for r in store.list_attempts()]


class TestOwnStore:
    def test_reopened_store_keeps_its_records(self, tmp_path: Path) -> None:
        """The store this machine made is opened as it is, nothing moved."""
        state = tmp_path / ".patchsmith"
        with Store.open(state) as store:
            store.record_attempt(make_record(id="a-KEEP"))
        with Store.shared(state) as store:
            assert ["a-KEEP"] == [r.id for r in store.list_attempts()]
        Store.close_shared()
        assert [] == _quarantined(tmp_path)

    def test_schema_is_not_trusted(self, tmp_path: Path) -> None:
        """Every connection runs with trusted_schema off."""
        with Store.open(tmp_path / ".patchsmith") as store:
            conn = store._conn
            assert conn is not None
            assert 0 == conn.execute("PRAGMA trusted_schema").fetchone()[0]

    def test_a_second_foreign_database_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A foreign database that reappears right after the move is refused, not looped on."""
        import patchsmith.store.connection as store_module

        state = tmp_path / ".patchsmith"
        Store.open(state).close()
        monkeypatch.setattr(store_module, "untrusted", lambda conn, db: "planted again")

        with pytest.raises(PatchRefused) as info:
            Store.open(state)

        assert "planted again" in info.value.failures[0].message
