"""Line-level statistics of one `FileChange`, shared by the budget and secret guards."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from patchsmith.engine.linediff import line_opcodes
from patchsmith.runtime.change import FileChange

__all__ = ["DiffStat", "diff_stat", "is_binary", "lines_of", "text_of"]

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


def is_binary(data: bytes | None) -> bool:
    """True when `data` has a NUL in its first 8000 bytes."""
    return data is not None and b"\0" in data[:BINARY_PROBE]


def text_of(data: bytes | None, text: str | None) -> str | None:
    """The decoded text of one side of a change, `None` when absent or binary."""
    if text is not None:
        return text
    if data is None or is_binary(data):
        return None
    try:
        return data.decode("utf-8-sig")
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


def diff_stat(change: FileChange) -> DiffStat:
    """The line diff of `change` (binary or absent sides count as no lines)."""
    return change.derived("diff_stat", lambda: _diff_stat(change))


def _diff_stat(change: FileChange) -> DiffStat:
    old = text_of(change.old_bytes, change.old_text) or ""
    new = text_of(change.new_bytes, change.new_text) or ""
    stat = _stat(old, new)
    if stat.hunks == 0 and change.old_bytes != change.new_bytes:
        # a binary change, a mode change or a rename: still one place that changed
        return DiffStat(added=(), removed=0, hunks=1)
    return stat


@lru_cache(maxsize=64)
def _stat(old_text: str, new_text: str) -> DiffStat:
    # guards and postconditions ask about the same change several times
    old = lines_of(old_text)
    new = lines_of(new_text)
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    old_mid = old[start : len(old) - end]
    new_mid = new[start : len(new) - end]
    added: list[tuple[int, str]] = []
    removed = 0
    hunks = 0
    last_change_end = -1
    if old_mid or new_mid:
        # Bounded cost: a repetitive middle too costly to align counts as one replacement.
        for tag, i1, i2, j1, j2 in line_opcodes(old_mid, new_mid):
            if tag == "equal":
                continue
            # changes closer than 2 x 3 context lines share one unified-diff hunk
            if last_change_end < 0 or i1 - last_change_end > 6:
                hunks += 1
            last_change_end = i2
            removed += i2 - i1
            added.extend((start + j + 1, new_mid[j]) for j in range(j1, j2))
    return DiffStat(added=tuple(added), removed=removed, hunks=hunks)
