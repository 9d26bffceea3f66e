"""Cuts of a Python text found by reading it, not parsing it: the first sight of a file.

A *cut* (`runtime.pyregion`) is a row where Python's tokenizer starts afresh: no bracket
or string open, the line before not joined to it by a backslash, a new logical line at
column 0 (or, inside a top-level class, at the column of the class's body). The kept
outline of ADR 0043 takes its cuts from a parse of the old text; here they come from one
pass over the old text up to the cut after the edit, which tracks strings (every quote
form; a backslash escapes the next character in raw strings too, as far as where the
string ends goes), comments, brackets and backslash continuations. Python 3.11 has no
library that gives the tokenizer's state at a row without tokenizing the whole file in
Python (`tokenize` is slower than `ast.parse`), hence this scanner, written by hand and
held to `tokenize` by the tests.

Two more conditions make a cut one that no statement runs across: its line does not start
with `else`, `elif`, `except` or `finally` (which go on the statement before), and the
logical line before it at its level or above is not a decorator (which goes on to the
definition after it). docs/decisions/0049 gives the argument.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence

from patchsmith.engine.textedits import TextEdit
from patchsmith.runtime.pyregion import Block, Outline

__all__ = ["first_sight_outline"]

_STRINGS = {
    "'''": re.compile(r"'''[^'\\]*(?:(?:\\(?:\r\n|.)|'(?!''))[^'\\]*)*'''", re.S),
    '"""': re.compile(r'"""[^"\\]*(?:(?:\\(?:\r\n|.)|"(?!""))[^"\\]*)*"""', re.S),
    "'": re.compile(r"'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'", re.S),
    '"': re.compile(r'"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"', re.S),
}
"""A whole string literal from its opening quote (its prefix letters change nothing of
where it ends); one that does not end is a tokenizer error, where the scan stops."""

_GOES_ON = re.compile(r"(?:else|elif|except|finally)\b")
"""Words that continue the statement before them (`except*` included)."""

_CLASS = re.compile(r"class\b")

_NESTING = sys.version_info >= (3, 12)
"""From Python 3.12 (PEP 701) an f-string's fields may hold its own quotes and line
breaks: the scan, which reads every string as 3.11 does, does not try a text with one."""

_FORMATTED = re.compile(r"""[fFtT][rR]?['"]|[rR][fFtT]['"]""")
"""An f-string's opening (a t-string's too, Python 3.14), or a name ending in `f` before a
string: either way the scan does not try under `_NESTING`."""

_OPENERS = "([{"
_CLOSERS = ")]}"

_AWKWARD = ("\f", "\0", "\v", "barry_as_FLUFL")
"""In the old text, the scan does not try: a form feed resets the tokenizer's column, a
NUL byte fails every parse, a vertical tab is not whitespace to Python, and the future
import changes the grammar."""


