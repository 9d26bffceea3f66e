"""An `ast_transform` operation runs a recipe inside a proposal's own transaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchsmith import propose
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus

from .helpers import snapshot, write_tree

TEST = "class T:\n    def test(self):\n        self.assertEqual(f(1), 2)\n"


def proposal(*operations: dict[str, object], **more: object) -> dict[str, object]:
    return {
        "proposal_id": "p1",
        "run_id": "r1",
        "attempt_no": 1,
        "strategy": "AST_TRANSFORM",
        "objective": "plain asserts",
        "operations": list(operations),
        **more,
    }


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"tests/test_a.py": TEST, "tests/test_b.py": TEST, "app.py": "x = 1\n"})
    return tmp_path


class TestAstTransform:
    def test_applies_in_scope(self, root: Path) -> None:
        """The recipe changes the files in `scope` and nothing else."""
        op = {"type": "ast_transform", "recipe": "unittest-to-assert", "scope": ["tests/test_a.py"]}

        report = propose(proposal(op), root, record=False, allow_unverified=True)

        assert ApplyStatus.APPLIED == report.status
        assert "assert f(1) == 2" in (root / "tests/test_a.py").read_text()
        assert TEST == (root / "tests/test_b.py").read_text()
        assert ["tests/test_a.py"] == [f.path for f in report.files]

    def test_dry_run_writes_nothing(self, root: Path) -> None:
        """`dry_run: true` makes the proposal a check: the diff is reported, nothing written."""
        before = snapshot(root)
        op = {"type": "ast_transform", "recipe": "unittest-to-assert", "dry_run": True}

        report = propose(proposal(op), root, record=False, allow_unverified=True)

        assert report.check and ApplyStatus.APPLIED == report.status
        assert "+        assert f(1) == 2" in report.diff
        assert before == snapshot(root)

    def test_with_a_patch(self, root: Path) -> None:
        """A patch and a recipe in one proposal commit together."""
        patch = {
            "type": "patch",
            "text": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        }
        op = {"type": "ast_transform", "recipe": "unittest-to-assert"}

        report = propose(proposal(patch, op), root, record=False, allow_unverified=True)

        assert ApplyStatus.APPLIED == report.status
        assert "x = 2\n" == (root / "app.py").read_text()
        assert "assert f(1) == 2" in (root / "tests/test_b.py").read_text()

    def test_forbidden_files_are_left_out(self, root: Path) -> None:
        """The proposal's forbidden_files narrow what the recipe may touch."""
        op = {"type": "ast_transform", "recipe": "unittest-to-assert"}

        report = propose(
            proposal(op, forbidden_files=["tests/test_b.py"]),
            root,
            record=False,
            allow_unverified=True,
        )

        assert ApplyStatus.APPLIED == report.status
        assert TEST == (root / "tests/test_b.py").read_text()

    @pytest.mark.parametrize(
        ("op", "code"),
        [
            ({"type": "ast_transform", "recipe": "nope"}, FailureCode.RECIPE_NOT_FOUND),
            (
                {"type": "ast_transform", "recipe": "unittest-to-assert", "language": "java"},
                FailureCode.INVALID_PROPOSAL,
            ),
            (
                {"type": "ast_transform", "recipe": "unittest-to-assert", "scope": ["app.py"]},
                FailureCode.NO_CHANGE,
            ),
        ],
    )
    def test_refusals(self, root: Path, op: dict[str, object], code: FailureCode) -> None:
        """An unknown recipe, a wrong language, or nothing to change: refused, nothing written."""
        before = snapshot(root)

        report = propose(proposal(op), root, record=False, allow_unverified=True)

        assert ApplyStatus.REFUSED == report.status
        assert [code] == [e.code for e in report.errors]
        assert before == snapshot(root)
