"""`patchsmith.apply` end to end: every action and format, file forms kept, clean refusals."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from tests.workspace_snapshot import TreeSnapshot, make_tree, snapshot_tree

from patchsmith.attempt.api import apply
from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.formats.script import Action, EditFormat
from patchsmith.model.report import ApplyReport, ApplyStatus

SOURCE = b"x = 1\ny = 2\nz = 4\n"
"""The one file most tests start from (`a.py`)."""


def _workspace(tmp_path: Path, files: dict[str, bytes | tuple[bytes, int]] | None = None) -> Path:
    return make_tree(tmp_path / "ws", {"a.py": SOURCE} if files is None else files)


def _files(root: Path) -> dict[str, bytes]:
    return snapshot_tree(root).files()


def _refusal(report: ApplyReport, root: Path, before: TreeSnapshot) -> list[FailureCode]:
    """The refusal's codes, after checking it is a refusal that left the tree byte-identical."""
    assert ApplyStatus.REFUSED == report.status
    assert not report.ok
    assert report.errors
    assert before == snapshot_tree(root)
    return [e.code for e in report.errors]


def _refuse(text: str, root: Path, **kwargs: object) -> tuple[ApplyReport, list[FailureCode]]:
    before = snapshot_tree(root)
    report = apply(text, root, **kwargs)  # type: ignore[arg-type]
    return report, _refusal(report, root, before)