class _Scan:
    """The old text read up to some position, strings and comments blanked out.

    `masked` has the old text's length up to `exact`: every character of a comment is a
    space, every character of a string literal an `x` (its line breaks included, so no
    row inside a string starts a line), the rest as in the text. Up to `exact` it is
    exactly the tokenizer's view; beyond, nothing is known.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._parts: list[str] = []
        self._at = 0  # text before this is in `_parts`
        self._next = [self._find(char, 0) for char in "#'\""]
        self.exact = 0
        self.stopped = False  # an unterminated string: the tokenizer fails there
        self.masked = ""
        self._marks: list[int] = []  # positions whose bracket depth is known
        self._depths: list[int] = []

    def _find(self, char: str, start: int) -> int:
        found = self.text.find(char, start)
        return found if found >= 0 else len(self.text)

    def upto(self, position: int) -> None:
        """Read on until `exact` is past `position` (or the text or the scan ends)."""
        text, size, parts, ahead = self.text, len(self.text), self._parts, self._next
        while not self.stopped:
            start = min(ahead)
            if start > position or start >= size:
                self.exact = start
                break
            if text[start] == "#":
                end = self._find("\n", start)
                if end > start and text[end - 1] == "\r":
                    end -= 1
                filler = " "
            else:
                quotes = text[start : start + 3]
                found = _STRINGS.get(quotes, _STRINGS[text[start]]).match(text, start)
                if found is None:
                    self.stopped, self.exact = True, start
                    break
                end = found.end()
                filler = "x"
            parts.append(text[self._at : start])
            parts.append(filler * (end - start))
            self._at = end
            for number, char in enumerate("#'\""):
                if ahead[number] < end:
                    ahead[number] = self._find(char, end)
        parts.append(text[self._at : self.exact])
        self._at = self.exact
        self.masked = "".join(parts)
        parts[:] = [self.masked]

    def depth(self, position: int) -> int:
        """Brackets open at `position` (`<= exact`), counted as if they all matched."""
        marks, depths = self._marks, self._depths
        at = bisect_right(marks, position)
        masked = self.masked
        # count from the nearest position known, on either side
        before = marks[at - 1] if at else 0
        if at < len(marks) and marks[at] - position < position - before:
            depth, low, high, sign = depths[at], position, marks[at], -1
        else:
            depth, low, high, sign = depths[at - 1] if at else 0, before, position, 1
        if low == high:
            return depth
        opened = sum(masked.count(char, low, high) for char in _OPENERS)
        closed = sum(masked.count(char, low, high) for char in _CLOSERS)
        depth += sign * (opened - closed)
        insort(marks, position)
        depths.insert(bisect_left(marks, position), depth)
        return depth

    def starts_logical(self, start: int) -> bool:
        """True when the line at `start` (a line start before `exact`) starts a logical
        line: no bracket open, not joined to the line before by a backslash."""
        masked = self.masked
        if start > 0:
            before = start - 2
            if before >= 0 and masked[before] == "\r":
                before -= 1
            if before >= 0 and masked[before] == "\\":
                return False
        return self.depth(start) == 0


_SPACES = re.compile(" *")


def _column(masked: str, start: int) -> int | None:
    """The column of the first character of the line at `start`, `None` for a line of
    nothing but spaces (or with other whitespace before its first character)."""
    first = _SPACES.match(masked, start).end()  # type: ignore[union-attr]
    if first >= len(masked) or masked[first].isspace():
        return None
    return first - start


class _Level:
    """The logical lines of one column: 0 for top-level statements, a top-level class's
    body column one level down. Lines at column 0 count at both levels (a logical line
    at another column left of the body's is an indentation error)."""

    def __init__(self, scan: _Scan, column: int, floor: int = 0, least: int = 0) -> None:
        self.scan, self.column, self.floor, self.least = scan, column, floor, least
        self._pattern = _line_pattern(column)
        self._lines: list[int] = []
        self._seen = floor - 1  # lines after this position not yet listed

    def listed(self) -> list[int]:
        """Starts of the lines at this column or at 0, from `floor` to the scan's end."""
        masked, exact = self.scan.masked, self.scan.exact
        if self._seen < 0 < exact:  # the first line, with no line break before it
            self._seen = 0
            if _column(masked, 0) in (0, self.column):
                self._lines.append(0)
        if 0 <= self._seen < exact:
            self._lines.extend(
                found.start() + 1 for found in self._pattern.finditer(masked, self._seen, exact)
            )
            self._seen = max(exact - 1, self._seen)
        return self._lines

    def is_cut(self, line: int, at: int) -> bool:
        """True when `line`, the `at`th listed, is a cut at this level."""
        scan = self.scan
        column = _column(scan.masked, line)
        return (
            column == self.column
            and line >= self.least
            and scan.starts_logical(line)
            and not _GOES_ON.match(scan.masked, line + self.column)
            and not self._after_decorator(at)
        )

    def cut_at_or_before(self, start: int) -> int | None:
        """The latest cut at this level `<= start`; `None`: none."""
        lines = self.listed()
        at = bisect_right(lines, start) - 1
        while at >= 0:
            if self.is_cut(lines[at], at):
                return lines[at]
            at -= 1
        return None

    def cut_after(self, start: int) -> int | None:
        """The first cut at this level `> start` before the scan's exact end; `None`
        when none is known."""
        lines = self.listed()
        at = bisect_right(lines, start)
        while at < len(lines):
            if lines[at] >= self.scan.exact:
                return None
            if self.is_cut(lines[at], at):
                return lines[at]
            at += 1
        return None

    def _after_decorator(self, at: int) -> bool:
        """True when the logical line before the `at`th listed line, at this column or
        left of it, is a decorator."""
        lines, scan = self._lines, self.scan
        for before in range(at - 1, -1, -1):
            line = lines[before]
            if scan.starts_logical(line):
                return scan.masked[line + (_column(scan.masked, line) or 0)] == "@"
        return False


def _line_pattern(column: int) -> re.Pattern[str]:
    if column == 0:
        return _TOP
    return re.compile(f"\n(?: {{{column}}})?[^\\s]")


_TOP = re.compile(r"\n[^\s#]")


def first_sight_outline(old: str, edits: Sequence[TextEdit]) -> Outline | None:
    """Cuts of `old` around `edits` found by scanning it (its first rows, up to the cut
    after the last edit), as an `Outline` for `pyregion.regions_parse`: the top-level
    cuts just before and after each edit, and for each top-level class whose body holds
    edits, that body's cuts around them. `None` when the scan does not try
    (`_scannable`). It is not the outline of a text known to parse: never keep it.
    """
    if not edits or not _scannable(old):
        return None
    scan = _Scan(old)
    top = _Level(scan, 0)
    cuts: list[int] = []  # as positions here, rows at the end
    last_end = 0
    for edit in edits:
        last = max(edit.old_end - 1, edit.old_start)
        end = old.find("\n", last)
        end = len(old) if end < 0 else end + 1  # the line after the edit's last character
        scan.upto(end + 2048)
        if scan.exact <= edit.old_start:
            break  # the scan stopped before this edit: no cut known around it
        # the start of the edit's line as the tokenizer sees lines (not inside a string)
        start = scan.masked.rfind("\n", 0, edit.old_start) + 1
        before = top.cut_at_or_before(start) if start > last_end or not cuts else None
        if before is not None:
            cuts.append(before)
        after = top.cut_after(end - 1) if end <= scan.exact else None
        while after is None and not scan.stopped and scan.exact < len(old):
            scan.upto(max(scan.exact, end) + 16384)
            after = top.cut_after(end - 1) if end <= scan.exact else None
        if after is None:
            break
        cuts.append(after)
        last_end = after
    positions = sorted(set(cuts))
    blocks: tuple[Block, ...] = ()
    if "\t" not in old:
        blocks = _class_blocks(scan, top, edits)
        positions = sorted({*positions, *(cut for block in blocks for cut in block.cuts)})
    rows = _rows(old, positions)
    if positions and positions[-1] == len(old) and not old.endswith("\n"):
        rows[-1] += 1  # the end of a text whose last line has no line break: after that line
    row_of = dict(zip(positions, rows, strict=True))
    top_rows = [row_of[position] for position in sorted(set(cuts))]
    blocks = tuple(Block(block.indent, tuple(row_of[p] for p in block.cuts)) for block in blocks)
    return Outline(top_rows, blocks, plain=bool(blocks))


def _class_blocks(scan: _Scan, top: _Level, edits: Sequence[TextEdit]) -> tuple[Block, ...]:
    """For each top-level class whose body holds edits, its cuts around them (as
    positions), in order: the edits of one class share a block."""
    groups: list[tuple[int, list[TextEdit]]] = []
    for edit in edits:
        if edit.old_start >= scan.exact:
            break
        start = scan.masked.rfind("\n", 0, edit.old_start) + 1
        header = _statement_start(scan, top, start)
        if header is None:
            continue
        if groups and groups[-1][0] == header:
            groups[-1][1].append(edit)
        else:
            groups.append((header, [edit]))
    found = (_class_block(scan, top, group) for _, group in groups)
    return tuple(block for block in found if block is not None)


def _class_block(scan: _Scan, top: _Level, edits: Sequence[TextEdit]) -> Block | None:
    """The cuts (as positions) of a top-level class's body just around each of `edits`,
    when they all lie in that body after its first statement; the end of the text stands
    for a cut after a class that runs to it."""
    old, masked = scan.text, scan.masked
    start = masked.rfind("\n", 0, edits[0].old_start) + 1
    header = _statement_start(scan, top, start)
    level = None if header is None else _body(scan, header, start)
    if level is None or header is None:
        return None
    stop = top.cut_after(header)
    cuts: set[int] = set()
    for edit in edits:
        final = max(edit.old_end - 1, edit.old_start)
        end = old.find("\n", final)
        end = len(old) if end < 0 else end + 1
        if end > scan.exact:
            return None
        before = level.cut_at_or_before(masked.rfind("\n", 0, edit.old_start) + 1)
        if before is None:
            return None
        after = level.cut_after(end - 1)
        if stop is not None and (after is None or after > stop):
            after = stop
        cuts.update((before, len(old) if after is None else after))
    return Block(level.column, tuple(sorted(cuts)))


def _body(scan: _Scan, header: int, limit: int) -> _Level | None:
    """The cuts of the body of the class whose logical line starts at `header`, when it
    is a top-level class (`header` starts a logical line at column 0) whose header ends
    with a colon and whose body's first line starts before `limit`."""
    masked = scan.masked
    if not _CLASS.match(masked, header):
        return None
    # the header's logical line ends with a colon; the body starts on the lines after it
    line = masked.find("\n", header) + 1
    while 0 < line < limit and not scan.starts_logical(line):
        line = masked.find("\n", line) + 1
    if not 0 < line < limit or not masked[header:line].rstrip().endswith(":"):
        return None
    body = line
    while 0 < body < limit and _column(masked, body) is None:
        body = masked.find("\n", body) + 1
    column = _column(masked, body) if 0 < body < limit else None
    after = masked.find("\n", body) + 1
    if not column or not 0 < after:
        return None
    # the body's first statement is listed (a decorator there goes on to the next one),
    # but the cuts are the lines after it: a region never holds the class's first line
    return _Level(scan, column, body, after)


def cuts_of(text: str) -> list[tuple[int, int]] | None:
    """Every cut the scan finds in `text`, as (0-based row, column): top-level ones at
    column 0, those of top-level classes' bodies at the body's column (for a text with
    no tab); `None` when the scan does not try. For tests: they hold it to `tokenize`."""
    if not _scannable(text):
        return None
    scan = _Scan(text)
    scan.upto(len(text))
    top = _Level(scan, 0)
    lines = top.listed()
    found = [(line, 0) for at, line in enumerate(lines) if top.is_cut(line, at)]
    if "\t" not in text:
        for at, header in enumerate(lines):
            if not scan.starts_logical(header):
                continue
            stop = next((later for later in lines[at + 1 :] if scan.starts_logical(later)), None)
            level = _body(scan, header, len(text) if stop is None else stop)
            if level is None:
                continue
            inner = level.listed()
            found.extend(
                (line, level.column)
                for number, line in enumerate(inner)
                if (stop is None or line < stop) and level.is_cut(line, number)
            )
    found.sort()
    rows = _rows(text, [position for position, _ in found])
    return [(row, column) for row, (_, column) in zip(rows, found, strict=True)]


def _statement_start(scan: _Scan, top: _Level, start: int) -> int | None:
    """The start of the last top-level logical line at or before `start`."""
    lines = top.listed()
    for at in range(bisect_right(lines, start) - 1, -1, -1):
        if scan.starts_logical(lines[at]):
            return lines[at]
    return None


def _scannable(text: str) -> bool:
    """False for a text the scan does not try (`_AWKWARD`, a carriage return that is not
    part of a CRLF, an f-string where they nest)."""
    if any(word in text for word in _AWKWARD):
        return False
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    return not (_NESTING and _FORMATTED.search(text))


def _rows(text: str, positions: Sequence[int]) -> list[int]:
    rows: list[int] = []
    row, at = 0, 0
    for position in positions:
        row += text.count("\n", at, position)
        at = position
        rows.append(row)
    return rows
