"""A proposal's verification plan: checked before staging, run on the staged changes.

Before anything is staged, `check_plan` refuses a plan that names an unknown
profile (INVALID_PROPOSAL) or cannot reach the evidence the proposal's strategy
requires (INSUFFICIENT_EVIDENCE, the verification pyramid). After the guards pass,
`plan_verifier` runs the plan on a private copy of the workspace with the changes
applied, decides COMPILES and TESTS_PASS, and turns what the change broke into
VERIFICATION_FAILED failures and what could not be established into VERIFICATION_ERROR
and POSTCONDITION_UNVERIFIED ones; the caller commits only when there are none (or the
plan says `keep_on_failure`, which never keeps an unestablished change). `obligations`
decides, before staging, what a proposal must be verified with and refuses what nothing
can establish (docs/decisions/0030).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.attempt._attempt import Verdict as AttemptVerdict
from patchsmith.attempt._attempt import Verifier
from patchsmith.attempt.conditions import ConditionResult, ConditionStatus
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.evidence import Verdict
from patchsmith.model.proposal import (
    Compiles,
    PatchProposal,
    PostconditionType,
    ProposalStrategy,
    Risk,
    TestsPass,
    VerificationPlan,
)
from patchsmith.runtime.change import FileChange
from patchsmith.verify.profiles import (
    EvidenceLevel,
    Profile,
    ProfileKind,
    ProfileSet,
    Unplanned,
    Unverified,
)
from patchsmith.verify.report import DEFAULT_TOP, ProfileOutcome, VerifyReport
from patchsmith.verify.runner import UNPARSED_CODES
from patchsmith.verify.workflow import verify_changes

__all__ = [
    "Obligations",
    "check_plan",
    "expected_checks",
    "implicit_plan",
    "obligations",
    "opted_out",
    "plan_level",
    "plan_verifier",
    "unverified_failure",
]

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


_REFUSED_UNPLANNED = frozenset(
    {
        ProposalStrategy.AST_TRANSFORM,
        ProposalStrategy.HYBRID,
        ProposalStrategy.BUILD_TOOL_GENERATED,
    }
)
"""Strategies refused without a plan when no profile reaches their minimum (ADR 0030):
a rewrite by a recipe or a tool is only as good as the evidence that it still works."""

_CONFIGURE_HINT = (
    "configure a profile that decides it under [verify.NAME] in patchsmith.toml "
    '(docs/verify.md), or opt out with --allow-unverified / [verify] unverified = "note"'
)


_MINIMUM_HINT = (
    "configure a profile that reaches it under [verify.NAME] in patchsmith.toml (docs/verify.md, "
    'the pyramid), or opt out with --allow-unverified / [verify] unverified = "note"'
)


@dataclass(frozen=True)
class Obligations:
    """What a proposal must be verified with before it may be applied.

    `plan` is the proposal's own plan or the one the runtime made (`None`: nothing
    runs); `refusals` what cannot be established and refuses it now (nothing staged,
    nothing run); `notes` what was not established but is let through (a strategy
    that only needs a note, or a caller that opted out).
    """

    plan: VerificationPlan | None
    refusals: tuple[PatchFailure, ...] = ()
    notes: tuple[str, ...] = ()


def opted_out(profile_set: ProfileSet, allow_unverified: bool) -> bool:
    """True when unestablished obligations are let through with a note, not refused."""
    return allow_unverified or profile_set.unverified is Unverified.NOTE


def expected_checks(proposal: PatchProposal) -> tuple[PostconditionType, ...]:
    """The expected postconditions only a profile can establish (TESTS_PASS, COMPILES)."""
    return tuple(
        dict.fromkeys(
            PostconditionType(p.type)
            for p in proposal.expected_postconditions
            if isinstance(p, Compiles | TestsPass)
        )
    )


def obligations(
    proposal: PatchProposal,
    profile_set: ProfileSet,
    *,
    allow_unverified: bool = False,
    runs: bool = True,
    why_not: str = "this call runs no repository program unless --verify is given",
) -> Obligations:
    """The plan to run for `proposal`, and what it cannot establish (refused or noted).

    Run after `check_plan` passed. A proposal's own plan is taken as it is (`check_plan`
    made sure it decides every expected postcondition). Without one, `implicit_plan`
    makes one; an expected TESTS_PASS/COMPILES no profile decides is
    POSTCONDITION_UNVERIFIED, and a minimum no profile reaches is INSUFFICIENT_EVIDENCE
    for AST_TRANSFORM, HYBRID and BUILD_TOOL_GENERATED, a note for the others — unless
    the caller opted out (`allow_unverified`, `[verify] unverified = "note"`).
    With `runs` false (the call runs no repository program, or the repository is not
    trusted: `why_not` says which) the plan the runtime would make is not run: what it
    would have established is judged as not established.
    """
    if proposal.verification_plan is not None:
        return Obligations(proposal.verification_plan)
    loose = opted_out(profile_set, allow_unverified)
    plan = implicit_plan(proposal, profile_set)
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    refusals: list[PatchFailure] = []
    notes: list[str] = []
    unrun = ""
    if plan is not None and not runs:
        unrun = f"the workspace's profiles ({', '.join(plan.profile_names())}) were not run"
        notes.append(f"not verified: {unrun}; {why_not}")
        plan = None
    profiles = [p for n in (plan.profile_names() if plan else ()) if (p := profile_set.get(n))]
    reached = plan_level(plan, profiles) if plan is not None else EvidenceLevel.SYNTAX
    if plan is not None:
        notes.append(
            f"no verification_plan: {proposal.strategy.value} asks for {required.label} "
            f"evidence, so the workspace's profiles run ({', '.join(plan.profile_names())})"
        )
    if required > EvidenceLevel.SYNTAX and reached < required:
        auto = profile_set.unplanned is Unplanned.AUTO
        why = unrun or (
            "no profile in this workspace reaches it"
            if auto
            else "the workspace sets unplanned = note"
        )
        text = (
            f"not verified: {proposal.strategy.value} asks for {required.label} evidence, the "
            f"proposal has no verification_plan and {why}"
        )
        if auto and proposal.strategy in _REFUSED_UNPLANNED and not loose:
            refusals.append(_insufficient(proposal, required, reached, why, _MINIMUM_HINT))
        else:
            ran = "" if plan is not None else " (only the syntax guard ran)"
            notes.append(text + ran + (" — allowed by the caller" if auto and loose else ""))
    for kind in expected_checks(proposal):
        if any(p.kind in _PROVES[kind] for p in profiles):
            continue
        why = unrun or (
            "no profile of this workspace decides it"
            if profile_set.unplanned is Unplanned.AUTO
            else f"the workspace sets unplanned = {profile_set.unplanned.value}: nothing runs"
        )
        failure = unverified_failure(kind, f"{why} (a {_kinds(kind)} profile)")
        if loose:
            notes.append(f"not verified: {failure.message} — allowed by the caller")
        else:
            refusals.append(failure)
    return Obligations(plan, tuple(refusals), tuple(notes))


def unverified_failure(kind: PostconditionType, why: str) -> PatchFailure:
    """POSTCONDITION_UNVERIFIED for an expected `kind` nothing established."""
    return PatchFailure(
        FailureCode.POSTCONDITION_UNVERIFIED,
        f"{kind.value} is expected but was not established: {why}",
        hint=_CONFIGURE_HINT,
        rule=kind.value,
    )


def _kinds(kind: PostconditionType) -> str:
    return " or ".join(k.value for k in _PROVES[kind])


def implicit_plan(proposal: PatchProposal, profile_set: ProfileSet) -> VerificationPlan | None:
    """The plan the runtime runs for a proposal without one (`unplanned = "auto"`).

    The workspace's profiles that reach the strategy's minimum: build and typecheck
    profiles for compile (test profiles when there are none), test profiles for the
    test levels (run whole for full-tests); then, for an expected TESTS_PASS or
    COMPILES none of those decides, the profiles that do. `None` when the proposal has
    a plan, or nothing here needs or can run.
    """
    if proposal.verification_plan is not None or profile_set.unplanned is not Unplanned.AUTO:
        return None
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    by_kind = {
        kind: sorted(n for n, p in profile_set.profiles.items() if p.kind is kind)
        for kind in ProfileKind
    }
    names: list[str] = []
    full = False
    if required > EvidenceLevel.SYNTAX:
        if required is EvidenceLevel.COMPILE:
            level_names = by_kind[ProfileKind.BUILD] + by_kind[ProfileKind.TYPECHECK]
            level_names = level_names or by_kind[ProfileKind.TEST]
        else:
            level_names = by_kind[ProfileKind.TEST]
        found = [p for n in level_names if (p := profile_set.get(n)) is not None]
        if level_names:
            level_plan = VerificationPlan(
                profiles=tuple(level_names), full=required is EvidenceLevel.FULL_TESTS
            )
            if plan_level(level_plan, found) >= required:
                names.extend(level_names)
                full = level_plan.full
    for kind in expected_checks(proposal):
        if any(p.kind in _PROVES[kind] for n in names if (p := profile_set.get(n))):
            continue
        if kind is PostconditionType.COMPILES:
            deciding = by_kind[ProfileKind.BUILD] + by_kind[ProfileKind.TYPECHECK]
            names.extend(deciding or by_kind[ProfileKind.TEST])
        else:
            names.extend(by_kind[ProfileKind.TEST])
    if not names:
        return None
    return VerificationPlan(profiles=tuple(dict.fromkeys(names)), full=full)


def plan_verifier(
    proposal: PatchProposal,
    root: Path,
    profile_set: ProfileSet,
    *,
    top: int = DEFAULT_TOP,
    cache: bool = True,
    trust: bool | None = None,
    allow_unverified: bool = False,
    implicit: bool = False,
) -> Verifier:
    """The verifier `review_and_commit` runs on the staged changes.

    `cache` false (no audit record wanted) keeps the base-run cache untouched too.
    `trust` is `verify_changes`' (an untrusted repository runs nothing: the report's
    UNTRUSTED_REPOSITORY refuses the change); `allow_unverified` lets a profile `error`
    or an unestablished postcondition through with a note instead of refusing.
    `implicit`: the plan is the runtime's own (`unplanned = "auto"`), not the proposal's:
    for a hand edit, a profile that established nothing is a note (ADR 0030).
    """
    plan = proposal.verification_plan
    assert plan is not None  # only made for proposals with a plan
    loose = opted_out(profile_set, allow_unverified)

    def run(changes: Sequence[FileChange]) -> AttemptVerdict:
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
        return _verdict(proposal, plan, profile_set, report, top, loose=loose, implicit=implicit)

    return run


def _verdict(
    proposal: PatchProposal,
    plan: VerificationPlan,
    profile_set: ProfileSet,
    report: VerifyReport,
    top: int,
    *,
    loose: bool,
    implicit: bool = False,
) -> AttemptVerdict:
    failures: list[PatchFailure] = list(report.errors)
    unestablished: list[PatchFailure] = []
    # The runtime's own plan for a hand edit (DIRECT_FILE_EDIT, UNIFIED_DIFF) owes no
    # evidence the proposal did not ask for: a profile that established nothing is said,
    # as a workspace without profiles is (ADR 0030); what the proposal expects still binds.
    soft = (
        implicit and proposal.strategy not in _REFUSED_UNPLANNED and not expected_checks(proposal)
    )
    unproven: list[PatchFailure] = []
    for outcome in report.outcomes:
        if outcome.verdict is Verdict.FAILED:
            failures.append(_broken(outcome, top))
        elif outcome.verdict is Verdict.ERROR:
            (unproven if soft else unestablished).append(_errored(outcome, top))
    results = tuple(_decide(kind, report) for kind in expected_checks(proposal))
    failures.extend(
        PatchFailure(
            FailureCode.POSTCONDITION_FAILED,
            f"{r.type.value} failed: {r.evidence}",
            rule=r.type.value,
        )
        for r in results
        if r.status is ConditionStatus.FAILED
    )
    unestablished.extend(
        unverified_failure(PostconditionType(r.type.value), r.evidence)
        for r in results
        if r.status in (ConditionStatus.ERROR, ConditionStatus.NOT_CHECKED)
    )
    required = profile_set.required_level(proposal.strategy, high_risk=proposal.risk is Risk.HIGH)
    if not failures and not unestablished and not unproven and report.level < required:
        failures.append(_insufficient(proposal, required, report.level, "the runs proved less"))
    notes: list[str] = [
        f"verified ({report.level.label}): "
        + ", ".join(f"{o.profile} {o.verdict.value}" for o in report.outcomes)
    ]
    notes.extend(f"not verified: {f.message}" for f in unproven)
    if failures and plan.keep_on_failure:
        notes.append("kept although verification failed: the plan says keep_on_failure")
    if unestablished and loose:
        notes.extend(f"not verified: {f.message} — allowed by the caller" for f in unestablished)
        unestablished = []
    return AttemptVerdict(
        postconditions=results,
        failures=(*failures, *unestablished),
        evidence=report.evidence,
        # keep_on_failure keeps a change the tools found broken, never one they could not check
        keep=plan.keep_on_failure and not unestablished,
        notes=tuple(notes),
    )


def _decide(kind: PostconditionType, report: VerifyReport) -> ConditionResult:
    deciding = [o for o in report.outcomes if o.kind in _PROVES[kind]]
    if not deciding:
        return ConditionResult(kind, ConditionStatus.NOT_CHECKED, "no profile checks it")
    broken = [o.profile for o in deciding if o.verdict is Verdict.FAILED]
    if broken:
        return ConditionResult(kind, ConditionStatus.FAILED, "broken by: " + ", ".join(broken))
    errored = [o for o in deciding if o.verdict is Verdict.ERROR]
    if errored:
        return ConditionResult(
            kind,
            ConditionStatus.ERROR,
            "could not establish: " + "; ".join(f"{o.profile}: {o.reason}" for o in errored),
        )
    names = ", ".join(o.profile for o in deciding)
    return ConditionResult(kind, ConditionStatus.PASSED, f"passed: {names}")


def _errored(outcome: ProfileOutcome, top: int) -> PatchFailure:
    """VERIFICATION_ERROR: a profile ran but established nothing (never a pass)."""
    run = next((r for r in outcome.runs if r.verdict is Verdict.ERROR), None)
    parsed = [f for f in (run.failures if run else ()) if f.code not in UNPARSED_CODES]
    shown = [f.message.strip().splitlines()[0] for f in parsed[:top] if f.message.strip()]
    detail = ("; " + "; ".join(m for m in shown if m)) if any(shown) else ""
    return PatchFailure(
        FailureCode.VERIFICATION_ERROR,
        f"profile {outcome.profile!r} could not establish anything: {outcome.reason}{detail}"[
            :2000
        ],
        hint="make the profile runnable here (the tool installed, the dependencies present, "
        "a valid configuration: docs/verify.md), or opt out with --allow-unverified; "
        "`patchsmith show` prints the run",
        rule=outcome.profile,
    )


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
    proposal: PatchProposal,
    required: EvidenceLevel,
    reached: EvidenceLevel,
    why: str,
    hint: str = "name profiles in verification_plan that reach it (docs/verify.md, the pyramid)",
) -> PatchFailure:
    risk = " (raised for risk HIGH)" if proposal.risk is Risk.HIGH else ""
    return PatchFailure(
        FailureCode.INSUFFICIENT_EVIDENCE,
        f"{proposal.strategy.value} needs {required.label} evidence{risk}; {why} "
        f"(reaches {reached.label})",
        hint=hint,
        rule="minimum_evidence",
    )
