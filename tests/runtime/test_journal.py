"""The commit journal: durable backups, checked recovery, quarantine of anything untrusted."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.runtime.atomic import write_atomically
from patchsmith.runtime.journal import (
    JournalEntry,
    close_journal,
    journal_temp_name,
    open_journal,
    open_pending,
    recover_journals,
    roll_back,
)

JOURNAL_ID = "0123456789abcdef"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _journal_root(root: Path) -> Path:
    journal_root = root / ".patchsmith" / "journal"
    journal_root.mkdir(parents=True, exist_ok=True)
    return journal_root


def _plant(
    root: Path,
    entries: list[dict[str, object]],
    backups: dict[str, bytes] | None = None,
    *,
    name: str = JOURNAL_ID,
    manifest: object = None,
    created_dirs: object = (),
) -> Path:
    """Write a journal by hand, the way a hostile repository would ship one.

    It is written in format 2 (a file `backup/<n>` per entry), which recovery still reads;
    `TestBackupPack` covers format 3's single pack.
    """
    directory = _journal_root(root) / name
    (directory / "backup").mkdir(parents=True)
    for backup, data in (backups or {}).items():
        (directory / "backup" / backup).write_bytes(data)
    if manifest is None:
        manifest = {
            "version": 2,
            "id": name,
            "inode": directory.lstat().st_ino,
            "entries": entries,
            "created_dirs": list(created_dirs),  # type: ignore[call-overload]
        }
    if isinstance(manifest, dict) and "id" in manifest and "inode" not in manifest:
        manifest = {**manifest, "inode": directory.lstat().st_ino}
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (directory / "manifest.json").write_text(text)
    return directory


def _quarantined(root: Path) -> list[str]:
    folder = root / ".patchsmith" / "quarantine"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


class TestJournal:
    def test_rollback_restores_and_is_idempotent(self, tmp_path: Path) -> None:
        """Rolling back twice gives the recorded state both times, temp files removed."""
        root = make_tree(tmp_path / "ws", {"a.txt": (b"old", 0o755)})
        before = snapshot_tree(root)
        journal_id, directory = open_journal(
            _journal_root(root), [JournalEntry("a.txt", b"old", 0o755, b"new", 0o755)], []
        )
        (root / "a.txt").write_bytes(b"new")
        (root / journal_temp_name(journal_id, 0)).write_bytes(b"partial")
        roll_back(root, directory)
        roll_back(root, directory)

        assert before == snapshot_tree(root)

    def test_rollback_without_manifest_does_nothing(self, tmp_path: Path) -> None:
        """A journal whose manifest is gone (committed) is not rolled back."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"old"})
        _, directory = open_journal(
            _journal_root(root), [JournalEntry("a.txt", b"old", 0o644, b"committed", 0o644)], []
        )
        (root / "a.txt").write_bytes(b"committed")
        (directory / "manifest.json").unlink()
        roll_back(root, directory)

        assert b"committed" == (root / "a.txt").read_bytes()

    def test_rollback_refuses_untrusted(self, tmp_path: Path) -> None:
        """`roll_back` on a journal that fails a check raises ValueError and restores nothing."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"mine"})
        directory = _plant(root, [{"path": "a.txt", "backup": None, "new_sha256": None}])

        with pytest.raises(ValueError, match="neither"):
            roll_back(root, directory)
        assert b"mine" == (root / "a.txt").read_bytes()

    def test_close_removes_journal(self, tmp_path: Path) -> None:
        """Closing a journal deletes its directory."""
        _, directory = open_journal(_journal_root(tmp_path), [], [])
        close_journal(directory)

        assert not directory.exists()

    def test_recover_ignores_stray_files(self, tmp_path: Path) -> None:
        """Files lying in the journal root are left alone; no journal means nothing recovered."""
        journal_root = _journal_root(tmp_path)
        (journal_root / "stray").write_bytes(b"x")

        assert () == recover_journals(tmp_path, journal_root).rolled_back
        assert (journal_root / "stray").exists()
        assert () == recover_journals(tmp_path, tmp_path / "missing").rolled_back

    def test_write_atomically_never_replaces_an_existing_temp_name(self, tmp_path: Path) -> None:
        """A file already at the temp name is not overwritten or deleted: the write fails."""
        target, temp = tmp_path / "t", tmp_path / ".t.tmp"
        temp.write_bytes(b"a user's file")

        with pytest.raises(FileExistsError):
            write_atomically(target, b"data", 0o640, temp_name=temp.name)
        assert b"a user's file" == temp.read_bytes()
        assert not target.exists()

    def test_write_atomically_fresh_temp_names(self, tmp_path: Path) -> None:
        """Without a name, the temp file is fresh and short, and nothing is left behind."""
        target = tmp_path / ("n" * 255)
        write_atomically(target, b"data", 0o640)

        assert (b"data", 0o640) == (target.read_bytes(), target.stat().st_mode & 0o777)
        assert [target.name] == os.listdir(tmp_path)


class TestRecoveryTrust:
    """Finding 1 and 9: a planted or damaged journal is quarantined, never trusted."""

    def test_planted_journal_cannot_escape_or_touch_git(self, tmp_path: Path) -> None:
        """Paths outside the root or inside .git are refused: nothing is written or deleted."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"a", ".git/HEAD": b"ref\n"})
        victim = make_tree(tmp_path / "victim", {"keep.txt": b"precious"})
        hook = b"#!/bin/sh\necho pwned\n"
        _plant(
            root,
            [
                {"path": "../victim/keep.txt", "backup": None, "mode": None, "new_sha256": None},
                {
                    "path": ".git/hooks/post-commit",
                    "backup": "1",
                    "mode": 0o755,
                    "old_sha256": _sha(hook),
                    "new_sha256": None,
                },
            ],
            {"1": hook},
        )
        before = snapshot_tree(root, exclude=(".patchsmith",))
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert () == result.rolled_back
        assert 1 == len(result.quarantined)
        assert "leaves the workspace" in result.quarantined[0][1]
        assert b"precious" == (victim / "keep.txt").read_bytes()
        assert not (root / ".git" / "hooks").exists()
        assert before == snapshot_tree(root)
        assert [] == list((root / ".patchsmith" / "journal").iterdir())
        assert 1 == len(_quarantined(root))

    @pytest.mark.parametrize(
        "path",
        [
            ".git/config",
            "sub/.git/hooks/pre-commit",
            ".patchsmith/patchsmith.db",
            "/etc/passwd",
            "a/../../x",
            "link/x.txt",
            42,
            None,
        ],
    )
    def test_every_bad_path_is_quarantined(self, tmp_path: Path, path: object) -> None:
        """A manifest path is checked like a patch path, plus no symlink on the way."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"a"})
        (root / "link").symlink_to(root / "real", target_is_directory=True)
        (root / "real").mkdir()
        _plant(root, [{"path": path, "backup": None, "mode": None, "new_sha256": None}])
        before = snapshot_tree(root)
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert 1 == len(result.quarantined)
        assert before == snapshot_tree(root)

    @pytest.mark.parametrize(
        ("manifest", "why"),
        [
            ("{not json", "not JSON"),
            ("[1, 2]", "not a JSON object"),
            ({"version": 2, "entries": [], "created_dirs": []}, "id"),
            ({"version": 2, "id": JOURNAL_ID, "entries": {}, "created_dirs": []}, "not a list"),
            ({"version": 2, "id": JOURNAL_ID, "entries": [], "created_dirs": 3}, "not a list"),
            ({"version": 1, "id": JOURNAL_ID, "entries": [], "created_dirs": []}, "version"),
            ({"version": 2, "id": "../../x", "entries": [], "created_dirs": []}, "id"),
            ({"version": 2, "id": JOURNAL_ID, "entries": [7], "created_dirs": []}, "object"),
            ("\udcff", "not JSON"),
        ],
    )
    def test_malformed_manifest_is_quarantined(
        self, tmp_path: Path, manifest: object, why: str
    ) -> None:
        """Not JSON, no id, non-list entries, old format: quarantined with the reason."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"a"})
        directory = _plant(root, [], manifest=manifest if manifest != "\udcff" else "x")
        if manifest == "\udcff":
            (directory / "manifest.json").write_bytes(b"\xff\xfe\x00")
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert 1 == len(result.quarantined)
        assert why in result.quarantined[0][1]
        assert b"a" == (root / "a.txt").read_bytes()

    def test_journal_copied_from_elsewhere_is_quarantined(self, tmp_path: Path) -> None:
        """A journal is bound to the directory it was written in: a copy is not trusted."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        directory = _plant(root, [GOOD_ENTRY], {"0": b"old"})
        copy = directory.with_name("fedcba9876543210")
        manifest = json.loads((directory / "manifest.json").read_text())
        shutil.copytree(directory, copy)
        shutil.rmtree(directory)
        (copy / "manifest.json").write_text(json.dumps({**manifest, "id": copy.name}))
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert "inode differs" in result.quarantined[0][1]
        assert b"new" == (root / "a.txt").read_bytes()

    def test_tampered_backup_is_quarantined(self, tmp_path: Path) -> None:
        """A backup that does not hash to the recorded sha256 is never written."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        _plant(
            root,
            [
                {
                    "path": "a.txt",
                    "backup": "0",
                    "mode": 0o644,
                    "old_sha256": _sha(b"old"),
                    "new_sha256": _sha(b"new"),
                    "new_mode": 0o644,
                }
            ],
            {"0": b"evil"},
        )
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert "does not hash" in result.quarantined[0][1]
        assert b"new" == (root / "a.txt").read_bytes()

    def test_human_edit_after_crash_is_kept(self, tmp_path: Path) -> None:
        """Finding 2: a file holding neither old nor new content is not restored over."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new", "b.txt": b"new b"})
        journal_root = _journal_root(root)
        open_journal(
            journal_root,
            [
                JournalEntry("a.txt", b"old", 0o644, b"new", 0o644),
                JournalEntry("b.txt", b"old b", 0o644, b"new b", 0o644),
            ],
            [],
        )
        (root / "b.txt").write_bytes(b"a person's edit")
        result = recover_journals(root, journal_root)

        assert 1 == len(result.quarantined)
        assert "b.txt holds neither" in result.quarantined[0][1]
        assert b"new" == (root / "a.txt").read_bytes()
        assert b"a person's edit" == (root / "b.txt").read_bytes()

    def test_restores_only_files_holding_new_content(self, tmp_path: Path) -> None:
        """Files still old are left alone; files new are restored; created files removed."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"old", "b.txt": (b"new b", 0o755)})
        journal_root = _journal_root(root)
        open_journal(
            journal_root,
            [
                JournalEntry("a.txt", b"old", 0o644, b"new", 0o644),
                JournalEntry("b.txt", b"old b", 0o644, b"new b", 0o755),
                JournalEntry("d/c.txt", None, None, b"c", 0o644),
            ],
            ["d"],
        )
        (root / "d").mkdir()
        (root / "d" / "c.txt").write_bytes(b"c")
        result = recover_journals(root, journal_root)

        assert 1 == len(result.rolled_back)
        assert {"a.txt": b"old", "b.txt": b"old b"} == snapshot_tree(root).files()
        assert 0o644 == (root / "b.txt").stat().st_mode & 0o777
        assert not (root / "d").exists()

    def test_dry_run_recovery_restores_nothing(self, tmp_path: Path) -> None:
        """With restore=False a valid journal stays pending and no file is written."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        journal_root = _journal_root(root)
        journal_id, _ = open_journal(
            journal_root, [JournalEntry("a.txt", b"old", 0o644, b"new", 0o644)], []
        )
        result = recover_journals(root, journal_root, restore=False)

        assert (journal_id,) == result.pending
        assert b"new" == (root / "a.txt").read_bytes()

    def test_symlinked_file_is_not_restored_through(self, tmp_path: Path) -> None:
        """A journaled path that is now a symlink is quarantined, its target untouched."""
        root = make_tree(tmp_path / "ws", {})
        outside = make_tree(tmp_path / "out", {"t.txt": b"new"})
        (root / "a.txt").symlink_to(outside / "t.txt")
        journal_root = _journal_root(root)
        open_journal(journal_root, [JournalEntry("a.txt", b"old", 0o644, b"new", 0o644)], [])
        result = recover_journals(root, journal_root)

        assert 1 == len(result.quarantined)
        assert b"new" == (outside / "t.txt").read_bytes()

    def test_journal_root_symlink_is_refused(self, tmp_path: Path) -> None:
        """A journal directory that is a symlink is never read."""
        root = make_tree(tmp_path / "ws", {})
        (root / ".patchsmith").mkdir()
        (tmp_path / "elsewhere").mkdir()
        (root / ".patchsmith" / "journal").symlink_to(tmp_path / "elsewhere")

        with pytest.raises(OSError, match="symlink"):
            recover_journals(root, root / ".patchsmith" / "journal")


GOOD_ENTRY: dict[str, object] = {
    "path": "a.txt",
    "backup": "0",
    "mode": 0o644,
    "old_sha256": _sha(b"old"),
    "new_sha256": _sha(b"new"),
    "new_mode": 0o644,
}


class TestEntryChecks:
    @pytest.mark.parametrize(
        ("change", "why"),
        [
            ({"path": "./a.txt"}, "canonical"),
            ({"mode": "0644"}, "permission mode"),
            ({"mode": True}, "permission mode"),
            ({"new_mode": 0o17777}, "permission mode"),
            ({"new_sha256": "abc"}, "sha256"),
            ({"backup": "7"}, "not described fully"),
            ({"backup": None}, "sha256 but no backup"),
            ({"new_mode": None}, "new content is not described fully"),
        ],
    )
    def test_bad_entry_fields(self, tmp_path: Path, change: dict[str, object], why: str) -> None:
        """Every field of an entry is type- and consistency-checked before any write."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        _plant(root, [{**GOOD_ENTRY, **change}], {"0": b"old"})
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert why in result.quarantined[0][1]
        assert b"new" == (root / "a.txt").read_bytes()

    def test_good_entry_rolls_back(self, tmp_path: Path) -> None:
        """The same hand-written entry, intact, is rolled back (the checks are not too strict)."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        _plant(root, [GOOD_ENTRY], {"0": b"old"})
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert (JOURNAL_ID,) == result.rolled_back
        assert b"old" == (root / "a.txt").read_bytes()

    def test_missing_backup_and_directory_target(self, tmp_path: Path) -> None:
        """A missing backup file, or a directory where the file should be: quarantined."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new"})
        _plant(root, [GOOD_ENTRY])
        assert (
            "backup 0 cannot be read"
            in recover_journals(root, root / ".patchsmith" / "journal").quarantined[0][1]
        )

        other = make_tree(tmp_path / "ws2", {"a.txt/inside": b"x"})
        _plant(other, [GOOD_ENTRY], {"0": b"old"})
        assert (
            "not a regular file"
            in recover_journals(other, other / ".patchsmith" / "journal").quarantined[0][1]
        )

    def test_pending_single_commit_note_is_checked(self, tmp_path: Path) -> None:
        """A `pending` note naming a path outside the root removes nothing there."""
        root = make_tree(tmp_path / "ws", {})
        outside = make_tree(tmp_path / "out", {".patchsmith-0123456789abcdef-0.tmp": b"keep"})
        folder = _journal_root(root) / JOURNAL_ID
        folder.mkdir()
        (folder / "pending").write_text("../out/x")
        recover_journals(root, root / ".patchsmith" / "journal")

        assert (outside / ".patchsmith-0123456789abcdef-0.tmp").exists()
        assert not folder.exists()

    def test_pending_note_file_removes_its_temp(self, tmp_path: Path) -> None:
        """A `<id>.pending` note (a single-file commit cut short) removes the temp beside its
        target and itself; a note naming a path outside the root removes nothing there."""
        root = make_tree(
            tmp_path / "ws", {"d/a.txt": b"a", "d/.patchsmith-0123456789abcdef-0.tmp": b"x"}
        )
        outside = make_tree(tmp_path / "out", {".patchsmith-fedcba9876543210-0.tmp": b"keep"})
        journal_root = _journal_root(root)
        (journal_root / f"{JOURNAL_ID}.pending").write_text("d/a.txt")
        (journal_root / "fedcba9876543210.pending").write_text("../out/x")
        recover_journals(root, journal_root)

        assert {"d/a.txt": b"a"} == snapshot_tree(root).files()
        assert (outside / ".patchsmith-fedcba9876543210-0.tmp").exists()
        assert [] == list(journal_root.iterdir())

    def test_single_file_commit_leaves_no_note(self, tmp_path: Path) -> None:
        """`open_pending` writes one note file; the commit that used it leaves nothing."""
        from patchsmith.runtime.transaction import Transaction
        from patchsmith.runtime.workspace import Workspace

        root = make_tree(tmp_path / "ws", {"a.txt": b"old"})
        journal_root = _journal_root(root)
        journal_id, note = open_pending(journal_root, "a.txt")
        assert [f"{journal_id}.pending"] == [p.name for p in journal_root.iterdir()]
        assert b"a.txt" == note.read_bytes()
        note.unlink()
        txn = Transaction(Workspace(root))
        assert txn.update("a.txt", "new") is None
        assert txn.commit() is None
        assert [] == list(journal_root.iterdir())
        assert b"new" == (root / "a.txt").read_bytes()


