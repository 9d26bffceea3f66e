"""`patchsmith.freeze`: a run's net change as one diff, and a commit on a new branch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

import patchsmith
from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.model.report import ApplyStatus

from .gitrepo import checkout_state, git, make_repo

APP = b"def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"
README = b"# demo\n"


def proposal(run: str, number: int, patch: str, objective: str = "make mean safe") -> str:
    return json.dumps(
        {
            "proposal_id": f"{run}-p{number}",
            "run_id": run,
            "attempt_no": number,
            "strategy": "UNIFIED_DIFF",
            "objective": objective,
            "operations": [{"type": "patch", "format": "udiff", "text": patch}],
        }
    )


FIRST = (
    "--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,4 @@\n def mean(xs):\n"
    "+    if not xs:\n+        return 0.0\n     return total(xs) / len(xs)\n"
)
SECOND = "--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # demo\n+mean() of [] is 0.0\n"
THIRD = (
    "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-def total(xs):\n"
    "+def total(xs: list[float]) -> float:\n"
    "     return sum(xs)\n"
)
NEW_FILE = "--- /dev/null\n+++ b/tests/test_app.py\n@@ -0,0 +1,2 @@\n+def test_mean():\n+    pass\n"


def run_attempts(root: Path, run: str, *patches: str) -> None:
    for number, patch in enumerate(patches, 1):
        report = patchsmith.propose(proposal(run, number, patch), root)
        assert ApplyStatus.APPLIED == report.status, report.errors


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": APP, "README.md": README})


class TestFreeze:
    def test_composes_the_runs_attempts(self, repo: Path, tmp_path: Path) -> None:
        run_attempts(repo, "r1", FIRST, SECOND, THIRD, NEW_FILE)
        out = tmp_path / "r1.diff"

        frozen = patchsmith.freeze("r1", repo, out=out, commit=False)

        assert ("README.md", "app.py", "tests/test_app.py") == frozen.files
        assert 4 == len(frozen.attempts)
        assert frozen.diff_bytes == out.read_bytes()
        assert frozen.branch is None
        assert 1 == repr(frozen).count("+++ b/app.py")  # the diff shows once, not as bytes too
        # The one diff takes a clean copy of the base to exactly the run's result.
        clone = tmp_path / "clone"
        git(tmp_path, "clone", "-q", str(repo), str(clone))
        git(clone, "apply", str(out))
        for name in frozen.files:
            assert (repo / name).read_bytes() == (clone / name).read_bytes()

    def test_commits_on_a_new_branch_and_leaves_the_checkout_alone(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST, SECOND, NEW_FILE)
        (repo / "scratch.txt").write_bytes(b"untracked\n")
        git(repo, "add", "README.md")  # something staged in the user's index
        before = checkout_state(repo)

        frozen = patchsmith.freeze("r1", repo)

        assert before == checkout_state(repo)
        assert "patchsmith/r1" == frozen.branch
        assert frozen.commit == git(repo, "rev-parse", "patchsmith/r1").strip()
        assert before.head == git(repo, "rev-parse", "patchsmith/r1^").strip()
        changed = git(repo, "diff", "--name-only", "main", "patchsmith/r1").split()
        assert ["README.md", "app.py", "tests/test_app.py"] == changed
        for name in changed:
            assert (repo / name).read_bytes() == git(repo, "show", f"patchsmith/r1:{name}").encode()
        assert "make mean safe" in git(repo, "log", "-1", "--format=%B", "patchsmith/r1")

    def test_named_branch(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST)

        frozen = patchsmith.freeze("r1", repo, branch="feature/safe-mean")

        assert "feature/safe-mean" == frozen.branch
        assert "refs/heads/main" == git(repo, "symbolic-ref", "HEAD").strip()

    def test_workspace_in_a_subdirectory(self, tmp_path: Path) -> None:
        repo = make_repo(tmp_path / "repo", {"pkg/app.py": APP, "pkg/README.md": README})
        run_attempts(repo / "pkg", "r1", FIRST)

        frozen = patchsmith.freeze("r1", repo / "pkg")

        assert ["pkg/app.py"] == git(
            repo, "diff", "--name-only", "main", frozen.branch or ""
        ).split()

    def test_outside_git_writes_the_diff_only(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "plain", {"app.py": APP, "README.md": README})
        run_attempts(root, "r1", FIRST)

        frozen = patchsmith.freeze("r1", root)

        assert frozen.branch is None and frozen.commit is None
        assert "+    if not xs:" in frozen.diff

    def test_a_revert_inside_the_run_cancels_out(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST, SECOND)
        with_readme = patchsmith.freeze("r1", repo, commit=False)
        first = with_readme.attempts[0]
        assert patchsmith.revert(first, repo).ok

        frozen = patchsmith.freeze("r1", repo, commit=False)

        assert ("README.md",) == frozen.files

    def test_to_json(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST)

        data = patchsmith.freeze("r1", repo, commit=False).to_json()

        assert "frozen" == data["status"]
        assert ["app.py"] == data["files"]


class TestRefusals:
    def refusal(self, run: str, root: Path, **options: object) -> PatchRefused:
        with pytest.raises(PatchRefused) as caught:
            patchsmith.freeze(run, root, **options)  # type: ignore[arg-type]
        return caught.value

    def test_drift_names_each_file(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST, SECOND)
        (repo / "README.md").write_bytes(b"# changed by hand\n")
        before = checkout_state(repo)

        refusal = self.refusal("r1", repo)

        assert [(FailureCode.STALE_FILE, "README.md")] == [
            (f.code, f.file) for f in refusal.failures
        ]
        assert before == checkout_state(repo)
        assert "patchsmith/r1" not in git(repo, "branch", "--list")

    def test_an_edit_between_the_runs_attempts(self, repo: Path) -> None:
        """The run touches a file, something else edits it, the run touches it again."""
        run_attempts(repo, "r1", SECOND)
        outside = (
            "--- a/README.md\n+++ b/README.md\n@@ -2 +2,2 @@\n mean() of [] is 0.0\n+outside\n"
        )
        assert patchsmith.apply(outside, repo).ok
        again = "--- a/README.md\n+++ b/README.md\n@@ -3 +3,2 @@\n outside\n+again\n"
        report = patchsmith.propose(proposal("r1", 2, again), repo)
        assert report.ok, report.errors

        refusal = self.refusal("r1", repo)

        assert FailureCode.STALE_FILE == refusal.failures[0].code
        assert "between" in refusal.failures[0].message

    def test_no_applied_change(self, repo: Path) -> None:
        report = patchsmith.propose(proposal("r1", 1, FIRST.replace("def mean", "def nope")), repo)
        assert ApplyStatus.REFUSED == report.status

        assert FailureCode.NO_CHANGE == self.refusal("r1", repo).failures[0].code

    def test_unknown_run(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST)

        assert FailureCode.RECORD_NOT_FOUND == self.refusal("r2", repo).failures[0].code

    def test_nothing_recorded(self, repo: Path) -> None:
        assert FailureCode.RECORD_NOT_FOUND == self.refusal("r1", repo).failures[0].code

    def test_not_a_directory(self, tmp_path: Path) -> None:
        assert FailureCode.FILE_NOT_FOUND == self.refusal("r1", tmp_path / "no").failures[0].code

    def test_existing_branch_is_never_moved(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST)
        git(repo, "branch", "patchsmith/r1")
        tip = git(repo, "rev-parse", "patchsmith/r1")

        refusal = self.refusal("r1", repo)

        assert FailureCode.PRECONDITION_FAILED == refusal.failures[0].code
        assert tip == git(repo, "rev-parse", "patchsmith/r1")

    def test_invalid_branch_name(self, repo: Path) -> None:
        run_attempts(repo, "r1", FIRST)

        refusal = self.refusal("r1", repo, branch="bad..name")

        assert FailureCode.PRECONDITION_FAILED == refusal.failures[0].code

    def test_branch_outside_git(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "plain", {"app.py": APP})
        run_attempts(root, "r1", FIRST)

        refusal = self.refusal("r1", root, branch="x")

        assert FailureCode.PRECONDITION_FAILED == refusal.failures[0].code

    def test_base_differs_from_head(self, repo: Path) -> None:
        (repo / "README.md").write_bytes(b"# demo, edited\n")
        run_attempts(repo, "r1", SECOND.replace(" # demo\n", " # demo, edited\n"))
        before = checkout_state(repo)

        refusal = self.refusal("r1", repo)

        assert FailureCode.PRECONDITION_FAILED == refusal.failures[0].code
        assert "does not apply to HEAD" in refusal.failures[0].message
        assert before == checkout_state(repo)
        assert "" == git(repo, "branch", "--list", "patchsmith/*")

    def test_unborn_head(self, tmp_path: Path) -> None:
        root = tmp_path / "empty"
        root.mkdir()
        git(root, "init", "-q")
        make_tree(root, {"app.py": APP})
        run_attempts(root, "r1", FIRST)

        assert FailureCode.PRECONDITION_FAILED == self.refusal("r1", root).failures[0].code

    def test_unwritable_out(self, repo: Path, tmp_path: Path) -> None:
        run_attempts(repo, "r1", FIRST)

        refusal = self.refusal("r1", repo, out=tmp_path / "missing" / "x.diff", commit=False)

        assert FailureCode.IO_ERROR == refusal.failures[0].code


def test_git_is_available() -> None:
    assert 0 == subprocess.run(["git", "--version"], capture_output=True, check=False).returncode
