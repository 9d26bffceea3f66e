"""A patch cannot loosen the policy it is checked against (issue 7, finding 5).

Through `apply`, `propose` and `write_file` and the CLI: editing `patchsmith.toml`,
or the `[tool.patchsmith]` table of `pyproject.toml`, is PROTECTED_PATH unless the
caller allows it explicitly; `.patchsmith/` is never a target at all.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith import apply, propose, write_file
from patchsmith.cli import main
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyReport, ApplyStatus

POLICY = b'[policy]\nforbidden = ["ci/**"]\n'
PYPROJECT = (
    b'[project]\nname = "demo"\nversion = "1.0"\n\n'
    b'[tool.patchsmith.policy]\nforbidden = ["ci/**"]\n'
)
CI = b"deploy: prod\n"

LOOSEN = (
    "--- a/patchsmith.toml\n+++ b/patchsmith.toml\n@@ -1,2 +1,2 @@\n"
    ' [policy]\n-forbidden = ["ci/**"]\n+forbidden = []\n'
)
LOOSEN_PYPROJECT = (
    "--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -5,2 +5,2 @@\n"
    ' [tool.patchsmith.policy]\n-forbidden = ["ci/**"]\n+forbidden = []\n'
)
BUMP_PYPROJECT = (
    "--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -1,3 +1,3 @@\n"
    ' [project]\n name = "demo"\n-version = "1.0"\n+version = "1.1"\n'
)
EDIT_CI = (
    "--- a/ci/deploy.yml\n+++ b/ci/deploy.yml\n@@ -1 +1 @@\n-deploy: prod\n+deploy: anywhere\n"
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def codes(report: ApplyReport) -> list[FailureCode]:
    return [f.code for f in report.errors]


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    """A workspace whose patchsmith.toml forbids ci/**."""
    return make_tree(tmp_path / "ws", {"patchsmith.toml": POLICY, "ci/deploy.yml": CI})


@pytest.fixture(name="pyroot")
def _pyroot(tmp_path: Path) -> Path:
    """A workspace whose policy lives in pyproject.toml."""
    return make_tree(tmp_path / "py", {"pyproject.toml": PYPROJECT, "ci/deploy.yml": CI})


def _proposal(operation: dict[str, object], pid: str = "p-1") -> dict[str, object]:
    return {
        "proposal_id": pid,
        "run_id": "r-1",
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "loosen the policy",
        "operations": [operation],
    }


class TestCannotLoosen:
    def test_apply_then_forbidden_edit_stays_refused(self, root: Path) -> None:
        """The two-step attack: empty `forbidden`, then edit ci/. Both refused, nothing written."""
        before = snapshot_tree(root)

        first = apply(LOOSEN, root)
        second = apply(EDIT_CI, root)

        assert [FailureCode.PROTECTED_PATH] == codes(first)
        assert [FailureCode.FORBIDDEN_PATH] == codes(second)
        assert before == snapshot_tree(root)

    def test_pyproject_table_through_apply(self, pyroot: Path) -> None:
        """The same attack on [tool.patchsmith.policy] in pyproject.toml."""
        before = snapshot_tree(pyroot)

        assert [FailureCode.PROTECTED_PATH] == codes(apply(LOOSEN_PYPROJECT, pyroot))
        assert [FailureCode.FORBIDDEN_PATH] == codes(apply(EDIT_CI, pyroot))
        assert before == snapshot_tree(pyroot)

    def test_pyproject_other_tables_stay_editable(self, pyroot: Path) -> None:
        """The other side of the rule: the rest of pyproject.toml is an ordinary file."""
        report = apply(BUMP_PYPROJECT, pyroot)

        assert ApplyStatus.APPLIED == report.status
        assert b'version = "1.1"' in (pyroot / "pyproject.toml").read_bytes()

    def test_propose_patch_and_direct_write(self, root: Path) -> None:
        """Neither a proposal's patch nor its direct_write may rewrite the policy."""
        before = snapshot_tree(root)
        patch = {"type": "patch", "format": "udiff", "text": LOOSEN}
        write = {
            "type": "direct_write",
            "path": "patchsmith.toml",
            "content": "[policy]\n",
            "expected_sha256": sha(POLICY),
        }

        by_patch = propose(_proposal(patch, "p-1"), root)
        by_write = propose(_proposal(write, "p-2"), root)

        assert [FailureCode.PROTECTED_PATH] == codes(by_patch)
        assert [FailureCode.PROTECTED_PATH] == codes(by_write)
        assert before == snapshot_tree(root)

    def test_write_file(self, root: Path) -> None:
        """write_file with the right hash is still refused, and deleting the file too."""
        before = snapshot_tree(root)

        report = write_file(root, "patchsmith.toml", "[policy]\n", sha(POLICY), "loosen")
        creating = write_file(root, "sub/patchsmith.toml", "[policy]\n", None, "x", True)

        assert [FailureCode.PROTECTED_PATH] == codes(report)
        assert [FailureCode.PROTECTED_PATH] == codes(creating)
        assert before == snapshot_tree(root)

    def test_state_directory_is_never_a_target(self, root: Path) -> None:
        """.patchsmith/ is refused by path for every entry point, whatever the option says."""
        add = "--- /dev/null\n+++ b/.patchsmith/x\n@@ -0,0 +1 @@\n+x\n"
        write = {"type": "direct_write", "path": ".patchsmith/x", "content": "x\n"}
        write["allow_create"] = True

        reports = [
            apply(add, root, allow_policy_edit=True),
            propose(_proposal(write), root, allow_policy_edit=True),
            write_file(root, ".patchsmith/x", "x\n", None, "x", True, allow_policy_edit=True),
        ]

        assert [[FailureCode.PATH_OUTSIDE_WORKSPACE]] * 3 == [codes(r) for r in reports]
        assert not (root / ".patchsmith" / "x").exists()


class TestAllowedOnPurpose:
    def test_apply_with_allow_policy_edit(self, root: Path) -> None:
        """The caller's explicit option lets the owner change the policy through patchsmith."""
        report = apply(LOOSEN, root, allow_policy_edit=True)

        assert ApplyStatus.APPLIED == report.status
        assert b"forbidden = []" in (root / "patchsmith.toml").read_bytes()
        assert ApplyStatus.APPLIED == apply(EDIT_CI, root).status

    def test_propose_and_write_file_with_the_option(self, root: Path, pyroot: Path) -> None:
        patch = {"type": "patch", "format": "udiff", "text": LOOSEN_PYPROJECT}

        proposed = propose(_proposal(patch), pyroot, allow_policy_edit=True)
        written = write_file(
            root, "patchsmith.toml", "[policy]\n", sha(POLICY), "owner", allow_policy_edit=True
        )

        assert ApplyStatus.APPLIED == proposed.status
        assert ApplyStatus.APPLIED == written.status

    def test_policy_switch_turns_the_guard_off(self, tmp_path: Path) -> None:
        """`[policy.guards] policy_files = false`: the owner's standing choice."""
        policy = b'[policy]\nforbidden = ["ci/**"]\n[policy.guards]\npolicy_files = false\n'
        root = make_tree(tmp_path / "ws", {"patchsmith.toml": policy})
        loosen = (
            "--- a/patchsmith.toml\n+++ b/patchsmith.toml\n@@ -1,2 +1,2 @@\n"
            ' [policy]\n-forbidden = ["ci/**"]\n+forbidden = []\n'
        )

        assert ApplyStatus.APPLIED == apply(loosen, root).status


class TestCli:
    def test_refused_without_the_flag(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        patch = tmp_path / "loosen.diff"
        patch.write_text(LOOSEN, encoding="utf-8")

        code = main(["apply", str(patch), "-C", str(root), "--json", "--no-record"])

        report = json.loads(capsys.readouterr().out)
        assert 1 == code
        assert ["PROTECTED_PATH"] == [e["code"] for e in report["errors"]]
        assert POLICY == (root / "patchsmith.toml").read_bytes()

    def test_flag_allows(self, root: Path, tmp_path: Path) -> None:
        patch = tmp_path / "loosen.diff"
        patch.write_text(LOOSEN, encoding="utf-8")

        code = main(["apply", str(patch), "-C", str(root), "--allow-policy-edit", "--no-record"])

        assert 0 == code
        assert b"forbidden = []" in (root / "patchsmith.toml").read_bytes()

    def test_propose_flag(self, pyroot: Path, tmp_path: Path) -> None:
        source = tmp_path / "p.json"
        patch = {"type": "patch", "format": "udiff", "text": LOOSEN_PYPROJECT}
        source.write_text(json.dumps(_proposal(patch)), encoding="utf-8")

        refused = main(["propose", str(source), "-C", str(pyroot), "--no-record"])
        allowed = main(
            ["propose", str(source), "-C", str(pyroot), "--no-record", "--allow-policy-edit"]
        )

        assert (1, 0) == (refused, allowed)
