"""`go test -json` through the built-in go-test profile, with the real Go toolchain."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from patchsmith.verify import verify

pytestmark = pytest.mark.skipif(
    shutil.which("go") is None or shutil.which("git") is None,
    reason="the Go toolchain (and git) are needed to run go test",
)

CALC = "package calc\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n"
CALC_TEST = """package calc

import "testing"

func TestAdd(t *testing.T) {
\tif got := add(2, 3); got != 5 {
\t\tt.Errorf("add(2, 3) = %d, want 5", got)
\t}
}
"""


def test_only_the_introduced_go_failure_is_reported(tmp_path: Path) -> None:
    """A committed passing module, then a broken `add`: TestAdd is the one introduced failure."""
    (tmp_path / "go.mod").write_text("module example.com/calc\n\ngo 1.19\n")
    (tmp_path / "calc.go").write_text(CALC)
    (tmp_path / "calc_test.go").write_text(CALC_TEST)
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
    ):
        subprocess.run(argv, cwd=tmp_path, check=True, capture_output=True)
    (tmp_path / "calc.go").write_text(CALC.replace("a + b", "a - b"))

    report = verify(tmp_path, ["go-test"])

    [outcome] = report.outcomes
    assert not outcome.passed
    [failure] = outcome.introduced
    assert ("example.com/calc.TestAdd", "calc_test.go") == (failure.test_id, failure.file)
    assert "add(2, 3) = -1, want 5" == failure.message
