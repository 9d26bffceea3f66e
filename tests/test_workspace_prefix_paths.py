"""`/workspace/...` paths name files under the root wherever an edit names a file.

Diff headers, apply_patch envelopes, SEARCH/REPLACE path lines, whole-file blocks and
str_replace JSON calls all go through the one mapping in the intake; what is left after
the prefix is checked as any relative path is, so `/workspace/../x` is still refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply
from patchsmith.cli import main
from patchsmith.errors import FailureCode

SOURCE = b"a = 1\nb = 2\n"
CHANGED = b"a = 1\nb = 3\n"


def _replies(path: str) -> dict[str, str]:
    """One reply per format, each naming the file as `path`."""
    return {
        "udiff_a_prefix": f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n",
        "udiff_bare": f"--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n",
        "apply_patch": (
            f"*** Begin Patch\n*** Update File: {path}\n@@\n a = 1\n-b = 2\n+b = 3\n*** End Patch\n"
        ),
        "search_replace": (
            f"{path}\n```\n<<<<<<< SEARCH\nb = 2\n=======\nb = 3\n>>>>>>> REPLACE\n```\n"
        ),
        "whole_file": f"{path}\n```python\na = 1\nb = 3\n```\n",
        "str_replace": json.dumps(
            {"command": "str_replace", "path": path, "old_str": "b = 2", "new_str": "b = 3"}
        ),
    }


FORMATS = sorted(_replies("x"))


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"pkg/mod.py": SOURCE})


class TestLibrary:
    @pytest.mark.parametrize("fmt", FORMATS)
    def test_prefixed_path_applies(self, root: Path, fmt: str) -> None:
        """`/workspace/pkg/mod.py` names `pkg/mod.py`, in every format."""
        report = apply(_replies("/workspace/pkg/mod.py")[fmt], root, record=False)

        assert report.ok, report.feedback()
        assert CHANGED == (root / "pkg" / "mod.py").read_bytes()
        assert ["pkg/mod.py"] == [f.path for f in report.files]

    @pytest.mark.parametrize("fmt", FORMATS)
    def test_traversal_after_the_prefix_is_refused(self, root: Path, fmt: str) -> None:
        """`/workspace/../x` leaves the root: refused as any `../x` is, nothing written."""
        before = snapshot_tree(root)

        report = apply(_replies("/workspace/../pkg/mod.py")[fmt], root, record=False)

        assert not report.ok
        assert FailureCode.PATH_OUTSIDE_WORKSPACE in {e.code for e in report.errors}
        assert before == snapshot_tree(root)

    @pytest.mark.parametrize("fmt", ["udiff_bare", "apply_patch", "str_replace"])
    def test_other_absolute_paths_stay_refused(self, root: Path, fmt: str) -> None:
        """An absolute path under no prefix is refused, the prefix's look-alikes included."""
        for path in ("/etc/passwd", "/workspacex/pkg/mod.py"):
            report = apply(_replies(path)[fmt], root, record=False)

            assert FailureCode.PATH_OUTSIDE_WORKSPACE in {e.code for e in report.errors}, path

    def test_a_configured_prefix_replaces_the_default(self, root: Path) -> None:
        """`workspace_prefix` names the directory standing for the root; None turns it off."""
        mine = apply(_replies("/repo/pkg/mod.py")["apply_patch"], root, workspace_prefix="/repo/")
        assert mine.ok, mine.feedback()

        off = apply(
            _replies("/workspace/pkg/mod.py")["udiff_a_prefix"], root, workspace_prefix=None
        )
        assert FailureCode.PATH_OUTSIDE_WORKSPACE in {e.code for e in off.errors}

    def test_the_roots_own_path_still_maps(self, root: Path) -> None:
        """The root's absolute path works as before, beside the prefix."""
        report = apply(_replies(f"{root}/pkg/mod.py")["apply_patch"], root, record=False)

        assert report.ok, report.feedback()

    def test_move_target_is_mapped_too(self, root: Path) -> None:
        """`*** Move to: /workspace/...` names a file under the root."""
        envelope = (
            "*** Begin Patch\n*** Update File: /workspace/pkg/mod.py\n"
            "*** Move to: /workspace/pkg/new.py\n@@\n a = 1\n-b = 2\n+b = 3\n*** End Patch\n"
        )
        report = apply(envelope, root, record=False)

        assert report.ok, report.feedback()
        assert CHANGED == (root / "pkg" / "new.py").read_bytes()
        assert not (root / "pkg" / "mod.py").exists()


class TestCommandLine:
    @pytest.mark.parametrize("fmt", FORMATS)
    def test_prefixed_path_applies(self, root: Path, tmp_path: Path, fmt: str) -> None:
        """`patchsmith apply` maps the prefix in every format and exits 0."""
        reply = tmp_path / "reply.md"
        reply.write_text(_replies("/workspace/pkg/mod.py")[fmt], encoding="utf-8")

        code = main(["apply", str(reply), "-C", str(root), "--no-record"])

        assert 0 == code
        assert CHANGED == (root / "pkg" / "mod.py").read_bytes()

    def test_traversal_is_refused(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The CLI refuses `/workspace/../...` with PATH_OUTSIDE_WORKSPACE and writes nothing."""
        reply = tmp_path / "reply.md"
        reply.write_text(_replies("/workspace/../etc/passwd")["udiff_bare"], encoding="utf-8")
        before = snapshot_tree(root)

        code = main(["apply", str(reply), "-C", str(root), "--json"])

        out = json.loads(capsys.readouterr().out)
        assert 0 != code
        assert "PATH_OUTSIDE_WORKSPACE" in {e["code"] for e in out["errors"]}
        assert before == snapshot_tree(root)