class TestBackupPack:
    """Format 3 keeps every backup in one `backups.pack`; the manifest says where each is."""

    def _written(self, root: Path) -> tuple[Path, dict[str, object]]:
        directory = open_journal(
            _journal_root(root),
            [
                JournalEntry("a.txt", b"old a", 0o644, b"new a", 0o644),
                JournalEntry("b.txt", b"old b!", 0o644, b"new b", 0o644),
            ],
            [],
        )[1]
        return directory, json.loads((directory / "manifest.json").read_text())

    def test_one_pack_holds_every_backup(self, tmp_path: Path) -> None:
        """Two backups, one file: the pack is the old contents in order, no per-entry files."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new a", "b.txt": b"new b"})
        directory, manifest = self._written(root)

        assert {"backups.pack", "manifest.json"} == {p.name for p in directory.iterdir()}
        assert b"old aold b!" == (directory / "backups.pack").read_bytes()
        assert [[0, 5], [5, 6]] == [e["backup"] for e in manifest["entries"]]  # type: ignore[index, union-attr]
        recover_journals(root, root / ".patchsmith" / "journal")
        assert {"a.txt": b"old a", "b.txt": b"old b!"} == snapshot_tree(root).files()

    @pytest.mark.parametrize(
        ("where", "why"),
        [
            ([0, 99], "beyond the end"),
            ([-1, 5], "not described fully"),
            ("0", "not described fully"),
            ([0, True], "not described fully"),
            ([0, 1, 2], "not described fully"),
        ],
    )
    def test_bad_places_are_quarantined(self, tmp_path: Path, where: object, why: str) -> None:
        """An offset or size that is not a place inside the pack restores nothing."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new a", "b.txt": b"new b"})
        directory, manifest = self._written(root)
        manifest["entries"][0]["backup"] = where  # type: ignore[index]
        (directory / "manifest.json").write_text(json.dumps(manifest))
        result = recover_journals(root, root / ".patchsmith" / "journal")

        assert why in result.quarantined[0][1]
        assert {"a.txt": b"new a", "b.txt": b"new b"} == snapshot_tree(root).files()

    def test_tampered_or_missing_pack_is_quarantined(self, tmp_path: Path) -> None:
        """A pack whose bytes changed, or that is gone, restores nothing."""
        root = make_tree(tmp_path / "ws", {"a.txt": b"new a", "b.txt": b"new b"})
        directory, _ = self._written(root)
        (directory / "backups.pack").write_bytes(b"evil aold b!")
        assert (
            "does not hash"
            in recover_journals(root, root / ".patchsmith" / "journal").quarantined[0][1]
        )

        other = make_tree(tmp_path / "ws2", {"a.txt": b"new a", "b.txt": b"new b"})
        directory, _ = self._written(other)
        (directory / "backups.pack").unlink()
        result = recover_journals(other, other / ".patchsmith" / "journal")
        assert "backup pack cannot be read" in result.quarantined[0][1]
        assert {"a.txt": b"new a", "b.txt": b"new b"} == snapshot_tree(other).files()

    def test_unknown_version_is_quarantined(self, tmp_path: Path) -> None:
        """Only formats 2 and 3 are read; 2.0 or 4 is not a version this code wrote."""
        for version in (4, 3.0, True):
            root = make_tree(tmp_path / f"ws{version!r}", {"a.txt": b"new a", "b.txt": b"new b"})
            directory, manifest = self._written(root)
            (directory / "manifest.json").write_text(json.dumps({**manifest, "version": version}))
            result = recover_journals(root, root / ".patchsmith" / "journal")
            assert "unknown manifest version" in result.quarantined[0][1]


class TestRestoredMetadata:
    def test_setid_never_comes_from_the_manifest(self, tmp_path: Path) -> None:
        """A manifest asking for 4755 restores 0755 unless the file on disk is setuid already."""
        root = make_tree(tmp_path / "ws", {"a.txt": (b"new", 0o755)})
        _plant(root, [{**GOOD_ENTRY, "mode": 0o4755, "new_mode": 0o755}], {"0": b"old"})
        recover_journals(root, root / ".patchsmith" / "journal")

        assert (b"old", 0o755) == (
            (root / "a.txt").read_bytes(),
            (root / "a.txt").stat().st_mode & 0o7777,
        )

    @pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
    def test_owner_comes_from_the_file_on_disk(self, tmp_path: Path) -> None:
        """The restored file belongs to the owner of the file it replaces."""
        root = make_tree(tmp_path / "ws", {"a.txt": (b"new", 0o644)})
        os.chown(root / "a.txt", 1234, 1234)
        _plant(root, [GOOD_ENTRY], {"0": b"old"})
        recover_journals(root, root / ".patchsmith" / "journal")

        info = (root / "a.txt").stat()
        assert (b"old", 1234, 1234) == ((root / "a.txt").read_bytes(), info.st_uid, info.st_gid)
