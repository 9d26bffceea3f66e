"""Where a text changed, in lines: spans the engine records, and opcodes built from them.

The engine knows which old lines each applied hunk replaced by which new lines. A
`SpanLog` composes those replacements into `LineSpan`s of the original text and the
final one; `span_opcodes` turns them into a line edit script old -> new by aligning
only inside each span (`linediff.line_opcodes` on a few lines) and calling the lines
between spans equal. The equal stretches are checked (their text compared, in chunks,
never split into lines), so the answer is a valid edit script whatever the spans say,
or `None` when they do not fit the texts: the caller then aligns the whole texts.

`LineIndex` finds the start of a line in a text without splitting it: it counts
newlines in C (`str.count`) over long strides and remembers the lines it found; asked
for lines all over the text (thousands of hunks), it lists every line's start at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate
from operator import attrgetter
from typing import AnyStr, Generic, NamedTuple

from patchsmith.engine.linediff import Opcode, line_opcodes

__all__ = ["LineIndex", "LineSpan", "SpanLog", "span_opcodes"]

_CHUNK = 1 << 20
"""Characters compared at once when checking an equal stretch (bounds the copies)."""
_WALK = 64
"""Lines stepped one `find` at a time; farther targets are approached by counting."""
_DENSE = 32
"""Once more than one line in this many has been looked up, every line's start is listed."""
_TABLE_CHARS = 16 << 20
"""The longest text whose line starts are listed all at once (its split is held briefly)."""


class LineSpan(NamedTuple):
    """Old lines `[old_start, old_stop)` became new lines `[new_start, new_stop)` (0-based)."""

    old_start: int
    old_stop: int
    new_start: int
    new_stop: int


_RENUMBER_BUDGET = 200_000
"""Spans a log may renumber, over all its edits, before it gives up (its `spans` are then
`None`, and the caller aligns the whole texts, as for an edit not tracked by line). Edits
in the order a diff gives them renumber none; each edit of a long run from the bottom up
renumbers every span below it, which would make the log quadratic in the hunks."""

_NEW_START = attrgetter("new_start")
_NEW_STOP = attrgetter("new_stop")


class SpanLog:
    """The changed spans of a text edited step by step (each step in current lines)."""

    def __init__(self) -> None:
        self._spans: list[LineSpan] | None = []
        self._renumbered = 0

    @property
    def spans(self) -> tuple[LineSpan, ...] | None:
        """The spans from the first text to the current one, in order, disjoint; `None`
        when the log gave up (`_RENUMBER_BUDGET`)."""
        return None if self._spans is None else tuple(self._spans)

    def edit(self, start: int, stop: int, count: int) -> None:
        """Current lines `[start, stop)` were replaced by `count` lines."""
        spans = self._spans
        if spans is None:
            return
        # The spans this edit touches or meets: from the first ending at or after `start`
        # to the last starting at or before `stop` (spans are disjoint, so both sorted).
        i = bisect_left(spans, start, key=_NEW_STOP)
        j = bisect_right(spans, stop, lo=i, key=_NEW_START)
        # Between spans old and new lines are equal, shifted by the changes above them.
        shift_before = spans[i - 1].new_stop - spans[i - 1].old_stop if i else 0
        shift_after = spans[j - 1].new_stop - spans[j - 1].old_stop if j > i else shift_before
        new_start = min(start, spans[i].new_start) if j > i else start
        new_stop = max(stop, spans[j - 1].new_stop) if j > i else stop
        grown = count - (stop - start)
        span = LineSpan(
            new_start - shift_before, new_stop - shift_after, new_start, new_stop + grown
        )
        if grown and j < len(spans):
            self._renumbered += len(spans) - j
            if self._renumbered > _RENUMBER_BUDGET:
                self._spans = None
                return
            spans[j:] = [LineSpan(a, b, c + grown, d + grown) for a, b, c, d in spans[j:]]
        spans[i:j] = [span]

    def then(self, spans: Sequence[LineSpan]) -> None:
        """Compose the spans of one more step (`spans` in current -> next lines)."""
        if self._spans is None:
            return
        if not self._spans:  # the first step: its spans are the log
            self._spans = list(spans)
            return
        # Top first: once the spans above it are applied, a span starts at its new start.
        for span in spans:
            stop = span.new_start + span.old_stop - span.old_start
            self.edit(span.new_start, stop, span.new_stop - span.new_start)


