"""`judge`: a deterministic rubric over a recorded attempt or run, plus an optional hook.

Each criterion reads only the store and the files as they are now, scores 0 to 1 and
says why; criteria that do not apply (no proposal to compare with, not a bug fix) are
listed but not counted. The score is the weighted mean of the criteria that apply. A
hook (any callable, e.g. the caller's LLM judge) adds one more criterion. Every
judgement is recorded in the store, next to what it judged.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.model.evidence import RunSide
from patchsmith.model.evidence import Verdict as ToolVerdict
from patchsmith.pipeline.rewind import drifted, read_snapshot, touched
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitdiff import render_git_diff
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import DB_FILE_NAME, AttemptKind, AttemptRecord, AttemptStatus, Store

__all__ = [
    "DEFAULT_LINES_PER_FILE",
    "PASS_SCORE",
    "Criterion",
    "HookVerdict",
    "JudgeHook",
    "JudgeRequest",
    "Judgement",
    "SubjectKind",
    "Verdict",
    "judge",
]

PASS_SCORE = 0.75
"""A judgement with no failed blocking criterion passes at this score or above."""

DEFAULT_LINES_PER_FILE = 200
"""The change-size budget per expected file when the proposal declares no DIFF_MAX_LINES."""

_WRITTEN = (AttemptStatus.APPLIED, AttemptStatus.PARTIAL)
_BUG_FIX = re.compile(
    r"\b(fix(es|ed|ing)?|bugs?|regressions?|crash(es|ed)?|broken|defects?|issue #?\d+)\b",
    re.IGNORECASE,
)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|specs?|__tests__|testing)/|(^|/)test_[^/]*$|_test\.[^/]+$|"
    r"\.(test|spec)\.[^/]+$|(^|/)[^/]*Tests?\.[^/]+$"
)


class SubjectKind(StrEnum):
    """What a judgement is about."""

    ATTEMPT = "attempt"
    RUN = "run"


class Verdict(StrEnum):
    """`fail`: a blocking criterion failed; `pass`: none did and the score reached
    `PASS_SCORE`; `warn`: none did, but the score is lower."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Criterion:
    """One rubric line: a score from 0 to 1, its weight, and why.

    A criterion that does not apply has `applies` false and is not counted; a
    `blocking` one that scores 0 fails the whole judgement.
    """

    name: str
    score: float
    weight: float
    reason: str
    applies: bool = True
    blocking: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "score": round(self.score, 4),
            "weight": self.weight,
            "applies": self.applies,
            "blocking": self.blocking,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class JudgeRequest:
    """What a hook is shown: the subject, its objective, its diff and the rubric's view."""

    subject: str
    kind: SubjectKind
    objective: str | None
    diff: str
    criteria: tuple[Criterion, ...]


@dataclass(frozen=True)
class HookVerdict:
    """A hook's answer: a score from 0 to 1 and why; `blocking` makes a 0 fail the judgement."""

    score: float
    reason: str
    name: str = "hook"
    blocking: bool = False


JudgeHook = Callable[[JudgeRequest], HookVerdict]
"""A caller's judge (an LLM, a reviewer bot): given the request, returns its verdict."""


@dataclass(frozen=True)
class Judgement:
    """The rubric's score and verdict on an attempt or run, criterion by criterion.

    `number` is the judgement's row in the store (`None` when not recorded).
    """

    subject: str
    kind: SubjectKind
    score: float
    verdict: Verdict
    criteria: tuple[Criterion, ...]
    attempts: tuple[str, ...] = ()
    number: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """True unless the verdict is `fail`."""
        return self.verdict is not Verdict.FAIL

    def to_json(self) -> dict[str, object]:
        """The JSON object `patchsmith judge --json` prints (and the store keeps)."""
        return {
            "status": "judged",
            "subject": self.subject,
            "kind": self.kind.value,
            "score": round(self.score, 4),
            "verdict": self.verdict.value,
            "criteria": [c.to_json() for c in self.criteria],
            "attempts": list(self.attempts),
            "number": self.number,
            "notes": list(self.notes),
            "errors": [],
        }


