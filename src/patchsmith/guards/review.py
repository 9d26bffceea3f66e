"""Review guard: a large rewrite may not drift outside what it set out to change.

A model that read a third of a file and wrote all of it back tends to leave
traces a reviewer has to hunt for: imports reordered, comments dropped, lines
re-indented or re-wrapped, methods touched that the task never mentioned. This
guard measures that drift on each large file change and refuses it above the
policy's `[policy.review]` thresholds, listing what drifted. The measuring is
`guards.drift`, imported only once a change is large enough to review.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import change_opcodes, diff_stat, text_of

if TYPE_CHECKING:
    from patchsmith.guards.drift import Drift, measure_drift

__all__ = ["Drift", "ReviewGuard", "measure_drift"]


class ReviewGuard(Guard):
    """Refuse a large rewrite that drifts beyond the policy's `[policy.review]` thresholds.

    What: each updated text file sent whole (a whole-file edit or a direct
    write), whose diff has at least `min_changed_lines` changed lines, or for
    which the proposal declares `target_regions`, is measured: hunks outside
    the declared regions (widened by `region_margin`), formatting-only hunks
    (only whitespace or wrapping differs), imports whose relative order
    changed, and comment lines whose text is gone from the new file. Any count
    above its threshold refuses the change.
    Command-generated changes (a formatter's whole job is churn) are not reviewed.
    Why: a model that rewrites a whole file to change one function also changes
    what it never read carefully; reviewers miss such drift in a large diff.
    Example: a whole-file write of `app.py` that fixes one function but sorts
    the imports, with `allow_import_reorder = false`, is REVIEW_DRIFT listing
    "imports reordered".
    """

    NAME = "review"
    CODE = FailureCode.REVIEW_DRIFT
    MESSAGE = "the change drifts outside its task"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per reviewed file whose drift exceeds a threshold."""
        review = ctx.policy.review
        failures: list[PatchFailure] = []
        for change in changes:
            if change.generated_by_command or change.old_path is None:
                continue
            old = text_of(change.old_content, change.old_text)
            new = text_of(change.new_content, change.new_text)
            if old is None or new is None or old == new:
                continue
            regions = [r for r in ctx.target_regions if r.path in (change.path, change.old_path)]
            if not (regions or change.whole_content) and (
                diff_stat(change).changed_lines < review.min_changed_lines
            ):
                continue  # a small edit sent as a diff: nothing to review, skip the rest
            from patchsmith.guards.drift import measure_drift  # only for a change to review

            drift = measure_drift(
                change.path, old, new, regions, review.region_margin, change_opcodes(change)
            )
            found = drift.violations(review)
            if found:
                failures.append(
                    self.failure(
                        change.path,
                        f"{change.path}: " + "; ".join(found),
                        hint="send only the lines the task changes (a diff or "
                        "SEARCH/REPLACE of the target region), keeping imports, comments "
                        "and formatting elsewhere exactly as they are",
                    )
                )
        return failures


def __getattr__(name: str) -> object:
    """`Drift` and `measure_drift`, which live in `guards.drift` (imported on first use)."""
    if name in ("Drift", "measure_drift"):
        from patchsmith.guards import drift

        return getattr(drift, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
