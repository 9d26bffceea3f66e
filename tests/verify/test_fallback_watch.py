"""Without a sandbox, a verification tool's write into the real workspace is caught."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.sandboxing import take_bwrap_away
from tests.verify.conftest import CALC, git_commit_all
from tests.workspace_snapshot import make_tree

import patchsmith.cli
from patchsmith import propose
from patchsmith.errors import FailureCode
from patchsmith.model.evidence import Verdict
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.watch import changed, fingerprint
from patchsmith.verify import verify_changes

PY = json.dumps(sys.executable)


def _profile(code: str) -> bytes:
    return f'[verify.tests]\nargv = [{PY}, "-c", {json.dumps(code)}]\nkind = "test"\n'.encode()


@pytest.fixture(name="project")
def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    take_bwrap_away(monkeypatch)
    root = make_tree(
        tmp_path / "proj",
        {"pkg/__init__.py": b"", "pkg/calc.py": CALC, ".git/hooks/README": b"hooks\n"},
    )
    (root / ".git/config").write_text("[core]\n")
    return root


def _writes_into(project: Path, relative: str) -> None:
    target = json.dumps(str(project.resolve() / relative))
    (project / "patchsmith.toml").write_bytes(
        _profile(f"import pathlib; pathlib.Path({target}).write_text('planted')")
    )


@pytest.mark.parametrize("relative", ["pkg/planted.py", ".git/hooks/pre-commit", "pkg/calc.py"])
def test_a_write_by_absolute_path_makes_the_run_an_error(project: Path, relative: str) -> None:
    _writes_into(project, relative)

    report = verify_changes(project, [], ["tests"], cache=False)

    assert not report.passed
    [outcome] = report.outcomes
    assert Verdict.ERROR is outcome.verdict
    assert {"none"} == {e.sandbox for e in report.evidence}
    erred = [e for e in report.evidence if e.verdict is Verdict.ERROR]
    assert erred and all("real workspace" in (e.reason or "") for e in erred)
    assert relative in (erred[0].reason or "")


def test_a_tool_writing_only_its_copy_still_passes(project: Path) -> None:
    """The other side: writing relative to the copy is what a tool may do."""
    (project / "patchsmith.toml").write_bytes(
        _profile("import pathlib; pathlib.Path('pkg/cache.txt').write_text('x')")
    )

    report = verify_changes(project, [], ["tests"], cache=False)

    assert report.passed, report.to_json(output=True)
    assert not (project / "pkg/cache.txt").exists()


def test_the_cli_verify_fails_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`patchsmith verify` against HEAD: the base run, on an export, wrote into the real tree."""
    take_bwrap_away(monkeypatch)
    project = make_tree(tmp_path / "cli", {"pkg/__init__.py": b"", "pkg/calc.py": CALC})
    _writes_into(project, "pkg/planted.py")
    git_commit_all(project)

    code = patchsmith.cli.main(["verify", "tests", "-C", str(project), "--json"])
    out = capsys.readouterr().out

    assert 0 != code
    assert "changed the real workspace" in out
    assert "pkg/planted.py" in out


def test_the_cli_verify_changed_run_writes_only_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`patchsmith verify` runs the changed side in a private copy: a tool's own writes
    (caches, reports) pass and land there; the workspace is untouched."""
    take_bwrap_away(monkeypatch)
    project = make_tree(tmp_path / "own", {"pkg/__init__.py": b""})
    (project / "patchsmith.toml").write_bytes(
        _profile("import pathlib; pathlib.Path('cache.txt').write_text('x')")
    )

    code = patchsmith.cli.main(["verify", "tests", "-C", str(project), "--json"])
    out = capsys.readouterr().out

    assert 0 == code, out
    assert not (project / "cache.txt").exists()


def test_the_cli_verify_in_place_writes_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--in-place` is the opt-out: the tool runs in the workspace and its writes stay."""
    take_bwrap_away(monkeypatch)
    project = make_tree(tmp_path / "own", {"pkg/__init__.py": b""})
    (project / "patchsmith.toml").write_bytes(
        _profile("import pathlib; pathlib.Path('cache.txt').write_text('x')")
    )

    code = patchsmith.cli.main(["verify", "tests", "-C", str(project), "--json", "--in-place"])
    out = capsys.readouterr().out

    assert 0 == code, out
    assert "x" == (project / "cache.txt").read_text()


def test_the_cli_verify_sees_a_write_past_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without bwrap, a changed-side run writing into the real tree by absolute path is an
    `error` with the reason (the base run is skipped: only the changed side runs)."""
    take_bwrap_away(monkeypatch)
    project = make_tree(tmp_path / "abs", {"pkg/__init__.py": b"", "pkg/calc.py": CALC})
    _writes_into(project, "pkg/planted.py")

    code = patchsmith.cli.main(["verify", "tests", "-C", str(project), "--json", "--no-base"])
    out = capsys.readouterr().out

    assert 0 != code
    assert "changed the real workspace" in out


def test_a_proposal_is_refused(project: Path) -> None:
    _writes_into(project, "pkg/planted.py")
    proposal = {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "o",
        "operations": [
            {
                "type": "direct_write",
                "path": "pkg/new.py",
                "content": "x = 1\n",
                "expected_sha256": None,
                "allow_create": True,
            }
        ],
        "verification_plan": {"profile": "tests"},
    }

    report = propose(proposal, project, record=False, verify=True)

    assert ApplyStatus.REFUSED == report.status
    assert FailureCode.VERIFICATION_ERROR in [e.code for e in report.errors]
    assert not (project / "pkg/new.py").exists()


def test_fingerprint_sees_hooks_config_and_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "w", {"a.py": b"", ".git/hooks/x": b"", ".patchsmith/db": b""})
    before = fingerprint(root)

    (root / ".git/hooks/pre-push").write_text("x")
    (root / ".patchsmith/db").write_text("changed")  # our own records: not watched
    (root / "b.py").write_text("")

    assert [".git/hooks", ".git/hooks/pre-push", "b.py"] == changed(before, fingerprint(root))