def _udiff(path: str, body: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n{body}"


class TestActions:
    def test_update(self, tmp_path: Path) -> None:
        """An update rewrites only the edited line and reports one applied hunk."""
        root = _workspace(tmp_path)

        report = apply(_udiff("a.py", "@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n"), root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n"} == _files(root)
        assert [("a.py", Action.UPDATE, 1, 1)] == [
            (f.path, f.action, f.hunks_applied, f.hunks_total) for f in report.files
        ]
        assert "+y = 3" in report.diff

    def test_create_in_new_directory(self, tmp_path: Path) -> None:
        """A /dev/null diff creates the file, and its parent directories."""
        root = _workspace(tmp_path)

        report = apply("--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert b"a\nb\n" == _files(root)["pkg/new.py"]
        assert Action.CREATE == report.files[0].action

    def test_delete_without_content_check(self, tmp_path: Path) -> None:
        """`*** Delete File:` removes the file whatever it holds."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"keep\n"})

        report = apply("*** Begin Patch\n*** Delete File: a.py\n*** End Patch\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert {"b.py": b"keep\n"} == _files(root)
        assert Action.DELETE == report.files[0].action

    def test_delete_with_matching_content(self, tmp_path: Path) -> None:
        """A diff removing every line of the file, to /dev/null, deletes it."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"keep\n"})

        report = apply("--- a/a.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-x = 1\n-y = 2\n-z = 4\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert {"b.py": b"keep\n"} == _files(root)

    def test_delete_with_other_content_refused(self, tmp_path: Path) -> None:
        """A deletion diff whose lines are not the file's is refused with an excerpt."""
        root = _workspace(tmp_path)

        report, codes = _refuse(
            "--- a/a.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-x = 1\n-y = 5\n-z = 4\n", root
        )

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == codes
        assert "2 | y = 2" in (report.errors[0].excerpt or "")

    def test_move_without_edits(self, tmp_path: Path) -> None:
        """A git rename with no hunk moves the file byte for byte."""
        root = _workspace(tmp_path)

        report = apply(
            "diff --git a/a.py b/lib/c.py\nsimilarity index 100%\n"
            "rename from a.py\nrename to lib/c.py\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"lib/c.py": SOURCE} == _files(root)
        assert ("a.py", Action.MOVE, "lib/c.py") == (
            report.files[0].path,
            report.files[0].action,
            report.files[0].new_path,
        )

    def test_move_with_edits(self, tmp_path: Path) -> None:
        """`*** Move to:` with a hunk moves the file and edits it."""
        root = _workspace(tmp_path)

        report = apply(
            "*** Begin Patch\n*** Update File: a.py\n*** Move to: sub/b.py\n"
            "@@\n-y = 2\n+y = 9\n*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"sub/b.py": b"x = 1\ny = 9\nz = 4\n"} == _files(root)

    def test_move_onto_existing_file_refused(self, tmp_path: Path) -> None:
        """Moving onto an existing file is FILE_ALREADY_EXISTS; neither file changes."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"other\n"})

        report, codes = _refuse(
            "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n"
            "@@\n-y = 2\n+y = 3\n*** End Patch\n",
            root,
        )

        assert [FailureCode.FILE_ALREADY_EXISTS] == codes
        assert "b.py" == report.errors[0].file


class TestUnifiedDiff:
    @pytest.mark.parametrize(
        "text",
        [
            pytest.param(
                "diff --git a/a.py b/a.py\nindex 1111111..2222222 100644\n--- a/a.py\n+++ b/a.py\n"
                "@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n",
                id="git",
            ),
            pytest.param("--- a.py\n+++ a.py\n@@ -2 +2 @@\n-y = 2\n+y = 3\n", id="plain"),
            pytest.param(
                "--- a.py\t2024-01-01 00:00:00\n+++ a.py\t2024-01-02 00:00:00\n"
                "@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n",
                id="diff-u-timestamps",
            ),
            pytest.param("@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 3\n z = 4\n", id="headerless"),
            pytest.param("--- a/a.py\n+++ b/a.py\n@@\n x = 1\n-y = 2\n+y = 3\n", id="bare-at-at"),
            pytest.param(
                "Here is the fix:\n\n```diff\n--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-y = 2\n"
                "+y = 3\n```\n\nThat's all.\n",
                id="fenced-with-prose",
            ),
        ],
    )
    def test_spellings(self, tmp_path: Path, text: str) -> None:
        """Every common spelling of a unified diff applies to the same result."""
        root = _workspace(tmp_path)

        report = apply(text, root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n"} == _files(root)

    def test_headerless_diff_finds_its_file(self, tmp_path: Path) -> None:
        """A hunk without file headers goes to the one file it fits."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"p\nq\n", "c.txt": b"x = 1\n"})

        report = apply("@@\n x = 1\n-y = 2\n+y = 3\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert b"x = 1\ny = 3\nz = 4\n" == _files(root)["a.py"]

    def test_headerless_diff_fitting_no_file_refused(self, tmp_path: Path) -> None:
        """A hunk without headers that fits no file is refused."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"p\nq\n"})

        _, codes = _refuse("@@\n-nothing\n+here\n", root)

        assert [FailureCode.MALFORMED_PATCH] == codes

    def test_headerless_diff_fitting_two_files_refused(self, tmp_path: Path) -> None:
        """A hunk without headers that fits two files is AMBIGUOUS_MATCH."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": SOURCE})

        _, codes = _refuse("@@\n x = 1\n-y = 2\n+y = 3\n", root)

        assert [FailureCode.AMBIGUOUS_MATCH] == codes

    def test_several_hunks_same_file(self, tmp_path: Path) -> None:
        """Two hunks of one file both apply, in one update."""
        root = _workspace(tmp_path)

        report = apply(
            _udiff("a.py", "@@ -1 +1 @@\n-x = 1\n+x = 10\n@@ -3 +3 @@\n-z = 4\n+z = 40\n"), root
        )

        assert (2, 2) == (report.files[0].hunks_applied, report.files[0].hunks_total)
        assert {"a.py": b"x = 10\ny = 2\nz = 40\n"} == _files(root)


class TestApplyPatch:
    def test_update(self, tmp_path: Path) -> None:
        """An `*** Update File:` envelope applies its hunk."""
        root = _workspace(tmp_path)

        report = apply(
            "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 3\n*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n"} == _files(root)

    def test_add_and_delete(self, tmp_path: Path) -> None:
        """`Add File` and `Delete File` in one envelope both happen."""
        root = _workspace(tmp_path)

        report = apply(
            "*** Begin Patch\n*** Add File: n.py\n+hello\n+world\n*** Delete File: a.py\n"
            "*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"n.py": b"hello\nworld\n"} == _files(root)

    def test_anchor_line(self, tmp_path: Path) -> None:
        """An `@@ <line>` anchor places a hunk after that line."""
        root = _workspace(tmp_path, {"a.py": b"def f():\n    pass\n\ndef g():\n    pass\n"})

        report = apply(
            "*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    pass\n+    return 1\n"
            "*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"def f():\n    pass\n\ndef g():\n    return 1\n"} == _files(root)

    def test_end_of_file_marker(self, tmp_path: Path) -> None:
        """`*** End of File` places a hunk at the end when its lines also occur earlier."""
        root = _workspace(tmp_path, {"a.py": b"end\nmid\nend\n"})

        report = apply(
            "*** Begin Patch\n*** Update File: a.py\n@@\n-end\n+END\n*** End of File\n"
            "*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"end\nmid\nEND\n"} == _files(root)

    def test_add_over_existing_file_refused(self, tmp_path: Path) -> None:
        """`Add File` over an existing file is FILE_ALREADY_EXISTS (no silent overwrite)."""
        root = _workspace(tmp_path)

        report, codes = _refuse("*** Begin Patch\n*** Add File: a.py\n+new\n*** End Patch\n", root)

        assert [FailureCode.FILE_ALREADY_EXISTS] == codes
        assert hashlib.sha256(SOURCE).hexdigest() == report.errors[0].current_sha256


class TestSearchReplace:
    def test_several_blocks_same_file(self, tmp_path: Path) -> None:
        """Several SEARCH/REPLACE blocks for one file apply in order."""
        root = _workspace(tmp_path)
        block = "a.py\n```python\n<<<<<<< SEARCH\n{0}\n=======\n{1}\n>>>>>>> REPLACE\n```\n"

        report = apply(block.format("y = 2", "y = 3") + "\n" + block.format("z = 4", "z = 5"), root)

        assert (2, 2) == (report.files[0].hunks_applied, report.files[0].hunks_total)
        assert {"a.py": b"x = 1\ny = 3\nz = 5\n"} == _files(root)

    def test_empty_search_creates(self, tmp_path: Path) -> None:
        """An empty SEARCH for a missing file creates it."""
        root = _workspace(tmp_path)

        report = apply("n.py\n```\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n```\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": SOURCE, "n.py": b"new\n"} == _files(root)
        assert Action.CREATE == report.files[0].action

    def test_empty_search_appends(self, tmp_path: Path) -> None:
        """An empty SEARCH for an existing file appends to it."""
        root = _workspace(tmp_path)

        report = apply("a.py\n<<<<<<< SEARCH\n=======\nw = 5\n>>>>>>> REPLACE\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": SOURCE + b"w = 5\n"} == _files(root)

    def test_append_to_file_without_final_newline(self, tmp_path: Path) -> None:
        """Appending to a file without a final newline starts a new line first."""
        root = _workspace(tmp_path, {"a.py": b"x = 1"})

        apply("a.py\n<<<<<<< SEARCH\n=======\nw = 5\n>>>>>>> REPLACE\n", root)

        assert {"a.py": b"x = 1\nw = 5\n"} == _files(root)

    def test_search_not_found_refused(self, tmp_path: Path) -> None:
        """A SEARCH block that is not in the file is PATCH_CONTEXT_MISMATCH."""
        root = _workspace(tmp_path)

        report, codes = _refuse(
            "a.py\n<<<<<<< SEARCH\nq = 0\n=======\nq = 1\n>>>>>>> REPLACE\n", root
        )

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == codes
        assert "SEARCH block 1" in report.errors[0].message


class TestWholeFile:
    def test_replaces_content(self, tmp_path: Path) -> None:
        """A path and a fenced block replace the file's whole content."""
        root = _workspace(tmp_path)

        report = apply("Here:\n\na.py\n```python\nonly = 1\n```\n", root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"only = 1\n"} == _files(root)

    def test_creates_missing_file(self, tmp_path: Path) -> None:
        """A whole file for a path that does not exist creates it."""
        root = _workspace(tmp_path)

        report = apply("pkg/new.py\n```python\nv = 1\n```\n", root)

        assert Action.CREATE == report.files[0].action
        assert b"v = 1\n" == _files(root)["pkg/new.py"]

    def test_same_content_is_no_change(self, tmp_path: Path) -> None:
        """A whole file equal to the current one is refused as NO_CHANGE."""
        root = _workspace(tmp_path)

        _, codes = _refuse("a.py\n```\nx = 1\ny = 2\nz = 4\n```\n", root)

        assert [FailureCode.NO_CHANGE] == codes


class TestStrReplace:
    def test_str_replace(self, tmp_path: Path) -> None:
        """A str_replace call replaces its unique old_str."""
        root = _workspace(tmp_path)
        call = {"command": "str_replace", "path": "a.py", "old_str": "y = 2", "new_str": "y = 3"}

        report = apply(json.dumps(call), root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n"} == _files(root)

    def test_create_insert_and_view(self, tmp_path: Path) -> None:
        """create, insert and view calls in one list: two changes, view changes nothing."""
        root = _workspace(tmp_path)
        calls = [
            {"command": "view", "path": "a.py"},
            {"command": "create", "path": "n.py", "file_text": "a\nb\n"},
            {"command": "insert", "path": "a.py", "insert_line": 1, "new_str": "ins = 0"},
        ]

        report = apply(json.dumps(calls), root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\nins = 0\ny = 2\nz = 4\n", "n.py": b"a\nb\n"} == _files(root)

    def test_absolute_path_inside_root(self, tmp_path: Path) -> None:
        """An absolute path inside the root is the same file as its relative path."""
        root = _workspace(tmp_path)
        call = {
            "command": "str_replace",
            "path": str(root / "a.py"),
            "old_str": "z = 4",
            "new_str": "z = 0",
        }

        report = apply(json.dumps(call), root)

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 2\nz = 0\n"} == _files(root)
        assert "a.py" == report.files[0].path

    def test_absolute_path_outside_root_refused(self, tmp_path: Path) -> None:
        """An absolute path outside the root is PATH_OUTSIDE_WORKSPACE."""
        root = _workspace(tmp_path)
        (tmp_path / "outside.py").write_bytes(SOURCE)
        call = {
            "command": "str_replace",
            "path": str(tmp_path / "outside.py"),
            "old_str": "z = 4",
            "new_str": "z = 0",
        }

        _, codes = _refuse(json.dumps(call), root)

        assert [FailureCode.PATH_OUTSIDE_WORKSPACE] == codes
        assert SOURCE == (tmp_path / "outside.py").read_bytes()

    def test_old_str_twice_refused(self, tmp_path: Path) -> None:
        """An old_str that occurs twice is AMBIGUOUS_MATCH."""
        root = _workspace(tmp_path, {"a.py": b"v = 1\nv = 1\n"})
        call = {"command": "str_replace", "path": "a.py", "old_str": "v = 1", "new_str": "v = 2"}

        _, codes = _refuse(json.dumps(call), root)

        assert [FailureCode.AMBIGUOUS_MATCH] == codes


class TestSequences:
    def test_create_then_edit(self, tmp_path: Path) -> None:
        """A file added then updated in one envelope ends with both edits."""
        root = _workspace(tmp_path)

        report = apply(
            "*** Begin Patch\n*** Add File: n.py\n+a\n+b\n*** Update File: n.py\n@@\n-b\n+c\n"
            "*** End Patch\n",
            root,
        )

        assert ApplyStatus.APPLIED == report.status
        assert b"a\nc\n" == _files(root)["n.py"]
        assert [("n.py", Action.CREATE, 2, 2)] == [
            (f.path, f.action, f.hunks_applied, f.hunks_total) for f in report.files
        ]

    def test_edits_to_same_file_in_two_sections(self, tmp_path: Path) -> None:
        """Two diff sections for the same file apply one after the other."""
        root = _workspace(tmp_path)

        report = apply(
            _udiff("a.py", "@@\n-x = 1\n+x = 2\n") + _udiff("a.py", "@@\n-x = 2\n+x = 3\n"), root
        )

        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 3\ny = 2\nz = 4\n"} == _files(root)

    def test_multi_file_all_or_nothing(self, tmp_path: Path) -> None:
        """One bad hunk in the second file leaves the first file untouched too."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"q\n"})
        text = _udiff("a.py", "@@\n-y = 2\n+y = 3\n") + _udiff("b.py", "@@\n-nope\n+x\n")

        report, codes = _refuse(text, root)

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == codes
        assert "b.py" == report.errors[0].file
        assert [("a.py", 1, 0, 1, False), ("b.py", 0, 0, 1, False)] == [
            (f.path, f.hunks_located, f.hunks_applied, f.hunks_total, f.written)
            for f in report.files
        ]
        assert report.errors[0].hint is not None
        assert report.errors[0].hint.startswith("Nothing was written. Resend the whole reply")

    def test_partial_writes_what_located(self, tmp_path: Path) -> None:
        """With partial=True the good file is written and the bad one reported."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"q\n"})
        text = _udiff("a.py", "@@\n-y = 2\n+y = 3\n") + _udiff("b.py", "@@\n-nope\n+x\n")

        report = apply(text, root, partial=True)

        assert ApplyStatus.PARTIAL == report.status
        assert not report.ok
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n", "b.py": b"q\n"} == _files(root)
        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [e.code for e in report.errors]

    def test_partial_with_nothing_located_refuses(self, tmp_path: Path) -> None:
        """With partial=True and no edit located, the result is a refusal."""
        root = _workspace(tmp_path)

        _, codes = _refuse(_udiff("a.py", "@@\n-nope\n+x\n"), root, partial=True)

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == codes

    def test_check_returns_diff_and_writes_nothing(self, tmp_path: Path) -> None:
        """check=True reports applied with the diff, and the tree stays identical."""
        root = _workspace(tmp_path)
        before = snapshot_tree(root)

        report = apply(_udiff("a.py", "@@\n-y = 2\n+y = 3\n"), root, check=True)

        assert (ApplyStatus.APPLIED, True) == (report.status, report.check)
        assert "-y = 2\n+y = 3\n" in report.diff
        assert report.diff.startswith("diff --git a/a.py b/a.py\n")
        assert before == snapshot_tree(root)

    def test_check_with_partial(self, tmp_path: Path) -> None:
        """check with partial reports partial and still writes nothing."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"q\n"})
        before = snapshot_tree(root)
        text = _udiff("a.py", "@@\n-y = 2\n+y = 3\n") + _udiff("b.py", "@@\n-nope\n+x\n")

        report = apply(text, root, check=True, partial=True)

        assert ApplyStatus.PARTIAL == report.status
        assert "+y = 3" in report.diff
        assert before == snapshot_tree(root)

    def test_already_applied_hunk_refused(self, tmp_path: Path) -> None:
        """A hunk whose new lines are already there is ALREADY_APPLIED, not reapplied."""
        root = _workspace(tmp_path)

        _, codes = _refuse(_udiff("a.py", "@@\n x = 1\n-y = 9\n+y = 2\n z = 4\n"), root)

        assert [FailureCode.ALREADY_APPLIED] == codes

    def test_format_forced(self, tmp_path: Path) -> None:
        """format= parses the text as that format only: a diff read as blocks is refused."""
        root = _workspace(tmp_path)
        text = _udiff("a.py", "@@\n-y = 2\n+y = 3\n")

        _, codes = _refuse(text, root, format=EditFormat.SEARCH_REPLACE)
        report = apply(text, root, format="udiff")

        assert [FailureCode.MALFORMED_PATCH] == codes
        assert ApplyStatus.APPLIED == report.status
        assert {"a.py": b"x = 1\ny = 3\nz = 4\n"} == _files(root)

    def test_unknown_format_refused(self, tmp_path: Path) -> None:
        """An unknown format name is a MALFORMED_PATCH refusal, not an exception."""
        root = _workspace(tmp_path)

        report, codes = _refuse(_udiff("a.py", "@@\n-y = 2\n+y = 3\n"), root, format="klingon")

        assert [FailureCode.MALFORMED_PATCH] == codes
        assert "klingon" in report.errors[0].message


class TestFileForms:
    @pytest.mark.parametrize(
        ("before", "after"),
        [
            pytest.param(b"a\r\nb\r\nc\r\n", b"a\r\nB\r\nc\r\n", id="crlf"),
            pytest.param(b"\xef\xbb\xbfa\nb\nc\n", b"\xef\xbb\xbfa\nB\nc\n", id="utf8-bom"),
            pytest.param(b"a\xe9\nb\nc\n", b"a\xe9\nB\nc\n", id="latin-1"),
            pytest.param(
                "a\nb\nc\n".encode("utf-16"), "a\nB\nc\n".encode("utf-16"), id="utf-16-bom"
            ),
            pytest.param(b"a\nb\nc", b"a\nB\nc", id="no-final-newline"),
        ],
    )
    def test_bytes_kept_except_the_edit(self, tmp_path: Path, before: bytes, after: bytes) -> None:
        """Line endings, BOM, encoding and a missing final newline survive an edit."""
        root = _workspace(tmp_path, {"f.txt": before})
        first = "a\xe9" if before.startswith(b"a\xe9") else "a"

        report = apply(_udiff("f.txt", f"@@\n {first}\n-b\n+B\n c\n"), root)

        assert ApplyStatus.APPLIED == report.status
        assert {"f.txt": after} == _files(root)

    def test_crlf_lines_added_as_crlf(self, tmp_path: Path) -> None:
        """Lines added to a CRLF file by an LF patch get CRLF endings."""
        root = _workspace(tmp_path, {"f.txt": b"a\r\nb\r\n"})

        apply(_udiff("f.txt", "@@\n a\n+new\n b\n"), root)

        assert {"f.txt": b"a\r\nnew\r\nb\r\n"} == _files(root)

    def test_crlf_whole_file_kept_crlf(self, tmp_path: Path) -> None:
        """A whole-file replacement of a CRLF file is written with CRLF."""
        root = _workspace(tmp_path, {"f.txt": b"a\r\nb\r\n"})

        apply("f.txt\n```\na\nc\n```\n", root)

        assert {"f.txt": b"a\r\nc\r\n"} == _files(root)

    def test_exec_bit_kept(self, tmp_path: Path) -> None:
        """An edited executable stays executable."""
        root = _workspace(tmp_path, {"run.sh": (b"echo a\n", 0o755)})

        apply(_udiff("run.sh", "@@\n-echo a\n+echo b\n"), root)

        assert {"run.sh": 0o755} == snapshot_tree(root).modes()
        assert {"run.sh": b"echo b\n"} == _files(root)

    def test_exec_bit_kept_across_move(self, tmp_path: Path) -> None:
        """A moved executable keeps its mode."""
        root = _workspace(tmp_path, {"run.sh": (b"echo a\n", 0o755)})

        apply(
            "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run\n*** End Patch\n", root
        )

        assert {"bin/run": 0o755} == snapshot_tree(root).modes()

    def test_no_final_newline_kept_on_last_line_edit(self, tmp_path: Path) -> None:
        """Editing the last line of a file without final newline keeps it without one."""
        root = _workspace(tmp_path, {"f.txt": b"a\nb"})

        apply(
            _udiff(
                "f.txt",
                "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+B\n"
                "\\ No newline at end of file\n",
            ),
            root,
        )

        assert {"f.txt": b"a\nB"} == _files(root)


class TestRefusals:
    def test_encoding_error(self, tmp_path: Path) -> None:
        """Adding '€' to a Latin-1 file is ENCODING_ERROR and nothing is written."""
        root = _workspace(tmp_path, {"f.txt": b"a\nb\xe9\nc\n", "g.txt": b"g\n"})
        text = _udiff("g.txt", "@@\n-g\n+G\n") + _udiff("f.txt", "@@\n a\n-b\xe9\n+b\u20ac\n c\n")

        report, codes = _refuse(text, root)

        assert [FailureCode.ENCODING_ERROR] == codes
        assert "latin-1" in report.errors[0].message

    def test_binary_file(self, tmp_path: Path) -> None:
        """Editing a file with NUL bytes is BINARY_FILE."""
        root = _workspace(tmp_path, {"f.bin": b"a\nb\x00\nc\n"})

        _, codes = _refuse(_udiff("f.bin", "@@\n a\n-b\n+B\n"), root)

        assert [FailureCode.BINARY_FILE] == codes

    @pytest.mark.parametrize(
        "path",
        ["../x.py", "../../.bashrc", "a/../../x.py", "sub/../../x.py", "/etc/passwd", "..\\x.py"],
    )
    @pytest.mark.parametrize("kind", ["udiff", "add", "update", "move"])
    def test_path_traversal(self, tmp_path: Path, path: str, kind: str) -> None:
        """Every spelling of a path leaving the root is PATH_OUTSIDE_WORKSPACE."""
        root = _workspace(tmp_path / "deep" / "er")
        texts = {
            "udiff": _udiff(path, "@@\n-y = 2\n+y = 3\n"),
            "add": f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n",
            "update": f"*** Begin Patch\n*** Update File: {path}\n@@\n-y = 2\n+y = 3\n"
            "*** End Patch\n",
            "move": f"*** Begin Patch\n*** Update File: a.py\n*** Move to: {path}\n*** End Patch\n",
        }
        # A target file at every level above the root, each level snapshotted without the next.
        levels = [(tmp_path, "deep"), (tmp_path / "deep", "er"), (tmp_path / "deep" / "er", "ws")]
        for level, _ in levels:
            (level / "x.py").write_bytes(SOURCE)
        outside = [snapshot_tree(level, exclude=(inner,)) for level, inner in levels]

        _, codes = _refuse(texts[kind], root)

        assert FailureCode.PATH_OUTSIDE_WORKSPACE in codes
        assert outside == [snapshot_tree(level, exclude=(inner,)) for level, inner in levels]

    def test_symlink_escape(self, tmp_path: Path) -> None:
        """Editing through a symlink that leaves the root is refused."""
        root = _workspace(tmp_path)
        (tmp_path / "secret.py").write_bytes(SOURCE)
        os.symlink(tmp_path / "secret.py", root / "link.py")

        _, codes = _refuse(_udiff("link.py", "@@\n-y = 2\n+y = 3\n"), root)

        assert [FailureCode.SYMLINK_ESCAPE] == codes
        assert SOURCE == (tmp_path / "secret.py").read_bytes()

    def test_git_directory(self, tmp_path: Path) -> None:
        """Files under .git/ are never edited."""
        root = _workspace(tmp_path, {"a.py": SOURCE, ".git/config": b"[core]\n"})

        _, codes = _refuse(_udiff(".git/config", "@@\n-[core]\n+[x]\n"), root)

        assert [FailureCode.PATH_OUTSIDE_WORKSPACE] == codes

    def test_missing_file(self, tmp_path: Path) -> None:
        """Updating a file that does not exist is FILE_NOT_FOUND."""
        root = _workspace(tmp_path)

        report, codes = _refuse(_udiff("b.py", "@@\n-y = 2\n+y = 3\n"), root)

        assert [FailureCode.FILE_NOT_FOUND] == codes
        assert "b.py" == report.errors[0].file

    def test_ambiguous_names_candidates(self, tmp_path: Path) -> None:
        """A hunk matching two places is AMBIGUOUS_MATCH naming both lines in the hint."""
        root = _workspace(tmp_path, {"f.txt": b"x\nb\ny\nb\nz\n"})

        report, codes = _refuse(_udiff("f.txt", "@@\n-b\n+B\n"), root)

        assert [FailureCode.AMBIGUOUS_MATCH] == codes
        assert "2, 4" in (report.errors[0].hint or "")

    def test_ambiguous_search_block(self, tmp_path: Path) -> None:
        """A SEARCH block matching two places is AMBIGUOUS_MATCH."""
        root = _workspace(tmp_path, {"f.txt": b"x\nb\ny\nb\nz\n"})

        report, codes = _refuse("f.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n", root)

        assert [FailureCode.AMBIGUOUS_MATCH] == codes
        assert "2, 4" in (report.errors[0].hint or "")

    def test_mismatch_excerpt_and_hash(self, tmp_path: Path) -> None:
        """A mismatch carries the real numbered lines (≤ 30) and the file's current hash."""
        data = "".join(f"line {i}\n" for i in range(1, 201)).encode()
        root = _workspace(tmp_path, {"f.txt": data})
        body = "@@ -100,3 +100,3 @@\n line 99\n-line 100 changed\n+line 100 new\n line 101\n"

        report, codes = _refuse(_udiff("f.txt", body), root)

        failure = report.errors[0]
        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == codes
        assert hashlib.sha256(data).hexdigest() == failure.current_sha256
        excerpt = (failure.excerpt or "").splitlines()
        assert 0 < len(excerpt) <= 30
        assert any(line.split("|")[0].strip() == "100" and "line 100" in line for line in excerpt)
        assert 0 == failure.hunk

    def test_long_block_excerpt_bounded(self, tmp_path: Path) -> None:
        """A 60-line mismatching hunk still gets an excerpt of at most 30 lines."""
        data = "".join(f"v{i} = {i}\n" for i in range(100)).encode()
        root = _workspace(tmp_path, {"f.txt": data})
        body = "@@\n" + "".join(f" v{i} = {i}\n" for i in range(60)) + "-gone\n+new\n"

        report, _ = _refuse(_udiff("f.txt", body), root)

        assert 0 < len((report.errors[0].excerpt or "").splitlines()) <= 30

    def test_root_is_a_file(self, tmp_path: Path) -> None:
        """A root that is a file is refused with a hint, not an exception."""
        root = _workspace(tmp_path)

        report = apply(_udiff("a.py", "@@\n-y = 2\n+y = 3\n"), root / "a.py")

        assert ApplyStatus.REFUSED == report.status
        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in report.errors]
        assert {"a.py": SOURCE} == _files(root)

    def test_root_missing(self, tmp_path: Path) -> None:
        """A root that does not exist is refused, and not created."""
        report = apply(_udiff("a.py", "@@\n-y = 2\n+y = 3\n"), tmp_path / "nope")

        assert ApplyStatus.REFUSED == report.status
        assert not (tmp_path / "nope").exists()

    @pytest.mark.parametrize("text", ["", "Sure, I fixed it.\n", "```\nno path here\n```\n"])
    def test_no_edit_in_text(self, tmp_path: Path, text: str) -> None:
        """Text with no edit in it is MALFORMED_PATCH."""
        root = _workspace(tmp_path)

        _, codes = _refuse(text, root)

        assert [FailureCode.MALFORMED_PATCH] == codes

    def test_unparsable_part_refuses_everything(self, tmp_path: Path) -> None:
        """A good edit next to a truncated one is refused as a whole (MALFORMED_PATCH)."""
        root = _workspace(tmp_path)
        text = "*** Begin Patch\n*** Update File: a.py\n@@\n-y = 2\n+y = 3\n*** Frobnicate: b\n"

        _, codes = _refuse(text, root)

        assert FailureCode.MALFORMED_PATCH in codes


class TestReport:
    def test_json_shape(self, tmp_path: Path) -> None:
        """to_json starts with status, files, errors, has diff and check, and is JSON."""
        root = _workspace(tmp_path, {"a.py": SOURCE, "b.py": b"q\n"})
        text = _udiff("a.py", "@@\n-y = 2\n+y = 3\n") + _udiff("b.py", "@@\n-nope\n+x\n")

        data = json.loads(apply(text, root).to_json_text())

        assert ["status", "files", "errors"] == list(data)[:3]
        assert {"diff", "check"} <= set(data)
        assert "refused" == data["status"]
        assert {
            "path": "a.py",
            "action": "update",
            "hunks_applied": 0,
            "hunks_total": 1,
            "hunks_located": 1,
            "written": False,
            "placements": [{"hunk": 0, "line": 2, "tolerance": "direct"}],
        } == data["files"][0]
        assert "PATCH_CONTEXT_MISMATCH" == data["errors"][0]["code"]
        assert {
            "code",
            "message",
            "file",
            "hunk",
            "hint",
            "excerpt",
            "current_sha256",
            "rule",
            "similarity",
        } == set(data["errors"][0])

    def test_move_json_has_new_path(self, tmp_path: Path) -> None:
        """A moved file's JSON names its new path."""
        root = _workspace(tmp_path)

        report = apply(
            "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n*** End Patch\n", root
        )

        assert "b.py" == report.to_json()["files"][0]["new_path"]  # type: ignore[index]

    def test_raise_for_status(self, tmp_path: Path) -> None:
        """raise_for_status returns an applied report and raises PatchRefused otherwise."""
        root = _workspace(tmp_path)
        good = apply(_udiff("a.py", "@@\n-y = 2\n+y = 3\n"), root)
        bad = apply(_udiff("a.py", "@@\n-nope\n+x\n"), root)

        assert good is good.raise_for_status()
        with pytest.raises(PatchRefused) as caught:
            bad.raise_for_status()
        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [f.code for f in caught.value.failures]
