"""A big file's staged update holds its bytes as text: written byte for byte as before.

`Transaction.update` keeps the old and new bytes of a text of `LAZY_BYTES_MIN_CHARS`
characters or more as the texts that encode to them (`EncodedText`). These tests lower
that threshold to 0 so that small files of every encoding take that path, and compare
each outcome with the one of the ordinary path: the same bytes on disk, the same diff,
the same report; and the same rollback when the commit fails.
"""

from __future__ import annotations

import errno
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from tests.runtime.conftest import MakeTree
from tests.workspace_snapshot import snapshot_tree

import patchsmith
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyReport
from patchsmith.runtime import transaction as transaction_module
from patchsmith.runtime.atomic import holds_regular
from patchsmith.runtime.content import EncodedText
from patchsmith.runtime.textfile import TextFile
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

_TEXT = "alpha\nbeta\ngamma\n"
_REPLY = "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n-beta\n+BETA\n gamma\n"

# name: (the file's bytes, what the reply must leave on disk)
CASES: dict[str, tuple[bytes, bytes]] = {
    "utf-8": (_TEXT.encode(), b"alpha\nBETA\ngamma\n"),
    "utf-8 with BOM": (b"\xef\xbb\xbf" + _TEXT.encode(), b"\xef\xbb\xbfalpha\nBETA\ngamma\n"),
    "CRLF": (b"alpha\r\nbeta\r\ngamma\r\n", b"alpha\r\nBETA\r\ngamma\r\n"),
    "no final newline": (b"alpha\nbeta\ngamma", b"alpha\nBETA\ngamma"),
    "utf-8, not ASCII": (
        "\u03b1lpha \u2603\nbeta\ngamma\n".encode(),
        "\u03b1lpha \u2603\nBETA\ngamma\n".encode(),
    ),
    "latin-1 (not UTF-8)": (b"caf\xe9\nbeta\ngamma\n", b"caf\xe9\nBETA\ngamma\n"),
    "UTF-8 with one bad byte": (
        "caf\xe9".encode() + b"\xff\nbeta\ngamma\n",
        "caf\xe9".encode() + b"\xff\nBETA\ngamma\n",
    ),
    "utf-16-le with BOM": (
        b"\xff\xfe" + _TEXT.encode("utf-16-le"),
        b"\xff\xfe" + "alpha\nBETA\ngamma\n".encode("utf-16-le"),
    ),
    "utf-32-be with BOM": (
        b"\x00\x00\xfe\xff" + _TEXT.encode("utf-32-be"),
        b"\x00\x00\xfe\xff" + "alpha\nBETA\ngamma\n".encode("utf-32-be"),
    ),
}


def _apply(root: Path, reply: str, monkeypatch: pytest.MonkeyPatch, *, lazy: bool) -> ApplyReport:
    with monkeypatch.context() as patch:
        if lazy:
            patch.setattr(transaction_module, "LAZY_BYTES_MIN_CHARS", 0)
        return patchsmith.apply(reply, root)


def _comparable(report: ApplyReport) -> tuple[object, ...]:
    """The report without what differs between any two runs (attempt ids, timings)."""
    return (
        report.status,
        report.files,
        tuple((e.code, e.message) for e in report.errors),
        report.diff,
        tuple((d.name, d.status, d.notes) for d in report.decisions),
    )


@pytest.mark.parametrize("name", list(CASES))
def test_written_bytes_are_those_of_the_ordinary_path(
    name: str, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `apply`, each encoding is written byte for byte as when the bytes are kept
    whole, with the same diff and report."""
    raw, expected = CASES[name]
    reports = []
    for lazy in (False, True):
        root = make_workspace({"f.txt": raw})
        report = _apply(root, _REPLY, monkeypatch, lazy=lazy)
        assert report.status.value == "applied", [e.message for e in report.errors]
        assert expected == (root / "f.txt").read_bytes()
        reports.append(_comparable(report))
    assert reports[0] == reports[1]


def test_an_unencodable_character_is_refused_alike(
    make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A character the file's encoding cannot hold is ENCODING_ERROR either way."""
    reply = "--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,2 @@\n-beta\n+\u20ac\n gamma\n"
    reports = []
    for lazy in (False, True):
        root = make_workspace({"f.txt": b"caf\xe9\nbeta\ngamma\n"})
        report = _apply(root, reply, monkeypatch, lazy=lazy)
        assert FailureCode.ENCODING_ERROR in {e.code for e in report.errors}
        assert b"caf\xe9\nbeta\ngamma\n" == (root / "f.txt").read_bytes()
        reports.append(_comparable(report))
    assert reports[0] == reports[1]


def _read_as_intake(workspace: Workspace, path: str) -> TextFile:
    """The file as the intake keeps it while it edits: its text, without its bytes."""
    read = workspace.read(path)
    assert isinstance(read, TextFile)
    return read._replace(raw=b"")


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transaction_module, "LAZY_BYTES_MIN_CHARS", 0)


