"""One `apply()` does each piece of file-system work once: what it has read, stat'ed or
made sure of in this call is passed on, and every check it passes on from still holds."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.runtime.conftest import MakeTree

from patchsmith import apply
from patchsmith.errors import FailureCode
from patchsmith.guards.policyfiles import _linked_policy_paths
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime import workspace as workspace_module
from patchsmith.runtime.journal import close_journal, open_journal
from patchsmith.runtime.statedir import ready_state_dir
from patchsmith.runtime.workspace import RawFile, Workspace
from patchsmith.store import Store

_DIFF = """--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 a = 1
-b = 2
+b = 3
 c = 4
"""
_OLD = b"a = 1\nb = 2\nc = 4\n"


@pytest.fixture(name="opened")
def _opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each path was opened through `os.open` (names, not descriptors)."""
    counts: Counter[str] = Counter()
    real_open = os.open

    def counting(path: object, *args: object, **kwargs: object) -> int:
        if isinstance(path, (str, Path)):
            counts[Path(path).name] += 1
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting)
    yield counts
    Store.close_shared()


class TestOneRead:
    def test_the_changed_file_is_read_once_before_the_lock(
        self, make_workspace: MakeTree, opened: Counter[str]
    ) -> None:
        """Intake reads the file; staging takes those bytes; the commit reads it once more,
        under its lock, to check that it is still what was read."""
        root = make_workspace({"app.py": _OLD})

        report = apply(_DIFF, root)

        assert ApplyStatus.APPLIED == report.status
        assert b"a = 1\nb = 3\nc = 4\n" == (root / "app.py").read_bytes()
        assert 2 == opened["app.py"]

    def test_a_change_after_intake_is_refused_at_commit(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The bytes intake read are the ones the commit holds the disk to: a file rewritten
        (same size) just after intake read it is STALE_FILE, and left as it was written."""
        root = make_workspace({"app.py": _OLD})
        real_read = Workspace.read_resolved

        def read_then_edit(self: Workspace, relative: str, info: os.stat_result) -> object:
            read = real_read(self, relative, info)
            (root / "app.py").write_bytes(b"a = 1\nb = 2\nc = 5\n")
            return read

        monkeypatch.setattr(Workspace, "read_resolved", read_then_edit)

        report = apply(_DIFF, root, record=False)

        assert ApplyStatus.REFUSED == report.status
        assert [FailureCode.STALE_FILE] == [e.code for e in report.errors]
        assert b"a = 1\nb = 2\nc = 5\n" == (root / "app.py").read_bytes()

    def test_a_hard_link_seen_by_intake_is_refused(self, make_workspace: MakeTree) -> None:
        """The link count staging takes from intake's read still refuses a file with two names."""
        root = make_workspace({"app.py": _OLD})
        os.link(root / "app.py", root / "other.py")

        report = apply(_DIFF, root, record=False)

        assert ApplyStatus.REFUSED == report.status
        assert _OLD == (root / "other.py").read_bytes()

    def test_a_directory_and_a_missing_file_read_as_before(self, make_workspace: MakeTree) -> None:
        """One `stat` tells a folder from a missing file, as the separate looks did."""
        root = make_workspace({"app.py/inner.txt": b"x\n"})

        folder = apply(_DIFF, root, record=False)
        missing = apply(_DIFF.replace("app.py", "gone.py"), root, record=False)

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in folder.errors]
        assert "is a directory" in folder.errors[0].message
        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in missing.errors]
        assert "does not exist" in missing.errors[0].message

    def test_a_big_file_is_read_again_and_checked(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Above the size where intake drops its bytes, staging reads them again (as before)."""
        monkeypatch.setattr("patchsmith.runtime.intake.LAZY_BYTES_MIN_CHARS", 4)
        root = make_workspace({"app.py": _OLD})
        reads: list[str] = []
        real_read_raw = Workspace.read_raw

        def counting(self: Workspace, path: str, *, canonical: bool = False) -> object:
            reads.append(path)
            return real_read_raw(self, path, canonical=canonical)

        monkeypatch.setattr(Workspace, "read_raw", counting)

        report = apply(_DIFF, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert ["app.py"] == reads

    @pytest.mark.parametrize("rewritten", [b"a = 1\nb = 2\nc = 5\n", b"a = 1\nb = 2\nc = 4\nd\n"])
    def test_a_big_file_rewritten_after_intake_is_refused(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch, rewritten: bytes
    ) -> None:
        """A big file read again for staging must still hold what intake read: one rewritten
        in between (same size or not) is STALE_FILE, never the edit put on the new text."""
        monkeypatch.setattr("patchsmith.runtime.intake.LAZY_BYTES_MIN_CHARS", 4)
        root = make_workspace({"app.py": _OLD})
        real_read = Workspace.read_resolved

        def read_then_edit(self: Workspace, relative: str, info: os.stat_result) -> object:
            read = real_read(self, relative, info)
            (root / "app.py").write_bytes(rewritten)
            return read

        monkeypatch.setattr(Workspace, "read_resolved", read_then_edit)

        report = apply(_DIFF, root, record=False)

        assert ApplyStatus.REFUSED == report.status
        assert [FailureCode.STALE_FILE] == [e.code for e in report.errors]
        assert rewritten == (root / "app.py").read_bytes()


class TestStateDirectory:
    def test_the_gitignore_is_tried_once_under_the_lock(
        self, make_workspace: MakeTree, opened: Counter[str]
    ) -> None:
        """The lock makes sure of `.gitignore`; the journal directory under the same lock
        checks `.patchsmith/` again but does not try the file again."""
        root = make_workspace({"app.py": _OLD})
        apply(_DIFF.replace("b = 3", "b = 9"), root)  # the store is made and kept
        (root / "app.py").write_bytes(_OLD)
        opened.clear()

        apply(_DIFF, root)

        assert 1 == opened[".gitignore"]

    def test_ready_state_dir_skips_only_the_same_directory(self, tmp_path: Path) -> None:
        """A known identity skips the `.gitignore`; another directory, or one just made,
        gets it."""
        directory = tmp_path / ".patchsmith"
        identity = ready_state_dir(directory)
        assert b"*\n" == (directory / ".gitignore").read_bytes()

        (directory / ".gitignore").unlink()
        assert identity == ready_state_dir(directory, ignored=identity)
        assert not (directory / ".gitignore").exists()

        ready_state_dir(directory, ignored=(identity[0], identity[1] + 1))
        assert (directory / ".gitignore").exists()

        (directory / ".gitignore").unlink()
        directory.rmdir()
        ready_state_dir(directory, ignored=identity)  # made now: whatever its inode
        assert (directory / ".gitignore").exists()

    def test_a_symlinked_state_dir_is_still_refused(self, tmp_path: Path) -> None:
        """Skipping the `.gitignore` skips no check: a link is refused whatever the identity."""
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (tmp_path / ".patchsmith").symlink_to(elsewhere)
        info = elsewhere.stat()

        with pytest.raises(OSError, match="symlink"):
            ready_state_dir(tmp_path / ".patchsmith", ignored=(info.st_dev, info.st_ino))

    def test_a_no_record_commit_still_leaves_no_state(self, make_workspace: MakeTree) -> None:
        """`record=False` in a fresh workspace removes the `.patchsmith/` it made to lock."""
        root = make_workspace({"app.py": _OLD})

        report = apply(_DIFF, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert not (root / ".patchsmith").exists()

    def test_the_lock_is_taken_again_after_its_file_is_replaced(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The lock compares the file it opened with the one named now, by the `fstat` of
        its open: a lock file replaced meanwhile is opened and locked again."""
        root = make_workspace({"app.py": _OLD})
        workspace = Workspace(root)
        real_open_lock = workspace_module.open_lock_file
        calls: list[int] = []

        def replacing(state_dir: Path) -> tuple[int, os.stat_result]:
            fd, info = real_open_lock(state_dir)
            if not calls:
                (state_dir / "lock").unlink()
                (state_dir / "lock").write_bytes(b"")
            calls.append(fd)
            return fd, info

        monkeypatch.setattr(workspace_module, "open_lock_file", replacing)

        with workspace.lock():
            pass

        assert 2 == len(calls)


class TestJournalClose:
    def test_a_closed_journal_is_removed(self, tmp_path: Path) -> None:
        """A journal with its pack is removed, however it was closed."""
        root = tmp_path / "journal"
        root.mkdir()
        _, directory = open_journal(root, [], [])
        (directory / "manifest.json").unlink()

        close_journal(directory, manifest_removed=True)

        assert [] == list(root.iterdir())

    def test_anything_else_in_it_is_removed_too(self, tmp_path: Path) -> None:
        root = tmp_path / "journal"
        root.mkdir()
        _, directory = open_journal(root, [], [])
        (directory / "stray").mkdir()
        (directory / "stray" / "file").write_bytes(b"x")

        close_journal(directory)

        assert [] == list(root.iterdir())

    def test_a_linked_journal_is_not_followed(self, tmp_path: Path) -> None:
        """A journal directory replaced by a link: nothing in the link's target is removed."""
        target = tmp_path / "target"
        target.mkdir()
        (target / "backups.pack").write_bytes(b"keep")
        link = tmp_path / "journal-link"
        link.symlink_to(target)

        with pytest.raises(OSError):
            close_journal(link)

        assert b"keep" == (target / "backups.pack").read_bytes()


class TestLookups:
    def test_linked_policy_found_through_a_linked_root(self, tmp_path: Path) -> None:
        """The root's real path is resolved when a policy file is a link, as before."""
        real = tmp_path / "real"
        (real / "conf").mkdir(parents=True)
        (real / "conf" / "rules.toml").write_text("[policy]\n")
        (real / "patchsmith.toml").symlink_to(Path("conf") / "rules.toml")
        (tmp_path / "via").symlink_to(real)

        assert {"conf/rules.toml": "patchsmith.toml"} == _linked_policy_paths(tmp_path / "via")
        assert {} == _linked_policy_paths(tmp_path)

    def test_kept_is_none_without_a_kept_connection(self, tmp_path: Path) -> None:
        """`Store.kept` never makes a store: nothing kept, nothing opened."""
        state_dir = tmp_path / ".patchsmith"

        assert Store.kept(state_dir) is None
        assert not state_dir.exists()

    def test_kept_uses_the_kept_connection(self, tmp_path: Path) -> None:
        state_dir = tmp_path / ".patchsmith"
        with Store.shared(state_dir):
            pass
        try:
            kept = Store.kept(state_dir)
            assert kept is not None
            kept.close()
            (state_dir / "patchsmith.db").unlink()
            assert Store.kept(state_dir) is None
        finally:
            Store.close_shared()

    def test_an_already_applied_reply_reads_through_plain_os(
        self, make_workspace: MakeTree
    ) -> None:
        """The same reply again is `already_applied` (the store's kept connection vouches
        for the database file; the file is read without the buffered layer)."""
        root = make_workspace({"app.py": _OLD})
        try:
            first = apply(_DIFF, root)
            again = apply(_DIFF, root)
        finally:
            Store.close_shared()

        assert ApplyStatus.APPLIED == first.status
        assert ApplyStatus.ALREADY_APPLIED == again.status


def test_raw_file_reads_resolved(make_workspace: MakeTree) -> None:
    """`read_resolved` is `read_raw` without the second resolve and `stat`."""
    root = make_workspace({"a.txt": (b"x\n", 0o640)})
    workspace = Workspace(root)
    info = workspace.stat_resolved("a.txt")
    assert info is not None

    assert RawFile("a.txt", b"x\n", 0o640, 1) == workspace.read_resolved("a.txt", info)
    assert workspace.stat_resolved("missing.txt") is None
