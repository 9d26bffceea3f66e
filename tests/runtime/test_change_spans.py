"""The intake carries the spans the engine located into the staged `FileChange`, and the
line diff built from them is a valid edit script of the change."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from patchsmith.engine.model import EngineOptions, Hunk
from patchsmith.errors import FailureCode
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    SearchReplace,
    WholeContent,
)
from patchsmith.runtime.atomic import holds_regular, read_regular
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import change_opcodes, lines_of
from patchsmith.runtime.intake import stage_script
from patchsmith.runtime.textfile import TextFile
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

SOURCE = "".join(f"line {n}\n" for n in range(30))


def _staged(root: Path, *ops: EditOp) -> FileChange:
    (root / "f.txt").write_text(SOURCE)
    script = EditScript(EditFormat.AUTO, (FileEdit("f.txt", Action.UPDATE, tuple(ops)),))
    with Transaction(Workspace(root)) as transaction:
        plan = stage_script(script, Workspace(root), transaction, options=EngineOptions.default())
        assert not plan.failures, plan.failures
        (change,) = transaction.changes
    return change


def _valid(change: FileChange) -> None:
    diff = change_opcodes(change)
    old, new = lines_of(change.old_text or ""), lines_of(change.new_text or "")
    rebuilt: list[str] = []
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
            rebuilt += old[i1:i2]
        else:
            rebuilt += new[j1:j2]
    assert rebuilt == new


def _hunk(*lines: str) -> Hunk:
    return Hunk(tuple(line + "\n" for line in lines))


class TestSpansStaged:
    def test_hunks_then_insert_then_search_replace(self, tmp_path: Path) -> None:
        change = _staged(
            tmp_path,
            _hunk(" line 3", "-line 4", "+LINE 4", "+LINE 4b", " line 5"),
            InsertText(0, "top\n"),
            SearchReplace("line 20\nline 21\n", "twenty\n"),
            _hunk(" line 27", "-line 28", " line 29"),
        )
        assert change.line_spans is not None
        assert len(change.line_spans) == 4
        _valid(change)
        assert 4 == len(change_opcodes(change).changed())  # one change per edit

    def test_whole_file_write_has_no_spans(self, tmp_path: Path) -> None:
        change = _staged(tmp_path, _hunk("-line 0", "+zero"), WholeContent("a\nb\n", explicit=True))
        assert change.line_spans is None
        _valid(change)

    def test_exact_string_replace_has_no_spans(self, tmp_path: Path) -> None:
        change = _staged(tmp_path, SearchReplace("line 7", "line seven", exact=True))
        assert change.line_spans is None
        _valid(change)


class TestReuseOfTheRead:
    def test_the_intake_read_is_reused(self, tmp_path: Path) -> None:
        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        with Transaction(workspace) as transaction:
            assert transaction.update("f.txt", "x\n", read=read) is None
            (change,) = transaction.changes
        assert change.old_bytes is read.raw

    def test_a_file_changed_since_is_refused(self, tmp_path: Path) -> None:
        """An edit made on a text the file no longer holds is not put on the new one."""
        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        (tmp_path / "f.txt").write_text(SOURCE + "more\n")
        with Transaction(workspace) as transaction:
            failure = transaction.update("f.txt", "x\n", read=read)
            assert transaction.changes == ()
        assert failure is not None and failure.code is FailureCode.STALE_FILE
        assert (tmp_path / "f.txt").read_text() == SOURCE + "more\n"

    def test_a_mode_change_alone_is_read_again(self, tmp_path: Path) -> None:
        """Same bytes, new permission bits: the edit still fits; the new mode is kept."""
        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        os.chmod(tmp_path / "f.txt", 0o600)
        with Transaction(workspace) as transaction:
            assert transaction.update("f.txt", "x\n", read=read) is None
            (change,) = transaction.changes
        assert change.old_bytes == SOURCE.encode() and change.old_mode == 0o600

    def test_a_stale_read_is_refused_at_commit(self, tmp_path: Path) -> None:
        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        (tmp_path / "f.txt").write_text(SOURCE.replace("line 1\n", "LINE 1\n"))  # same size
        transaction = Transaction(workspace)
        assert transaction.update("f.txt", "x\n", read=read) is None
        failure = transaction.commit()
        assert failure is not None and failure.code is FailureCode.STALE_FILE
        assert failure.current_sha256 is not None


class TestRegularFiles:
    @pytest.mark.parametrize("size", [0, 1, 5, (1 << 20) + 3])
    def test_holds_regular(self, tmp_path: Path, size: int) -> None:
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        target = tmp_path / "f"
        target.write_bytes(data)
        assert holds_regular(target, data)[0]
        assert read_regular(target)[0] == data
        if size:
            assert not holds_regular(target, data[:-1] + b"?")[0]
            assert not holds_regular(target, data + b"?")[0]

    def test_holds_regular_refuses_links(self, tmp_path: Path) -> None:
        (tmp_path / "f").write_bytes(b"a")
        os.symlink(tmp_path / "f", tmp_path / "l")
        with pytest.raises(OSError):
            holds_regular(tmp_path / "l", b"a")


class TestReadWithoutBytes:
    def test_bytes_read_again_and_checked_by_hash(self, tmp_path: Path) -> None:

        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        with Transaction(workspace) as transaction:
            assert transaction.update("f.txt", "x\n", read=read._replace(raw=b"")) is None
            (change,) = transaction.changes
        assert change.old_bytes == SOURCE.encode()
        assert change.old_text is read.text  # the caller's text, not decoded again

    def test_changed_bytes_are_refused(self, tmp_path: Path) -> None:
        """Bytes read again that no longer hash to the caller's read: STALE_FILE, with the
        hash the file has now."""
        (tmp_path / "f.txt").write_text(SOURCE)
        workspace = Workspace(tmp_path)
        read = workspace.read("f.txt")
        assert isinstance(read, TextFile)
        changed = SOURCE.replace("line 1\n", "LINE 1\n")
        (tmp_path / "f.txt").write_text(changed)
        with Transaction(workspace) as transaction:
            failure = transaction.update("f.txt", "x\n", read=read._replace(raw=b""))
            assert transaction.changes == ()
        assert failure is not None and failure.code is FailureCode.STALE_FILE
        assert failure.current_sha256 == hashlib.sha256(changed.encode()).hexdigest()
