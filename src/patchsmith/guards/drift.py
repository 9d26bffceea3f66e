"""How far a rewrite drifted outside its task: what the review guard measures.

Hunks outside the declared regions, formatting-only hunks, imports whose order changed
and comment lines that are gone, read from the change's line diff. Apart from the guard
(`guards.review`) so that a check whose changes are too small to review never loads it
(docs/decisions/0047).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patchsmith.policy import ReviewPolicy
from patchsmith.runtime.diffstat import LineDiff, line_diff, lines_of

if TYPE_CHECKING:
    from patchsmith.model.proposal import TargetRegion

__all__ = ["HUNK_GAP", "Drift", "measure_drift"]

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
