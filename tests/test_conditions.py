"""Tests for precondition and postcondition checks."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from patchsmith.attempt.conditions import (
    ConditionStatus,
    check_postconditions,
    check_preconditions,
    condition_failures,
)
from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action
from patchsmith.guards import GuardContext
from patchsmith.model.proposal import PatchProposal, PostconditionType, PreconditionType
from patchsmith.policy import Policy
from patchsmith.runtime.change import FileChange

AWS = "AKIA" + "Q3EGRT5X2ZK7WPLM"


def _proposal(**fields: Any) -> PatchProposal:
    base: dict[str, Any] = {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "o",
        "operations": [{"type": "patch", "text": "x"}],
    }
    return PatchProposal.model_validate(base | fields)


def _pre(root: Path, *conditions: dict[str, Any], policy: Policy | None = None) -> list[Any]:
    return check_preconditions(_proposal(preconditions=list(conditions)), root, policy=policy)


def _change(path: str, old: str | None, new: str | bytes) -> FileChange:
    new_bytes = new if isinstance(new, bytes) else new.encode()
    return FileChange(
        path=path,
        action=Action.UPDATE if old is not None else Action.CREATE,
        old_path=path if old is not None else None,
        old_bytes=old.encode() if old is not None else None,
        new_bytes=new_bytes,
        old_text=old,
        new_text=new if isinstance(new, str) else None,
    )


class TestPreconditions:
    def test_file_hash_match(self, tmp_path: Path) -> None:
        """A matching sha256 passes; a stale one fails with both hashes as evidence."""
        (tmp_path / "a.py").write_bytes(b"x = 1\n")
        digest = hashlib.sha256(b"x = 1\n").hexdigest()

        ok, stale = _pre(
            tmp_path,
            {"type": "FILE_HASH_MATCH", "path": "a.py", "value": digest.upper()},
            {"type": "FILE_HASH_MATCH", "path": "a.py", "value": "0" * 64},
        )

        assert ConditionStatus.PASSED == ok.status
        assert ConditionStatus.FAILED == stale.status
        assert digest in stale.evidence and "0" * 64 in stale.evidence
        assert PreconditionType.FILE_HASH_MATCH == stale.type

    def test_file_hash_of_missing_file_fails(self, tmp_path: Path) -> None:
        """Hashing a missing file fails with the reason."""
        (result,) = _pre(tmp_path, {"type": "FILE_HASH_MATCH", "path": "no.py", "value": "00"})

        assert ConditionStatus.FAILED == result.status
        assert "cannot read" in result.evidence

    def test_file_exists(self, tmp_path: Path) -> None:
        """FILE_EXISTS passes for a file and fails for a missing one or a directory."""
        (tmp_path / "a").write_text("x", encoding="utf-8")
        (tmp_path / "d").mkdir()

        results = _pre(
            tmp_path,
            {"type": "FILE_EXISTS", "path": "a"},
            {"type": "FILE_EXISTS", "path": "b"},
            {"type": "FILE_EXISTS", "path": "d"},
        )

        assert ["passed", "failed", "failed"] == [r.status.value for r in results]

    @pytest.mark.parametrize("path", ["../outside", "/etc/passwd", "a/../../x", "..\\x", "."])
    def test_paths_outside_workspace_fail(self, tmp_path: Path, path: str) -> None:
        """Traversal, absolute and root paths fail every path precondition."""
        results = _pre(
            tmp_path,
            {"type": "FILE_EXISTS", "path": path},
            {"type": "PATH_ALLOWED", "path": path},
        )

        assert {ConditionStatus.FAILED} == {r.status for r in results}
        assert "not a path inside the workspace" in results[0].evidence

    def test_symlink_escape_fails(self, tmp_path: Path) -> None:
        """A symlink leading out of the workspace is outside it."""
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "f").write_text("x", encoding="utf-8")
        root = tmp_path / "root"
        root.mkdir()
        (root / "link").symlink_to(outside)

        (result,) = _pre(root, {"type": "FILE_EXISTS", "path": "link/f"})

        assert ConditionStatus.FAILED == result.status

    def test_path_allowed(self, tmp_path: Path) -> None:
        """PATH_ALLOWED consults scope and forbidden paths (policy and proposal)."""
        policy = Policy(include=("src/**",))
        proposal = _proposal(
            forbidden_files=["src/secret.py"],
            preconditions=[
                {"type": "PATH_ALLOWED", "path": "src/a.py"},
                {"type": "PATH_ALLOWED", "path": "docs/a.md"},
                {"type": "PATH_ALLOWED", "path": "src/secret.py"},
            ],
        )

        results = check_preconditions(proposal, tmp_path, policy=policy)

        assert ["passed", "failed", "failed"] == [r.status.value for r in results]
        assert "outside the write scope" in results[1].evidence
        assert "forbidden" in results[2].evidence

    def test_base_commit_outside_repository_fails_clearly(self, tmp_path: Path) -> None:
        """BASE_COMMIT_MATCH in a directory that is not a repository says so."""
        (result,) = _pre(tmp_path, {"type": "BASE_COMMIT_MATCH", "value": "abcdef1"})

        assert ConditionStatus.FAILED == result.status
        assert "not a git repository" in result.evidence or "git is not installed" in (
            result.evidence
        )

    @pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
    def test_base_commit_in_repository(self, tmp_path: Path) -> None:
        """BASE_COMMIT_MATCH compares HEAD (full or abbreviated)."""
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        (tmp_path / "f").write_text("x", encoding="utf-8")
        subprocess.run(["git", "add", "f"], cwd=tmp_path, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "c"], cwd=tmp_path, check=True)
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout.strip()

        full, short, other = _pre(
            tmp_path,
            {"type": "BASE_COMMIT_MATCH", "value": head},
            {"type": "BASE_COMMIT_MATCH", "value": head[:8].upper()},
            {"type": "BASE_COMMIT_MATCH", "value": "0000000"},
        )

        assert ["passed", "passed", "failed"] == [r.status.value for r in (full, short, other)]
        assert head in other.evidence

    def test_failures_from_results(self, tmp_path: Path) -> None:
        """Failed preconditions become PRECONDITION_FAILED naming the condition and file."""
        results = _pre(
            tmp_path,
            {"type": "FILE_EXISTS", "path": "missing.py"},
            {"type": "PATH_ALLOWED", "path": "ok.py"},
        )

        failures = condition_failures(results)

        assert [FailureCode.PRECONDITION_FAILED] == [f.code for f in failures]
        assert "FILE_EXISTS" == failures[0].rule
        assert "missing.py" == failures[0].file


class TestPostconditions:
    def _check(self, changes: list[FileChange], *posts: dict[str, Any], **ctx: Any) -> list[Any]:
        proposal = _proposal(expected_postconditions=list(posts))
        return check_postconditions(proposal, changes, GuardContext(policy=Policy(), **ctx))

    def test_diff_budgets(self) -> None:
        """DIFF_MAX_FILES and DIFF_MAX_LINES compare counts and give them as evidence."""
        changes = [_change("a", "1\n", "2\n"), _change("b", None, "x\ny\n")]

        results = self._check(
            changes,
            {"type": "DIFF_MAX_FILES", "value": 2},
            {"type": "DIFF_MAX_FILES", "value": 1},
            {"type": "DIFF_MAX_LINES", "value": 4},
            {"type": "DIFF_MAX_LINES", "value": 3},
        )

        assert ["passed", "failed", "passed", "failed"] == [r.status.value for r in results]
        assert "4 lines added or removed (max 3)" == results[3].evidence

    def test_guard_backed_postconditions(self) -> None:
        """Forbidden paths, secrets and syntax use the matching guards."""
        changes = [
            _change("secrets/k.py", None, f'k = "{AWS}"\n'),
            _change("m.py", "x = 1\n", "x = (\n"),
        ]

        results = self._check(
            changes,
            {"type": "NO_FORBIDDEN_PATH_CHANGED"},
            {"type": "NO_SECRET_ADDED"},
            {"type": "SYNTAX_VALID"},
            forbidden_files=("secrets/",),
        )

        assert ["failed"] * 3 == [r.status.value for r in results]
        assert "secrets/k.py" in results[0].evidence

    def test_guard_backed_postconditions_pass(self) -> None:
        """The same postconditions pass on a clean change."""
        results = self._check(
            [_change("m.py", "x = 1\n", "x = 2\n")],
            {"type": "NO_FORBIDDEN_PATH_CHANGED"},
            {"type": "NO_SECRET_ADDED"},
            {"type": "SYNTAX_VALID"},
            {"type": "NO_BINARY_CHANGED"},
        )

        assert ["passed"] * 4 == [r.status.value for r in results]

    def test_binary_change(self) -> None:
        """Any binary side fails NO_BINARY_CHANGED, naming the file."""
        (result,) = self._check(
            [_change("x.bin", None, b"\x00\x01")], {"type": "NO_BINARY_CHANGED"}
        )

        assert ConditionStatus.FAILED == result.status
        assert "x.bin" in result.evidence

    def test_verifier_conditions_not_checked(self) -> None:
        """COMPILES and TESTS_PASS are left to the verifier."""
        results = self._check([], {"type": "COMPILES"}, {"type": "TESTS_PASS"})

        assert [PostconditionType.COMPILES, PostconditionType.TESTS_PASS] == [
            r.type for r in results
        ]
        assert {ConditionStatus.NOT_CHECKED} == {r.status for r in results}
        assert [] == condition_failures(results)

    def test_failures_and_json(self) -> None:
        """Failed postconditions become POSTCONDITION_FAILED; results serialise to JSON."""
        results = self._check([_change("a", None, "x\n")], {"type": "DIFF_MAX_FILES", "value": 0})

        (failure,) = condition_failures(results)

        assert FailureCode.POSTCONDITION_FAILED == failure.code
        assert {"type": "DIFF_MAX_FILES", "status": "failed"}.items() <= results[
            0
        ].to_json().items()
