"""Proposals with a verification plan: only what the change broke refuses it; evidence is kept."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.sandboxing import processes_tagged
from tests.verify.conftest import CALC
from tests.workspace_snapshot import snapshot_tree

import patchsmith.cli
from patchsmith import propose
from patchsmith.attempt.conditions import ConditionStatus
from patchsmith.errors import FailureCode
from patchsmith.model.evidence import RunSide
from patchsmith.model.proposal import PostconditionType
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.sandbox import usable_bwrap
from patchsmith.store import Store

BROKEN = CALC.replace(b"return a + b", b"return a - b")
RENAMED = CALC.replace(b"return a - b", b"return -(b - a)")


def _proposal(content: bytes = BROKEN, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "change calc",
        "operations": [
            {
                "type": "direct_write",
                "path": "pkg/calc.py",
                "content": content.decode(),
                "expected_sha256": hashlib.sha256(CALC).hexdigest(),
            }
        ],
        "expected_postconditions": [{"type": "TESTS_PASS"}, {"type": "COMPILES"}],
        "verification_plan": {"profile": "pytest"},
    }
    data.update(fields)
    return data


def _post(report: Any) -> dict[PostconditionType, ConditionStatus]:
    return {c.type: c.status for c in report.postconditions}


class TestRefusesOnlyWhatTheChangeBroke:
    def test_broken_change_is_refused_and_nothing_written(self, project: Path) -> None:
        """The introduced failure refuses the change; the pre-existing one is not blamed."""
        before = snapshot_tree(project)

        report = propose(_proposal(), project)

        assert ApplyStatus.REFUSED == report.status
        assert before == snapshot_tree(project)
        codes = [e.code for e in report.errors]
        assert FailureCode.VERIFICATION_FAILED in codes
        assert FailureCode.POSTCONDITION_FAILED in codes
        failure = next(e for e in report.errors if e.code is FailureCode.VERIFICATION_FAILED)
        assert "tests.test_calc::test_add" in failure.message
        assert "test_known_bug" not in failure.message
        assert failure.excerpt is not None and "assert add(2, 3) == 5" in failure.excerpt
        assert ConditionStatus.FAILED == _post(report)[PostconditionType.TESTS_PASS]

    def test_targeted_run_only_runs_importers(self, project: Path) -> None:
        """The changed module's importers run (tests/test_calc.py), not the other tests."""
        report = propose(_proposal(), project)

        targeted = [e for e in report.evidence if e.side is RunSide.TARGETED]
        assert 1 == len(targeted)
        assert "tests/test_calc.py" == targeted[0].argv[-1]
        assert [] == [e for e in report.evidence if e.side is RunSide.CHANGED]

    def test_good_change_applies_with_evidence(self, project: Path) -> None:
        """A change that breaks nothing is written; TESTS_PASS and COMPILES pass."""
        report = propose(
            _proposal(RENAMED, verification_plan={"profile": "pytest", "full": True}), project
        )

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert RENAMED == (project / "pkg/calc.py").read_bytes()
        assert {
            PostconditionType.TESTS_PASS: ConditionStatus.PASSED,
            PostconditionType.COMPILES: ConditionStatus.PASSED,
        } == _post(report)
        sides = [e.side for e in report.evidence]
        assert [RunSide.BASE, RunSide.TARGETED, RunSide.CHANGED] == sides
        changed = report.evidence[-1]
        assert 1 == len(changed.failures)  # the known bug, pre-existing
        assert () == changed.introduced

    def test_keep_on_failure_writes_anyway(self, project: Path) -> None:
        """`keep_on_failure` keeps the change and says so; the evidence still shows the failure."""
        plan = {"profile": "pytest", "keep_on_failure": True}

        report = propose(_proposal(verification_plan=plan), project)

        assert ApplyStatus.APPLIED == report.status
        assert BROKEN == (project / "pkg/calc.py").read_bytes()
        assert any("keep_on_failure" in n for n in report.notes)
        assert ConditionStatus.FAILED == _post(report)[PostconditionType.TESTS_PASS]

    def test_check_mode_verifies_but_writes_nothing(self, project: Path) -> None:
        """A dry run asked to verify runs the plan too, and writes no file."""
        before = snapshot_tree(project)

        report = propose(_proposal(RENAMED), project, check=True, verify=True)

        assert ApplyStatus.APPLIED == report.status
        assert before == snapshot_tree(project)
        assert report.evidence

    def test_base_run_is_cached(self, project: Path) -> None:
        """A second proposal on the same base reuses the base run."""
        first = propose(_proposal(), project)
        second = propose(_proposal(proposal_id="p2"), project)

        assert [False, True] == [r.evidence[0].cached for r in (first, second)]
        assert RunSide.BASE == second.evidence[0].side


