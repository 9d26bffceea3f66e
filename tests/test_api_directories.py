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
