"""`patchsmith.judge`: the rubric, the hook, and the record of each judgement."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

import patchsmith
from patchsmith.errors import FailureCode, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure
from patchsmith.pipeline.judge import (
    Criterion,
    HookVerdict,
    JudgeRequest,
    SubjectKind,
    Verdict,
    judge,
)
from patchsmith.store import (
    STATE_DIR_NAME,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    GuardDecision,
    Store,
)

OLD = b"def f():\n    return 1\n"
NEW = b"def f():\n    return 2\n"
DIFF = (
    "diff --git a/src/f.py b/src/f.py\n--- a/src/f.py\n+++ b/src/f.py\n"
    "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record(**changes: object) -> AttemptRecord:
    """An applied attempt on src/f.py whose proposal fixes a bug; `changes` override fields."""
    base = AttemptRecord(
        id="a-JUDGE0000000000001",
        run_id="run-1",
        proposal_id="p-1",
        attempt_no=1,
        kind=AttemptKind.PROPOSE,
        status=AttemptStatus.APPLIED,
        created_at="2026-01-01T00:00:00.000+00:00",
        finished_at="2026-01-01T00:00:01.000+00:00",
        applied_diff=DIFF,
        staged_diff=DIFF,
        files=(FileRecord("src/f.py", Action.UPDATE, sha(OLD), sha(NEW)),),
        decisions=(GuardDecision("secrets", FailureCode.SECRET_ADDED, True),),
        proposal_json=json.dumps(
            {
                "objective": "return the right value",
                "expected_files": ["src/**"],
                "risk": "low",
            }
        ),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def proposal_json(**fields: object) -> str:
    base: dict[str, object] = {"objective": "return the right value", "expected_files": ["src/**"]}
    base.update(fields)
    return json.dumps(base)


def evidence(**changes: object) -> Evidence:
    base = Evidence(
        profile="unit",
        side=RunSide.CHANGED,
        argv=("pytest",),
        exit_code=0,
        duration_s=0.1,
        passed=True,
        output_sha256="0" * 64,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "w", {"src/f.py": NEW})


def store_records(root: Path, *records: AttemptRecord) -> None:
    with Store.open(root / STATE_DIR_NAME) as store:
        for rec in records:
            store.record_attempt(rec)


def criterion(criteria: tuple[Criterion, ...], name: str) -> Criterion:
    return next(c for c in criteria if c.name == name)


class TestAttemptRubric:
    def test_a_clean_verified_attempt_passes(self, root: Path) -> None:
        store_records(root, record(evidence=(evidence(),)))

        judged = judge("a-JUDGE", root)

        assert SubjectKind.ATTEMPT == judged.kind
        assert Verdict.PASS == judged.verdict
        assert 1.0 == judged.score
        assert judged.ok
        assert not criterion(judged.criteria, "test_added").applies

    def test_no_evidence_scores_half(self, root: Path) -> None:
        store_records(root, record())

        judged = judge("a-JUDGE", root)

        assert 0.5 == criterion(judged.criteria, "verification").score
        assert Verdict.PASS == judged.verdict

    def test_high_risk_without_evidence_fails(self, root: Path) -> None:
        store_records(root, record(proposal_json=proposal_json(risk="high")))

        judged = judge("a-JUDGE", root)

        assert Verdict.FAIL == judged.verdict
        assert "high-risk" in criterion(judged.criteria, "verification").reason

    def test_introduced_failures_fail(self, root: Path) -> None:
        broken = evidence(passed=False, introduced=(ToolFailure("pytest", "boom", test_id="t"),))
        store_records(root, record(evidence=(evidence(side=RunSide.BASE), broken)))

        judged = judge("a-JUDGE", root)

        assert Verdict.FAIL == judged.verdict
        assert 0.0 == criterion(judged.criteria, "verification").score

    def test_failing_as_before(self, root: Path) -> None:
        store_records(root, record(evidence=(evidence(passed=False),)))

        assert 0.75 == criterion(judge("a-JUDGE", root).criteria, "verification").score

    def test_files_outside_expected(self, root: Path) -> None:
        store_records(root, record(proposal_json=proposal_json(expected_files=["lib/**"])))

        scope = criterion(judge("a-JUDGE", root).criteria, "scope")

        assert 0.0 == scope.score
        assert "src/f.py" in scope.reason

    def test_bug_fix_without_a_test(self, root: Path) -> None:
        store_records(root, record(proposal_json=proposal_json(objective="Fix the crash in f")))

        test_added = criterion(judge("a-JUDGE", root).criteria, "test_added")

        assert test_added.applies
        assert 0.0 == test_added.score

    def test_bug_fix_with_a_test(self, root: Path) -> None:
        files = (
            FileRecord("src/f.py", Action.UPDATE, sha(OLD), sha(NEW)),
            FileRecord("tests/test_f.py", Action.CREATE, None, sha(b"t\n")),
        )
        make_tree(root, {"tests/test_f.py": b"t\n"})
        store_records(root, record(files=files, proposal_json=proposal_json(rationale="bug #12")))

        assert 1.0 == criterion(judge("a-JUDGE", root).criteria, "test_added").score

    def test_size_over_budget(self, root: Path) -> None:
        store_records(
            root,
            record(
                proposal_json=proposal_json(
                    expected_postconditions=[
                        {"type": "DIFF_MAX_LINES", "value": 1},
                        {"type": "DIFF_MAX_FILES", "value": 0},
                    ]
                )
            ),
        )

        size = criterion(judge("a-JUDGE", root).criteria, "size")

        assert 0.5 == size.score
        assert "DIFF_MAX_LINES" in size.reason and "DIFF_MAX_FILES" in size.reason

    def test_drift(self, root: Path) -> None:
        store_records(root, record())
        (root / "src/f.py").write_bytes(b"changed\n")

        drift = criterion(judge("a-JUDGE", root).criteria, "drift")

        assert 0.0 == drift.score
        assert "src/f.py" in drift.reason

    def test_refused_attempt_fails(self, root: Path) -> None:
        failed = (GuardDecision("syntax", FailureCode.SYNTAX_ERROR, False, "line 2"),)
        store_records(
            root,
            record(status=AttemptStatus.REFUSED, applied_diff="", decisions=failed),
        )

        judged = judge("a-JUDGE", root)

        assert Verdict.FAIL == judged.verdict
        assert "syntax" in criterion(judged.criteria, "guards").reason
        assert not criterion(judged.criteria, "drift").applies

    def test_disabled_guards_are_named(self, root: Path) -> None:
        decisions = (
            GuardDecision("secrets", FailureCode.SECRET_ADDED, True, "disabled by the policy"),
        )
        store_records(root, record(decisions=decisions))

        assert "disabled" in criterion(judge("a-JUDGE", root).criteria, "guards").reason

    def test_no_proposal_no_guards(self, root: Path) -> None:
        store_records(root, record(proposal_json=None, decisions=()))

        judged = judge("a-JUDGE", root)

        assert not criterion(judged.criteria, "scope").applies
        assert not criterion(judged.criteria, "guards").applies

    def test_unreadable_proposal_json(self, root: Path) -> None:
        store_records(root, record(proposal_json="{not json"))

        assert not criterion(judge("a-JUDGE", root).criteria, "scope").applies

    def test_low_score_warns(self, root: Path) -> None:
        store_records(
            root,
            record(
                status=AttemptStatus.PARTIAL,
                proposal_json=proposal_json(expected_files=["lib/**"]),
            ),
        )

        assert Verdict.WARN == judge("a-JUDGE", root).verdict


class TestHook:
    def test_scored_and_recorded(self, root: Path) -> None:
        store_records(root, record())
        seen: list[JudgeRequest] = []

        def hook(request: JudgeRequest) -> HookVerdict:
            seen.append(request)
            return HookVerdict(0.0, "the change does not match the objective", name="llm")

        judged = judge("a-JUDGE", root, hook=hook)

        (request,) = seen
        assert "return the right value" == request.objective
        assert "+    return 2" in request.diff
        hooked = criterion(judged.criteria, "hook:llm")
        assert (0.0, 2.0) == (hooked.score, hooked.weight)
        assert judged.score < 0.8
        assert Verdict.PASS == judged.verdict
        with Store.open(root / STATE_DIR_NAME) as store:
            ((number, _, text),) = store.judgements(judged.subject)
        assert judged.number == number
        stored = json.loads(text)
        assert "hook:llm" in [c["name"] for c in stored["criteria"]]
        assert judged.verdict.value == stored["verdict"]

    def test_a_blocking_hook_verdict_fails(self, root: Path) -> None:
        store_records(root, record())

        judged = judge("a-JUDGE", root, hook=lambda r: HookVerdict(0.0, "wrong", blocking=True))

        assert Verdict.FAIL == judged.verdict

    def test_a_failing_hook_is_noted_not_counted(self, root: Path) -> None:
        store_records(root, record())

        def hook(request: JudgeRequest) -> HookVerdict:
            raise TimeoutError("model too slow")

        judged = judge("a-JUDGE", root, hook=hook)

        assert not any(c.name.startswith("hook") for c in judged.criteria)
        assert any("model too slow" in note for note in judged.notes)

    def test_an_out_of_range_answer_is_noted(self, root: Path) -> None:
        store_records(root, record())

        judged = judge("a-JUDGE", root, hook=lambda request: HookVerdict(7.0, "?"))

        assert any("not counted" in note for note in judged.notes)

    def test_not_recorded(self, root: Path) -> None:
        store_records(root, record())

        judged = judge("a-JUDGE", root, record=False)

        assert judged.number is None
        with Store.open(root / STATE_DIR_NAME) as store:
            assert [] == store.judgements(judged.subject)


class TestRunRubric:
    def test_a_real_run(self, tmp_path: Path) -> None:
        root = make_tree(tmp_path / "w", {"src/f.py": OLD})
        patch = (
            "--- a/src/f.py\n+++ b/src/f.py\n@@ -1,2 +1,2 @@\n"
            " def f():\n-    return 1\n+    return 2\n"
        )
        for number, text in enumerate((patch.replace("return 1", "return 9"), patch), 1):
            patchsmith.propose(
                {
                    "proposal_id": f"p{number}",
                    "run_id": "fix-f",
                    "attempt_no": number,
                    "strategy": "UNIFIED_DIFF",
                    "objective": "Fix f's return value",
                    "expected_files": ["src/f.py"],
                    "operations": [{"type": "patch", "format": "udiff", "text": text}],
                },
                root,
            )

        judged = patchsmith.judge("fix-f", root)

        assert SubjectKind.RUN == judged.kind
        assert 2 == len(judged.attempts)
        outcome = criterion(judged.criteria, "outcome")
        assert 1.0 == outcome.score and "1 refused" in outcome.reason
        assert 1.0 == criterion(judged.criteria, "drift").score
        assert 0.0 == criterion(judged.criteria, "test_added").score
        assert "2 changed lines" in criterion(judged.criteria, "size").reason

    def test_drift_since_the_run_fails(self, root: Path) -> None:
        store_records(root, record())
        (root / "src/f.py").write_bytes(b"changed\n")

        judged = judge("run-1", root)

        assert Verdict.FAIL == judged.verdict
        assert "src/f.py" in criterion(judged.criteria, "drift").reason

    def test_a_run_with_nothing_applied(self, root: Path) -> None:
        store_records(root, record(status=AttemptStatus.REFUSED, applied_diff=""))

        judged = judge("run-1", root, kind="run")

        assert not criterion(judged.criteria, "drift").applies
        assert Verdict.FAIL == judged.verdict

    def test_scope_per_milestone(self, root: Path) -> None:
        """Each attempt against its own expected_files; one without them is not measured."""
        store_records(
            root,
            record(id="a-M1", proposal_json=proposal_json(expected_files=["lib/**"])),
            record(
                id="a-M2",
                created_at="2026-01-01T00:00:02.000+00:00",
                files=(FileRecord("src/g.py", Action.UPDATE, sha(OLD), sha(NEW)),),
            ),
            record(
                id="a-M3",
                created_at="2026-01-01T00:00:03.000+00:00",
                files=(FileRecord("docs/x.md", Action.UPDATE, sha(OLD), sha(NEW)),),
                proposal_json=json.dumps({"objective": "notes"}),
            ),
        )

        scope = criterion(judge("run-1", root, record=False).criteria, "scope")

        assert 0.5 == scope.score
        assert "src/f.py (a-M1)" in scope.reason and "2 milestone(s)" in scope.reason

    def test_only_checks(self, root: Path) -> None:
        """A run of dry runs only is judged on them (there is nothing else)."""
        store_records(
            root, record(status=AttemptStatus.CHECKED, applied_diff="", dry_run=True, files=())
        )

        judged = judge("run-1", root, kind="run", record=False)

        assert 0.75 == criterion(judged.criteria, "outcome").score
        assert () == judged.notes

    def test_a_policy_disabled_guard_on_a_revert_is_still_named(self, root: Path) -> None:
        decisions = (
            GuardDecision("syntax", FailureCode.SYNTAX_ERROR, True, "disabled by the policy"),
            GuardDecision("binary", FailureCode.BINARY_FILE, True, "disabled by the policy"),
        )
        store_records(
            root,
            record(kind=AttemptKind.REVERT, proposal_id="revert:a-X", decisions=decisions),
        )

        guards = criterion(judge("run-1", root, record=False).criteria, "guards")

        assert "1 disabled by the policy: binary" in guards.reason
        assert "reverted by a-JUDGE0000000000001" in guards.reason

    def test_forced_kinds(self, root: Path) -> None:
        store_records(root, record())

        with pytest.raises(PatchRefused) as caught:
            judge("run-1", root, kind=SubjectKind.ATTEMPT)
        assert FailureCode.RECORD_NOT_FOUND == caught.value.failures[0].code
        with pytest.raises(PatchRefused):
            judge("a-JUDGE", root, kind="run")


class TestUnknown:
    def test_unknown_subject(self, root: Path) -> None:
        store_records(root, record())

        with pytest.raises(PatchRefused) as caught:
            judge("nothing", root)

        assert FailureCode.RECORD_NOT_FOUND == caught.value.failures[0].code

    def test_ambiguous_attempt_prefix(self, root: Path) -> None:
        store_records(root, record(), record(id="a-JUDGE0000000000002"))

        with pytest.raises(PatchRefused) as caught:
            judge("a-JUDGE", root, kind="attempt")

        assert "several" in caught.value.failures[0].message

    def test_nothing_recorded(self, tmp_path: Path) -> None:
        with pytest.raises(PatchRefused) as caught:
            judge("x", tmp_path)

        assert FailureCode.RECORD_NOT_FOUND == caught.value.failures[0].code

    def test_not_a_directory(self, tmp_path: Path) -> None:
        with pytest.raises(PatchRefused) as caught:
            judge("x", tmp_path / "missing")

        assert FailureCode.FILE_NOT_FOUND == caught.value.failures[0].code