class LineIndex(Generic[AnyStr]):
    """The lines of `text`, split on "\\n" only, found by offset without splitting the text."""

    def __init__(self, text: AnyStr) -> None:
        self.text: AnyStr = text
        self._nl: AnyStr = "\n" if isinstance(text, str) else b"\n"
        self._lines = [0]
        self._offsets = [0]
        self._count: int | None = None
        self._table: array[int] | None = None

    def __len__(self) -> int:
        if self._count is None:
            text = self.text
            self._count = text.count(self._nl) + (1 if text and not text.endswith(self._nl) else 0)
        return self._count

    def offset(self, line: int) -> int:
        """Where line `line` starts (the text's length for the line after the last)."""
        if line >= len(self):
            return len(self.text)
        if self._table is not None:
            return self._table[line]
        at = bisect_right(self._lines, line) - 1
        known, pos = self._lines[at], self._offsets[at]
        if known == line:
            return pos
        pos = self._advance(pos, known, line)
        self._lines.insert(at + 1, line)
        self._offsets.insert(at + 1, pos)
        if len(self._lines) > len(self) // _DENSE + _WALK and len(self.text) <= _TABLE_CHARS:
            # Asked for lines all over the text (thousands of hunks): every line's start
            # at once, rather than inserting one found line at a time in the middle.
            parts = self.text.split(self._nl)
            self._table = array("q", accumulate((len(part) + 1 for part in parts), initial=0))
        return pos

    def _advance(self, pos: int, line: int, target: int) -> int:
        text, nl = self.text, self._nl
        mean = max(len(text) // max(len(self), 1), 1)
        while target - line > _WALK:
            need = target - line
            step = max((need - _WALK // 2) * mean, 1)
            end = min(pos + step, len(text))
            found = text.count(nl, pos, end)
            while found >= need:  # shorter lines than the mean: look less far
                step //= 2
                end = pos + step
                found = text.count(nl, pos, end)
            if not found:
                break
            pos = text.rfind(nl, pos, end) + 1
            line += found
        while line < target:
            pos = text.find(nl, pos) + 1
            line += 1
        return pos

    def lines(self, start: int, stop: int, *, keepends: bool = False) -> list[AnyStr]:
        """Lines `[start, stop)`, with their "\\n" when `keepends`."""
        if stop <= start:
            return []
        chunk = self.text[self.offset(start) : self.offset(stop)]
        parts = chunk.split(self._nl)
        last = parts.pop()
        if keepends:
            parts = [part + self._nl for part in parts]
        if last:
            parts.append(last)
        return parts

    def same(self, start: int, stop: int, other: LineIndex[AnyStr], other_start: int) -> bool:
        """Whether lines `[start, stop)` here are, byte for byte, `other`'s from `other_start`."""
        if stop <= start:
            return True
        a, b = self.offset(start), self.offset(stop)
        c = other.offset(other_start)
        d = other.offset(other_start + stop - start)
        if b - a != d - c:
            return False
        mine, theirs = self.text, other.text
        for at in range(0, b - a, _CHUNK):
            size = min(_CHUNK, b - a - at)
            if mine[a + at : a + at + size] != theirs[c + at : c + at + size]:
                return False
        return True


def span_opcodes(
    old: LineIndex[AnyStr],
    new: LineIndex[AnyStr],
    spans: Sequence[LineSpan],
    *,
    keepends: bool = False,
) -> list[Opcode] | None:
    """Opcodes turning `old`'s lines into `new`'s, aligned only inside `spans`.

    `None` when the spans do not describe the two texts (out of order or range, or
    an equal stretch between them that differs). Lines are compared with their "\\n"
    when `keepends`.
    """
    codes: list[Opcode] = []
    i = j = 0
    for span in spans:
        o1, o2, n1, n2 = span
        if o1 < i or n1 < j or o2 < o1 or n2 < n1 or o1 - i != n1 - j:
            return None
        if o2 > len(old) or n2 > len(new) or not old.same(i, o1, new, j):
            return None
        if o1 > i:
            codes.append(("equal", i, o1, j, n1))
        inner = line_opcodes(
            old.lines(o1, o2, keepends=keepends), new.lines(n1, n2, keepends=keepends)
        )
        codes.extend(
            (tag, a1 + o1, a2 + o1, b1 + n1, b2 + n1)
            for tag, a1, a2, b1, b2 in inner
            if a1 != a2 or b1 != b2
        )
        i, j = o2, n2
    if len(old) - i != len(new) - j or not old.same(i, len(old), new, j):
        return None
    if i < len(old):
        codes.append(("equal", i, len(old), j, len(new)))
    merged: list[Opcode] = []
    for code in codes:
        if merged and merged[-1][0] == code[0] == "equal":
            prev = merged.pop()
            code = ("equal", prev[1], code[2], prev[3], code[4])
        merged.append(code)
    return merged or [("equal", 0, len(old), 0, len(new))]
