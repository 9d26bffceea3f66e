"""`propose` checks a proposal's declared strategy against the selector's table, per policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.workspace_snapshot import make_tree, snapshot_tree

import patchsmith.cli
from patchsmith import propose
from patchsmith.attempt.propose import changed_line_count
from patchsmith.errors import FailureCode
from patchsmith.model.report import ApplyStatus
from patchsmith.policy import Policy, StrategyCheck, load_policy

FILES = {f"src/m{i}.py": f"VALUE_{i} = {i}\n".encode() for i in range(5)}


def _proposal(strategy: str, count: int = 5) -> dict[str, Any]:
    import hashlib

    ops = [
        {
            "type": "direct_write",
            "path": f"src/m{i}.py",
            "content": f"VALUE_{i} = {i * 10}\n",
        }
        for i in range(count)
    ]
    for op, i in zip(ops, range(count), strict=True):
        op["expected_sha256"] = hashlib.sha256(FILES[f"src/m{i}.py"]).hexdigest()
    return {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": strategy,
        "objective": "scale the values",
        "operations": ops,
    }


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", FILES)


class TestStrategyCheck:
    def test_warn_by_default_applies_with_a_note(self, root: Path) -> None:
        """Five files hand-edited as a 'UNIFIED_DIFF': the table says HYBRID; noted, applied."""
        report = propose(_proposal("UNIFIED_DIFF"), root, record=False)

        assert ApplyStatus.APPLIED == report.status
        assert any("chooses HYBRID" in note for note in report.notes)

    def test_refuse_writes_nothing(self, root: Path) -> None:
        before = snapshot_tree(root)
        rules = Policy(strategy_check=StrategyCheck.REFUSE)

        report = propose(_proposal("DIRECT_FILE_EDIT"), root, record=False, policy=rules)

        assert ApplyStatus.REFUSED == report.status
        assert [(FailureCode.STRATEGY_MISMATCH, "strategy_selector")] == [
            (e.code, e.rule) for e in report.errors
        ]
        assert before == snapshot_tree(root)

    def test_accepted_strategy_is_quiet(self, root: Path) -> None:
        rules = Policy(strategy_check=StrategyCheck.REFUSE)

        # nothing here can verify HYBRID: the caller accepts that (ADR 0030)
        report = propose(
            _proposal("HYBRID"), root, record=False, policy=rules, allow_unverified=True
        )

        assert ApplyStatus.APPLIED == report.status
        assert not any("selector" in note for note in report.notes)

    def test_small_change_accepts_a_direct_edit(self, root: Path) -> None:
        rules = Policy(strategy_check=StrategyCheck.REFUSE)

        report = propose(_proposal("DIRECT_FILE_EDIT", count=2), root, record=False, policy=rules)

        assert ApplyStatus.APPLIED == report.status

    def test_off(self, root: Path) -> None:
        rules = Policy(strategy_check=StrategyCheck.OFF)

        report = propose(_proposal("UNIFIED_DIFF"), root, record=False, policy=rules)

        assert ApplyStatus.APPLIED == report.status
        assert not any("selector" in note for note in report.notes)

    def test_policy_file_setting_and_cli(
        self, root: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (root / "patchsmith.toml").write_text('[policy]\nstrategy_check = "refuse"\n')
        assert StrategyCheck.REFUSE == getattr(load_policy(root), "strategy_check", None)
        (root / "p.json").write_text(json.dumps(_proposal("UNIFIED_DIFF")))

        code = patchsmith.cli.main(["propose", str(root / "p.json"), "-C", str(root), "--json"])
        data = json.loads(capsys.readouterr().out)

        assert 1 == code
        assert ["STRATEGY_MISMATCH"] == [e["code"] for e in data["errors"]]

    def test_unknown_setting_is_an_invalid_policy(self, root: Path) -> None:
        (root / "patchsmith.toml").write_text('[policy]\nstrategy_check = "sometimes"\n')

        failure = load_policy(root)

        assert FailureCode.INVALID_POLICY == getattr(failure, "code", None)


def test_changed_line_count_ignores_headers() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+c\n d\n"

    assert 3 == changed_line_count(diff)
