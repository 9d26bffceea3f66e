"""A recipe's `compiles` / `tests_pass` decided by the workspace's verification profiles."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.workspace_snapshot import snapshot_tree

from patchsmith.cli import main
from patchsmith.codemod import run_recipe

BREAKING = """\
recipe_id: break-answer
language: python
summary: make the answer wrong
operations:
  - type: ast_grep_rule
    id: answer
    rule: {pattern: "return 42"}
    fix: "return 41"
postconditions:
  - tests_pass
"""

HARMLESS = """\
recipe_id: spell-answer
language: python
summary: write the answer as a sum
operations:
  - type: ast_grep_rule
    id: answer
    rule: {pattern: "return 42"}
    fix: "return 40 + 2"
postconditions:
  - tests_pass: unit
  - compiles
"""

NAMED_ELSEWHERE = BREAKING.replace("  - tests_pass\n", "  - tests_pass: not-here\n")


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Path:
    """A package with one test, a test profile (pytest) and a build profile (compileall)."""
    python = json.dumps(sys.executable)
    (tmp_path / "patchsmith.toml").write_text(
        "[verify.unit]\n"
        f'argv = [{python}, "-m", "pytest", "-q", "-p", "no:cacheprovider", '
        '"--junitxml={report}", "tests"]\n'
        'parser = "pytest"\nkind = "test"\nenv = ["PYTHON*"]\n'
        "[verify.build]\n"
        f'argv = [{python}, "-m", "compileall", "-q", "pkg"]\nkind = "build"\n'
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "answer.py").write_text("def answer():\n    return 42\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_answer.py").write_text(
        "import sys, os\nsys.path.insert(0, os.getcwd())\nfrom pkg.answer import answer\n\n\n"
        "def test_answer():\n    assert answer() == 42\n"
    )
    for name, text in (("break.yaml", BREAKING), ("spell.yaml", HARMLESS)):
        (tmp_path / name).write_text(text)
    (tmp_path / "elsewhere.yaml").write_text(NAMED_ELSEWHERE)
    return tmp_path


def test_a_recipe_that_breaks_a_test_is_refused(project: Path) -> None:
    """tests_pass runs the test profile on the changed tree; an introduced failure refuses."""
    before = snapshot_tree(project)

    report = run_recipe(str(project / "break.yaml"), project, apply=True)

    assert not report.ok
    assert ["POSTCONDITION_FAILED"] == [e.code.value for e in report.errors]
    [check] = report.checks
    assert "failed" == check.status.value
    assert "unit: 1 introduced failure(s)" in check.evidence
    assert "test_answer" in check.evidence
    assert before == snapshot_tree(project)
    assert {"base", "changed"} <= {e.side.value for e in report.evidence}


def test_a_harmless_recipe_is_verified_and_recorded(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both conditions pass by real runs; the runs are in the report and in `show`."""
    code = main(
        ["recipe", "run", str(project / "spell.yaml"), "-C", str(project), "--apply", "--json"]
    )

    data = json.loads(capsys.readouterr().out)
    assert 0 == code, data["errors"]
    assert "return 40 + 2" in (project / "pkg" / "answer.py").read_text()
    checks = {c["condition"]: c for c in data["checks"]}
    assert "verified by unit" in checks["tests_pass"]["evidence"]
    assert "verified by build" in checks["compiles"]["evidence"]
    assert {"unit", "build"} == {run["profile"] for run in data["verification"]}

    main(["show", data["attempt_id"], "-C", str(project)])
    shown = capsys.readouterr().out
    assert "verification" in shown
    assert "pass  unit [changed]" in shown
    assert "pass  build [changed]" in shown


def test_dry_run_verifies_too_and_writes_nothing(project: Path) -> None:
    """A dry run asked to verify is everything but the write: the profiles run, the tree
    stays as it was."""
    before = snapshot_tree(project)

    report = run_recipe(str(project / "break.yaml"), project, record=False, verify=True)

    assert ["POSTCONDITION_FAILED"] == [e.code.value for e in report.errors]
    assert before == snapshot_tree(project)


