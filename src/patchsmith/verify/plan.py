"""A proposal's verification plan: checked before staging, run on the staged changes.

Before anything is staged, `check_plan` refuses a plan that names an unknown
profile (INVALID_PROPOSAL) or cannot reach the evidence the proposal's strategy
requires (INSUFFICIENT_EVIDENCE, the verification pyramid). After the guards pass,
`plan_verifier` runs the plan on a private copy of the workspace with the changes
applied, decides COMPILES and TESTS_PASS, and turns what the change broke into
VERIFICATION_FAILED failures; the caller commits only when there are none (or the
plan says `keep_on_failure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from patchsmith._attempt import Verdict, Verifier
from patchsmith.conditions import ConditionResult, ConditionStatus
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.proposal import (
    Compiles,
    PatchProposal,
    PostconditionType,
    Risk,
    TestsPass,
    VerificationPlan,
)
from patchsmith.runtime.change import FileChange
from patchsmith.verify.profiles import EvidenceLevel, Profile, ProfileKind, ProfileSet, Unplanned
from patchsmith.verify.report import DEFAULT_TOP, ProfileOutcome, VerifyReport
from patchsmith.verify.workflow import verify_changes

__all__ = ["check_plan", "implicit_plan", "plan_level", "plan_verifier", "unverified_note"]

_PROVES = {
    PostconditionType.COMPILES: (ProfileKind.BUILD, ProfileKind.TYPECHECK, ProfileKind.TEST),
    PostconditionType.TESTS_PASS: (ProfileKind.TEST,),
}
"""Which profile kinds decide each postcondition (running tests needs the code to build)."""


def plan_level(plan: VerificationPlan, profiles: Sequence[Profile]) -> EvidenceLevel:
    """The highest pyramid level the plan can prove if every profile passes."""
    level = EvidenceLevel.SYNTAX
    for profile in profiles:
        if profile.kind in (ProfileKind.BUILD, ProfileKind.TYPECHECK):
            level = max(level, EvidenceLevel.COMPILE)
        elif profile.kind is ProfileKind.TEST:
            full = plan.full or not profile.targeted
            level = max(level, EvidenceLevel.FULL_TESTS if full else EvidenceLevel.TARGETED_TESTS)
    return level


def check_plan(proposal: PatchProposal, profile_set: ProfileSet) -> tuple[PatchFailure, ...]:
    """Why the proposal's plan cannot be run or cannot be enough; empty when it can."""
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    plan = proposal.verification_plan
    if plan is None:
        if not profile_set.require_plan or required <= EvidenceLevel.SYNTAX:
            return ()
        return (
            _insufficient(
                proposal,
                required,
                EvidenceLevel.SYNTAX,
                "the workspace requires a verification_plan (require_plan)",
            ),
        )
    unknown = [n for n in plan.profile_names() if profile_set.get(n) is None]
    if unknown:
        known = ", ".join(sorted(profile_set.profiles)) or "none"
        return (
            PatchFailure(
                FailureCode.INVALID_PROPOSAL,
                f"verification_plan names unknown profile(s): {', '.join(unknown)} "
                f"(known: {known})",
                hint="`patchsmith verify --list` shows the profiles of this workspace",
                rule="verification_plan",
            ),
        )
    profiles = [p for n in plan.profile_names() if (p := profile_set.get(n)) is not None]
    reachable = plan_level(plan, profiles)
    failures: list[PatchFailure] = []
    if reachable < required:
        failures.append(_insufficient(proposal, required, reachable, "the plan cannot prove it"))
    for post in proposal.expected_postconditions:
        if isinstance(post, Compiles | TestsPass):
            kinds = _PROVES[PostconditionType(post.type)]
            if not any(p.kind in kinds for p in profiles):
                failures.append(
                    PatchFailure(
                        FailureCode.INVALID_PROPOSAL,
                        f"{post.type} is expected but no profile of the verification_plan "
                        f"checks it (a {' or '.join(k.value for k in kinds)} profile)",
                        hint="add such a profile to verification_plan.profiles",
                        rule="verification_plan",
                    )
                )
    return tuple(failures)


def implicit_plan(proposal: PatchProposal, profile_set: ProfileSet) -> VerificationPlan | None:
    """The plan the runtime runs for a proposal without one (`unplanned = "auto"`).

    The workspace's profiles that reach the strategy's minimum: build and typecheck
    profiles for compile (test profiles when there are none), test profiles for the
    test levels (run whole for full-tests). `None` when the proposal has a plan, needs
    no more than syntax, or no profile here reaches its level.
    """
    if proposal.verification_plan is not None or profile_set.unplanned is not Unplanned.AUTO:
        return None
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    if required <= EvidenceLevel.SYNTAX:
        return None
    by_kind = {
        kind: sorted(n for n, p in profile_set.profiles.items() if p.kind is kind)
        for kind in ProfileKind
    }
    if required is EvidenceLevel.COMPILE:
        names = by_kind[ProfileKind.BUILD] + by_kind[ProfileKind.TYPECHECK]
        names = names or by_kind[ProfileKind.TEST]
    else:
        names = by_kind[ProfileKind.TEST]
    if not names:
        return None
    plan = VerificationPlan(profiles=tuple(names), full=required is EvidenceLevel.FULL_TESTS)
    profiles = [p for n in names if (p := profile_set.get(n)) is not None]
    return plan if plan_level(plan, profiles) >= required else None


