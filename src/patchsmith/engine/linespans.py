"""Where a text changed, in lines: spans the engine records, and opcodes built from them.

The engine knows which old lines each applied hunk replaced by which new lines. A
`SpanLog` composes those replacements into `LineSpan`s of the original text and the
final one; `span_opcodes` turns them into a line edit script old -> new by aligning
only inside each span (`linediff.line_opcodes` on a few lines) and calling the lines
between spans equal. The equal stretches are checked (their text compared, in chunks,
never split into lines), so the answer is a valid edit script whatever the spans say,
or `None` when they do not fit the texts: the caller then aligns the whole texts.

`LineIndex` finds the start of a line in a text without splitting it: it counts
newlines in C (`str.count`) over long strides and remembers the lines it found.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import AnyStr, Generic, NamedTuple

from patchsmith.engine.linediff import Opcode, line_opcodes

__all__ = ["LineIndex", "LineSpan", "SpanLog", "span_opcodes"]

_CHUNK = 1 << 20
"""Characters compared at once when checking an equal stretch (bounds the copies)."""
_WALK = 64
"""Lines stepped one `find` at a time; farther targets are approached by counting."""


class LineSpan(NamedTuple):
    """Old lines `[old_start, old_stop)` became new lines `[new_start, new_stop)` (0-based)."""

    old_start: int
    old_stop: int
    new_start: int
    new_stop: int


class SpanLog:
    """The changed spans of a text edited step by step (each step in current lines)."""

    def __init__(self) -> None:
        self._spans: list[LineSpan] = []

    @property
    def spans(self) -> tuple[LineSpan, ...]:
        """The spans from the first text to the current one, in order, disjoint."""
        return tuple(self._spans)

    def edit(self, start: int, stop: int, count: int) -> None:
        """Current lines `[start, stop)` were replaced by `count` lines."""
        spans = self._spans
        i = 0
        while i < len(spans) and spans[i].new_stop < start:
            i += 1
        j = i
        while j < len(spans) and spans[j].new_start <= stop:
            j += 1
        # Between spans old and new lines are equal, shifted by the changes above them.
        shift_before = spans[i - 1].new_stop - spans[i - 1].old_stop if i else 0
        merged = spans[i:j]
        shift_after = merged[-1].new_stop - merged[-1].old_stop if merged else shift_before
        new_start = min(start, merged[0].new_start) if merged else start
        new_stop = max(stop, merged[-1].new_stop) if merged else stop
        grown = count - (stop - start)
        span = LineSpan(
            new_start - shift_before, new_stop - shift_after, new_start, new_stop + grown
        )
        later = spans[j:]
        if grown:
            later = [LineSpan(a, b, c + grown, d + grown) for a, b, c, d in later]
        spans[i:] = [span, *later]

    def then(self, spans: Sequence[LineSpan]) -> None:
        """Compose the spans of one more step (`spans` in current -> next lines)."""
        if not self._spans:  # the first step: its spans are the log
            self._spans = list(spans)
            return
        for span in reversed(spans):  # bottom first: the lines above keep their numbers
            self.edit(span.old_start, span.old_stop, span.new_stop - span.new_start)


class LineIndex(Generic[AnyStr]):
    """The lines of `text`, split on "\\n" only, found by offset without splitting the text."""

    def __init__(self, text: AnyStr) -> None:
        self.text: AnyStr = text
        self._nl: AnyStr = "\n" if isinstance(text, str) else b"\n"
        self._lines = [0]
        self._offsets = [0]
        self._count: int | None = None

    def __len__(self) -> int:
        if self._count is None:
            text = self.text
            self._count = text.count(self._nl) + (1 if text and not text.endswith(self._nl) else 0)
        return self._count

    def offset(self, line: int) -> int:
        """Where line `line` starts (the text's length for the line after the last)."""
        if line >= len(self):
            return len(self.text)
        at = bisect_right(self._lines, line) - 1
        known, pos = self._lines[at], self._offsets[at]
        if known == line:
            return pos
        pos = self._advance(pos, known, line)
        self._lines.insert(at + 1, line)
        self._offsets.insert(at + 1, pos)
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
