"""Anchors honoured and tolerances reported: placements, warnings, and `--strict`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchsmith import apply
from patchsmith.cli import main
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus, WarningCode

SOURCE = (
    "def a():\n    x = 1\n    y = 2\n\n"
    "def b():\n    x = 1\n    y = 2\n\n"
    "def late():\n    return 0\n"
)


def _root(tmp_path: Path, text: str = SOURCE) -> Path:
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    return tmp_path


def _envelope(anchor: str, body: str) -> str:
    return f"*** Begin Patch\n*** Update File: m.py\n@@ {anchor}\n{body}*** End Patch\n"


class TestAnchors:
    def test_anchor_chooses_between_equal_places(self, tmp_path: Path) -> None:
        """`@@ def b():` picks the second of two identical blocks."""
        root = _root(tmp_path)

        report = apply(_envelope("def b():", "     x = 1\n-    y = 2\n+    y = 3\n"), root)

        assert ApplyStatus.APPLIED == report.status
        assert "def b():\n    x = 1\n    y = 3\n" in (root / "m.py").read_text(encoding="utf-8")
        assert [(0, 6, "direct")] == [
            (p.hunk, p.line, p.tolerance) for p in report.files[0].placements
        ]

    def test_anchor_nowhere_refuses(self, tmp_path: Path) -> None:
        """An anchor naming no line refuses, even though the lines are unique."""
        root = _root(tmp_path)

        report = apply(_envelope("def checkout():", "-    return 0\n+    return 1\n"), root)

        assert [FailureCode.ANCHOR_NOT_FOUND] == [e.code for e in report.errors]
        assert SOURCE == (root / "m.py").read_text(encoding="utf-8")

    def test_section_header_nowhere_refuses(self, tmp_path: Path) -> None:
        """A unified diff's section header is checked the same way."""
        root = _root(tmp_path)
        text = "--- a/m.py\n+++ b/m.py\n@@ -9,2 +9,2 @@ def count(self) -> int:\n"
        text += " def late():\n-    return 0\n+    return 1\n"

        report = apply(text, root)

        assert [FailureCode.ANCHOR_NOT_FOUND] == [e.code for e in report.errors]

    def test_anchor_below_the_place_warns(self, tmp_path: Path) -> None:
        """An anchor that occurs only below where the hunk landed applies, with a warning."""
        root = _root(tmp_path, "x = 1\ny = 2\n\ndef late():\n    return 0\n")

        report = apply(_envelope("def late():", " x = 1\n-y = 2\n+y = 3\n"), root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert [WarningCode.ANCHOR_ELSEWHERE] == [w.code for w in report.warnings]
        assert "line 4" in report.warnings[0].message
        data = report.to_json()
        assert "ANCHOR_ELSEWHERE" == data["warnings"][0]["code"]  # type: ignore[index]
        assert "ANCHOR_ELSEWHERE" in report.feedback()

    def test_anchor_above_does_not_warn(self, tmp_path: Path) -> None:
        """An anchor above the place is what it should be: no warning."""
        root = _root(tmp_path)

        report = apply(_envelope("def late():", "-    return 0\n+    return 1\n"), root)

        assert ApplyStatus.APPLIED == report.status
        assert () == report.warnings


class TestTolerances:
    def test_partial_context_is_reported_and_warned(self, tmp_path: Path) -> None:
        """A hunk with one altered context line lands, saying how many lines differed."""
        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
        text = "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n b = 20\n c = 3\n-d = 4\n+d = 40\n e = 5\n"

        report = apply(text, root, record=False)

        assert ApplyStatus.APPLIED == report.status
        placement = report.files[0].placements[0]
        assert ("partial_context", 1) == (placement.tolerance, placement.line)
        assert "1 context line(s) of the hunk differ" in placement.detail
        assert [WarningCode.TOLERANCE_USED] == [w.code for w in report.warnings]

    def test_strict_refuses_beyond_whitespace(self, tmp_path: Path) -> None:
        """--strict refuses the same hunk, and still takes trailing-space differences."""
        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
        loose = "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n b = 20\n c = 3\n-d = 4\n+d = 40\n e = 5\n"
        spaced = "--- a/m.py\n+++ b/m.py\n@@\n c = 3   \n-d = 4\n+d = 40\n"

        refused = apply(loose, root, strict=True)
        applied = apply(spaced, root, strict=True, record=False)

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [e.code for e in refused.errors]
        assert ApplyStatus.APPLIED == applied.status
        assert "whitespace_tolerant" == applied.files[0].placements[0].tolerance

    def test_strict_refuses_typographic_quotes(self, tmp_path: Path) -> None:
        """Curly quotes fold by default, not under --strict."""
        root = _root(tmp_path, 'msg = "hi"\n')
        text = '--- a/m.py\n+++ b/m.py\n@@\n-msg = \u201chi\u201d\n+msg = "hello"\n'

        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [
            e.code for e in apply(text, root, strict=True).errors
        ]
        assert ApplyStatus.APPLIED == apply(text, root, check=True).status

    def test_cli_strict_and_json_placements(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The CLI takes --strict; --json carries placements and warnings."""
        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
        patch = tmp_path / "p.diff"
        patch.write_text(
            "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n b = 20\n c = 3\n-d = 4\n+d = 40\n e = 5\n",
            encoding="utf-8",
        )

        strict = main(["apply", str(patch), "-C", str(root), "--strict", "--json", "--check"])
        strict_out = json.loads(capsys.readouterr().out)
        loose = main(["apply", str(patch), "-C", str(root), "--json", "--check"])
        loose_out = json.loads(capsys.readouterr().out)

        assert (1, 0) == (strict, loose)
        assert "refused" == strict_out["status"]
        assert "partial_context" == loose_out["files"][0]["placements"][0]["tolerance"]
        assert "TOLERANCE_USED" == loose_out["warnings"][0]["code"]


class TestProposeWarnings:
    LOOSE = "--- a/m.py\n+++ b/m.py\n@@\n a = 1\n b = 20\n c = 3\n-d = 4\n+d = 40\n e = 5\n"

    def _proposal(self) -> dict[str, object]:
        return {
            "proposal_id": "p-warn",
            "run_id": "r-warn",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "bump d",
            "expected_files": ["m.py"],
            "operations": [{"type": "patch", "format": "udiff", "text": self.LOOSE}],
        }

    def test_propose_carries_the_warnings_apply_reports(self, tmp_path: Path) -> None:
        """A proposal whose patch needed a tolerance says so, as `apply` does."""
        from patchsmith import propose

        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")

        report = propose(self._proposal(), root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert [WarningCode.TOLERANCE_USED] == [w.code for w in report.warnings]
        assert "partial_context" == report.files[0].placements[0].tolerance
        assert "d = 40\n" in (root / "m.py").read_text(encoding="utf-8")

    def test_refused_proposal_keeps_the_warnings(self, tmp_path: Path) -> None:
        """A proposal refused after staging (here by its expected_files) still names them."""
        from patchsmith import propose

        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
        proposal = self._proposal()
        proposal["operations"] = [
            *proposal["operations"],  # type: ignore[misc]
            {"type": "direct_write", "path": "other.txt", "content": "x\n", "allow_create": True},
        ]

        report = propose(proposal, root, record=False)

        assert ApplyStatus.REFUSED == report.status
        assert [WarningCode.TOLERANCE_USED] == [w.code for w in report.warnings]
        assert "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n" == (root / "m.py").read_text(encoding="utf-8")

    def test_cli_propose_json_has_warnings(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`patchsmith propose --json` prints the same warnings."""
        root = _root(tmp_path, "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
        path = tmp_path / "proposal.json"
        path.write_text(json.dumps(self._proposal()), encoding="utf-8")

        code = main(["propose", str(path), "-C", str(root), "--json", "--check"])
        out = json.loads(capsys.readouterr().out)

        assert 0 == code
        assert ["TOLERANCE_USED"] == [w["code"] for w in out["warnings"]]
