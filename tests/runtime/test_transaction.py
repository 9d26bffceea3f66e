"""Transactions: staging refuses cleanly, commit is all-or-nothing, files keep their form."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.runtime.conftest import MakeTree
from tests.workspace_snapshot import snapshot_tree

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.runtime import atomic
from patchsmith.runtime import journal as journal_module
from patchsmith.runtime import transaction as transaction_module
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace


def _code(result: PatchFailure | None) -> FailureCode | None:
    return None if result is None else result.code


def _open(make_workspace: MakeTree, files: dict[str, bytes | tuple[bytes, int]]) -> Transaction:
    return Transaction(Workspace(make_workspace(files)))


def _root(txn: Transaction) -> Path:
    return txn._workspace.root


class TestStaging:
    def test_staging_writes_nothing(self, make_workspace: MakeTree) -> None:
        """Staging every kind of change leaves the disk byte-identical."""
        root = make_workspace({"a.txt": b"a\n", "b.txt": b"b\n", "c.txt": b"c\n"})
        before = snapshot_tree(root, exclude=())
        txn = Transaction(Workspace(root))

        assert [None, None, None, None] == [
            txn.update("a.txt", "A\n"),
            txn.create("new/d.txt", "d\n"),
            txn.delete("b.txt"),
            txn.move("c.txt", "moved/c.txt", "C\n"),
        ]
        assert before == snapshot_tree(root, exclude=())

    def test_changes_sorted_by_path(self, make_workspace: MakeTree) -> None:
        """`changes` lists one FileChange per file, sorted by path, with the right actions."""
        txn = _open(make_workspace, {"z.txt": b"z\n", "m.txt": b"m\n", "b.txt": b"b\n"})
        txn.update("z.txt", "Z\n")
        txn.create("a.txt", "a\n")
        txn.delete("m.txt")
        txn.move("b.txt", "c.txt")

        assert [
            ("a.txt", Action.CREATE, None),
            ("c.txt", Action.MOVE, "b.txt"),
            ("m.txt", Action.DELETE, "m.txt"),
            ("z.txt", Action.UPDATE, "z.txt"),
        ] == [(c.path, c.action, c.old_path) for c in txn.changes]

    def test_update_records_texts_and_modes(self, make_workspace: MakeTree) -> None:
        """An update carries old and new bytes, texts and the unchanged mode."""
        txn = _open(make_workspace, {"run.sh": (b"echo a\n", 0o755)})
        txn.update("run.sh", "echo b\n", reason="fix")
        (change,) = txn.changes

        assert (b"echo a\n", b"echo b\n", "echo a\n", "echo b\n", 0o755, 0o755, "fix") == (
            change.old_bytes,
            change.new_bytes,
            change.old_text,
            change.new_text,
            change.old_mode,
            change.new_mode,
            change.reason,
        )

    @pytest.mark.parametrize(
        ("files", "path", "text", "code"),
        [
            ({}, "missing.txt", "x", FailureCode.FILE_NOT_FOUND),
            ({"d/a": b""}, "d", "x", FailureCode.FILE_NOT_FOUND),
            ({"b.bin": b"\x00\x01"}, "b.bin", "x", FailureCode.BINARY_FILE),
            ({"l.txt": b"caf\xe9"}, "l.txt", "\u2603", FailureCode.ENCODING_ERROR),
            ({}, "../x", "x", FailureCode.PATH_OUTSIDE_WORKSPACE),
            ({}, ".git/config", "x", FailureCode.PATH_OUTSIDE_WORKSPACE),
        ],
    )
    def test_update_refusals(
        self,
        make_workspace: MakeTree,
        files: dict[str, bytes | tuple[bytes, int]],
        path: str,
        text: str,
        code: FailureCode,
    ) -> None:
        """Updates of missing, binary, unencodable or outside paths are refused and not staged."""
        txn = _open(make_workspace, files)

        assert code == _code(txn.update(path, text))
        assert () == txn.changes

    def test_create_refusals(self, make_workspace: MakeTree) -> None:
        """Creating over a file, a directory, or under a file is FILE_ALREADY_EXISTS."""
        txn = _open(make_workspace, {"a.txt": b"", "d/x": b""})

        assert [FailureCode.FILE_ALREADY_EXISTS] * 3 == [
            _code(txn.create("a.txt", "x")),
            _code(txn.create("d", "x")),
            _code(txn.create("a.txt/inner", "x")),
        ]
        assert FailureCode.PATH_OUTSIDE_WORKSPACE == _code(txn.create("/tmp/x", "x"))
        assert () == txn.changes

    def test_create_over_dangling_symlink_is_refused(self, make_workspace: MakeTree) -> None:
        """A dangling symlink inside the workspace occupies its path."""
        root = make_workspace({})
        (root / "link").symlink_to("nowhere")

        assert FailureCode.FILE_ALREADY_EXISTS == _code(
            Transaction(Workspace(root)).create("link", "x")
        )

    def test_create_unencodable_text(self, make_workspace: MakeTree) -> None:
        """Text that is not valid Unicode (a lone surrogate) cannot be created."""
        txn = _open(make_workspace, {})

        assert FailureCode.ENCODING_ERROR == _code(txn.create("a.txt", "\udcff"))

    def test_create_bad_mode_is_misuse(self, make_workspace: MakeTree) -> None:
        """A mode with bits beyond 0o777 is a programming error."""
        txn = _open(make_workspace, {})

        with pytest.raises(ValueError, match="permission mask"):
            txn.create("a.txt", "x", mode=0o100644)

    def test_delete_refusals(self, make_workspace: MakeTree) -> None:
        """Deleting a missing file or a directory is FILE_NOT_FOUND."""
        txn = _open(make_workspace, {"d/x": b""})

        assert [FailureCode.FILE_NOT_FOUND, FailureCode.FILE_NOT_FOUND] == [
            _code(txn.delete("nope")),
            _code(txn.delete("d")),
        ]

    def test_delete_binary_is_allowed(self, make_workspace: MakeTree) -> None:
        """A binary file can be deleted; its text is None."""
        txn = _open(make_workspace, {"b.bin": b"\x00\x01"})

        assert txn.delete("b.bin") is None
        assert txn.changes[0].old_text is None

    def test_move_refusals(self, make_workspace: MakeTree) -> None:
        """Moves onto an existing file, from a missing one, or into themselves are refused."""
        txn = _open(make_workspace, {"a.txt": b"a", "b.txt": b"b", "bin": b"\x00"})

        assert [
            FailureCode.FILE_ALREADY_EXISTS,
            FailureCode.FILE_NOT_FOUND,
            FailureCode.FILE_ALREADY_EXISTS,
            FailureCode.PATH_OUTSIDE_WORKSPACE,
            FailureCode.BINARY_FILE,
        ] == [
            _code(txn.move("a.txt", "b.txt")),
            _code(txn.move("nope.txt", "c.txt")),
            _code(txn.move("a.txt", "a.txt")),
            _code(txn.move("a.txt", "../c.txt")),
            _code(txn.move("bin", "bin2", "text")),
        ]
        assert () == txn.changes

    def test_move_binary_unchanged(self, make_workspace: MakeTree) -> None:
        """A binary file can be moved when its content is left alone."""
        txn = _open(make_workspace, {"b.bin": b"\x00\x01"})

        assert txn.move("b.bin", "c.bin") is None
        assert b"\x00\x01" == txn.changes[0].new_bytes

    def test_move_new_text_keeps_encoding(self, make_workspace: MakeTree) -> None:
        """A moved file's new text is encoded like the original (Latin-1 here)."""
        txn = _open(make_workspace, {"a.txt": b"caf\xe9\n"})
        txn.move("a.txt", "b.txt", "th\xe9\n")

        assert b"th\xe9\n" == txn.changes[0].new_bytes

    def test_move_unencodable_text(self, make_workspace: MakeTree) -> None:
        """A moved file's new text must fit its encoding."""
        txn = _open(make_workspace, {"a.txt": b"caf\xe9\n"})

        assert FailureCode.ENCODING_ERROR == _code(txn.move("a.txt", "b.txt", "\u2603"))

    @pytest.mark.parametrize(
        "second",
        [
            lambda t: t.update("a.txt", "again"),
            lambda t: t.delete("a.txt"),
            lambda t: t.move("a.txt", "z.txt"),
            lambda t: t.update("./a.txt", "again"),
        ],
    )
    def test_second_stage_of_same_path_conflicts(
        self, make_workspace: MakeTree, second: object
    ) -> None:
        """Staging the same path twice is CONFLICTING_EDITS; the first stage stays."""
        txn = _open(make_workspace, {"a.txt": b"a"})
        txn.update("a.txt", "first")
        result = second(txn)  # type: ignore[operator]

        assert FailureCode.CONFLICTING_EDITS == _code(result)
        assert ["first"] == [c.new_text for c in txn.changes]

    def test_move_claims_source_and_destination(self, make_workspace: MakeTree) -> None:
        """After a move, both its source and its destination are taken."""
        txn = _open(make_workspace, {"a.txt": b"a", "b.txt": b"b"})
        txn.move("a.txt", "c.txt")

        assert [FailureCode.CONFLICTING_EDITS, FailureCode.CONFLICTING_EDITS] == [
            _code(txn.create("a.txt", "x")),
            _code(txn.move("b.txt", "c.txt")),
        ]

    def test_nested_paths_conflict(self, make_workspace: MakeTree) -> None:
        """A file staged at `d` conflicts with one staged at `d/x`, and the reverse."""
        txn = _open(make_workspace, {})
        txn.create("d", "file")

        assert FailureCode.CONFLICTING_EDITS == _code(txn.create("d/x", "nested"))

    def test_update_through_symlink_targets_real_file(self, make_workspace: MakeTree) -> None:
        """Updating a symlinked file stages (and writes) its target; the link stays a link."""
        root = make_workspace({"real.txt": b"old\n"})
        (root / "link.txt").symlink_to("real.txt")
        txn = Transaction(Workspace(root))

        assert txn.update("link.txt", "new\n") is None
        assert ["real.txt"] == [c.path for c in txn.changes]
        assert FailureCode.CONFLICTING_EDITS == _code(txn.update("real.txt", "x"))
        assert txn.commit() is None
        assert (root / "link.txt").is_symlink()
        assert b"new\n" == (root / "real.txt").read_bytes()

    def test_symlinked_directory_paths_are_canonical(self, make_workspace: MakeTree) -> None:
        """A file reached through a symlinked directory is staged under its real path."""
        root = make_workspace({"real/a.txt": b"a"})
        (root / "alias").symlink_to("real")
        txn = Transaction(Workspace(root))
        txn.create("alias/b.txt", "b")

        assert ["real/b.txt"] == [c.path for c in txn.changes]

    def test_delete_or_move_symlink_not_supported(self, make_workspace: MakeTree) -> None:
        """Symlinks themselves are never deleted or moved."""
        root = make_workspace({"real.txt": b"x"})
        (root / "link.txt").symlink_to("real.txt")
        txn = Transaction(Workspace(root))

        assert [FailureCode.NOT_SUPPORTED_YET] * 2 == [
            _code(txn.delete("link.txt")),
            _code(txn.move("link.txt", "other.txt")),
        ]

    def test_refusals_leave_disk_untouched(self, make_workspace: MakeTree) -> None:
        """A run of refused stages followed by a failed commit changes no byte or mode."""
        root = make_workspace({"a.txt": b"a", "x.sh": (b"x", 0o755), "b.bin": b"\x00"})
        before = snapshot_tree(root, exclude=())
        txn = Transaction(Workspace(root))
        txn.update("b.bin", "text")
        txn.create("a.txt", "x")
        txn.delete("../a.txt")
        txn.update("a.txt", "new")

        assert before == snapshot_tree(root, exclude=())
        (root / "a.txt").write_bytes(b"changed behind our back")
        after_edit = snapshot_tree(root)
        assert FailureCode.STALE_FILE == _code(txn.commit())
        assert after_edit == snapshot_tree(root)


