"""A workspace whose policy file cannot be read (docs/decisions/0025).

Every change is refused INVALID_POLICY, with nothing written, except a change to that
file alone: it is judged by the default policy, whose `policy_files` guard still refuses
it when it would change the rules (fixing the TOML, or touching a table it names) unless
the caller allows policy edits.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply, write_file
from patchsmith.cli import main
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyReport
from patchsmith.policy import Policy, load_policy

# `version = 1.0.0` is not TOML: the file cannot be read, and names no patchsmith table.
BROKEN = (
    b'[project]\nname = "demo"\nversion = 1.0.0\n\n'
    b'[tool.mypy]\nstrict = true\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
)
APP = b"def f():\n    return 1\n"

KEEP_BROKEN = (
    "--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -5,3 +5,4 @@\n"
    " [tool.mypy]\n strict = true\n+warn_unused_ignores = true\n \n"
)
FIX_TOML = (
    "--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1,3 +1,3 @@\n"
    ' [project]\n name = "demo"\n-version = 1.0.0\n+version = "1.0.0"\n'
)
EDIT_APP = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def codes(report: ApplyReport) -> list[FailureCode]:
    return [f.code for f in report.errors]


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {"pyproject.toml": BROKEN, "app.py": APP})


class TestApply:
    def test_other_files_stay_refused(self, root: Path) -> None:
        """A change to any other file is INVALID_POLICY, as before; nothing is written."""
        before = snapshot_tree(root)

        report = apply(EDIT_APP, root, record=False)

        assert [FailureCode.INVALID_POLICY] == codes(report)
        assert "pyproject.toml" == report.errors[0].file
        assert before == snapshot_tree(root)

    def test_the_policy_file_alone_may_stay_broken(self, root: Path) -> None:
        """An edit of the unreadable policy file alone that changes no rule goes through."""
        report = apply(KEEP_BROKEN, root, record=False)

        assert report.ok, report.errors
        assert b"warn_unused_ignores = true\n" in (root / "pyproject.toml").read_bytes()
        assert not isinstance(load_policy(root), Policy)  # still unreadable: still no rules

    def test_policy_file_with_another_file_is_refused(self, root: Path) -> None:
        """The policy file and another file together: the other one has no rules to be
        judged by, so the whole change is INVALID_POLICY."""
        before = snapshot_tree(root)

        report = apply(KEEP_BROKEN + EDIT_APP, root, record=False)

        assert [FailureCode.INVALID_POLICY] == codes(report)
        assert before == snapshot_tree(root)

    def test_fixing_the_toml_needs_the_opt_in(self, root: Path) -> None:
        """Making the policy readable changes the rules in force: PROTECTED_PATH, unless
        the caller allows policy edits; then the workspace has a policy again."""
        before = snapshot_tree(root)

        refused = apply(FIX_TOML, root, record=False)

        assert [FailureCode.PROTECTED_PATH] == codes(refused)
        assert before == snapshot_tree(root)

        allowed = apply(FIX_TOML, root, record=False, allow_policy_edit=True)

        assert allowed.ok, allowed.errors
        assert isinstance(load_policy(root), Policy)

    def test_dry_run_writes_nothing(self, root: Path) -> None:
        """`check` reports the same verdict and writes nothing."""
        before = snapshot_tree(root)

        report = apply(KEEP_BROKEN, root, record=False, check=True)

        assert report.ok
        assert before == snapshot_tree(root)

    def test_the_default_policy_still_guards(self, root: Path) -> None:
        """The change is judged by the defaults: their guards (secrets...) still refuse."""
        key = "AKIA" + "QWERTYUIOPASDFGH"
        patch = KEEP_BROKEN.replace("warn_unused_ignores = true", f'token = "{key}"')
        before = snapshot_tree(root)

        report = apply(patch, root, record=False)

        assert [FailureCode.SECRET_ADDED] == codes(report)
        assert before == snapshot_tree(root)

    def test_a_located_failure_is_reported(self, root: Path) -> None:
        """An edit of the policy file that does not locate says so (its own code)."""
        report = apply(KEEP_BROKEN.replace(" strict = true", " strict = false"), root, record=False)

        assert FailureCode.INVALID_POLICY not in codes(report)
        assert not report.ok

    def test_a_table_in_the_broken_file_is_protected(self, tmp_path: Path) -> None:
        """A broken file that names a patchsmith table: editing it is a policy edit."""
        text = BROKEN + b'\n[tool.patchsmith.policy]\nforbidden = ["ci/**"]\n'
        root = make_tree(tmp_path / "t", {"pyproject.toml": text})
        patch = (
            "--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -11,2 +11,2 @@\n"
            ' [tool.patchsmith.policy]\n-forbidden = ["ci/**"]\n+forbidden = []\n'
        )
        before = snapshot_tree(root)

        report = apply(patch, root, record=False)

        assert [FailureCode.PROTECTED_PATH] == codes(report)
        assert before == snapshot_tree(root)

    def test_unreadable_patchsmith_toml_needs_the_opt_in(self, tmp_path: Path) -> None:
        """patchsmith.toml is the policy whatever it holds: any edit needs the opt-in."""
        root = make_tree(tmp_path / "p", {"patchsmith.toml": b"[policy\n", "app.py": APP})
        patch = "--- a/patchsmith.toml\n+++ b/patchsmith.toml\n@@ -1 +1 @@\n-[policy\n+[policy]\n"
        before = snapshot_tree(root)

        assert [FailureCode.PROTECTED_PATH] == codes(apply(patch, root, record=False))
        assert before == snapshot_tree(root)
        assert apply(patch, root, record=False, allow_policy_edit=True).ok
        assert apply(EDIT_APP, root, record=False).ok

    def test_a_given_policy_is_used_as_is(self, root: Path) -> None:
        """A caller's own policy replaces the workspace's: nothing is unreadable then."""
        assert apply(EDIT_APP, root, record=False, policy=Policy()).ok


class TestWriteFile:
    def test_the_policy_file_alone_may_be_written(self, root: Path) -> None:
        """A hash-checked write of the unreadable policy file that changes no rule passes."""
        content = BROKEN.decode() + '\n[tool.isort]\nprofile = "black"\n'

        report = write_file(root, "pyproject.toml", content, sha(BROKEN), "note", record=False)

        assert report.ok, report.errors
        assert content.encode() == (root / "pyproject.toml").read_bytes()

    def test_another_file_is_refused(self, root: Path) -> None:
        """Writing any other file is INVALID_POLICY, with nothing written."""
        before = snapshot_tree(root)

        report = write_file(root, "app.py", "x = 1\n", sha(APP), "edit", record=False)

        assert [FailureCode.INVALID_POLICY] == codes(report)
        assert before == snapshot_tree(root)


class TestCommandLine:
    def test_allow_policy_edit_reaches_an_unreadable_policy(self, root: Path) -> None:
        """`--allow-policy-edit` lets a fix of the unreadable file through (exit 0)."""
        patch = root.parent / "fix.diff"
        patch.write_text(FIX_TOML, encoding="utf-8")

        refused = main(["apply", str(patch), "-C", str(root), "--no-record"])
        allowed = main(["apply", str(patch), "-C", str(root), "--allow-policy-edit", "--no-record"])

        assert (1, 0) == (refused, allowed)
        assert isinstance(load_policy(root), Policy)
