"""Line alignment with a bounded cost: difflib's opcodes, or one replacement when too costly.

`difflib.SequenceMatcher` (without autojunk) is near linear on ordinary text but
cubic on text whose lines repeat (`a`, `b`, `a`, `b`...): each longest-match
search walks every equal pair of lines, once per block it finds. The common head
and tail are trimmed first (a local edit stays linear), and the middle is
aligned only when its cost bound, equal pairs × the shorter side, is within
`ALIGN_BUDGET`; otherwise the middle is one `replace`. Both answers are valid
edit scripts from old to new; the fallback is only less minimal.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Hashable, Sequence
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
    if alignment_cost(mid_old, mid_new) <= budget:
        matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
        middle: list[Opcode] = [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    else:
        middle = [("replace", head, len(old) - tail, head, len(new) - tail)]
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