class TestLifecycle:
    def test_reuse_after_commit_raises(self, make_workspace: MakeTree) -> None:
        """Staging or committing a committed transaction is a RuntimeError."""
        txn = _open(make_workspace, {"a.txt": b"a"})
        txn.commit()

        with pytest.raises(RuntimeError, match="committed"):
            txn.update("a.txt", "b")
        with pytest.raises(RuntimeError, match="committed"):
            txn.commit()

    def test_reuse_after_close_raises(self, make_workspace: MakeTree) -> None:
        """A closed transaction cannot stage, commit or close again."""
        txn = _open(make_workspace, {})
        txn.close()

        actions: list[Callable[[], object]] = [lambda: txn.create("a", "x"), txn.commit, txn.close]
        for action in actions:
            with pytest.raises(RuntimeError, match="closed"):
                action()

    def test_context_manager_closes(self, make_workspace: MakeTree) -> None:
        """Leaving a `with` block without committing discards the staged changes."""
        root = make_workspace({})
        with Transaction(Workspace(root)) as txn:
            txn.create("a.txt", "x")

        assert not (root / "a.txt").exists()
        with pytest.raises(RuntimeError):
            txn.create("b.txt", "y")

    def test_context_manager_after_commit(self, make_workspace: MakeTree) -> None:
        """Committing inside a `with` block is fine; leaving it does not raise."""
        root = make_workspace({})
        with Transaction(Workspace(root)) as txn:
            txn.create("a.txt", "x")
            txn.commit()

        assert b"x" == (root / "a.txt").read_bytes()

    def test_changes_readable_after_commit(self, make_workspace: MakeTree) -> None:
        """The committed changes and their diff can still be read (for the store)."""
        txn = _open(make_workspace, {})
        txn.create("a.txt", "x\n")
        txn.commit()

        assert "+x\n" in txn.diff()