@pytest.mark.usefixtures("lazy")
class TestStagedText:
    def test_the_staged_update_holds_no_bytes(self, make_workspace: MakeTree) -> None:
        """The old and new sides are kept as their texts (never encoded whole), and still
        read as the exact bytes."""
        raw = b"\xef\xbb\xbfalpha\r\nbeta\r\n"
        root = make_workspace({"f.txt": raw})
        workspace = Workspace(root)
        txn = Transaction(workspace)
        text = "alpha\r\nBETA\r\n"
        assert txn.update("f.txt", text, read=_read_as_intake(workspace, "f.txt")) is None
        change = txn.staged("f.txt")
        assert change is not None
        assert isinstance(change.old_content, EncodedText)
        assert isinstance(change.new_content, EncodedText)
        assert change.old_content.text is change.old_text
        assert change.new_content.text is change.new_text
        assert raw == change.old_bytes
        assert b"\xef\xbb\xbfalpha\r\nBETA\r\n" == change.new_bytes
        assert txn.commit() is None
        assert b"\xef\xbb\xbfalpha\r\nBETA\r\n" == (root / "f.txt").read_bytes()

    def test_a_file_changed_since_it_was_read_is_stale(self, make_workspace: MakeTree) -> None:
        """The old side kept as text is still checked against the disk at commit."""
        root = make_workspace({"f.txt": b"alpha\nbeta\n"})
        workspace = Workspace(root)
        read = _read_as_intake(workspace, "f.txt")
        (root / "f.txt").write_bytes(b"alpha\nBeta\n")  # same size, other bytes
        txn = Transaction(workspace)
        assert txn.update("f.txt", "alpha\nBETA\n", read=read) is None
        failure = txn.commit()
        assert failure is not None
        assert FailureCode.STALE_FILE == failure.code
        assert b"alpha\nBeta\n" == (root / "f.txt").read_bytes()

    def test_a_failed_commit_rolls_back_from_the_texts(
        self, make_workspace: MakeTree, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A multi-file commit journals the old bytes from their texts: a failed rename
        puts every file back byte for byte."""
        files = {
            "a.txt": b"\xff\xfe" + "a\n".encode("utf-16-le"),
            "b.txt": b"caf\xe9\r\n",
            "c.txt": b"c\n",
        }
        root = make_workspace(files)
        before = snapshot_tree(root)
        real_replace = os.replace

        def flaky_replace(src: Any, dst: Any) -> None:
            if Path(dst).name == "b.txt":
                raise OSError(errno.ENOSPC, "No space left on device", str(dst))
            real_replace(src, dst)

        monkeypatch.setattr(os, "replace", flaky_replace)
        workspace = Workspace(root)
        txn = Transaction(workspace)
        for path, text in (("a.txt", "A\n"), ("b.txt", "CAF\xc9\r\n"), ("c.txt", "C\n")):
            assert txn.update(path, text, read=_read_as_intake(workspace, path)) is None
        result = txn.commit()

        assert result is not None
        assert FailureCode.IO_ERROR == result.code
        assert before == snapshot_tree(root)

    def test_a_multi_file_commit_writes_every_encoding(self, make_workspace: MakeTree) -> None:
        """The journaled commit writes each kept text in its own encoding and BOM."""
        root = make_workspace({"a.txt": b"\xff\xfe" + "a\n".encode("utf-16-le"), "b.txt": b"b\n"})
        workspace = Workspace(root)
        txn = Transaction(workspace)
        assert txn.update("a.txt", "\u00e4\n", read=_read_as_intake(workspace, "a.txt")) is None
        assert txn.update("b.txt", "B\n", read=_read_as_intake(workspace, "b.txt")) is None
        assert txn.commit() is None
        assert b"\xff\xfe" + "\u00e4\n".encode("utf-16-le") == (root / "a.txt").read_bytes()
        assert b"B\n" == (root / "b.txt").read_bytes()


def test_a_big_update_holds_no_second_copy(make_workspace: MakeTree) -> None:
    """Staging and committing a 4 MB file's update allocates well under one copy of the
    file (keeping its bytes whole took two: the old bytes read again, the new encoded)."""
    lines = [f"value_{i:07d} = compute({i})  # row\n" for i in range(120_000)]
    raw = "".join(lines).encode()
    root = make_workspace({"big.txt": raw})
    workspace = Workspace(root)
    read = _read_as_intake(workspace, "big.txt")
    assert len(read.text) >= transaction_module.LAZY_BYTES_MIN_CHARS
    new_text = read.text.replace("value_0060000 =", "value_0060000 :=")
    txn = Transaction(workspace)
    tracemalloc.start()
    try:
        assert txn.update("big.txt", new_text, read=read) is None
        assert txn.commit() is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(raw) * 0.75, f"{peak / len(raw):.2f}x the file"
    assert new_text.encode() == (root / "big.txt").read_bytes()


@pytest.mark.parametrize(
    ("on_disk", "held"),
    [
        (b"\xff\xfea\x00\n\x00", True),
        (b"\xff\xfea\x00\n\x00\n", False),  # longer
        (b"\xff\xfea\x00", False),  # shorter
        (b"\xff\xfeb\x00\n\x00", False),  # same size, other bytes
    ],
)
def test_the_disk_is_compared_with_a_kept_text(tmp_path: Path, on_disk: bytes, held: bool) -> None:
    """`holds_regular` compares the file with the text's bytes a chunk at a time."""
    path = tmp_path / "f.txt"
    path.write_bytes(on_disk)
    same, info = holds_regular(path, EncodedText("a\n", "utf-16-le", b"\xff\xfe"))
    assert same is held
    assert info.st_size == len(on_disk)
