"""Refusals that show nothing of a forbidden file: no lines, no likeness, no hash.

A file the policy forbids (`forbidden = [".env"]`) is one no edit may touch, and its
content does not leave the machine through a refusal either. An edit to it that did
not locate would otherwise answer with the file's nearest lines (the excerpt), how
alike they are (`similarity`, `lookalikes`) and its sha256; and whether an edit
located at all tells a guessed line is there. So every failure that names a
forbidden file becomes the one FORBIDDEN_PATH refusal, the same whatever was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.model.report import ApplyReport
from patchsmith.model.verdicts import DecisionStatus, GuardDecision
from patchsmith.policy import Policy, matches

__all__ = ["forbidden_patterns", "is_withheld", "withhold_forbidden"]

_CONDITIONS = frozenset({FailureCode.PRECONDITION_FAILED, FailureCode.POSTCONDITION_FAILED})
"""Left as they are: the caller's own checks, reported with what they found."""


def forbidden_patterns(rules: Policy | PatchFailure, *extra: str) -> tuple[str, ...]:
    """The patterns whose files a refusal must not show (none when the guard is off)."""
    if isinstance(rules, PatchFailure) or not rules.guard_enabled("forbidden_paths"):
        return ()
    return tuple(dict.fromkeys((*rules.forbidden, *extra)))


def withhold_forbidden(
    report: ApplyReport, patterns: Sequence[str], root: Path | None
) -> ApplyReport:
    """`report` with every failure on a forbidden file replaced by a bare FORBIDDEN_PATH.

    A path is forbidden by its name or, when it is a link inside `root`, by its
    target's. The file's report loses where its edits landed, its warnings go, and the
    guards' decisions become the forbidden_paths guard's alone (the others exist only
    when every edit located).
    """
    patterns = tuple(patterns)
    if not patterns:
        return report
    named = {f.file for f in report.errors if f.file and f.code not in _CONDITIONS}
    named |= {f.path for f in report.files}
    hidden = {path for path in named if is_withheld(patterns, path, root)}
    if not hidden:
        return report
    hint = "forbidden: " + ", ".join(patterns)
    # The guard's own refusal is kept when there is one (shorn of the file's hash).
    guarded = {f.file: f for f in report.errors if f.file and f.code is FailureCode.FORBIDDEN_PATH}
    errors: list[PatchFailure] = []
    said: set[str] = set()
    for failure in report.errors:
        if failure.file is None or failure.file not in hidden or failure.code in _CONDITIONS:
            errors.append(failure)
        elif failure.file not in said:
            said.add(failure.file)
            errors.append(_bare(guarded.get(failure.file, failure), hint))
    files = tuple(
        replace(f, hunks_located=0, placements=()) if f.path in hidden else f for f in report.files
    )
    # The guards judge only edits that located, so their decisions would tell a located
    # edit from a missed one: a refusal that withholds a file shows the one decision it
    # has either way, the forbidden_paths guard's.
    decisions = (
        GuardDecision(
            "forbidden_paths",
            FailureCode.FORBIDDEN_PATH,
            DecisionStatus.FAILED,
            tuple(f for f in errors if f.file in hidden),
        ),
    )
    warnings = tuple(w for w in report.warnings if w.file not in hidden)
    return replace(
        report, errors=tuple(errors), files=files, decisions=decisions, warnings=warnings
    )


def _bare(failure: PatchFailure, hint: str) -> PatchFailure:
    """FORBIDDEN_PATH for `failure`'s file, with nothing of the file in it."""
    path = failure.file or ""
    if failure.code is FailureCode.FORBIDDEN_PATH:
        return PatchFailure(
            failure.code, failure.message, file=path, hint=failure.hint or hint, rule=failure.rule
        )
    return PatchFailure(
        FailureCode.FORBIDDEN_PATH,
        f"path is forbidden: {path}",
        file=path,
        hint=hint,
        rule="forbidden_paths",
    )


def is_withheld(patterns: Sequence[str], path: str, root: Path | None) -> bool:
    """Whether a refusal must show nothing of `path` (its name or its link target's)."""
    if not patterns:
        return False
    if matches(patterns, path):
        return True
    if root is None:
        return False
    try:
        real_root = root.resolve()
        target = (real_root / path).resolve()
        relative = target.relative_to(real_root)
    except (OSError, ValueError, RuntimeError):
        return False
    return matches(patterns, relative.as_posix())