class TestCommit:
    def test_commit_writes_all(self, make_workspace: MakeTree) -> None:
        """Commit creates, updates, deletes and moves, and removes its journal."""
        root = make_workspace({"u.txt": b"u\n", "d.txt": b"d\n", "m.sh": (b"m\n", 0o755)})
        txn = Transaction(Workspace(root))
        txn.update("u.txt", "U\n")
        txn.create("n/e/w.txt", "w\n", mode=0o600)
        txn.delete("d.txt")
        txn.move("m.sh", "bin/m.sh", "M\n")

        assert txn.commit() is None
        snapshot = snapshot_tree(root)
        assert {"u.txt": b"U\n", "n/e/w.txt": b"w\n", "bin/m.sh": b"M\n"} == snapshot.files()
        assert {"u.txt": 0o644, "n/e/w.txt": 0o600, "bin/m.sh": 0o755} == snapshot.modes()
        assert [] == list((root / ".patchsmith" / "journal").iterdir())

    def test_exec_bit_kept_on_update(self, make_workspace: MakeTree) -> None:
        """A 0o755 file is still 0o755 after being rewritten."""
        root = make_workspace({"run.sh": (b"#!/bin/sh\n", 0o755)})
        txn = Transaction(Workspace(root))
        txn.update("run.sh", "#!/bin/sh\necho hi\n")
        txn.commit()

        assert 0o755 == (root / "run.sh").stat().st_mode & 0o777

    @pytest.mark.parametrize(
        ("raw", "new_text", "expected"),
        [
            (b"a\r\nb\r\n", "a\r\nB\r\n", b"a\r\nB\r\n"),
            (b"\xef\xbb\xbfa\n", "b\n", b"\xef\xbb\xbfb\n"),
            (b"caf\xe9\n", "th\xe9\n", b"th\xe9\n"),
            (b"\xff\xfea\x00", "b", b"\xff\xfeb\x00"),
        ],
        ids=["crlf", "utf8-bom", "latin-1", "utf16"],
    )
    def test_form_is_kept(
        self, make_workspace: MakeTree, raw: bytes, new_text: str, expected: bytes
    ) -> None:
        """Line endings, BOM and encoding of the original survive an update."""
        root = make_workspace({"f.txt": raw})
        txn = Transaction(Workspace(root))
        txn.update("f.txt", new_text)
        txn.commit()

        assert expected == (root / "f.txt").read_bytes()

    def test_default_mode_for_created_files(self, make_workspace: MakeTree) -> None:
        """A created file gets 0o644 whatever the umask."""
        root = make_workspace({})
        txn = Transaction(Workspace(root))
        txn.create("a.txt", "x")
        txn.commit()

        assert 0o644 == (root / "a.txt").stat().st_mode & 0o777

    def test_steps_are_reported(self, make_workspace: MakeTree) -> None:
        """`on_step` hears every step in order; an unchanged update is not written."""
        root = make_workspace({"a.txt": b"a", "same.txt": b"s", "d.txt": b"d"})
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("same.txt", "s")
        txn.delete("d.txt")
        steps: list[str] = []

        assert txn.commit(on_step=steps.append) is None
        assert [
            "check",
            "journal",
            "write a.txt",
            "sync files",
            "replace a.txt",
            "delete d.txt",
            "sync directories",
            "remove journal",
            "done",
        ] == steps

    def test_stale_file_refused(self, make_workspace: MakeTree) -> None:
        """A file changed after staging makes the commit STALE_FILE with its current hash."""
        root = make_workspace({"a.txt": b"a", "b.txt": b"b"})
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("b.txt", "B")
        (root / "b.txt").write_bytes(b"other")
        result = txn.commit()

        assert result is not None
        assert FailureCode.STALE_FILE == result.code
        assert result.current_sha256 is not None
        assert b"a" == (root / "a.txt").read_bytes()

    def test_deleted_file_is_stale(self, make_workspace: MakeTree) -> None:
        """A file removed after staging makes the commit STALE_FILE."""
        root = make_workspace({"a.txt": b"a"})
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        (root / "a.txt").unlink()

        assert FailureCode.STALE_FILE == _code(txn.commit())

    def test_mode_change_is_stale(self, make_workspace: MakeTree) -> None:
        """A permission change after staging also counts as stale."""
        root = make_workspace({"a.txt": b"a"})
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        (root / "a.txt").chmod(0o755)

        assert FailureCode.STALE_FILE == _code(txn.commit())

    def test_file_appearing_is_refused(self, make_workspace: MakeTree) -> None:
        """A file created at a staged new path before commit is FILE_ALREADY_EXISTS."""
        root = make_workspace({})
        txn = Transaction(Workspace(root))
        txn.create("a.txt", "mine")
        (root / "a.txt").write_bytes(b"theirs")

        assert FailureCode.FILE_ALREADY_EXISTS == _code(txn.commit())
        assert b"theirs" == (root / "a.txt").read_bytes()

    @pytest.mark.parametrize("parallel", [False, True], ids=["inline", "threads"])
    @pytest.mark.parametrize("failing", ["write_temp", "replace"])
    def test_io_error_midway_rolls_back(
        self,
        make_workspace: MakeTree,
        monkeypatch: pytest.MonkeyPatch,
        failing: str,
        parallel: bool,
    ) -> None:
        """A disk error on b.txt's temp write, or on its rename (inline, a.txt is already
        replaced then), rolls everything back and returns IO_ERROR; also when the temps are
        written and renamed on threads, as a large commit's are."""
        if parallel:
            monkeypatch.setattr(transaction_module, "PARALLEL_WRITES_MIN", 1)
        root = make_workspace({"a.txt": b"a", "b.txt": b"b", "c.txt": b"c"})
        before = snapshot_tree(root)
        if failing == "write_temp":
            real_write = atomic.write_temp

            def flaky_write(target: Path, data: bytes, mode: int, **kwargs: Any) -> Path:
                if Path(target).name == "b.txt":
                    raise OSError(errno.ENOSPC, "No space left on device", str(target))
                return real_write(target, data, mode, **kwargs)

            monkeypatch.setattr(transaction_module, "write_temp", flaky_write)
        else:
            real_replace = os.replace

            def flaky_replace(src: Any, dst: Any) -> None:
                if Path(dst).name == "b.txt":
                    raise OSError(errno.ENOSPC, "No space left on device", str(dst))
                real_replace(src, dst)

            monkeypatch.setattr(os, "replace", flaky_replace)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("b.txt", "B")
        txn.create("new/c2.txt", "C")
        txn.delete("c.txt")
        result = txn.commit()

        assert result is not None
        assert FailureCode.IO_ERROR == result.code
        assert "No space left on device" in result.message
        assert "rolled back" in result.message
        assert before == snapshot_tree(root)
        assert [] == list((root / ".patchsmith" / "journal").iterdir())

    def test_large_commit_writes_every_file(self, make_workspace: MakeTree) -> None:
        """A commit past the parallel threshold writes each file exactly, leaving no temp."""
        count = transaction_module.PARALLEL_WRITES_MIN * 2
        root = make_workspace({f"d{n % 3}/f{n}.txt": f"old {n}\n".encode() for n in range(count)})
        txn = Transaction(Workspace(root))
        for n in range(count):
            assert txn.update(f"d{n % 3}/f{n}.txt", f"new {n}\n") is None

        assert txn.commit() is None
        files = snapshot_tree(root).files()
        assert {f"d{n % 3}/f{n}.txt": f"new {n}\n".encode() for n in range(count)} == files

    def test_failed_rollback_is_finished_on_reopen(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If rollback fails too, the journal stays and the next open restores the old files."""
        root = make_workspace({"a.txt": b"a", "b.txt": b"b"})
        before = snapshot_tree(root)
        real_replace = os.replace

        def fail_second(src: Any, dst: Any) -> None:
            if Path(dst).name == "b.txt":
                raise OSError(errno.EIO, "Input/output error")
            real_replace(src, dst)

        def broken_rollback(*_args: object) -> None:
            raise OSError(errno.EIO, "still broken")

        monkeypatch.setattr(os, "replace", fail_second)
        monkeypatch.setattr(journal_module, "roll_back", broken_rollback)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("b.txt", "B")
        result = txn.commit()

        assert result is not None
        assert "rollback failed too" in result.message
        assert b"A" == (root / "a.txt").read_bytes()
        monkeypatch.undo()
        Workspace(root)
        assert before == snapshot_tree(root)

    def test_exception_in_step_rolls_back_and_propagates(self, make_workspace: MakeTree) -> None:
        """An exception from `on_step` midway restores the old files and is re-raised."""
        root = make_workspace({"a.txt": b"a", "b.txt": b"b"})
        before = snapshot_tree(root)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("b.txt", "B")

        def explode(name: str) -> None:
            if name == "write b.txt":
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            txn.commit(on_step=explode)
        assert before == snapshot_tree(root)

    def test_journal_write_failure(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """If the journal cannot be written, nothing is touched and the result is IO_ERROR."""
        root = make_workspace({"a.txt": b"a", "b.txt": b"b"})
        before = snapshot_tree(root)

        def no_journal(*_args: object) -> tuple[str, Path]:
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(journal_module, "open_journal", no_journal)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")
        txn.update("b.txt", "B")
        result = txn.commit()

        assert FailureCode.IO_ERROR == _code(result)
        assert before == snapshot_tree(root)

    def test_single_update_needs_no_journal(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A lone in-place update commits by one atomic rename, without writing a journal."""
        root = make_workspace({"a.txt": b"a"})

        def no_journal(*_args: object) -> tuple[str, Path]:
            raise AssertionError("a single update must not open a journal")

        monkeypatch.setattr(journal_module, "open_journal", no_journal)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")

        assert txn.commit() is None
        assert b"A" == (root / "a.txt").read_bytes()

    def test_single_write_failure(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A lone update whose write fails is IO_ERROR and leaves the file as it was."""
        root = make_workspace({"a.txt": b"a"})
        before = snapshot_tree(root)

        def broken(*_args: object, **_kwargs: object) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(transaction_module, "write_atomically", broken)
        txn = Transaction(Workspace(root))
        txn.update("a.txt", "A")

        assert FailureCode.IO_ERROR == _code(txn.commit())
        assert before == snapshot_tree(root)

    def test_lock_failure(self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
        """A state directory that is not a directory is STATE_DIR_UNSAFE, not a traceback."""
        root = make_workspace({"a.txt": b"a"})
        workspace = Workspace(root)
        (root / ".patchsmith").write_bytes(b"not a directory")
        txn = Transaction(workspace)
        txn.update("a.txt", "A")

        assert FailureCode.STATE_DIR_UNSAFE == _code(txn.commit())
        assert b"a" == (root / "a.txt").read_bytes()

    def test_unrecovered_workspace_refuses_commit(self, make_workspace: MakeTree) -> None:
        """A workspace whose recovery failed refuses to commit with that failure."""
        workspace = Workspace(make_workspace({}))
        workspace.recovery_failure = PatchFailure(code=FailureCode.IO_ERROR, message="stuck")
        txn = Transaction(workspace)
        txn.create("a.txt", "x")

        assert workspace.recovery_failure == txn.commit()

    def test_empty_commit(self, make_workspace: MakeTree) -> None:
        """Committing nothing succeeds and changes nothing."""
        root = make_workspace({"a.txt": b"a"})
        before = snapshot_tree(root)

        assert Transaction(Workspace(root)).commit() is None
        assert before == snapshot_tree(root)

    def test_journal_found_at_commit_time_is_quarantined(self, make_workspace: MakeTree) -> None:
        """A bad journal that appears after opening is quarantined by the commit, which
        refuses once (JOURNAL_QUARANTINED) without writing; the next commit goes through."""
        root = make_workspace({"a.txt": b"a"})
        workspace = Workspace(root)
        (root / ".patchsmith" / "journal" / "0123456789abcdef").mkdir(parents=True)
        (root / ".patchsmith" / "journal" / "0123456789abcdef" / "manifest.json").write_text("{")
        txn = Transaction(workspace)
        txn.update("a.txt", "A")

        assert FailureCode.JOURNAL_QUARANTINED == _code(txn.commit())
        assert b"a" == (root / "a.txt").read_bytes()
        again = Transaction(workspace)
        again.update("a.txt", "A")
        assert again.commit() is None
        assert b"A" == (root / "a.txt").read_bytes()


class TestRunAll:
    """`_run_all`: a large commit's per-file calls in one share per thread, answers in order."""

    @pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 101])
    def test_answers_in_call_order(self, count: int) -> None:
        """Below the threshold inline, above it on threads: either way in the calls' order."""
        calls = [lambda n=n: n * n for n in range(count)]

        assert [n * n for n in range(count)] == transaction_module._run_all(calls)

    def test_one_cpu_runs_inline(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With one CPU no thread is started, however many calls there are."""
        import threading

        monkeypatch.setattr(os, "cpu_count", lambda: 1)
        names = transaction_module._run_all(
            [lambda: threading.current_thread().name] * (transaction_module.PARALLEL_WRITES_MIN * 2)
        )

        assert {threading.current_thread().name} == set(names)

    def test_a_failure_waits_for_every_share(self) -> None:
        """One call raising: the error surfaces only after every other share has ended."""
        import threading
        import time

        ended: list[int] = []
        lock = threading.Lock()

        def call(n: int) -> int:
            if n == 0:
                raise OSError(errno.EIO, "disk failed")
            time.sleep(0.001)
            with lock:
                ended.append(n)
            return n

        count = transaction_module.PARALLEL_WRITES_MIN * 2
        with pytest.raises(OSError, match="disk failed"):
            transaction_module._run_all([lambda n=n: call(n) for n in range(count)])
        # the failing share stopped at its first call; every other share ran to its end
        threads = min(transaction_module._WRITER_THREADS, os.cpu_count() or 1)
        expected = {n for n in range(count) if n % threads != 0}
        assert expected == set(ended)

    def test_an_interrupted_wait_still_waits_for_every_share(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Ctrl-C from a share, then again while waiting: every other share still ends first."""
        import concurrent.futures
        import threading
        import time

        ended: list[int] = []
        lock = threading.Lock()
        real_wait = concurrent.futures.wait
        interrupts = [KeyboardInterrupt()]

        def interrupted_wait(*args: Any, **kwargs: Any) -> Any:
            if interrupts:
                raise interrupts.pop()
            return real_wait(*args, **kwargs)

        monkeypatch.setattr(concurrent.futures, "wait", interrupted_wait)

        def call(n: int) -> int:
            if n == 0:
                raise KeyboardInterrupt
            time.sleep(0.001)
            with lock:
                ended.append(n)
            return n

        count = transaction_module.PARALLEL_WRITES_MIN * 2
        with pytest.raises(KeyboardInterrupt):
            transaction_module._run_all([lambda n=n: call(n) for n in range(count)])
        threads = min(transaction_module._WRITER_THREADS, os.cpu_count() or 1)
        assert {n for n in range(count) if n % threads != 0} == set(ended)
        assert [] == interrupts
