"""Line alignment with a bounded cost: difflib's opcodes, or one replacement when too costly.

`difflib.SequenceMatcher` (without autojunk) is near linear on ordinary text but
cubic on text whose lines repeat (`a`, `b`, `a`, `b`...): each longest-match
search walks every equal pair of lines, once per block it finds. The common head
and tail are trimmed first (a local edit stays linear), and the middle is
aligned only when its cost bound, equal pairs × the shorter side, is within
`ALIGN_BUDGET`. A middle over the budget is first cut at the lines that occur
once on each side, in the same order on both (patience diff's anchors), and each
piece between two anchors is aligned alone under what is left of the budget; a
piece still too costly is one `replace`. Every answer is a valid edit script from
old to new; the fallbacks are only less minimal. Without the anchors, a file with
edits far apart (a 10,000-line file with two changed lines at either end) came
out as one replacement of everything between them.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import pairwise
from typing import Literal

__all__ = ["ALIGN_BUDGET", "Opcode", "alignment_cost", "line_opcodes"]

ALIGN_BUDGET = 4_000_000
"""Steps (equal line pairs × shorter side) difflib may take on the middle of two texts."""

Tag = Literal["replace", "delete", "insert", "equal"]
Opcode = tuple[Tag, int, int, int, int]


def alignment_cost(old: Sequence[Hashable], new: Sequence[Hashable]) -> int:
    """An upper bound on difflib's work: equal line pairs times the shorter side."""
    if not old or not new:
        return 0
    counts = Counter(new)
    pairs = sum(counts[x] for x in old)
    return pairs * min(len(old), len(new))


def line_opcodes(
    old: Sequence[Hashable], new: Sequence[Hashable], budget: int = ALIGN_BUDGET
) -> list[Opcode]:
    """Opcodes turning `old` into `new`, as `SequenceMatcher.get_opcodes` gives them."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    mid_old = old[head : len(old) - tail]
    mid_new = new[head : len(new) - tail]
    if (len(mid_old) <= 1 and len(mid_new) <= 1) or not mid_old or not mid_new:
        # Nothing to align (a side is empty, or one line became another: they differ, or
        # the head would have taken them): difflib's answer is this one opcode.
        middle: list[Opcode] = [("replace", head, len(old) - tail, head, len(new) - tail)]
    else:
        middle = [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in _middle(mid_old, mid_new, [budget])
        ]
    codes: list[Opcode] = []
    if head:
        codes.append(("equal", 0, head, 0, head))
    codes.extend(middle)
    if tail:
        codes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    merged: list[Opcode] = []
    for code in codes:
        if code[1] == code[2] and code[3] == code[4]:
            continue
        if code[0] == "replace" and code[1] == code[2]:
            code = ("insert", *code[1:])
        elif code[0] == "replace" and code[3] == code[4]:
            code = ("delete", *code[1:])
        if merged and merged[-1][0] == code[0] == "equal":
            prev = merged.pop()
            code = ("equal", prev[1], code[2], prev[3], code[4])
        merged.append(code)
    return merged or [("equal", 0, len(old), 0, len(new))]


def _aligned(old: Sequence[Hashable], new: Sequence[Hashable], budget: list[int]) -> list[Opcode]:
    """difflib's opcodes when their cost fits what is left of `budget` (spent), else one replace."""
    cost = alignment_cost(old, new)
    if cost <= budget[0]:
        budget[0] -= cost
        return list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes())
    return [("replace", 0, len(old), 0, len(new))]


def _middle(old: Sequence[Hashable], new: Sequence[Hashable], budget: list[int]) -> list[Opcode]:
    """The opcodes of a middle: aligned whole within the budget, else piece by piece."""
    if alignment_cost(old, new) <= budget[0]:
        return _aligned(old, new, budget)
    anchors = _anchors(old, new)
    if not anchors:
        return [("replace", 0, len(old), 0, len(new))]
    codes: list[Opcode] = []
    i0 = j0 = 0  # the first line of each side not yet in `codes`
    run: tuple[int, int] | None = None  # where the current run of anchors started
    for i, j in (*anchors, (len(old), len(new))):
        if (i > i0 or j > j0) and old[i0:i] == new[j0:j]:
            # A gap equal on both sides (repeated lines such as `}` between anchors) joins
            # the run of equal lines around it; difflib is not asked about it.
            run = run or (i0, j0)
        elif i > i0 or j > j0:
            if run is not None:
                codes.append(("equal", run[0], i0, run[1], j0))
                run = None
            codes.extend(
                (tag, a1 + i0, a2 + i0, b1 + j0, b2 + j0)
                for tag, a1, a2, b1, b2 in _aligned(old[i0:i], new[j0:j], budget)
            )
        if run is None:
            run = (i, j)
        i0, j0 = i + 1, j + 1
    if run is not None and run[0] < len(old):
        codes.append(("equal", run[0], len(old), run[1], len(new)))
    return codes


def _anchors(old: Sequence[Hashable], new: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Pairs (i, j) of lines unique in both sides, the longest run in the same order."""
    in_old = Counter(old)
    in_new = Counter(new)
    where = {line: j for j, line in enumerate(new) if in_new[line] == 1}
    pairs = [(i, where[line]) for i, line in enumerate(old) if in_old[line] == 1 and line in where]
    if all(a[1] < b[1] for a, b in pairwise(pairs)):
        return pairs  # the usual case: nothing moved, every unique line is an anchor
    # Longest increasing subsequence of the j's (patience sorting), O(n log n).
    tails: list[int] = []
    tail_at: list[int] = []
    previous = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        slot = bisect_left(tails, j)
        if slot == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[slot] = j
            tail_at[slot] = index
        previous[index] = tail_at[slot - 1] if slot else -1
    chain = []
    index = tail_at[-1] if tail_at else -1
    while index >= 0:
        chain.append(pairs[index])
        index = previous[index]
    return chain[::-1]
