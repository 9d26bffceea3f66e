"""A repair must stay at the look-alike the refused edit named.

When an edit is refused with look-alike regions (`PatchFailure.lookalikes`) and its line
numbers or `@@` anchor named one of them, the repair loop remembers that target. A later
reply in the same milestone is first located without writing (`propose(check=True)`);
an edit of that file that lands inside another look-alike, while the file is still the
version the refusal described (`current_sha256`), is refused as AMBIGUOUS_MATCH, not
applied: a model that rebuilt its hunk from the wrong region would otherwise edit the
wrong block exactly (docs/decisions/0029-one-rule-for-rival-candidates.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.errors import FailureCode, LookAlike, PatchFailure
from patchsmith.report import ApplyReport

__all__ = ["Target", "strayed", "targets_of"]


@dataclass(frozen=True)
class Target:
    """The look-alike a refused edit of `path` named, and the others, in version `sha256`."""

    path: str
    sha256: str
    named: LookAlike
    others: tuple[LookAlike, ...]


def targets_of(failures: Iterable[PatchFailure]) -> list[Target]:
    """The named look-alikes of refused edits (failures without a named one give none)."""
    found = []
    for failure in failures:
        named = [x for x in failure.lookalikes if x.named]
        if failure.file is None or failure.current_sha256 is None or len(named) != 1:
            continue
        others = tuple(x for x in failure.lookalikes if not x.named)
        if others:
            found.append(Target(failure.file, failure.current_sha256, named[0], others))
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
                size = target.named.end - target.named.start + 1
                if _meets(placed.line, size, target.named):
                    continue
                other = next((x for x in target.others if _meets(placed.line, size, x)), None)
                if other is None:
                    continue
                named = target.named
                return PatchFailure(
                    FailureCode.AMBIGUOUS_MATCH,
                    f"edit {placed.hunk + 1} of {report.path} landed at line {placed.line}, in "
                    f"lines {other.start}-{other.end}, a look-alike of lines "
                    f"{named.start}-{named.end} that the refused edit's line numbers named",
                    file=report.path,
                    hunk=placed.hunk,
                    hint=(
                        f"Nothing was written. The change is for lines {named.start}-"
                        f"{named.end} of {report.path}: rebuild the edit from those lines "
                        "(their exact current text), not from the look-alike."
                    ),
                    current_sha256=target.sha256,
                    candidates=tuple(sorted((named.start, other.start))),
                    lookalikes=(named, *target.others),
                )
    return None
