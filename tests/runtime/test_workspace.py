"""The workspace seam: checked reads, failures as values, the state directory, recovery."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from tests.runtime.conftest import MakeTree
from tests.workspace_snapshot import snapshot_tree

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.journal import JournalEntry, open_journal
from patchsmith.runtime.textfile import TextEncoding, TextFile
from patchsmith.runtime.workspace import RawFile, Workspace, os_failure


class TestWorkspace:
    def test_root_must_be_a_directory(self, tmp_path: Path) -> None:
        """Opening a missing root is a misuse error, not a failure value."""
        with pytest.raises(ValueError, match="not a directory"):
            Workspace(tmp_path / "missing")

    def test_read_text(self, make_workspace: MakeTree) -> None:
        """`read` returns the decoded file with its encoding and mode."""
        root = make_workspace({"src/a.py": (b"\xef\xbb\xbfx = 1\r\n", 0o755)})
        result = Workspace(root).read("./src/a.py")

        assert isinstance(result, TextFile)
        assert ("src/a.py", "x = 1\r\n", TextEncoding.UTF_8, 0o755) == (
            result.path,
            result.text,
            result.encoding,
            result.mode,
        )

    def test_read_missing_suggests_similar(self, make_workspace: MakeTree) -> None:
        """A missing file is FILE_NOT_FOUND with a hint naming similar files."""
        root = make_workspace({"src/utils.py": b"x\n"})
        result = Workspace(root).read("src/util.py")

        assert isinstance(result, PatchFailure)
        assert FailureCode.FILE_NOT_FOUND == result.code
        assert result.hint is not None
        assert "src/utils.py" in result.hint

    def test_read_missing_without_similar(self, make_workspace: MakeTree) -> None:
        """Without similar names the hint says how to make a new file."""
        root = make_workspace({"a.py": b"x\n"})
        result = Workspace(root).read("zzzzzz.md")

        assert isinstance(result, PatchFailure)
        assert result.hint is not None
        assert "create" in result.hint

    def test_read_missing_directory(self, make_workspace: MakeTree) -> None:
        """A file in a missing directory says the directory is missing too."""
        root = make_workspace({})
        result = Workspace(root).read("nope/a.py")

        assert isinstance(result, PatchFailure)
        assert FailureCode.FILE_NOT_FOUND == result.code
        assert result.hint is not None
        assert "nope/" in result.hint

    def test_directory_is_not_a_file(self, make_workspace: MakeTree) -> None:
        """Reading a directory is FILE_NOT_FOUND saying it is a directory."""
        root = make_workspace({"pkg/a.py": b""})
        result = Workspace(root).read("pkg")

        assert isinstance(result, PatchFailure)
        assert FailureCode.FILE_NOT_FOUND == result.code
        assert "directory" in result.message

    def test_fifo_is_not_a_regular_file(self, make_workspace: MakeTree) -> None:
        """A special file is IO_ERROR, never read."""
        root = make_workspace({})
        os.mkfifo(root / "pipe")
        result = Workspace(root).read("pipe")

        assert isinstance(result, PatchFailure)
        assert FailureCode.IO_ERROR == result.code

    def test_read_binary(self, make_workspace: MakeTree) -> None:
        """A binary file is BINARY_FILE from `read` but readable raw."""
        root = make_workspace({"b.bin": b"\x00\x01"})
        workspace = Workspace(root)

        assert isinstance(workspace.read("b.bin"), PatchFailure)
        assert RawFile("b.bin", b"\x00\x01", 0o644) == workspace.read_raw("b.bin")

    def test_read_refused_path(self, make_workspace: MakeTree) -> None:
        """Reading through a refused path returns the path failure."""
        root = make_workspace({})
        result = Workspace(root).read("../etc/passwd")

        assert isinstance(result, PatchFailure)
        assert FailureCode.PATH_OUTSIDE_WORKSPACE == result.code

    def test_unreadable_is_io_error(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An OS error other than not-found is IO_ERROR with the OS message."""
        root = make_workspace({"secret.txt": b"x"})

        def denied(_path: Path, **_options: object) -> tuple[bytes, os.stat_result]:
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr("patchsmith.runtime.workspace.read_regular", denied)
        result = Workspace(root).read("secret.txt")

        assert isinstance(result, PatchFailure)
        assert FailureCode.IO_ERROR == result.code
        assert "Permission denied" in result.message

    def test_exists(self, make_workspace: MakeTree) -> None:
        """`exists` is true for files only, false for directories and refused paths."""
        root = make_workspace({"d/a.txt": b""})
        workspace = Workspace(root)

        assert [True, False, False, False] == [
            workspace.exists("d/a.txt"),
            workspace.exists("d"),
            workspace.exists("d/b.txt"),
            workspace.exists("../d/a.txt"),
        ]

    def test_state_dir_created_on_demand(self, make_workspace: MakeTree) -> None:
        """`.patchsmith/` appears only when used, with a `.gitignore` ignoring everything."""
        root = make_workspace({"a": b""})
        workspace = Workspace(root)

        assert not (root / ".patchsmith").exists()
        assert root / ".patchsmith" == workspace.state_dir
        assert "*\n" == (root / ".patchsmith" / ".gitignore").read_text()

    def test_opening_leaves_tree_alone(self, make_workspace: MakeTree) -> None:
        """Opening a workspace with no journal changes nothing on disk."""
        root = make_workspace({"a.txt": b"1", "b/c.txt": (b"2", 0o755)})
        before = snapshot_tree(root, exclude=())
        Workspace(root)

        assert before == snapshot_tree(root, exclude=())

    def test_recovers_interrupted_commit(self, make_workspace: MakeTree) -> None:
        """A journal left behind is rolled back when the workspace is opened."""
        root = make_workspace({"a.txt": b"old", "gone.txt": (b"bye", 0o755)})
        before = snapshot_tree(root)
        workspace = Workspace(root)
        open_journal(
            workspace.ensure_journal_root(),
            [
                JournalEntry("a.txt", b"old", 0o644, b"new", 0o644),
                JournalEntry("gone.txt", b"bye", 0o755),
                JournalEntry("new/dir/n.txt", None, None, b"n", 0o644),
            ],
            ["new", "new/dir"],
        )
        (root / "a.txt").write_bytes(b"new")
        (root / "gone.txt").unlink()
        (root / "new" / "dir").mkdir(parents=True)
        (root / "new" / "dir" / "n.txt").write_bytes(b"n")
        reopened = Workspace(root)

        assert before == snapshot_tree(root)
        assert 1 == len(reopened.recovered)
        assert [] == list((root / ".patchsmith" / "journal").iterdir())

    def test_journal_without_manifest_is_discarded(self, make_workspace: MakeTree) -> None:
        """A journal whose manifest was never written is removed without touching files."""
        root = make_workspace({"a.txt": b"old"})
        (root / ".patchsmith" / "journal" / "abc" / "backup").mkdir(parents=True)
        (root / ".patchsmith" / "journal" / "abc" / "backup" / "0").write_bytes(b"junk")
        before = snapshot_tree(root)
        reopened = Workspace(root)

        assert before == snapshot_tree(root)
        assert () == reopened.recovered
        assert not (root / ".patchsmith" / "journal" / "abc").exists()

    def test_failed_recovery_is_reported(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """When rollback hits an OS error, the workspace records an IO_ERROR instead of raising."""
        root = make_workspace({})
        # a leftover journal to recover (an empty journal directory needs no recovery)
        (root / ".patchsmith" / "journal" / "abc").mkdir(parents=True)

        def broken(*_args: object, **_kwargs: object) -> tuple[str, ...]:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr("patchsmith.runtime.journal.recover_journals", broken)
        workspace = Workspace(root)

        assert workspace.recovery_failure is not None
        assert FailureCode.IO_ERROR == workspace.recovery_failure.code
        assert "Input/output error" in workspace.recovery_failure.message


class TestOpeningLooksBeforeLocking:
    """Opening a workspace takes the commit lock only when its journal directory holds
    something to recover (or is something the recovery must refuse)."""

    def test_an_empty_journal_directory_needs_no_lock(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        root = make_workspace({})
        (root / ".patchsmith" / "journal").mkdir(parents=True)

        def no_lock(_self: Workspace) -> None:
            raise AssertionError("locked to recover nothing")

        monkeypatch.setattr(Workspace, "lock", no_lock)
        workspace = Workspace(root)

        assert () == workspace.blocking_failures

    def test_a_leftover_entry_is_recovered_under_the_lock(self, make_workspace: MakeTree) -> None:
        root = make_workspace({})
        (root / ".patchsmith" / "journal" / "0123.pending").parent.mkdir(parents=True)
        (root / ".patchsmith" / "journal" / "0123.pending").write_bytes(b"a.py")

        workspace = Workspace(root)

        assert () == workspace.blocking_failures
        assert [] == os.listdir(root / ".patchsmith" / "journal")

    def test_a_linked_empty_journal_directory_is_still_refused(
        self, make_workspace: MakeTree, tmp_path: Path
    ) -> None:
        root = make_workspace({})
        (root / ".patchsmith").mkdir()
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (root / ".patchsmith" / "journal").symlink_to(elsewhere)

        workspace = Workspace(root)

        assert workspace.recovery_failure is not None
        assert FailureCode.STATE_DIR_UNSAFE == workspace.recovery_failure.code

    def test_a_journal_path_that_is_a_file_is_still_refused(self, make_workspace: MakeTree) -> None:
        root = make_workspace({})
        (root / ".patchsmith").mkdir()
        (root / ".patchsmith" / "journal").write_bytes(b"")

        workspace = Workspace(root)

        assert workspace.recovery_failure is not None
        assert FailureCode.STATE_DIR_UNSAFE == workspace.recovery_failure.code


class TestCanonicalRead:
    def test_canonical_path_is_read_and_a_climbing_one_still_checked(
        self, make_workspace: MakeTree, tmp_path: Path
    ) -> None:
        """`read_raw(..., canonical=True)` reads a real path as is, yet never one that climbs."""
        root = make_workspace({"a/b.txt": b"inside"})
        (tmp_path / "outside.txt").write_bytes(b"secret")
        workspace = Workspace(root)

        raw = workspace.read_raw("a/b.txt", canonical=True)
        assert not isinstance(raw, PatchFailure) and b"inside" == raw.raw
        climbing = workspace.read_raw("../outside.txt", canonical=True)
        assert isinstance(climbing, PatchFailure)
        assert FailureCode.PATH_OUTSIDE_WORKSPACE == climbing.code


class TestOsFailure:
    @pytest.mark.parametrize(
        ("error", "code"),
        [
            (
                FileNotFoundError(errno.ENOENT, "No such file or directory"),
                FailureCode.FILE_NOT_FOUND,
            ),
            (PermissionError(errno.EACCES, "Permission denied"), FailureCode.IO_ERROR),
            (OSError(errno.ENOSPC, "No space left on device"), FailureCode.IO_ERROR),
            (OSError("bare"), FailureCode.IO_ERROR),
        ],
    )
    def test_maps_os_errors(self, error: OSError, code: FailureCode) -> None:
        """Not-found becomes FILE_NOT_FOUND, every other OS error IO_ERROR with its message."""
        failure = os_failure(error, "a.txt", "write")

        assert code == failure.code
        assert failure.message.startswith("cannot write a.txt: ")
        assert (error.strerror or str(error)) in failure.message
