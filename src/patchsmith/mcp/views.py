"""Numbered lines of a file, bounded: what `view` and `read_file` show of a long file.

A view stops at whole lines once `max_chars` would be passed, so a 3,000-line file
comes back as a page the model can read and a note naming where to go on; only a
first line longer than the bound is cut inside itself (and says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BoundedView", "bounded_lines"]


@dataclass(frozen=True)
class BoundedView:
    """The numbered lines shown (`"  7 | text"`), and whether part of the range was left out."""

    lines: tuple[str, ...]
    truncated: bool
    cut: bool = False
    """The one line shown is longer than the bound: only its beginning is shown."""


def bounded_lines(lines: Sequence[str], first: int, last: int, max_chars: int) -> BoundedView:
    """Lines `first`..`last` (1-based, inclusive) of `lines`, numbered, within `max_chars`.

    Every line shown is counted with its number and newline. At least one line is
    shown: when the first is longer than the bound alone, its text is cut and marked.
    """
    width = len(str(max(last, 1)))
    shown: list[str] = []
    used = 0
    for number in range(first, last + 1):
        text = lines[number - 1].rstrip("\r\n")
        numbered = f"{number:>{width}} | {text}"
        if used + len(numbered) + 1 > max_chars:
            if not shown:
                cut = max(max_chars - width - 3, 0)
                note = f"[line cut at {cut} of {len(text)} characters]"
                shown.append(f"{number:>{width}} | {text[:cut]} {note}")
                return BoundedView(tuple(shown), True, cut=True)
            return BoundedView(tuple(shown), True)
        shown.append(numbered)
        used += len(numbered) + 1
    return BoundedView(tuple(shown), False)
