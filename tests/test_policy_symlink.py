"""The policy's symlink target is protected like the policy file (finding 9 of issue 20)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith import apply, write_file
from patchsmith.cli import main
from patchsmith.errors import FailureCode
from patchsmith.guards.policyfiles import _linked_policy_paths
from patchsmith.model.report import ApplyReport, ApplyStatus

POLICY = b'[policy]\nforbidden = ["ci/**"]\n'
PYPROJECT = (
    b'[project]\nname = "d"\nversion = "1.0"\n\n[tool.patchsmith.policy]\nforbidden = ["ci/**"]\n'
)
LOOSEN = (
    "--- a/conf/policy.toml\n+++ b/conf/policy.toml\n@@ -1,2 +1,2 @@\n"
    ' [policy]\n-forbidden = ["ci/**"]\n+forbidden = []\n'
)


def _write(root: Path, path: str, content: str) -> ApplyReport:
    """`write_file` with the current hash (a new file is created)."""
    target = root / path
    current = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else None
    return write_file(root, path, content, current, "test", allow_create=current is None)


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    """`patchsmith.toml` -> `conf/policy.toml`, which forbids ci/**."""
    root = make_tree(tmp_path / "ws", {"conf/policy.toml": POLICY, "ci/deploy.yml": b"x\n"})
    os.symlink("conf/policy.toml", root / "patchsmith.toml")
    return root


class TestLinkedPolicy:
    def test_patch_to_the_target_is_refused(self, root: Path) -> None:
        """A diff emptying `forbidden` in the link's target is PROTECTED_PATH, nothing written."""
        report = apply(LOOSEN, root)

        assert ApplyStatus.REFUSED == report.status
        assert [FailureCode.PROTECTED_PATH] == [e.code for e in report.errors]
        assert "conf/policy.toml" in report.errors[0].message
        assert POLICY == (root / "conf/policy.toml").read_bytes()

    def test_allow_policy_edit_lets_it_through(
        self, root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`--allow-policy-edit` is the caller's way through, as for the file itself."""
        patch = tmp_path / "loosen.diff"
        patch.write_text(LOOSEN)

        assert 1 == main(["apply", str(patch), "-C", str(root), "--json"])
        refused = json.loads(capsys.readouterr().out)
        assert ["PROTECTED_PATH"] == [e["code"] for e in refused["errors"]]
        code = main(["apply", str(patch), "-C", str(root), "--json", "--allow-policy-edit"])
        capsys.readouterr()

        assert 0 == code
        assert b"forbidden = []" in (root / "conf/policy.toml").read_bytes()

    def test_whole_file_write_is_refused(self, root: Path) -> None:
        """`write_file` of the target is refused too."""
        report = _write(root, "conf/policy.toml", "[policy]\n")

        assert [FailureCode.PROTECTED_PATH] == [e.code for e in report.errors]

    def test_other_files_beside_the_target_pass(self, root: Path) -> None:
        """Only the target is protected, not its folder."""
        report = _write(root, "conf/other.toml", "a = 1\n")

        assert ApplyStatus.APPLIED == report.status, report.errors


class TestLinkChains:
    def test_every_hop_and_pyproject(self, tmp_path: Path) -> None:
        """A chain of links protects each hop; a linked pyproject.toml keeps its table rule."""
        root = make_tree(tmp_path / "ws", {"conf/real.toml": POLICY, "py/p.toml": PYPROJECT})
        os.symlink("conf/mid.toml", root / "patchsmith.toml")
        os.symlink("real.toml", root / "conf" / "mid.toml")
        os.symlink("py/p.toml", root / "pyproject.toml")

        assert {
            "conf/mid.toml": "patchsmith.toml",
            "conf/real.toml": "patchsmith.toml",
            "py/p.toml": "pyproject.toml",
        } == _linked_policy_paths(root)

        bump = PYPROJECT.replace(b'version = "1.0"', b'version = "1.1"').decode()
        assert ApplyStatus.APPLIED == _write(root, "py/p.toml", bump).status
        loosen = bump.replace('forbidden = ["ci/**"]', "forbidden = []")
        refused = _write(root, "py/p.toml", loosen)
        assert [FailureCode.PROTECTED_PATH] == [e.code for e in refused.errors]

    def test_target_outside_the_workspace_is_not_listed(self, tmp_path: Path) -> None:
        """A link leaving the workspace names nothing a patch could reach."""
        outside = make_tree(tmp_path / "shared", {"policy.toml": POLICY})
        root = make_tree(tmp_path / "ws", {"a.py": b""})
        os.symlink(outside / "policy.toml", root / "patchsmith.toml")

        assert {} == _linked_policy_paths(root)

    def test_no_links(self, tmp_path: Path) -> None:
        """Plain policy files add nothing."""
        root = make_tree(tmp_path / "ws", {"patchsmith.toml": POLICY})
        assert {} == _linked_policy_paths(root)