def judge(
    subject: str,
    root: str | os.PathLike[str],
    *,
    kind: SubjectKind | str | None = None,
    hook: JudgeHook | None = None,
    hook_weight: float = 2.0,
    record: bool = True,
) -> Judgement:
    """Judge the attempt (id or unique prefix) or run `subject` recorded under `root`.

    `kind` forces reading `subject` as an attempt or a run; by default an attempt id
    wins. `hook` is called once with a `JudgeRequest`; its verdict becomes the
    criterion `hook:<name>` of weight `hook_weight` (a hook that raises or answers
    out of range is noted, not counted). With `record`, the judgement is kept in
    the store. Raises `PatchRefused` (RECORD_NOT_FOUND) for an unknown subject.
    """
    try:
        workspace = Workspace(root, recover=False)
    except ValueError as exc:
        raise PatchRefused([PatchFailure(FailureCode.FILE_NOT_FOUND, str(exc))]) from None
    database = workspace.real_root / STATE_DIR_NAME / DB_FILE_NAME
    if not database.is_file():
        raise _not_found(f"nothing is recorded under {workspace.root}")
    wanted = None if kind is None else SubjectKind(kind)
    with Store.shared(database.parent) as store:
        records, subject_kind, subject = _subject(store, subject, wanted)
    notes: list[str] = []
    if subject_kind is SubjectKind.ATTEMPT:
        criteria = _attempt_criteria(workspace, records[0])
    else:
        # A dry run (`--check`) is a check, recorded with the run but never one of its
        # attempts: a refused preview must not be the run's last attempt.
        attempts = [r for r in records if not r.is_check]
        checks = len(records) - len(attempts)
        if checks and attempts:
            notes.append(f"{checks} dry run(s) recorded as checks, not judged as attempts")
        records = attempts or records
        criteria = _run_criteria(workspace, records)
    if hook is not None:
        extra = _hooked(hook, hook_weight, subject, subject_kind, records, criteria)
        if isinstance(extra, str):
            notes.append(extra)
        else:
            criteria = (*criteria, extra)
    judgement = _scored(subject, subject_kind, criteria, tuple(r.id for r in records), notes)
    if not record:
        return judgement
    with Store.shared(database.parent) as store:
        number = store.record_judgement(
            subject,
            subject_kind.value,
            judgement.score,
            judgement.verdict.value,
            json.dumps(judgement.to_json(), ensure_ascii=False),
        )
    return Judgement(
        judgement.subject,
        judgement.kind,
        judgement.score,
        judgement.verdict,
        judgement.criteria,
        judgement.attempts,
        number,
        judgement.notes,
    )


def _not_found(message: str) -> PatchRefused:
    return PatchRefused(
        [
            PatchFailure(
                FailureCode.RECORD_NOT_FOUND,
                message,
                hint="attempt ids and run ids are listed by `patchsmith log`",
            )
        ]
    )


def _subject(
    store: Store, subject: str, wanted: SubjectKind | None
) -> tuple[list[AttemptRecord], SubjectKind, str]:
    if wanted is not SubjectKind.RUN:
        ids = store.find_ids(subject, limit=20)
        if len(ids) == 1:
            found = store.get(ids[0])
            if found is not None:
                return [found], SubjectKind.ATTEMPT, found.id
        if len(ids) > 1 and wanted is SubjectKind.ATTEMPT:
            raise _not_found(f"id prefix {subject!r} matches several attempts: {', '.join(ids)}")
    if wanted is not SubjectKind.ATTEMPT:
        records = store.run_attempts(subject)
        if records:
            return records, SubjectKind.RUN, subject
    what = "attempt or run" if wanted is None else wanted.value
    raise _not_found(f"no {what} {subject!r} is recorded")


# criteria


def _attempt_criteria(workspace: Workspace, rec: AttemptRecord) -> tuple[Criterion, ...]:
    proposal = _proposal(rec.proposal_json)
    now = read_snapshot(workspace, touched([rec]))
    stale = drifted(now, rec) if rec.status in _WRITTEN else []
    return (
        _outcome([rec]),
        _guards([rec]),
        _verification([rec], proposal),
        _scope(_paths([rec]), proposal),
        _size(_changed_lines([rec]), len(_paths([rec])), proposal),
        Criterion(
            "drift",
            0.0 if stale else 1.0,
            1.0,
            (
                "changed since the attempt: " + ", ".join(f.path for f in stale)
                if stale
                else "every file is still as the attempt left it"
            ),
            applies=rec.status in _WRITTEN,
        ),
        _test_added(_paths([rec]), proposal),
    )


