"""Review guard: a large rewrite may not drift outside what it set out to change.

A model that read a third of a file and wrote all of it back tends to leave
traces a reviewer has to hunt for: imports reordered, comments dropped, lines
re-indented or re-wrapped, methods touched that the task never mentioned. This
guard measures that drift on each large file change and refuses it above the
policy's `[policy.review]` thresholds, listing what drifted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.policy import ReviewPolicy
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import (
    LineDiff,
    change_opcodes,
    diff_stat,
    line_diff,
    lines_of,
    text_of,
)

if TYPE_CHECKING:
    from patchsmith.model.proposal import TargetRegion

__all__ = ["Drift", "ReviewGuard", "measure_drift"]

HUNK_GAP = 6
"""Changes further apart than this many unchanged lines are separate hunks (3 + 3 context)."""

_IMPORT = re.compile(
    r"^\s*(?:import\s|from\s+\S+\s+import\s|#include\s|use\s+[\w:]+|require\s*\(|"
    r"const\s+\w+\s*=\s*require\s*\()"
)
_COMMENT = re.compile(r"^\s*(?:#(?!!|include\b)|//|/\*|\*(?!\*?\s*$)|--\s)")


@dataclass(frozen=True)
class Drift:
    """What one file change did besides its task, with old-file line numbers (1-based)."""

    path: str
    changed_lines: int
    unrelated_hunks: tuple[tuple[int, int], ...]
    """Old-line ranges of hunks outside every declared region (only when regions are declared)."""
    formatting_hunks: tuple[tuple[int, int], ...]
    """Old-line ranges of hunks that change only whitespace or line wrapping."""
    imports_reordered: bool
    lost_comments: tuple[int, ...]
    """Old line numbers of comment lines whose text appears nowhere in the new file."""

    def violations(self, review: ReviewPolicy) -> list[str]:
        """Each threshold of `review` this drift exceeds, as a phrase naming the lines."""
        found: list[str] = []
        if _over(len(self.unrelated_hunks), review.max_unrelated_hunks):
            found.append(
                f"hunks outside the declared regions: {len(self.unrelated_hunks)} "
                f"({_ranges(self.unrelated_hunks)}; limit {review.max_unrelated_hunks})"
            )
        if _over(len(self.formatting_hunks), review.max_formatting_hunks):
            found.append(
                f"formatting-only hunks: {len(self.formatting_hunks)} "
                f"({_ranges(self.formatting_hunks)}; limit {review.max_formatting_hunks})"
            )
        if self.imports_reordered and not review.allow_import_reorder:
            found.append("imports reordered")
        if _over(len(self.lost_comments), review.max_lost_comments):
            spans = [(n, n) for n in self.lost_comments]
            found.append(
                f"comment lines lost: {len(self.lost_comments)} "
                f"({_ranges(spans)}; limit {review.max_lost_comments})"
            )
        return found


def _over(count: int, limit: int | None) -> bool:
    return limit is not None and count > limit


def _ranges(spans: Sequence[tuple[int, int]]) -> str:
    shown = [f"{a}-{b}" if a != b else f"{a}" for a, b in spans[:8]]
    word = "line" if len(spans) == 1 and spans[0][0] == spans[0][1] else "lines"
    return f"{word} " + ", ".join(shown) + (", ..." if len(spans) > 8 else "")


def measure_drift(
    path: str,
    old_text: str,
    new_text: str,
    regions: Sequence[TargetRegion] = (),
    margin: int = 3,
    diff: LineDiff[str] | None = None,
) -> Drift:
    """The drift of rewriting `old_text` as `new_text`; `regions` are the targets in `path`.

    `diff` is the change's line diff when already known (`change_opcodes`); every
    statistic is read from its removed and added lines, never from the unchanged ones.
    """
    if diff is None:
        diff = line_diff(old_text, new_text, None)
    hunks = _hunks(diff.opcodes)
    changed = sum((i2 - i1) + (j2 - j1) for group in hunks for _, i1, i2, j1, j2 in group)
    spans = [_old_span(group) for group in hunks]
    unrelated: tuple[tuple[int, int], ...] = ()
    if regions:
        unrelated = tuple(
            span
            for span in spans
            if not any(
                span[0] <= r.end_line + margin and span[1] >= r.start_line - margin for r in regions
            )
        )
    removed = [diff.old.lines(i1, i2) for group in hunks for _, i1, i2, _, _ in group]
    added = [diff.new.lines(j1, j2) for group in hunks for _, _, _, j1, j2 in group]
    formatting = tuple(
        span for span, group in zip(spans, hunks, strict=True) if _formatting_only(diff, group)
    )
    imports_touched = any(_IMPORT.match(line) for part in (*removed, *added) for line in part)
    return Drift(
        path=path,
        changed_lines=changed,
        unrelated_hunks=unrelated,
        formatting_hunks=formatting,
        imports_reordered=imports_touched and _imports_reordered(old_text, new_text),
        lost_comments=_lost_comments(diff, hunks, new_text),
    )


_Opcode = tuple[str, int, int, int, int]


def _hunks(opcodes: Sequence[_Opcode]) -> list[list[_Opcode]]:
    groups: list[list[_Opcode]] = []
    for opcode in opcodes:
        if opcode[0] == "equal":
            continue
        if groups and opcode[1] - groups[-1][-1][2] <= HUNK_GAP:
            groups[-1].append(opcode)
        else:
            groups.append([opcode])
    return groups


def _old_span(group: list[_Opcode]) -> tuple[int, int]:
    # 1-based inclusive old lines; a pure insertion sits between two lines: name the one before
    start = group[0][1] + 1
    end = max(group[-1][2], start)
    return (min(start, end), end)


def _formatting_only(diff: LineDiff[str], group: list[_Opcode]) -> bool:
    removed = "".join(
        "".join(line.split()) for _, i1, i2, _, _ in group for line in diff.old.lines(i1, i2)
    )
    added = "".join(
        "".join(line.split()) for _, _, _, j1, j2 in group for line in diff.new.lines(j1, j2)
    )
    return removed == added and any(i1 != i2 or j1 != j2 for _, i1, i2, j1, j2 in group)


def _imports_reordered(old_text: str, new_text: str) -> bool:
    """Whether the import lines both texts share come in another order (asked only when
    the change adds or removes an import line: otherwise the order is the same)."""
    old_imports = [line.strip() for line in lines_of(old_text) if _IMPORT.match(line)]
    new_imports = [line.strip() for line in lines_of(new_text) if _IMPORT.match(line)]
    common = set(old_imports) & set(new_imports)
    kept_old = [line for line in dict.fromkeys(old_imports) if line in common]
    kept_new = [line for line in dict.fromkeys(new_imports) if line in common]
    return kept_old != kept_new


_SEARCHED_ALONE = 8
"""Lost-comment candidates looked for one by one in the new text; past that, the whole
text is squeezed once."""


def _lost_comments(
    diff: LineDiff[str], hunks: list[list[_Opcode]], new_text: str
) -> tuple[int, ...]:
    """Old line numbers of removed comment lines whose text is nowhere in the new file.

    A comment line in an unchanged stretch is kept; a removed one is kept when its text
    (without whitespace) is an added comment line, or anywhere in the new text with
    whitespace removed (a comment may move into code as a trailing comment). This is
    the whole file's count: a comment text the new file lacks is removed everywhere.
    """
    added = {
        _comment_key(line)
        for group in hunks
        for _, _, _, j1, j2 in group
        for line in diff.new.lines(j1, j2)
        if _COMMENT.match(line)
    }
    candidates: list[tuple[int, str]] = []
    for group in hunks:
        for _, i1, i2, _, _ in group:
            for number, line in enumerate(diff.old.lines(i1, i2), start=i1 + 1):
                if not _COMMENT.match(line):
                    continue
                key = _comment_key(line)
                if key and key not in added:
                    candidates.append((number, key))
    if not candidates:
        return ()
    keys = {key for _, key in candidates}
    if len(keys) > _SEARCHED_ALONE:
        squeezed = "".join(new_text.split())
        present = {key for key in keys if key in squeezed}
    else:
        present = {key for key in keys if _spaced(key).search(new_text)}
    return tuple(number for number, key in candidates if key not in present)


def _spaced(key: str) -> re.Pattern[str]:
    """`key` with any whitespace allowed between its characters (as in a squeezed text)."""
    return re.compile(r"\s*".join(re.escape(char) for char in key))


def _comment_key(line: str) -> str:
    return "".join(line.split())


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