def test_a_profile_missing_here_is_an_error(project: Path) -> None:
    """A condition naming a profile this workspace lacks is `error`, and the run refused."""
    before = snapshot_tree(project)

    report = run_recipe(str(project / "elsewhere.yaml"), project, apply=True, record=False)

    [check] = report.checks
    assert "error" == check.status.value
    assert "unknown verification profile 'not-here'" in check.evidence
    assert "syntax" not in check.evidence
    assert ["POSTCONDITION_FAILED"] == [e.code.value for e in report.errors]
    assert "could not be established" in report.errors[0].message
    assert "tests_pass:skipped" == report.errors[0].rule
    assert "unknown verification profile 'not-here'" in (check.skipped or "")
    assert () == report.evidence
    assert before == snapshot_tree(project)


def test_a_profile_missing_here_shows_skipped_through_the_cli(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recipe run --verify` shows such a condition as skipped (never passed); exit 1."""
    args = ["recipe", "run", str(project / "elsewhere.yaml"), "--verify", "--trust"]
    code = main([*args, "-C", str(project)])
    text = capsys.readouterr().out
    code_json = main([*args, "-C", str(project), "--json"])
    data = json.loads(capsys.readouterr().out)

    assert (1, 1) == (code, code_json)
    assert "check    tests_pass: skipped (unknown verification profile 'not-here'" in text
    [check] = data["checks"]
    assert "error" == check["status"] and "not-here" in check["skipped"]


def test_without_profiles_the_conditions_are_errors(tmp_path: Path) -> None:
    """No profile of a deciding kind in the workspace: `error`, never a syntax check."""
    (tmp_path / "answer.py").write_text("def answer():\n    return 42\n")
    (tmp_path / "spell.yaml").write_text(HARMLESS.replace("tests_pass: unit", "tests_pass"))

    report = run_recipe(str(tmp_path / "spell.yaml"), tmp_path, record=False)

    assert "refused" == report.status.value
    assert {"tests_pass": "error", "compiles": "error"} == {
        c.condition: c.status.value for c in report.checks
    }
    assert all("syntax" not in c.evidence for c in report.checks)
    compiles = next(c for c in report.checks if c.condition == "compiles")
    assert "no build or type-check profile for python" in compiles.evidence
    assert "[verify.NAME]" in (compiles.hint or "")


def test_verdicts_of_runs_that_could_not_prove_anything() -> None:
    """A profile that could not run, start or finish is `error`; a failed run without a
    parsed failure is `failed` (its exit status is what broke)."""
    from patchsmith.codemod.checks import _verified
    from patchsmith.errors import FailureCode, PatchFailure
    from patchsmith.model.evidence import Evidence, RunSide
    from patchsmith.verify.profiles import ProfileKind
    from patchsmith.verify.report import ProfileOutcome, VerifyReport

    error = VerifyReport(errors=(PatchFailure(FailureCode.UNKNOWN_PROFILE, "gone"),))
    silent = ProfileOutcome("unit", ProfileKind.TEST, (), (), (), (), True, False)
    missing = Evidence("unit", RunSide.CHANGED, ("pytest",), None, 0.0, False, "", start_error="no")
    slow = Evidence("unit", RunSide.BASE, ("pytest",), None, 9.0, False, "", timed_out=True)
    unstarted = ProfileOutcome("unit", ProfileKind.TEST, (missing,), (), (), (), True, True)
    timed_out = ProfileOutcome("unit", ProfileKind.TEST, (slow,), (), (), (), True, True)

    could_not = _verified("tests_pass", ["unit"], error)
    broke = _verified("tests_pass", ["unit"], VerifyReport((silent,)))
    not_started = _verified("tests_pass", ["unit"], VerifyReport((unstarted,)))
    late = _verified("tests_pass", ["unit"], VerifyReport((timed_out,)))

    assert ("error", "profiles unit could not run: gone") == (
        could_not.status.value,
        could_not.evidence,
    )
    assert "failed" == broke.status.value
    assert "unit failed where the base passed" in broke.evidence
    assert ("error", "unit (changed) could not start: no") == (
        not_started.status.value,
        not_started.evidence,
    )
    assert ("error", "unit (base) timed out") == (late.status.value, late.evidence)