class TestPlanChecks:
    def test_unknown_profile_is_invalid_proposal(self, project: Path) -> None:
        """A plan naming a profile the workspace does not have is refused up front."""
        report = propose(_proposal(verification_plan={"profile": "nope"}), project)

        assert [FailureCode.INVALID_PROPOSAL] == [e.code for e in report.errors]
        assert "nope" in report.errors[0].message

    def test_strategy_mismatch(self, project: Path) -> None:
        """Direct writes under BUILD_TOOL_GENERATED contradict the strategy."""
        report = propose(_proposal(strategy="BUILD_TOOL_GENERATED"), project)

        assert [FailureCode.STRATEGY_MISMATCH] == [e.code for e in report.errors]

    def test_plan_below_the_pyramid_is_insufficient(self, project: Path) -> None:
        """HYBRID needs full tests: a lint-only plan cannot prove it."""
        report = propose(
            _proposal(
                strategy="HYBRID", verification_plan={"profile": "lint"}, expected_postconditions=[]
            ),
            project,
        )

        assert [FailureCode.INSUFFICIENT_EVIDENCE] == [e.code for e in report.errors]

    def test_high_risk_raises_the_level(self, project: Path) -> None:
        """Targeted tests suffice for a diff, but not when the proposal says risk HIGH."""
        low = propose(_proposal(RENAMED), project, check=True)
        high = propose(_proposal(RENAMED, risk="HIGH"), project, check=True)

        assert ApplyStatus.APPLIED == low.status, low.errors
        assert [FailureCode.INSUFFICIENT_EVIDENCE] == [e.code for e in high.errors]
        assert "risk HIGH" in high.errors[0].message

    def test_postcondition_without_a_deciding_profile(self, project: Path) -> None:
        """TESTS_PASS with only a build profile in the plan is refused up front."""
        report = propose(
            _proposal(verification_plan={"profile": "compile"}, strategy="HYBRID"), project
        )

        assert FailureCode.INVALID_PROPOSAL in [e.code for e in report.errors]

    def test_require_plan(self, project: Path) -> None:
        """With `require_plan`, a proposal without a plan lacks evidence."""
        config = project / "patchsmith.toml"
        config.write_text("[verify]\nrequire_plan = true\n" + config.read_text())

        report = propose(_proposal(verification_plan=None, expected_postconditions=[]), project)

        assert [FailureCode.INSUFFICIENT_EVIDENCE] == [e.code for e in report.errors]

    def test_configured_minimum_lowers_the_level(self, project: Path) -> None:
        """`minimum_evidence` overrides the pyramid per strategy."""
        config = project / "patchsmith.toml"
        config.write_text(
            '[verify]\nminimum_evidence = { HYBRID = "syntax" }\n' + config.read_text()
        )

        report = propose(
            _proposal(
                RENAMED,
                strategy="HYBRID",
                verification_plan={"profile": "lint"},
                expected_postconditions=[],
            ),
            project,
        )

        assert ApplyStatus.APPLIED == report.status, report.errors

    def test_no_plan_runs_the_workspace_profiles(self, project: Path) -> None:
        """Without a plan, the strategy's minimum is still enforced: the runtime runs the
        workspace's test profiles, and a change that breaks a test is refused."""
        before = snapshot_tree(project)

        broken = propose(_proposal(verification_plan=None, expected_postconditions=[]), project)

        assert ApplyStatus.REFUSED == broken.status
        assert [FailureCode.VERIFICATION_FAILED] == [e.code for e in broken.errors]
        assert before == snapshot_tree(project)
        assert any("the workspace's profiles run (pytest)" in n for n in broken.notes)
        assert {RunSide.TARGETED} <= {e.side for e in broken.evidence}

        fine = propose(
            _proposal(RENAMED, verification_plan=None, expected_postconditions=[]), project
        )

        assert ApplyStatus.APPLIED == fine.status, fine.errors
        assert fine.evidence

    def test_unplanned_note_keeps_the_old_behaviour(self, project: Path) -> None:
        """`unplanned = "note"`: applied after the syntax guard, with a note, nothing run."""
        (project / "patchsmith.toml").write_text('[verify]\nunplanned = "note"\n')

        report = propose(
            _proposal(RENAMED, verification_plan=None, expected_postconditions=[]), project
        )

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert any("sets unplanned = note" in n for n in report.notes)
        assert () == report.evidence

    def test_unplanned_refuse(self, project: Path) -> None:
        """`unplanned = "refuse"` (like `require_plan`) refuses a proposal without a plan."""
        (project / "patchsmith.toml").write_text('[verify]\nunplanned = "refuse"\n')

        report = propose(
            _proposal(RENAMED, verification_plan=None, expected_postconditions=[]), project
        )

        assert [FailureCode.INSUFFICIENT_EVIDENCE] == [e.code for e in report.errors]

    def test_no_profile_that_reaches_the_level_is_noted(self, tmp_path: Path) -> None:
        """A workspace without a test profile cannot run targeted tests: noted, not refused."""
        (tmp_path / "calc.py").write_text("x = 1\n")
        proposal = _proposal(verification_plan=None, expected_postconditions=[])
        proposal["operations"] = [
            {
                "type": "direct_write",
                "path": "calc.py",
                "content": "x = 2\n",
                "expected_sha256": hashlib.sha256(b"x = 1\n").hexdigest(),
            }
        ]

        report = propose(proposal, tmp_path, record=False)

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert any("no profile in this workspace reaches it" in n for n in report.notes)

    def test_compile_minimum_prefers_build_profiles(self, project: Path) -> None:
        """BUILD_TOOL_GENERATED needs compile: a build profile is chosen over the tests."""
        from patchsmith.model.proposal import PatchProposal
        from patchsmith.verify.plan import implicit_plan
        from patchsmith.verify.profiles import Profile, ProfileKind, ProfileSet

        build = Profile(argv=("make",), kind=ProfileKind.BUILD)
        test = Profile(argv=("pytest",), kind=ProfileKind.TEST)
        proposal = PatchProposal.model_validate(
            _proposal(strategy="HYBRID", verification_plan=None, expected_postconditions=[])
        )
        compile_only = proposal.model_copy(update={"strategy": "BUILD_TOOL_GENERATED"})
        both = ProfileSet({"make": build, "unit": test}, {})

        assert ("make",) == implicit_plan(compile_only, both).profile_names()  # type: ignore[union-attr]
        hybrid = implicit_plan(proposal, both)
        assert hybrid is not None and ("unit",) == hybrid.profile_names() and hybrid.full
        tests_only = ProfileSet({"unit": test}, {})
        assert ("unit",) == implicit_plan(compile_only, tests_only).profile_names()  # type: ignore[union-attr]
        assert implicit_plan(proposal, ProfileSet({"make": build}, {})) is None


