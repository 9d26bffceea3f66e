"""Tests for the guard registry and `run_guards`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from tests.guards.changes import context, create, update

from patchsmith.errors import FailureCode
from patchsmith.guards import (
    GUARDS,
    DecisionStatus,
    GuardContext,
    guard_named,
    run_guards,
)
from patchsmith.model.proposal import PatchProposal
from patchsmith.policy import GuardSwitches, Policy


class TestRegistry:
    def test_names_are_unique_and_switchable(self) -> None:
        """Every guard NAME is unique and is a `[policy.guards]` switch."""
        names = [guard.NAME for guard in GUARDS]

        assert len(names) == len(set(names))
        assert {f.name for f in dataclasses.fields(GuardSwitches)} == set(names)

    @pytest.mark.parametrize("guard", GUARDS, ids=lambda g: g.NAME)
    def test_each_guard_is_documented(self, guard: type) -> None:
        """Each guard has a code, a one-line message and a What/Why/Example docstring."""
        doc = guard.__doc__ or ""

        assert isinstance(guard.CODE, FailureCode)  # type: ignore[attr-defined]
        assert "\n" not in guard.MESSAGE  # type: ignore[attr-defined]
        assert all(heading in doc for heading in ("What:", "Why:", "Example:"))

    def test_guard_named(self) -> None:
        """Guards are found by NAME; unknown names give None."""
        assert "secrets" == getattr(guard_named("secrets"), "NAME", None)
        assert None is guard_named("nope")

    def test_docs_list_every_guard(self) -> None:
        """docs/policy.md documents every guard by name."""
        doc = Path(__file__).resolve().parents[2] / "docs" / "policy.md"
        text = doc.read_text(encoding="utf-8")

        assert [g.NAME for g in GUARDS if f"`{g.NAME}`" not in text] == []


class TestRunGuards:
    def test_clean_change_passes_every_guard(self) -> None:
        """An ordinary edit passes, with one passed decision per guard."""
        report = run_guards([update("src/a.py", "x = 1\n", "x = 2\n")], context())

        assert report.passed
        assert [g.NAME for g in GUARDS] == [d.name for d in report.decisions]
        assert {DecisionStatus.PASSED} == {d.status for d in report.decisions}
        assert () == report.failures

    def test_violations_are_recorded_per_guard(self) -> None:
        """Each violated guard records its failures; the others still pass."""
        changes = [create("yarn.lock", "x\n"), create("b.bin", b"\x00")]

        report = run_guards(changes, context())

        failed = {d.name for d in report.decisions if d.status is DecisionStatus.FAILED}
        assert {"lockfile", "binary_content"} == failed
        assert not report.passed
        assert {FailureCode.LOCKFILE_CHANGED, FailureCode.BINARY_CONTENT} == {
            f.code for f in report.failures
        }

    def test_disabled_guard_is_recorded_not_run(self) -> None:
        """A guard switched off by the policy is recorded as disabled."""
        policy = Policy(guards=GuardSwitches(lockfile=False))

        report = run_guards([create("yarn.lock", "x\n")], context(policy))

        decision = next(d for d in report.decisions if d.name == "lockfile")
        assert DecisionStatus.DISABLED == decision.status
        assert report.passed

    def test_record_directory_is_never_scanned(self) -> None:
        """Changes under .patchsmith/ are patchsmith's own and are left out."""
        policy = Policy(include=("src/**",))

        report = run_guards([create(".patchsmith/patchsmith.db", b"\x00SQLite")], context(policy))

        assert report.passed

    def test_decision_json(self) -> None:
        """Decisions serialise to plain JSON values."""
        report = run_guards([create("go.sum", "x\n")], context())
        decision = next(d for d in report.decisions if d.name == "lockfile")

        data = decision.to_json()

        assert "failed" == data["status"]
        assert "LOCKFILE_CHANGED" == data["code"]
        assert isinstance(data["failures"], list)
        assert "lockfile" == data["failures"][0]["rule"]

    def test_context_for_proposal_narrows_policy(self) -> None:
        """`GuardContext.for_proposal` applies the proposal's forbidden files and budgets."""
        proposal = PatchProposal.model_validate(
            {
                "proposal_id": "p",
                "run_id": "r",
                "attempt_no": 1,
                "strategy": "UNIFIED_DIFF",
                "objective": "o",
                "expected_files": ["src/a.py"],
                "forbidden_files": ["secrets/**"],
                "operations": [{"type": "patch", "text": "x"}],
                "expected_postconditions": [{"type": "DIFF_MAX_FILES", "value": 1}],
            }
        )
        ctx = GuardContext.for_proposal(Policy(), proposal)

        report = run_guards([create("secrets/a", "x\n"), create("b", "y\n")], ctx)

        failed = {d.name for d in report.decisions if d.status is DecisionStatus.FAILED}
        assert {"forbidden_paths", "max_files", "hunks_outside_expected"} == failed
        assert ("src/a.py",) == ctx.expected_files


class TestImportCost:
    def test_heavy_dependencies_load_lazily(self) -> None:
        """Importing patchsmith and its guards loads neither tree-sitter nor detect-secrets."""
        code = (
            "import sys, patchsmith, patchsmith.guards, patchsmith.attempt.conditions; "
            "print(sorted(m for m in sys.modules "
            "if m.startswith(('tree_sitter', 'detect_secrets', 'unidiff'))))"
        )

        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout

        assert "[]" == out.strip()