def _run_criteria(workspace: Workspace, records: list[AttemptRecord]) -> tuple[Criterion, ...]:
    from patchsmith.pipeline.freeze import run_net_change

    proposal = next(
        (p for r in reversed(records) if (p := _proposal(r.proposal_json)) is not None), None
    )
    written = [r for r in records if r.status in _WRITTEN and r.files]
    drift: Criterion
    net_paths: list[str] = []
    lines = 0
    try:
        _, changes = run_net_change(workspace, records[0].run_id)
    except PatchRefused as refusal:
        codes = {f.code for f in refusal.failures}
        stale = [f.file or f.message for f in refusal.failures if f.code is FailureCode.STALE_FILE]
        drift = Criterion(
            "drift",
            0.0 if stale else 1.0,
            2.0,
            (
                "changed since the run: " + ", ".join(stale)
                if stale
                else "no net change to compare: " + refusal.failures[0].message
            ),
            applies=bool(stale) or FailureCode.NO_CHANGE not in codes,
            blocking=True,
        )
    else:
        net_paths = [c.path for c in changes]
        lines = sum(_diff_lines(c) for c in changes)
        drift = Criterion("drift", 1.0, 2.0, "every file is as the run left it", blocking=True)
    paths = net_paths or _paths(written)
    return (
        _outcome(records),
        _guards(written or records[-1:]),
        _verification(written or records[-1:], proposal),
        _run_scope(records),
        _size(lines or _changed_lines(written), len(paths), proposal),
        drift,
        _test_added(paths, proposal),
    )


def _outcome(records: Sequence[AttemptRecord]) -> Criterion:
    last = records[-1]
    scores = {
        AttemptStatus.APPLIED: 1.0,
        AttemptStatus.ALREADY_APPLIED: 1.0,
        AttemptStatus.CHECKED: 0.75,
        AttemptStatus.PARTIAL: 0.5,
        AttemptStatus.REFUSED: 0.0,
    }
    if len(records) == 1:
        reason = f"the attempt was {last.status.value}"
        if last.failures:
            reason += ": " + "; ".join(f.code.value for f in last.failures[:5])
    else:
        refused = sum(r.status is AttemptStatus.REFUSED for r in records)
        reason = f"{len(records)} attempts ({refused} refused); the last was {last.status.value}"
    return Criterion("outcome", scores[last.status], 3.0, reason, blocking=True)


def _guards(records: Sequence[AttemptRecord]) -> Criterion:
    from patchsmith.pipeline.revert import CONTENT_GUARDS

    decisions = [d for r in records for d in r.decisions]
    if not decisions:
        return Criterion("guards", 0.0, 2.0, "no guard ran", applies=False)
    failed = sorted({d.name for d in decisions if not d.passed})
    if failed:
        return Criterion("guards", 0.0, 2.0, "failed: " + ", ".join(failed), blocking=True)
    # A revert turns the content guards off by design (it writes back bytes the files
    # had): that is the revert, not the policy disabling them.
    disabled: set[str] = set()
    reverts: list[str] = []
    for record in records:
        off = {d.name for d in record.decisions if d.detail == "disabled by the policy"}
        if record.kind is AttemptKind.REVERT:
            if off & set(CONTENT_GUARDS):
                reverts.append(record.id)
            off -= set(CONTENT_GUARDS)
        disabled |= off
    reason = f"{len({d.name for d in decisions})} guards passed"
    if disabled:
        reason += f" ({len(disabled)} disabled by the policy: {', '.join(sorted(disabled))})"
    if reverts:
        reason += (
            f"; reverted by {', '.join(reverts)}, which writes back the bytes the files had "
            "(the content guards are off for a revert)"
        )
    return Criterion("guards", 1.0, 2.0, reason, blocking=True)


