"""Where two texts differ, as a few replaced stretches, found in time linear in their size.

An incremental parser (tree-sitter's `Tree.edit`) and the syntax guard's Python region
check need to know which stretches of the old text an edit replaced. The common head and
tail are found by comparing blocks (C speed, no per-character Python loop); a middle
longer than `REFINE_ABOVE` is aligned line by line (`line_opcodes`, with its cost bound)
so that edits far apart stay apart instead of becoming one replacement of everything
between them. Works on `str` (positions in characters) and on `bytes` (positions in bytes).
"""

from __future__ import annotations

from typing import AnyStr, NamedTuple

from patchsmith.engine.linediff import line_opcodes

__all__ = ["REFINE_ABOVE", "TextEdit", "common_prefix", "common_suffix", "text_edits"]

REFINE_ABOVE = 4096
"""A differing middle longer than this (on either side) is aligned line by line."""

_BLOCK = 1 << 15
"""How much of both texts one comparison looks at while the texts still agree."""


class TextEdit(NamedTuple):
    """`old[old_start:old_end]` became `new[new_start:new_end]`; everything between two
    edits is the same in both texts."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


def common_prefix(old: AnyStr, new: AnyStr) -> int:
    """How many leading items `old` and `new` share."""
    limit = min(len(old), len(new))
    at = 0
    step = 64
    while at < limit:
        stop = min(at + step, limit)
        if old[at:stop] != new[at:stop]:
            low, high = at, stop  # old[:low] == new[:low]; they differ before `high`
            while high - low > 1:
                mid = (low + high) // 2
                if old[low:mid] == new[low:mid]:
                    low = mid
                else:
                    high = mid
            return low
        at = stop
        step = min(step * 2, _BLOCK)
    return limit


def common_suffix(old: AnyStr, new: AnyStr, limit: int) -> int:
    """How many trailing items `old` and `new` share, at most `limit`."""
    end_old, end_new = len(old), len(new)
    limit = min(limit, end_old, end_new)
    at = 0
    step = 64
    while at < limit:
        stop = min(at + step, limit)
        if old[end_old - stop : end_old - at] != new[end_new - stop : end_new - at]:
            low, high = at, stop  # the last `low` agree; they differ within the last `high`
            while high - low > 1:
                mid = (low + high) // 2
                if old[end_old - mid : end_old - low] == new[end_new - mid : end_new - low]:
                    low = mid
                else:
                    high = mid
            return low
        at = stop
        step = min(step * 2, _BLOCK)
    return limit


def text_edits(old: AnyStr, new: AnyStr) -> list[TextEdit]:
    """The stretches of `old` that `new` replaces, in order, none empty on both sides.

    Equal texts give no edit. Applying every edit to `old` gives `new`.
    """
    head = common_prefix(old, new)
    if head == len(old) == len(new):
        return []
    tail = common_suffix(old, new, min(len(old), len(new)) - head)
    old_end, new_end = len(old) - tail, len(new) - tail
    if max(old_end - head, new_end - head) <= REFINE_ABOVE:
        return [TextEdit(head, old_end, head, new_end)]
    return _by_lines(old, new, head, old_end, new_end)


def _by_lines(old: AnyStr, new: AnyStr, head: int, old_end: int, new_end: int) -> list[TextEdit]:
    """The middle `old[head:old_end]` / `new[head:new_end]` aligned line by line."""
    newline = "\n" if isinstance(old, str) else b"\n"
    start = old.rfind(newline, 0, head) + 1  # the start of the line the middle starts in
    old_lines = _lines(old[start:old_end], newline)
    new_lines = _lines(new[start:new_end], newline)
    old_at = _offsets(old_lines, start)
    new_at = _offsets(new_lines, start)
    edits = []
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if tag != "equal":
            edits.append(TextEdit(old_at[i1], old_at[i2], new_at[j1], new_at[j2]))
    return edits


def _lines(text: AnyStr, newline: AnyStr) -> list[AnyStr]:
    """`text` cut after each newline (each line keeps its newline; the last may have none)."""
    pieces = text.split(newline)
    lines = [piece + newline for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _offsets(lines: list[AnyStr], start: int) -> list[int]:
    """Where each line starts, and where the last one ends."""
    offsets = [start]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets
