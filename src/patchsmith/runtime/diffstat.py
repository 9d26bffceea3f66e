"""Line-level statistics of one `FileChange`, shared by the budget and secret guards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import AnyStr, Generic

from patchsmith.engine.linediff import Opcode, line_opcodes
from patchsmith.engine.linespans import LineIndex, LineSpan, span_opcodes
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import Content, content_bytes, content_head, same_content

__all__ = [
    "DiffStat",
    "LineDiff",
    "change_opcodes",
    "diff_stat",
    "head_lines",
    "is_binary",
    "line_diff",
    "lines_of",
    "text_of",
]

BINARY_PROBE = 8000
"""Bytes inspected for a NUL, as git does to call a file binary."""


@dataclass(frozen=True)
class DiffStat:
    """Added lines (1-based new line number, text without the newline), removed count, hunks."""

    added: tuple[tuple[int, str], ...]
    removed: int
    hunks: int

    @property
    def changed_lines(self) -> int:
        return len(self.added) + self.removed


def is_binary(data: Content | None) -> bool:
    """True when `data` has a NUL in its first 8000 bytes."""
    return data is not None and b"\0" in content_head(data, BINARY_PROBE)


def text_of(data: Content | None, text: str | None) -> str | None:
    """The decoded text of one side of a change, `None` when absent or binary.

    Give a change's `old_content`/`new_content`, not its bytes: a side kept as its text
    is then never encoded only to be decoded."""
    if text is not None:
        return text
    if data is None or is_binary(data):
        return None
    try:
        return (content_bytes(data) or b"").decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def lines_of(text: str) -> list[str]:
    """Lines split on "\\n" only (as git counts them), without their newline."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class LineDiff(Generic[AnyStr]):
    """The line edit script of one change: opcodes old -> new, and both sides' lines."""

    opcodes: tuple[Opcode, ...]
    old: LineIndex[AnyStr]
    new: LineIndex[AnyStr]
    keepends: bool
    """Lines were compared with their "\n" (as git does), else without it."""

    def changed(self) -> list[Opcode]:
        """The opcodes that are not `equal`."""
        return [code for code in self.opcodes if code[0] != "equal"]


def line_diff(
    old: AnyStr, new: AnyStr, spans: Sequence[LineSpan] | None, *, keepends: bool = False
) -> LineDiff[AnyStr]:
    """The line diff of `old` -> `new`, aligned inside `spans` only when they are given
    (and fit the texts), else over the whole texts (`engine.linediff`, bounded cost)."""
    old_index, new_index = LineIndex(old), LineIndex(new)
    codes = None
    if spans is not None:
        codes = span_opcodes(old_index, new_index, spans, keepends=keepends)
    if codes is None:
        codes = line_opcodes(
            old_index.lines(0, len(old_index), keepends=keepends),
            new_index.lines(0, len(new_index), keepends=keepends),
        )
    return LineDiff(tuple(codes), old_index, new_index, keepends)


def change_opcodes(change: FileChange) -> LineDiff[str]:
    """The line diff of `change`'s texts (lines without "\n"; binary or absent sides have
    no lines), computed once per change from the spans the engine located when known."""
    return change.derived("line_diff", lambda: _text_diff(change))


def _text_diff(change: FileChange) -> LineDiff[str]:
    old = text_of(change.old_content, change.old_text) or ""
    new = text_of(change.new_content, change.new_text) or ""
    spans = change.line_spans if change.old_content is not None else None
    return line_diff(old, new, spans)


def head_lines(text: str, count: int) -> list[str]:
    """`text.split("\\n", count)[:count]` without copying the rest of the text."""
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end < 0:
            return text.split("\n")[:count] if count > 0 else []
    return text[:end].split("\n") if count > 0 else []


def diff_stat(change: FileChange) -> DiffStat:
    """The line diff of `change` (binary or absent sides count as no lines)."""
    return change.derived("diff_stat", lambda: _diff_stat(change))


def _diff_stat(change: FileChange) -> DiffStat:
    diff = change_opcodes(change)
    added: list[tuple[int, str]] = []
    removed = 0
    hunks = 0
    last_change_end = -1
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            continue
        # changes closer than 2 x 3 context lines share one unified-diff hunk
        if last_change_end < 0 or i1 - last_change_end > 6:
            hunks += 1
        last_change_end = i2
        removed += i2 - i1
        added.extend(zip(range(j1 + 1, j2 + 1), diff.new.lines(j1, j2), strict=True))
    if hunks == 0 and not same_content(change.old_content, change.new_content):
        # a binary change, a mode change or a rename: still one place that changed
        return DiffStat(added=(), removed=0, hunks=1)
    return DiffStat(added=tuple(added), removed=removed, hunks=hunks)
