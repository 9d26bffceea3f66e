"""The closest real region of a file to what a model thought was there, with line numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from patchsmith.engine.locate import fold_punctuation

__all__ = ["closest_region", "numbered_excerpt"]

MAX_EXCERPT_LINES = 30


def _key(text: str) -> str:
    return " ".join(fold_punctuation(text).split())


def closest_region(
    contents: Sequence[str], wanted: Sequence[str], hint: int | None = None
) -> tuple[int, int] | None:
    """0-based [start, end) of the file region most like `wanted`; None for an empty file.

    Each non-blank wanted line votes for the start its every occurrence implies;
    the start with most votes wins (ties go to the one nearest `hint`). With no
    votes, the region around `hint` (or the top of the file) is returned.
    """
    if not contents:
        return None
    size = max(len(wanted), 1)
    positions: dict[str, list[int]] = {}
    wanted_keys = {_key(w) for w in wanted if w.strip()}
    for i, line in enumerate(contents):
        k = _key(line)
        if k in wanted_keys:
            positions.setdefault(k, []).append(i)
    votes: Counter[int] = Counter()
    for j, w in enumerate(wanted):
        for p in positions.get(_key(w), ())[:200]:
            votes[p - j] += 1
    if votes:
        best = max(votes.values())
        tied = [s for s, v in votes.items() if v == best]
        anchor = hint if hint is not None else 0
        start = min(tied, key=lambda s: (abs(s - anchor), s))
    else:
        start = hint if hint is not None else 0
    start = min(max(start, 0), max(len(contents) - 1, 0))
    return start, min(start + size, len(contents))


def numbered_excerpt(
    contents: Sequence[str], start: int, end: int, *, margin: int = 3
) -> tuple[str, int, int]:
    """Lines [start-margin, end+margin) as `  12 | text`, at most 30; also the 1-based span."""
    lo = max(start - margin, 0)
    hi = min(end + margin, len(contents))
    if hi - lo > MAX_EXCERPT_LINES:
        hi = lo + MAX_EXCERPT_LINES
    width = len(str(hi))
    lines = [f"{i + 1:>{width}} | {contents[i]}" for i in range(lo, hi)]
    return "\n".join(lines), lo + 1, hi
