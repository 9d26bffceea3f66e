"""`patchsmith.revert`: undo an applied attempt exactly, or refuse with what changed."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.workspace_snapshot import make_tree, snapshot_tree

import patchsmith
from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitdiff import render_git_diff
from patchsmith.store import (
    DB_FILE_NAME,
    STATE_DIR_NAME,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    Store,
)

from .gitrepo import make_repo

GREET = b"def greet():\n    return 'hi'\n\n\ndef bye():\n    return 'bye'\n"
PATCH = """--- a/greet.py
+++ b/greet.py
@@ -1,2 +1,2 @@
 def greet():
-    return 'hi'
+    return 'hello'
"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def applied(root: Path, text: str) -> str:
    report = patchsmith.apply(text, root)
    assert ApplyStatus.APPLIED == report.status, report.errors
    assert report.attempt_id is not None
    return report.attempt_id


def stored(root: Path, attempt_id: str) -> AttemptRecord:
    with Store.open(root / STATE_DIR_NAME) as store:
        found = store.get(attempt_id)
    assert found is not None
    return found


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"greet.py": GREET, "notes.txt": b"a\nb\n"})


class TestRevert:
    def test_gives_back_the_exact_bytes(self, root: Path) -> None:
        before = snapshot_tree(root)
        attempt = applied(root, PATCH)

        report = patchsmith.revert(attempt, root)

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert before == snapshot_tree(root)
        record = stored(root, report.attempt_id or "")
        assert AttemptKind.REVERT == record.kind
        assert f"revert:{attempt}" == record.proposal_id
        assert stored(root, attempt).run_id == record.run_id
        assert [sha(GREET)] == [f.after_sha256 for f in record.files]

    def test_twice_answers_already_reverted(self, root: Path) -> None:
        attempt = applied(root, PATCH)
        patchsmith.revert(attempt, root)
        before = snapshot_tree(root)

        again = patchsmith.revert(attempt, root)

        assert ApplyStatus.ALREADY_APPLIED == again.status
        assert any("already reverted" in note for note in again.notes)
        assert before == snapshot_tree(root)

    def test_by_unique_prefix(self, root: Path) -> None:
        attempt = applied(root, PATCH)

        report = patchsmith.revert(attempt[:10], root)

        assert report.ok
        assert GREET == (root / "greet.py").read_bytes()

    def test_check_writes_nothing(self, root: Path) -> None:
        attempt = applied(root, PATCH)
        before = snapshot_tree(root)

        report = patchsmith.revert(attempt, root, check=True)

        assert report.ok
        assert "-    return 'hello'" in report.diff
        assert before == snapshot_tree(root)

    def test_creation_is_deleted(self, root: Path) -> None:
        attempt = applied(root, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n")

        assert patchsmith.revert(attempt, root).ok
        assert not (root / "new.txt").exists()

    def test_deletion_is_restored_with_its_mode(self, root: Path) -> None:
        script = root / "run.sh"
        script.write_bytes(b"#!/bin/sh\necho hi\n")
        script.chmod(0o755)
        delete = (
            "diff --git a/run.sh b/run.sh\ndeleted file mode 100755\n--- a/run.sh\n+++ /dev/null\n"
            "@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo hi\n"
        )
        attempt = applied(root, delete)
        assert not script.exists()

        assert patchsmith.revert(attempt, root).ok
        assert b"#!/bin/sh\necho hi\n" == script.read_bytes()
        assert os.stat(script).st_mode & 0o100

    def test_move_is_moved_back(self, root: Path) -> None:
        move = (
            "diff --git a/notes.txt b/docs/notes.md\nsimilarity index 50%\n"
            "rename from notes.txt\nrename to docs/notes.md\n--- a/notes.txt\n+++ b/docs/notes.md\n"
            "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        )
        before = snapshot_tree(root)
        attempt = applied(root, move)
        assert (root / "docs/notes.md").exists()

        assert patchsmith.revert(attempt, root).ok
        assert before.files() == {
            k: v for k, v in snapshot_tree(root).files().items() if not k.startswith("docs")
        }
        assert not (root / "docs/notes.md").exists()

    def test_mode_change_is_undone(self, root: Path) -> None:
        attempt = applied(
            root, "diff --git a/notes.txt b/notes.txt\nold mode 100644\nnew mode 100755\n"
        )
        assert os.stat(root / "notes.txt").st_mode & 0o100

        assert patchsmith.revert(attempt, root).ok
        assert not os.stat(root / "notes.txt").st_mode & 0o100

    def test_latin1_and_crlf_files(self, tmp_path: Path) -> None:
        """Files whose diff was recorded as text come back byte for byte too."""
        latin = b"caf\xe9 = 1\r\nna\xefve = 2\r\n"
        root = make_tree(tmp_path / "w", {"l.txt": latin})
        attempt = applied(
            root,
            "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n café = 1\r\n-naïve = 2\r\n+naïf = 3\r\n",
        )
        assert latin != (root / "l.txt").read_bytes()

        assert patchsmith.revert(attempt, root).ok
        assert latin == (root / "l.txt").read_bytes()

    def test_a_partial_attempt(self, root: Path) -> None:
        text = PATCH + "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-nothere\n+x\n"
        report = patchsmith.apply(text, root, partial=True)
        assert ApplyStatus.PARTIAL == report.status

        assert patchsmith.revert(report.attempt_id or "", root).ok
        assert GREET == (root / "greet.py").read_bytes()

    def test_without_a_record(self, root: Path) -> None:
        attempt = applied(root, PATCH)

        report = patchsmith.revert(attempt, root, record=False)

        assert report.ok
        assert report.attempt_id is None


class TestRefusals:
    def test_hand_edit_since_shows_what_changed(self, root: Path) -> None:
        attempt = applied(root, PATCH)
        edited = (root / "greet.py").read_bytes().replace(b"'hello'", b"'howdy'")
        (root / "greet.py").write_bytes(edited)
        before = snapshot_tree(root)

        report = patchsmith.revert(attempt, root)

        assert ApplyStatus.REFUSED == report.status
        (failure,) = report.errors
        assert FailureCode.STALE_FILE == failure.code
        assert "greet.py" == failure.file
        assert failure.excerpt is not None
        assert "-    return 'hello'" in failure.excerpt
        assert "+    return 'howdy'" in failure.excerpt
        assert before == snapshot_tree(root)

    def test_recorded_change_since_shows_its_diff(self, root: Path) -> None:
        first = applied(root, PATCH)
        applied(
            root,
            "--- a/greet.py\n+++ b/greet.py\n@@ -5,2 +5,2 @@\n"
            " def bye():\n-    return 'bye'\n+    return 'ciao'\n",
        )
        before = snapshot_tree(root)

        report = patchsmith.revert(first, root)

        (failure,) = report.errors
        assert FailureCode.STALE_FILE == failure.code
        assert failure.excerpt is not None
        assert "diff --git a/greet.py b/greet.py" in failure.excerpt
        assert "+    return 'ciao'" in failure.excerpt
        assert before == snapshot_tree(root)

    def test_deleted_since(self, root: Path) -> None:
        attempt = applied(root, PATCH)
        (root / "greet.py").unlink()

        (failure,) = patchsmith.revert(attempt, root).errors

        assert FailureCode.STALE_FILE == failure.code
        assert failure.excerpt is not None
        assert "deleted" in failure.excerpt or "/dev/null" in failure.excerpt

    def test_change_outside_the_hunks(self, root: Path) -> None:
        attempt = applied(root, PATCH)
        with (root / "greet.py").open("ab") as handle:
            handle.write(b"# more\n")

        (failure,) = patchsmith.revert(attempt, root).errors

        assert FailureCode.STALE_FILE == failure.code
        assert failure.excerpt is not None
        assert "outside the attempt's regions" in failure.excerpt

    def test_a_refused_attempt_has_nothing_to_revert(self, root: Path) -> None:
        report = patchsmith.apply(PATCH.replace("'hi'", "'nope'"), root)
        assert ApplyStatus.REFUSED == report.status

        (failure,) = patchsmith.revert(report.attempt_id or "", root).errors

        assert FailureCode.NO_CHANGE == failure.code

    def test_unknown_attempt(self, root: Path) -> None:
        applied(root, PATCH)

        (failure,) = patchsmith.revert("a-ZZZZZZZZ", root).errors

        assert FailureCode.RECORD_NOT_FOUND == failure.code

    def test_nothing_recorded(self, tmp_path: Path) -> None:
        (failure,) = patchsmith.revert("a-1", tmp_path).errors

        assert FailureCode.RECORD_NOT_FOUND == failure.code

    def test_ambiguous_prefix(self, root: Path) -> None:
        applied(root, PATCH)
        applied(root, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n")

        (failure,) = patchsmith.revert("a-", root).errors

        assert FailureCode.RECORD_NOT_FOUND == failure.code
        assert "several" in failure.message

    def test_not_a_directory(self, tmp_path: Path) -> None:
        (failure,) = patchsmith.revert("a-1", tmp_path / "missing").errors

        assert FailureCode.FILE_NOT_FOUND == failure.code

    def test_binary_content_cannot_be_rebuilt(self, tmp_path: Path) -> None:
        """The store keeps no bytes of a binary file: refused, never guessed."""
        root = make_tree(tmp_path / "w", {"b.bin": b"\x00new"})
        diff = (
            "diff --git a/b.bin b/b.bin\nindex 1..2 100644\n"
            "Binary files a/b.bin and b/b.bin differ\n"
        )
        with Store.open(root / STATE_DIR_NAME) as store:
            attempt = store.record_attempt(
                AttemptRecord(
                    run_id="r",
                    proposal_id="p",
                    attempt_no=1,
                    kind=AttemptKind.APPLY,
                    status=AttemptStatus.APPLIED,
                    created_at="2026-01-01T00:00:00+00:00",
                    finished_at="2026-01-01T00:00:01+00:00",
                    applied_diff=diff,
                    files=(FileRecord("b.bin", Action.UPDATE, sha(b"\x00old"), sha(b"\x00new")),),
                )
            )

        (failure,) = patchsmith.revert(attempt, root).errors

        assert FailureCode.NOT_SUPPORTED_YET == failure.code
        assert b"\x00new" == (root / "b.bin").read_bytes()

    def test_unparseable_recorded_diff(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "w", {"f.txt": b"new\n"})
        with Store.open(root / STATE_DIR_NAME) as store:
            attempt = store.record_attempt(
                AttemptRecord(
                    run_id="r",
                    proposal_id="p",
                    attempt_no=1,
                    kind=AttemptKind.APPLY,
                    status=AttemptStatus.APPLIED,
                    created_at="2026-01-01T00:00:00+00:00",
                    finished_at="2026-01-01T00:00:01+00:00",
                    applied_diff="not a diff\n",
                    files=(FileRecord("f.txt", Action.UPDATE, sha(b"old\n"), sha(b"new\n")),),
                )
            )

        (failure,) = patchsmith.revert(attempt, root).errors

        assert FailureCode.NOT_SUPPORTED_YET == failure.code


_TEXT_LINES = st.sampled_from(
    ["alpha\n", "beta\n", "\n", "x = 1\r\n", "café\n", "😀 ok\n", "  indented\n", "\tTab\n", "}\n"]
)


@st.composite
def text_files(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_TEXT_LINES, min_size=1, max_size=25))
    return "".join(lines) + draw(st.sampled_from(["", "tail"]))


class TestProperties:
    @settings(max_examples=40)
    @given(text_files(), text_files())
    def test_apply_then_revert_gives_back_the_original_bytes(self, old: str, new: str) -> None:
        """For any edit that applies, reverting it restores every byte."""
        with tempfile.TemporaryDirectory() as scratch:
            root = make_tree(Path(scratch), {"f.txt": old.encode()})
            before = snapshot_tree(root)
            view = patchsmith.read_file(root, "f.txt")
            report = patchsmith.write_file(
                root, "f.txt", new, view.sha256, "property", full_rewrite=True
            )
            if not report.written:
                return  # nothing changed (same text) or a guard refused it: nothing to undo

            reverted = patchsmith.revert(report.attempt_id or "", root)

            assert reverted.ok, reverted.errors
            assert before == snapshot_tree(root)
            again = patchsmith.revert(report.attempt_id or "", root)
            assert ApplyStatus.ALREADY_APPLIED == again.status

    @settings(max_examples=40)
    @given(text_files(), text_files())
    def test_applied_diff_then_revert(self, old: str, new: str) -> None:
        """The same through `apply`, the reply being the exact diff between the two."""
        change = FileChange(
            "f.txt",
            Action.UPDATE,
            "f.txt",
            old.encode(),
            new.encode(),
            old_mode=0o644,
            new_mode=0o644,
        )
        reply = render_git_diff([change])
        with tempfile.TemporaryDirectory() as scratch:
            root = make_tree(Path(scratch), {"f.txt": old.encode()})
            before = snapshot_tree(root)
            report = patchsmith.apply(reply, root, full_rewrite=True) if reply else None
            if report is None or not report.written:
                return

            reverted = patchsmith.revert(report.attempt_id or "", root)

            assert reverted.ok, reverted.errors
            assert before == snapshot_tree(root)


def test_store_file_is_where_expected(root: Path) -> None:
    applied(root, PATCH)
    assert (root / STATE_DIR_NAME / DB_FILE_NAME).is_file()