class TestEvidenceIsRecorded:
    def test_store_and_show(self, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The attempt keeps every run; `patchsmith show` prints them."""
        report = propose(_proposal(), project)
        with Store.open(project / ".patchsmith") as store:
            record = store.get(report.attempt_id or "")
        assert record is not None
        assert [e.side for e in record.evidence] == [e.side for e in report.evidence]
        assert record.evidence[-1].output_sha256 == report.evidence[-1].output_sha256
        assert record.evidence[-1].introduced[0].test_id == "tests.test_calc::test_add"

        code = patchsmith.cli.main(["show", report.attempt_id or "", "-C", str(project)])
        out = capsys.readouterr().out

        assert 0 == code
        assert "verification" in out
        assert "FAIL  pytest [targeted]" in out
        assert "introduced  tests/test_calc.py:5 [tests.test_calc::test_add]" in out

        code = patchsmith.cli.main(["show", report.attempt_id or "", "-C", str(project), "--json"])
        shown = json.loads(capsys.readouterr().out)
        assert "pytest" == shown["attempt"]["evidence"][0]["profile"]


CRASH_CHILD = textwrap.dedent(
    """
    import sys
    from patchsmith import propose
    propose(sys.argv[2], sys.argv[1])
    """
)


class TestCrashSafety:
    def test_killed_during_verification_leaves_workspace_untouched(
        self, project: Path, tmp_path: Path
    ) -> None:
        """Verification runs before any write: killing it leaves the files and no journal."""
        tag = uuid.uuid4().hex
        # The tool is sandboxed (it cannot write a marker outside its copy): it is seen
        # starting by its command line.
        slow = f"import time; time.sleep(60)  # {tag}"
        config = project / "patchsmith.toml"
        config.write_text(
            config.read_text()
            + f'\n[verify.slow]\nargv = [{json.dumps(sys.executable)}, "-c", {json.dumps(slow)}]\n'
            + 'kind = "test"\n'
        )
        before = snapshot_tree(project)
        proposal = tmp_path / "p.json"
        proposal.write_text(json.dumps(_proposal(verification_plan={"profile": "slow"})))
        child = subprocess.Popen([sys.executable, "-c", CRASH_CHILD, str(project), str(proposal)])
        try:
            for _ in range(2400):  # a loaded machine: up to two minutes to reach the tool
                if processes_tagged(tag, running=True):
                    break
                time.sleep(0.05)
            assert processes_tagged(tag, running=True)
            child.kill()
        finally:
            child.wait()
        if usable_bwrap() is not None:
            # --die-with-parent: the tool dies with the killed patchsmith
            for _ in range(2400):
                if not processes_tagged(tag):
                    break
                time.sleep(0.05)
            assert [] == processes_tagged(tag)

        assert before == snapshot_tree(project)
        assert not list((project / ".patchsmith").glob("journal*"))
        after = propose(_proposal(RENAMED, verification_plan={"profile": "pytest"}), project)
        assert ApplyStatus.APPLIED == after.status, after.errors