def _verification(
    records: Sequence[AttemptRecord], proposal: dict[str, object] | None
) -> Criterion:
    runs = [e for r in records for e in r.evidence if e.side is not RunSide.BASE]
    risk = str((proposal or {}).get("risk", "low"))
    if not runs:
        if risk in ("high", "critical"):
            return Criterion(
                "verification",
                0.0,
                2.0,
                f"no verification evidence for a {risk}-risk change",
                blocking=True,
            )
        return Criterion("verification", 0.5, 2.0, "no verification evidence recorded")
    unproven = sorted({e.profile for e in runs if e.verdict is ToolVerdict.ERROR})
    if unproven:
        return Criterion(
            "verification",
            0.0,
            2.0,
            "nothing established (verdict error: a tool missing, not a result, a timeout "
            "or a crash): " + ", ".join(unproven),
            blocking=True,
        )
    broken = [e.profile for e in runs if e.introduced or e.timed_out or e.start_error is not None]
    if broken:
        return Criterion(
            "verification",
            0.0,
            2.0,
            "failed (introduced failures, a timeout or a tool that did not start): "
            + ", ".join(sorted(set(broken))),
            blocking=True,
        )
    still = sorted({e.profile for e in runs if not e.passed})
    if still:
        return Criterion(
            "verification",
            0.75,
            2.0,
            "no failure introduced, but failing as before: " + ", ".join(still),
        )
    return Criterion(
        "verification", 1.0, 2.0, "passed: " + ", ".join(sorted({e.profile for e in runs}))
    )


def _scope(paths: Sequence[str], proposal: dict[str, object] | None) -> Criterion:
    from patchsmith.policy import matches

    expected = _strings((proposal or {}).get("expected_files"))
    if not expected:
        return Criterion("scope", 0.0, 2.0, "no expected_files to compare with", applies=False)
    if not paths:
        return Criterion("scope", 1.0, 2.0, "no file changed")
    outside = [p for p in paths if not matches(expected, p)]
    score = 1.0 - len(outside) / len(paths)
    reason = (
        "outside expected_files: " + ", ".join(outside)
        if outside
        else f"all {len(paths)} files are among expected_files"
    )
    return Criterion("scope", score, 2.0, reason)


def _run_scope(records: Sequence[AttemptRecord]) -> Criterion:
    """Scope per milestone: each attempt's files against its own proposal's expected_files.

    Reverts, and the attempts they undid, changed nothing that stayed: not counted.
    """
    from patchsmith.pipeline.revert import REVERT_PREFIX
    from patchsmith.policy import matches

    undone = {
        r.proposal_id.removeprefix(REVERT_PREFIX)
        for r in records
        if r.kind is AttemptKind.REVERT and r.status in _WRITTEN
    }
    kept = [
        r
        for r in records
        if r.status in _WRITTEN and r.kind is not AttemptKind.REVERT and r.id not in undone
    ]
    measured = total = 0
    outside: list[str] = []
    for record in kept:
        expected = _strings((_proposal(record.proposal_json) or {}).get("expected_files"))
        if not expected:
            continue
        measured += 1
        for path in _paths([record]):
            total += 1
            if not matches(expected, path):
                outside.append(f"{path} ({record.id})")
    if not measured:
        return Criterion("scope", 0.0, 2.0, "no expected_files to compare with", applies=False)
    if not total:
        return Criterion("scope", 1.0, 2.0, "no file changed")
    left = f"; {len(undone)} reverted attempt(s) not counted" if undone else ""
    reason = (
        "outside their attempt's expected_files: " + ", ".join(outside)
        if outside
        else f"all {total} changed files are among their attempt's expected_files"
    )
    return Criterion(
        "scope", 1.0 - len(outside) / total, 2.0, f"{reason} ({measured} milestone(s)){left}"
    )


def _size(lines: int, files: int, proposal: dict[str, object] | None) -> Criterion:
    declared = _postcondition(proposal, "DIFF_MAX_LINES")
    expected = len(_strings((proposal or {}).get("expected_files")))
    budget = declared if declared is not None else DEFAULT_LINES_PER_FILE * max(1, expected)
    source = "DIFF_MAX_LINES" if declared is not None else f"{budget} lines for the objective"
    max_files = _postcondition(proposal, "DIFF_MAX_FILES")
    # Down to 0 at three times the budget: a change that size answers another question.
    score = 1.0 if lines <= budget else max(0.0, 1.0 - (lines - budget) / (2 * max(budget, 1)))
    reason = f"{lines} changed lines in {files} files (budget {budget}, from {source})"
    if max_files is not None and files > max_files:
        score = min(score, 0.5)
        reason += f"; more files than DIFF_MAX_FILES {max_files}"
    return Criterion("size", score, 1.0, reason)


