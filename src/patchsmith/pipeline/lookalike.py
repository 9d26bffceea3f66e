"""A repair must stay at the look-alike the refused edit named.

When an edit is refused with look-alike regions (`PatchFailure.lookalikes`), the repair
loop remembers them. A later reply in the same milestone is first located without writing
(`propose(check=True)`); an edit of that file that lands inside a look-alike other than the
one the refused edit's line numbers named, while the file is still the version the refusal
described (`current_sha256`), is refused as AMBIGUOUS_MATCH, not applied: a model that
rebuilt its hunk from the wrong region would otherwise edit the wrong block exactly. When
the refused edit named none of them, nothing tells which one it was for: an edit landing in
any of them is refused, and a whole-file write is the way out
(docs/decisions/0029-one-rule-for-rival-candidates.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.errors import FailureCode, LookAlike, PatchFailure
from patchsmith.model.report import ApplyReport, HunkPlacement

__all__ = ["Target", "strayed", "targets_of"]


@dataclass(frozen=True)
class Target:
    """The look-alike a refused edit of `path` named, and the others, in version `sha256`."""

    path: str
    sha256: str
    named: LookAlike | None
    """None when the refused edit's line numbers named none of them."""
    others: tuple[LookAlike, ...]


def targets_of(failures: Iterable[PatchFailure]) -> list[Target]:
    """The look-alikes of refused edits, split into the named one and the others."""
    found = []
    for failure in failures:
        if failure.file is None or failure.current_sha256 is None:
            continue
        named = [x for x in failure.lookalikes if x.named]
        others = tuple(x for x in failure.lookalikes if not x.named)
        if len(failure.lookalikes) >= 2 and len(named) <= 1:
            found.append(
                Target(failure.file, failure.current_sha256, named[0] if named else None, others)
            )
    return found


def _meets(line: int, size: int, region: LookAlike) -> bool:
    """Whether lines [line, line + size) overlap `region` (placements give only their first
    line; a repair is about as long as the look-alike it was rebuilt from)."""
    return line <= region.end and region.start < line + size


def _sha256(root: Path, path: str) -> str | None:
    try:
        return hashlib.sha256((root / path).read_bytes()).hexdigest()
    except OSError:
        return None


def strayed(check: ApplyReport, targets: Sequence[Target], root: Path) -> PatchFailure | None:
    """The refusal for the first located edit of `check` that landed in a look-alike other
    than the one its file's refused edit named; None when every edit stays clear."""
    for report in check.files:
        mine = [t for t in targets if t.path == report.path]
        if not mine or _sha256(root, report.path) not in {t.sha256 for t in mine}:
            continue
        for placed in report.placements:
            for target in mine:
                failure = _strayed(report.path, placed, target)
                if failure is not None:
                    return failure
    return None


def _strayed(path: str, placed: HunkPlacement, target: Target) -> PatchFailure | None:
    named = target.named
    size = max(x.end - x.start + 1 for x in (*target.others, *([named] if named else [])))
    if named is not None and _meets(placed.line, size, named):
        return None
    other = next((x for x in target.others if _meets(placed.line, size, x)), None)
    if other is None:
        return None
    where = (
        f"edit {placed.hunk + 1} of {path} landed at line {placed.line}, in lines "
        f"{other.start}-{other.end}"
    )
    if named is not None:
        message = (
            f"{where}, a look-alike of lines {named.start}-{named.end} that the refused "
            "edit's line numbers named"
        )
        hint = (
            f"Nothing was written. The change is for lines {named.start}-{named.end} of "
            f"{path}: rebuild the edit from those lines (their exact current text), not "
            "from the look-alike."
        )
        places: tuple[int, ...] = tuple(sorted((named.start, other.start)))
        listed = (named, *target.others)
    else:
        spans = ", ".join(f"{x.start}-{x.end}" for x in target.others)
        message = (
            f"{where}, one of the look-alikes (lines {spans}) the refused edit resembled "
            "while its line numbers named none of them"
        )
        hint = (
            f"Nothing was written. Nothing tells which look-alike of {path} the change is "
            "for: send the file's whole new content instead of an edit."
        )
        places = tuple(x.start for x in target.others)
        listed = target.others
    return PatchFailure(
        FailureCode.AMBIGUOUS_MATCH,
        message,
        file=path,
        hunk=placed.hunk,
        hint=hint,
        current_sha256=target.sha256,
        candidates=places,
        lookalikes=listed,
    )
