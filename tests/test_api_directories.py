"""`apply` on a path that is a directory: a clear refusal, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.workspace_snapshot import snapshot_tree

from patchsmith import FailureCode, apply

DIFF = "--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-x\n+y\n"
ADD = "*** Begin Patch\n*** Add File: sub\n+x\n*** End Patch\n"


class TestDirectoryTargets:
    @pytest.mark.parametrize("patch", [DIFF, ADD], ids=["update", "add"])
    def test_directory_is_named_as_such(self, tmp_path: Path, patch: str) -> None:
        """An edit naming a directory says it is a directory and changes nothing."""
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "f.txt").write_text("x\n", encoding="utf-8")
        before = snapshot_tree(tmp_path)

        report = apply(patch, tmp_path, record=False)

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in report.errors]
        assert "is a directory" in report.errors[0].message
        assert before == snapshot_tree(tmp_path)


class TestExcerptsShowTheDisk:
    def test_second_hunk_excerpt_uses_disk_lines(self, tmp_path: Path) -> None:
        """A later hunk that fails is shown against the file as it is on disk."""
        (tmp_path / "f.txt").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
        patch = (
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n one\n+inserted\n two\n"
            "@@ -3,2 +4,2 @@\n three\n-fuor\n+4\n"
        )

        report = apply(patch, tmp_path, record=False)

        excerpt = report.errors[0].excerpt or ""
        assert "inserted" not in excerpt
        assert "4 | four" in excerpt
