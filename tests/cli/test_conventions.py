"""CLI conventions agents rely on: `--version`, and `apply` answering a re-sent reply."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

import patchsmith
from patchsmith.cli import main
from patchsmith.model.report import ApplyStatus

DIFF = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
ADDITION = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n x = 1\n y = 2\n+z = 3\n"


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"a.py": b"x = 1\ny = 2\n"})


def _reply(tmp_path: Path, text: str) -> str:
    path = tmp_path / "reply.diff"
    path.write_text(text, encoding="utf-8")
    return str(path)


class TestVersion:
    def test_prints_the_package_version(self, capsys: pytest.CaptureFixture[str]) -> None:
        code = main(["--version"])

        assert 0 == code
        assert f"patchsmith {patchsmith.__version__}\n" == capsys.readouterr().out


class TestApplyResent:
    def test_same_reply_again_is_already_applied(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Exit 0, status already_applied, nothing written, the first attempt named."""
        reply = _reply(tmp_path, DIFF)
        assert 0 == main(["apply", reply, "-C", str(root), "--json"])
        first = json.loads(capsys.readouterr().out)
        after_first = snapshot_tree(root)
        mtime = os.stat(root / "a.py").st_mtime_ns

        code = main(["apply", reply, "-C", str(root), "--json"])
        again = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert "already_applied" == again["status"]
        assert any(first["attempt_id"] in note for note in again["notes"])
        assert after_first == snapshot_tree(root)
        assert mtime == os.stat(root / "a.py").st_mtime_ns

    def test_an_addition_is_not_added_twice(self, root: Path) -> None:
        """A diff that only adds lines could apply again; the record says it already did."""
        assert ApplyStatus.APPLIED == patchsmith.apply(ADDITION, root).status

        again = patchsmith.apply(ADDITION, root)

        assert ApplyStatus.ALREADY_APPLIED == again.status
        assert b"x = 1\ny = 2\nz = 3\n" == (root / "a.py").read_bytes()

    def test_file_changed_since_is_judged_afresh(self, root: Path) -> None:
        """The other side: after a hand edit the record no longer vouches; the hunk decides."""
        patchsmith.apply(DIFF, root)
        (root / "a.py").write_bytes(b"x = 1\ny = 2\n")

        again = patchsmith.apply(DIFF, root)

        assert ApplyStatus.APPLIED == again.status

    def test_other_reply_is_not_matched(self, root: Path) -> None:
        patchsmith.apply(DIFF, root)

        other = patchsmith.apply(DIFF.replace("y = 3", "y = 4").replace("-y = 2", "-y = 3"), root)

        assert ApplyStatus.APPLIED == other.status

    def test_unrecorded_first_apply_cannot_vouch(self, root: Path) -> None:
        patchsmith.apply(DIFF, root, record=False)

        again = patchsmith.apply(DIFF, root)

        assert ApplyStatus.REFUSED == again.status

    def test_reverted_mode_is_not_already_applied(self, root: Path) -> None:
        """Content hashes alone cannot see a mode; a mode line must still hold."""
        mode_only = "diff --git a/a.py b/a.py\nold mode 100644\nnew mode 100755\n"
        assert ApplyStatus.APPLIED == patchsmith.apply(mode_only, root).status
        (root / "a.py").chmod(0o644)

        again = patchsmith.apply(mode_only, root)

        assert ApplyStatus.APPLIED == again.status
        assert stat.S_IMODE((root / "a.py").stat().st_mode) == 0o755
