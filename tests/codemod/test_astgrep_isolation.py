"""ast-grep reads no configuration from the workspace or its parents, and its skips are
reported (findings 7 and 15 of issue 20)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from patchsmith.cli import main
from patchsmith.codemod import run_recipe, workset
from patchsmith.codemod.backends.astgrep import _skipped, scan

TEST = "class T:\n    def test(self):\n        self.assertEqual(f(1), 2)\n"
# Maps Python files to JSON: with it read, no Python rule would match anything.
HOSTILE = "ruleDirs: []\nlanguageGlobs:\n  json: ['*.py']\n"
RULE: dict[str, object] = {
    "id": "r",
    "language": "python",
    "rule": {"pattern": "self.assertEqual($A, $B)"},
    "fix": "assert $A == $B",
}


@pytest.fixture(name="planted")
def _planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with a hostile sgconfig.yml in it and in its parent, and scratch and temp
    folders (where the re-run's copies and ast-grep's own folder go) under hostile ones too."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "test_a.py").write_text(TEST)
    shm, temp = tmp_path / "shm", tmp_path / "tmp"
    for folder in (shm, temp):
        folder.mkdir()
    for path in (root, tmp_path, shm, temp):
        (path / "sgconfig.yml").write_text(HOSTILE)
    monkeypatch.setattr(workset, "_MEMORY_FS", shm)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return root


class TestNoWorkspaceConfig:
    def test_scan_still_matches(self, planted: Path) -> None:
        """The planted configurations change nothing: the match is found, its path relative."""
        found = scan([RULE], planted, ["test_a.py"])

        assert not isinstance(found, Exception) and isinstance(found, list)
        assert ["test_a.py"] == [m.path for m in found]
        assert found[0].edit is not None

    def test_recipe_applies_and_rerun_is_clean(self, planted: Path) -> None:
        """The built-in recipe applies and its idempotency re-run (in the scratch folder) holds."""
        report = run_recipe("unittest-to-assert", planted, apply=True)

        assert not report.errors, report.errors
        assert "assert f(1) == 2" in (planted / "test_a.py").read_text()
        assert report.idempotent is True


class TestSkippedFiles:
    def test_trace_lines_become_reasons(self) -> None:
        """`--inspect entity` lines for skipped files are read; others are ignored."""
        names = {"/w/big.py": "big.py", "/w/a.py": "a.py"}
        stderr = (
            "sg: summary|project: isProject=true\n"
            "sg: entity|file|/w/a.py: language=Python,appliedRuleCount=1\n"
            "sg: entity|file|/w/big.py: skipped=fileTooLarge\n"
            "sg: entity|file|/elsewhere.py: skipped=fileTooLarge\n"
            "sg: entity|file|/w/a.py: skipped=somethingElse\n"
        )

        found = _skipped(stderr, names)

        assert "fileTooLarge" in found["big.py"] and "size limit" in found["big.py"]
        assert "somethingElse" in found["a.py"]
        assert 2 == len(found)

    def test_large_file_is_reported_skipped(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file ast-grep will not read is `skipped` with the reason in the JSON report."""
        (tmp_path / "test_a.py").write_text(TEST)
        (tmp_path / "test_big.py").write_text(TEST + "x = 1\n" * 600_000)

        code = main(["recipe", "run", "unittest-to-assert", "-C", str(tmp_path), "--json"])
        report = json.loads(capsys.readouterr().out)

        assert 0 == code
        reasons = {s["path"]: s["reason"] for s in report["skipped"]}
        assert "size limit" in reasons["test_big.py"]
        assert "test_a.py" not in reasons
        assert "assert f(1) == 2" in json.dumps(report)