def unverified_note(proposal: PatchProposal, profile_set: ProfileSet) -> str | None:
    """What to tell the caller when a proposal comes without a plan but its strategy asks one."""
    if proposal.verification_plan is not None:
        return None
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    if required <= EvidenceLevel.SYNTAX:
        return None
    planned = implicit_plan(proposal, profile_set)
    if planned is not None:
        return (
            f"no verification_plan: {proposal.strategy.value} asks for {required.label} "
            f"evidence, so the workspace's profiles run ({', '.join(planned.profile_names())})"
        )
    why = (
        "no profile in this workspace reaches it"
        if profile_set.unplanned is Unplanned.AUTO
        else "the workspace sets unplanned = note"
    )
    return (
        f"not verified: {proposal.strategy.value} asks for {required.label} evidence, the "
        f"proposal has no verification_plan and {why} (only the syntax guard ran)"
    )


def plan_verifier(
    proposal: PatchProposal,
    root: Path,
    profile_set: ProfileSet,
    *,
    top: int = DEFAULT_TOP,
    cache: bool = True,
    trust: bool | None = None,
) -> Verifier:
    """The verifier `review_and_commit` runs on the staged changes.

    `cache` false (no audit record wanted) keeps the base-run cache untouched too.
    `trust` is `verify_changes`' (an untrusted repository runs nothing: the report's
    UNTRUSTED_REPOSITORY refuses the change).
    """
    plan = proposal.verification_plan
    assert plan is not None  # only made for proposals with a plan

    def run(changes: Sequence[FileChange]) -> Verdict:
        report = verify_changes(
            root,
            changes,
            plan.profile_names(),
            full=plan.full,
            top=top,
            timeout_s=plan.timeout_seconds,
            profile_set=profile_set,
            cache=cache,
            trust=trust,
        )
        return _verdict(proposal, plan, profile_set, report, top)

    return run


def _verdict(
    proposal: PatchProposal,
    plan: VerificationPlan,
    profile_set: ProfileSet,
    report: VerifyReport,
    top: int,
) -> Verdict:
    failures: list[PatchFailure] = list(report.errors)
    for outcome in report.outcomes:
        if not outcome.passed:
            failures.append(_broken(outcome, top))
    results = tuple(
        _decide(PostconditionType(post.type), report)
        for post in proposal.expected_postconditions
        if isinstance(post, Compiles | TestsPass)
    )
    failures.extend(
        PatchFailure(
            FailureCode.POSTCONDITION_FAILED,
            f"{r.type.value} failed: {r.evidence}",
            rule=r.type.value,
        )
        for r in results
        if r.status is ConditionStatus.FAILED
    )
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    if not failures and report.level < required:
        failures.append(_insufficient(proposal, required, report.level, "the runs proved less"))
    notes: list[str] = [
        f"verified ({report.level.label}): "
        + ", ".join(f"{o.profile} {'passed' if o.passed else 'FAILED'}" for o in report.outcomes)
    ]
    if failures and plan.keep_on_failure:
        notes.append("kept although verification failed: the plan says keep_on_failure")
    return Verdict(
        postconditions=results,
        failures=tuple(failures),
        evidence=report.evidence,
        keep=plan.keep_on_failure,
        notes=tuple(notes),
    )


def _decide(kind: PostconditionType, report: VerifyReport) -> ConditionResult:
    deciding = [o for o in report.outcomes if o.kind in _PROVES[kind]]
    if not deciding:
        return ConditionResult(kind, ConditionStatus.NOT_CHECKED, "no profile checks it")
    broken = [o.profile for o in deciding if not o.passed]
    if broken:
        return ConditionResult(kind, ConditionStatus.FAILED, "broken by: " + ", ".join(broken))
    names = ", ".join(o.profile for o in deciding)
    return ConditionResult(kind, ConditionStatus.PASSED, f"passed: {names}")


def _broken(outcome: ProfileOutcome, top: int) -> PatchFailure:
    """One failure per broken profile: the first introduced failures, with source excerpts."""
    shown = outcome.introduced[:top]
    lines = []
    for failure in shown:
        where = failure.file or ""
        if where and failure.line is not None:
            where += f":{failure.line}"
        label = failure.test_id or failure.code or ""
        first = failure.message.strip().splitlines()[0] if failure.message.strip() else ""
        lines.append(" ".join(p for p in (where, f"[{label}]" if label else "", first) if p))
    more = len(outcome.introduced) - len(shown)
    if more > 0:
        lines.append(f"... and {more} more")
    summary = "; ".join(lines) or "the run failed where the base passed"
    first_with_excerpt = next((f for f in shown if f.excerpt), None)
    return PatchFailure(
        FailureCode.VERIFICATION_FAILED,
        f"profile {outcome.profile!r}: {len(outcome.introduced)} introduced failure(s): {summary}",
        file=first_with_excerpt.file if first_with_excerpt else None,
        excerpt=first_with_excerpt.excerpt if first_with_excerpt else None,
        hint="fix what the change broke (pre-existing failures are not counted); "
        "`patchsmith show` prints every run",
        rule=outcome.profile,
    )


def _insufficient(
    proposal: PatchProposal, required: EvidenceLevel, reached: EvidenceLevel, why: str
) -> PatchFailure:
    risk = " (raised for risk HIGH)" if proposal.risk is Risk.HIGH else ""
    return PatchFailure(
        FailureCode.INSUFFICIENT_EVIDENCE,
        f"{proposal.strategy.value} needs {required.label} evidence{risk}; {why} "
        f"(reaches {reached.label})",
        hint="name profiles in verification_plan that reach it (docs/verify.md, the pyramid)",
        rule="minimum_evidence",
    )
