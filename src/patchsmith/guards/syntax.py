"""Syntax guard: a change must not break the parse of a file.

The grammars and the parsing (`language_for`, `parse_problems`, `python_error`) live below
the guards in `patchsmith.runtime.syntax`, where the lazy-snippet merge and the codemod
checks use them too.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import replace

from patchsmith.engine.linediff import Opcode, line_opcodes
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import lines_of, text_of
from patchsmith.runtime.excerpts import masked_excerpt
from patchsmith.runtime.syntax import (
    ParseProblems,
    Span,
    changed_problems,
    changed_python_error,
    parse_problems,
    python_error,
)

__all__ = ["SyntaxGuard", "syntax_failure"]


class SyntaxGuard(Guard):
    """Refuse a change that breaks the parse of a file, or adds to a broken file's problems.

    What: Python is parsed with `ast`: refused when the new text fails and the
    old text (if any) did not. Other files with a tree-sitter grammar
    (JavaScript, TypeScript/TSX, Go, Rust, JSON, Java, C, Bash, YAML, TOML) are
    refused when the new text has ERROR or MISSING nodes and the old had none. A
    file that had problems before (Python: `ast` fails on both sides) is judged by
    where its new problems are: refused when one starts in lines the change wrote,
    or elsewhere outside the old problems (carried to where the change moved them);
    see `_blamed_lines`. Other languages, deletions and binary content pass.
    A text this process parsed before is not parsed whole again when it changes:
    Python re-parses the statements around the edits (top-level ones, or a top-level
    class's body statements), tree-sitter parses incrementally from the kept tree
    (docs/decisions/0043). A large Python file seen for the first time has those
    statements found by scanning its old text, and their rows parsed in both texts: a
    pass then means the new text parses exactly when the old one did (0049). Any
    doubt, and every refusal, is decided by a whole parse.
    Why: a hunk applied in the wrong place, or a truncated whole-file edit,
    usually leaves unbalanced brackets: caught here, before anything is written.
    A count of problems would refuse the right edit to a file that was already
    broken, when the parser's recovery reads the edit differently.
    Example: turning `def f():\\n    return 1\\n` into `def f(:\\n    return 1\\n`
    is SYNTAX_ERROR; in a file broken at its top, a valid edit below passes and an
    unclosed bracket below is refused.
    """

    NAME = "syntax"
    CODE = FailureCode.SYNTAX_ERROR
    MESSAGE = "change breaks the syntax of the file"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per file the change breaks, or whose old problems it adds to."""
        failures: list[PatchFailure] = []
        for change in changes:
            failure = self._check_one(change)
            if failure is not None:
                failures.append(failure)
        return failures

    def _check_one(self, change: FileChange) -> PatchFailure | None:
        new = text_of(change.new_content, change.new_text)
        if new is None:
            return None
        old = text_of(change.old_content, change.old_text)
        if change.path.lower().endswith((".py", ".pyi")):
            # the interpreter's own parser decides; tree-sitter only arbitrates when the
            # old text fails too (e.g. syntax newer than this Python)
            new_error = changed_python_error(old, new)
            if new_error is None:
                return None
            if old is None or python_error(old) is None:
                line = _line_of(new_error)
                return self._with_new_text(
                    self.failure(change.path, f"{change.path}: {new_error}"), change.path, new, line
                )
        after = changed_problems(change.path, old, new)
        if after is None or after.count == 0:
            return None
        before = parse_problems(change.path, old) if old is not None else ParseProblems()
        assert before is not None  # the same grammar parsed `new`
        if old is None or before.count == 0:
            # A file that parsed before (or a new one): every problem is the change's.
            return self._refused(change.path, new, after.count, after.first_line, "first at")
        # The file was broken before: its old problems are no evidence against the
        # change, wherever the change moved them; only new ones near the edit are.
        blamed = _blamed_lines(change.path, old, new)
        if not blamed:
            return None
        line = _nearest(blamed, _changed_span(old, new))
        return self._refused(change.path, new, len(blamed), line, "nearest the edit at")

    def _refused(
        self, path: str, new: str, count: int, line: int | None, label: str
    ) -> PatchFailure:
        where = f" ({label} line {line})" if line else ""
        failure = self.failure(
            path,
            f"{path}: {count} new syntax error(s){where}",
            hint="check brackets, quotes and indentation around the edit",
        )
        return self._with_new_text(failure, path, new, line)

    @staticmethod
    def _with_new_text(
        failure: PatchFailure, path: str, new: str, line: int | None
    ) -> PatchFailure:
        """The failure with the new text around the error (numbered, secrets masked)."""
        if line is None:
            return failure
        contents = new.splitlines()
        if not contents:
            return failure
        at = min(max(line - 1, 0), len(contents) - 1)
        excerpt = masked_excerpt(path, contents, (at, at + 1), margin=5)
        hint = (failure.hint + "; " if failure.hint else "") + (
            "the excerpt is the new text the edit would have written, around the error"
        )
        return replace(failure, excerpt=excerpt, hint=hint)


def syntax_failure(change: FileChange) -> PatchFailure | None:
    """The syntax guard's verdict on one change (its SYNTAX_ERROR, or `None`): a file that
    did not parse before is judged by where its new problems are, not by their count."""
    return SyntaxGuard()._check_one(change)


_LINE = re.compile(r"\bline (\d+)")

NEAR = 2
"""Lines on either side of an edit within which an old problem may colour how the parser
reads the edit: its recovery from the old problem runs into the edit's lines."""

_END_OF_ROW = 1 << 30
"""A column past the end of any line."""


def _blamed_lines(path: str, old: str, new: str) -> list[int]:
    """1-based lines of the new text's problems that the change is to blame for.

    For a file that had problems before. A problem of the new text is old news when it
    starts inside an old problem, carried to its new place through the line diff, or
    in lines an edit wrote in place of lines that held an old problem (the parser could
    not read them before either). Every other problem is the change's, with one second
    look: when an edit lies within `NEAR` lines of an old problem, the parser's recovery
    from that problem may be what broke its reading of the edit (or of the rest of the
    file), so both texts are read again with the old problems' lines left blank, and
    only what is still new then counts. For Python, `ast`'s error (the first one) is one
    more problem on each side.
    """
    old_rows, new_rows = lines_of(old), lines_of(new)
    codes = line_opcodes(old_rows, new_rows)
    edits = [code for code in codes if code[0] != "equal"]
    rows = _RowMap(codes, len(old_rows), len(new_rows))
    old_problems = _problems(path, old)
    was_broken = _Spans(old_problems)
    flagged = sorted({row for row, _, _, _ in old_problems})
    rewrote_broken = [
        bisect_left(flagged, i1) < bisect_left(flagged, i2) for _, i1, i2, _, _ in edits
    ]
    blamed = _unexplained(old_problems, _problems(path, new), rows, edits, rewrote_broken)
    if not blamed or not any(
        was_broken.meets_rows(i1 - NEAR, i2 + NEAR) for _, i1, i2, _, _ in edits
    ):
        return blamed
    # Blank the old problems' lines that no edit replaced, on both sides (row for row,
    # so the line diff still holds), and judge again.
    replaced = {row for _, i1, i2, _, _ in edits for row in range(i1, i2)}
    blank = {
        row
        for span in old_problems
        for row in _Spans.rows_of(span)
        if row < len(old_rows) and row not in replaced
    }
    old_blanked = _blanked(old, old_rows, blank)
    new_blanked = _blanked(new, new_rows, {rows.same_row(row) for row in blank})
    return _unexplained(
        _problems(path, old_blanked), _problems(path, new_blanked), rows, edits, rewrote_broken
    )


def _problems(path: str, text: str) -> list[Span]:
    """Where each innermost tree-sitter problem of `text` lies, and `ast`'s error's line."""
    found = parse_problems(path, text)
    spans = list(found.spans) if found is not None else []
    if path.lower().endswith((".py", ".pyi")):
        line = _line_of(python_error(text) or "")
        if line is not None:
            spans.append((line - 1, 0, line - 1, _END_OF_ROW))
    return spans


def _stretches(spans: Sequence[Span]) -> list[Span]:
    """Problems fewer than `NEAR` lines apart joined into one stretch of broken text.

    After an unclosed bracket, tree-sitter reads the rest of a file as a chain of
    problems, one every few lines; the lines between them are no better read.
    """
    joined: list[Span] = []
    for span in sorted(spans):
        if joined and span[0] - _Spans.end_of(joined[-1])[0] <= NEAR:
            last = joined[-1]
            end = max(_Spans.end_of(last), _Spans.end_of(span))
            joined[-1] = (last[0], last[1], *end)
        else:
            joined.append(span)
    return joined


def _unexplained(
    old_problems: Sequence[Span],
    new_problems: Sequence[Span],
    rows: _RowMap,
    edits: Sequence[Opcode],
    rewrote_broken: Sequence[bool],
) -> list[int]:
    """1-based lines of the new problems that no old one explains.

    In lines an edit wrote, a problem is explained only by the edit having rewritten a
    line where an old problem started; elsewhere, by a stretch of old problems it starts in.
    """
    stretches = _Spans([rows.carry(span) for span in _stretches(old_problems)])
    firsts = [j1 for _, _, _, j1, _ in edits]
    blamed: set[int] = set()
    for row, column, _, _ in new_problems:
        at = bisect_right(firsts, row) - 1
        if at >= 0 and row < edits[at][4]:  # a line edit `at` wrote
            explained = rewrote_broken[at]
        else:
            explained = stretches.holds((row, column))
        if not explained:
            blamed.add(row + 1)
    return sorted(blamed)


def _blanked(text: str, rows: Sequence[str], blank: set[int]) -> str:
    kept = ["" if n in blank else row for n, row in enumerate(rows)]
    return "\n".join(kept) + ("\n" if text.endswith("\n") else "")


class _RowMap:
    """Old rows to new rows through a line diff's opcodes."""

    def __init__(self, codes: Sequence[Opcode], old_count: int, new_count: int) -> None:
        self._codes = codes
        self._starts = [code[1] for code in codes]
        self._old_count = old_count
        self._new_count = new_count

    def carry(self, span: Span) -> Span:
        """`span` in the new text; an end inside lines an edit replaced covers what it wrote."""
        row, column, end_row, end_column = span
        start, same = self._row(row, at_end=False)
        end, same_end = self._row(end_row, at_end=True)
        return start, column if same else 0, end, end_column if same_end else 0

    def same_row(self, row: int) -> int:
        """The new row of old `row`, a line no edit replaced."""
        return self._row(row, at_end=False)[0]

    def _row(self, row: int, *, at_end: bool) -> tuple[int, bool]:
        """The new row of old `row`, and whether it is the same line; for a replaced line,
        the first row the edit wrote (or, `at_end`, the row after its last)."""
        if row >= self._old_count:  # tree-sitter's end of the text, after the last newline
            return self._new_count + row - self._old_count, True
        tag, i1, _, j1, j2 = self._codes[bisect_right(self._starts, row) - 1]
        if tag == "equal":
            return j1 + row - i1, True
        return (j2 if at_end else j1), False


class _Spans:
    """Spans, asked whether any holds a point or covers part of a stretch of rows."""

    def __init__(self, spans: Sequence[Span]) -> None:
        ordered = sorted(spans)
        self._starts = [(row, column) for row, column, _, _ in ordered]
        self._reach: list[tuple[int, int]] = []  # the furthest end among ordered[: k + 1]
        for span in ordered:
            end = self.end_of(span)
            self._reach.append(max(end, self._reach[-1]) if self._reach else end)

    @staticmethod
    def end_of(span: Span) -> tuple[int, int]:
        """Where `span` ends: one that ends at the start of a row ends with the row before."""
        row, _, end_row, end_column = span
        if end_column == 0 and end_row > row:
            return end_row - 1, _END_OF_ROW
        return end_row, end_column

    @staticmethod
    def rows_of(span: Span) -> range:
        return range(span[0], _Spans.end_of(span)[0] + 1)

    def holds(self, point: tuple[int, int]) -> bool:
        at = bisect_right(self._starts, point) - 1
        return at >= 0 and self._reach[at] >= point

    def meets_rows(self, first: int, stop: int) -> bool:
        """True when a span covers part of rows `first` to `stop` (exclusive)."""
        at = bisect_right(self._starts, (stop, -1)) - 1  # the spans that start before `stop`
        return at >= 0 and self._reach[at] >= (first, 0)


def _changed_span(old: str, new: str) -> tuple[int, int]:
    """1-based first and last line of `new` that differ from `old` (by common ends)."""
    a, b = old.splitlines(), new.splitlines()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + 1, max(len(b) - tail, head + 1)


def _nearest(lines: Sequence[int], span: tuple[int, int]) -> int:
    """The line of `lines` nearest the span (one inside it first)."""
    low, high = span
    return min(lines, key=lambda n: (max(low - n, n - high, 0), n))


def _line_of(message: str) -> int | None:
    found = _LINE.search(message)
    return int(found.group(1)) if found else None