def _test_added(paths: Sequence[str], proposal: dict[str, object] | None) -> Criterion:
    if proposal is None:
        return Criterion("test_added", 0.0, 1.0, "no proposal states an objective", applies=False)
    text = f"{proposal.get('objective', '')} {proposal.get('rationale', '')}"
    if not _BUG_FIX.search(text):
        return Criterion("test_added", 0.0, 1.0, "the objective is not a bug fix", applies=False)
    tests = [p for p in paths if _TEST_PATH.search(p)]
    if tests:
        return Criterion("test_added", 1.0, 1.0, "a bug fix with tests: " + ", ".join(tests))
    return Criterion("test_added", 0.0, 1.0, "a bug fix that adds or changes no test")


# hook and score


def _hooked(
    hook: JudgeHook,
    weight: float,
    subject: str,
    kind: SubjectKind,
    records: list[AttemptRecord],
    criteria: tuple[Criterion, ...],
) -> Criterion | str:
    proposal = next(
        (p for r in reversed(records) if (p := _proposal(r.proposal_json)) is not None), None
    )
    objective = proposal.get("objective") if proposal else None
    diff = "".join(r.applied_diff or r.staged_diff for r in records)
    request = JudgeRequest(
        subject, kind, objective if isinstance(objective, str) else None, diff, criteria
    )
    try:
        verdict = hook(request)
    except Exception as exc:  # the caller's code: its failure is noted, never fatal
        return f"the judge hook failed and was not counted: {type(exc).__name__}: {exc}"
    if not isinstance(verdict, HookVerdict) or not 0.0 <= verdict.score <= 1.0:
        return f"the judge hook answered {verdict!r}, not a HookVerdict scored 0 to 1; not counted"
    return Criterion(
        f"hook:{verdict.name}",
        float(verdict.score),
        weight,
        verdict.reason,
        blocking=verdict.blocking,
    )


def _scored(
    subject: str,
    kind: SubjectKind,
    criteria: tuple[Criterion, ...],
    attempts: tuple[str, ...],
    notes: list[str],
) -> Judgement:
    counted = [c for c in criteria if c.applies and c.weight > 0]
    total = sum(c.weight for c in counted)
    score = sum(c.score * c.weight for c in counted) / total if total else 0.0
    if any(c.blocking and c.score == 0.0 for c in counted):
        verdict = Verdict.FAIL
    elif score >= PASS_SCORE:
        verdict = Verdict.PASS
    else:
        verdict = Verdict.WARN
    return Judgement(subject, kind, score, verdict, criteria, attempts, None, tuple(notes))


# record reading


def _proposal(text: str | None) -> dict[str, object] | None:
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _strings(value: object) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [v for v in value if isinstance(v, str)]


def _postcondition(proposal: dict[str, object] | None, kind: str) -> int | None:
    found = (proposal or {}).get("expected_postconditions")
    if not isinstance(found, list):
        return None
    values = [
        c["value"]
        for c in found
        if isinstance(c, dict) and c.get("type") == kind and isinstance(c.get("value"), int)
    ]
    return min(values) if values else None


def _paths(records: Sequence[AttemptRecord]) -> list[str]:
    return list(dict.fromkeys(f.path for r in records for f in r.files))


def _changed_lines(records: Sequence[AttemptRecord]) -> int:
    total = 0
    for record in records:
        diff = record.applied_diff or record.staged_diff
        total += sum(
            1
            for line in diff.splitlines()
            if line[:1] in ("+", "-") and not line.startswith(("+++ ", "--- "))
        )
    return total


def _diff_lines(change: FileChange) -> int:
    return sum(
        1
        for line in render_git_diff([change]).splitlines()
        if line[:1] in ("+", "-") and not line.startswith(("+++ ", "--- "))
    )
