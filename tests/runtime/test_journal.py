"""The commit journal: durable backups, idempotent rollback, recovery of leftovers."""

from __future__ import annotations

from pathlib import Path

from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.runtime.journal import (
    JournalEntry,
    close_journal,
    open_journal,
    recover_journals,
    roll_back,
    temp_path_for,
    write_atomically,
)


class TestJournal:
    def test_rollback_restores_and_is_idempotent(self, tmp_path: Path) -> None:
        """Rolling back twice gives the recorded state both times, temp files removed."""
        root = make_tree(tmp_path / "ws", {"a.txt": (b"old", 0o755)})
        before = snapshot_tree(root, exclude=("journal",))
        journal_id, directory = open_journal(
            root, tmp_path / "journal", [JournalEntry("a.txt", b"old", 0o755)], []
        )
        (root / "a.txt").write_bytes(b"new")
        temp_path_for(root / "a.txt", journal_id).write_bytes(b"partial")
        roll_back(root, directory)
        roll_back(root, directory)

        assert before == snapshot_tree(root)

    def test_rollback_without_manifest_does_nothing(self, tmp_path: Path) -> None:
        """A journal whose manifest is gone (committed) is not rolled back."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"old"})
        _, directory = open_journal(
            root, tmp_path / "journal", [JournalEntry("a.txt", b"old", 0o644)], []
        )
        (root / "a.txt").write_bytes(b"committed")
        (directory / "manifest.json").unlink()
        roll_back(root, directory)

        assert b"committed" == (root / "a.txt").read_bytes()

    def test_close_removes_journal(self, tmp_path: Path) -> None:
        """Closing a journal deletes its directory."""
        _, directory = open_journal(tmp_path, tmp_path / "journal", [], [])
        close_journal(directory)

        assert not directory.exists()

    def test_recover_ignores_stray_files(self, tmp_path: Path) -> None:
        """Files lying in the journal root are left alone; no journal means nothing recovered."""
        journal_root = tmp_path / "journal"
        journal_root.mkdir()
        (journal_root / "stray").write_bytes(b"x")

        assert () == recover_journals(tmp_path, journal_root)
        assert (journal_root / "stray").exists()
        assert () == recover_journals(tmp_path, tmp_path / "missing")

    def test_write_atomically_replaces_stale_temp(self, tmp_path: Path) -> None:
        """A leftover temp file does not block the next atomic write."""
        target, temp = tmp_path / "t", tmp_path / ".t.tmp"
        temp.write_bytes(b"leftover")
        write_atomically(target, b"data", 0o640, temp)

        assert (b"data", 0o640, False) == (
            target.read_bytes(),
            target.stat().st_mode & 0o777,
            temp.exists(),
        )
