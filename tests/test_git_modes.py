"""git mode lines (issue 7, finding 7): `new mode` and `new file mode` set the execute bits.

The mode is written with the content in the same commit, shown in the diff and the
report; a mode-only diff applies, and is already_applied when the mode is right.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply, propose
from patchsmith.cli import main
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.transaction import with_executable

SCRIPT = b"#!/bin/sh\necho hi\n"
MODE_ONLY = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
UNSET = "diff --git a/tool.sh b/tool.sh\nold mode 100755\nnew mode 100644\n"
MODE_AND_CONTENT = (
    "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo hello\n"
)
NEW_EXECUTABLE = (
    "diff --git a/new.sh b/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/new.sh\n"
    "@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo new\n"
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "ws", {"run.sh": (SCRIPT, 0o644), "tool.sh": (SCRIPT, 0o755), "a.py": b"x\n"}
    )


class TestWithExecutable:
    @pytest.mark.parametrize(
        ("before", "executable", "after"),
        [
            (0o644, True, 0o755),
            (0o640, True, 0o750),
            (0o600, True, 0o700),
            (0o755, False, 0o644),
            (0o755, None, 0o755),
            (0o444, True, 0o555),
        ],
    )
    def test_execute_bits_follow_read_bits(
        self, before: int, executable: bool | None, after: int
    ) -> None:
        assert after == with_executable(before, executable)


class TestModeLines:
    def test_mode_only_diff_applies(self, root: Path) -> None:
        """Not NO_CHANGE: the file becomes executable, its bytes untouched; the diff says so."""
        report = apply(MODE_ONLY, root)

        assert ApplyStatus.APPLIED == report.status
        assert 0o755 == mode(root / "run.sh")
        assert SCRIPT == (root / "run.sh").read_bytes()
        assert "old mode 100644\nnew mode 100755\n" in report.diff
        assert "100755" == report.files[0].mode
        assert "100755" == report.files[0].to_json()["mode"]

    def test_mode_only_diff_again_is_already_applied(self, root: Path) -> None:
        """Re-sending it (even without any record) answers already_applied and writes nothing."""
        assert ApplyStatus.APPLIED == apply(MODE_ONLY, root, record=False).status
        before = snapshot_tree(root)

        again = apply(MODE_ONLY, root, record=False)

        assert ApplyStatus.ALREADY_APPLIED == again.status
        assert again.ok
        assert before == snapshot_tree(root)

    def test_clearing_the_bit(self, root: Path) -> None:
        report = apply(UNSET, root)

        assert ApplyStatus.APPLIED == report.status
        assert 0o644 == mode(root / "tool.sh")

    def test_mode_and_content_in_one_commit(self, root: Path) -> None:
        report = apply(MODE_AND_CONTENT, root)

        assert ApplyStatus.APPLIED == report.status
        assert b"#!/bin/sh\necho hello\n" == (root / "run.sh").read_bytes()
        assert 0o755 == mode(root / "run.sh")
        assert "new mode 100755" in report.diff

    def test_mode_with_another_file_is_atomic(self, root: Path) -> None:
        """A mode change in a multi-file commit goes through the journal with the others."""
        other = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"

        report = apply(MODE_ONLY + other, root)

        assert ApplyStatus.APPLIED == report.status
        assert (0o755, b"y\n") == (mode(root / "run.sh"), (root / "a.py").read_bytes())

    def test_refused_patch_changes_no_mode(self, root: Path) -> None:
        """The other side: when another file's hunk fails, the mode is not set either."""
        bad = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-nope\n+y\n"
        before = snapshot_tree(root)

        report = apply(MODE_ONLY + bad, root)

        assert ApplyStatus.REFUSED == report.status
        assert before == snapshot_tree(root)

    def test_new_file_mode_creates_an_executable(self, root: Path) -> None:
        umask = os.umask(0o022)
        try:
            report = apply(NEW_EXECUTABLE, root)
        finally:
            os.umask(umask)

        assert ApplyStatus.APPLIED == report.status
        assert 0o755 == mode(root / "new.sh")
        assert "new file mode 100755" in report.diff

    def test_new_file_without_mode_is_not_executable(self, root: Path) -> None:
        plain = NEW_EXECUTABLE.replace("new file mode 100755\n", "")
        umask = os.umask(0o022)
        try:
            apply(plain, root)
        finally:
            os.umask(umask)

        assert 0o644 == mode(root / "new.sh")

    def test_rename_with_mode(self, root: Path) -> None:
        move = (
            "diff --git a/run.sh b/bin/run\nold mode 100644\nnew mode 100755\n"
            "similarity index 100%\nrename from run.sh\nrename to bin/run\n"
        )

        report = apply(move, root)

        assert ApplyStatus.APPLIED == report.status
        assert 0o755 == mode(root / "bin" / "run")
        assert not (root / "run.sh").exists()

    @pytest.mark.parametrize("bad", ["100777x", "040000"])
    def test_unknown_mode_is_malformed(self, root: Path, bad: str) -> None:
        before = snapshot_tree(root)

        report = apply(MODE_ONLY.replace("new mode 100755", f"new mode {bad}"), root)

        assert [FailureCode.MALFORMED_PATCH] == [f.code for f in report.errors]
        assert before == snapshot_tree(root)

    def test_propose_mode_only(self, root: Path) -> None:
        proposal = {
            "proposal_id": "p-mode",
            "run_id": "r",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "make run.sh executable",
            "operations": [{"type": "patch", "format": "udiff", "text": MODE_ONLY}],
        }

        first = propose(proposal, root, record=False)
        second = propose(proposal, root, record=False)

        assert (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED) == (first.status, second.status)
        assert 0o755 == mode(root / "run.sh")


class TestCli:
    def test_mode_only_through_the_cli(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        patch = tmp_path / "mode.diff"
        patch.write_text(MODE_ONLY, encoding="utf-8")
        args = ["apply", str(patch), "-C", str(root), "--no-record"]

        first = main(args)
        out = capsys.readouterr().out
        second = main([*args, "--json"])
        report = json.loads(capsys.readouterr().out)

        assert (0, 0) == (first, second)
        assert "mode 100755" in out
        assert "already_applied" == report["status"]
        assert 0o755 == mode(root / "run.sh")


class TestModeLineOwner:
    def test_mode_header_followed_by_another_files_header_is_refused(self, root: Path) -> None:
        """A `diff --git a/run.sh` mode header, then `--- a/a.py`: whose mode? Refused."""
        mixed = MODE_ONLY + "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
        before = snapshot_tree(root)

        report = apply(mixed, root)

        assert FailureCode.MALFORMED_PATCH in [f.code for f in report.errors]
        assert before == snapshot_tree(root)

    def test_matching_names_keep_the_mode(self, root: Path) -> None:
        """The other side: the same names on both lines (with a/ b/ prefixes) apply."""
        assert ApplyStatus.APPLIED == apply(MODE_AND_CONTENT, root).status
