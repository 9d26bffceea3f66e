"""Byte-range edits and how several of them are applied to one file without overlapping."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Edit", "EditGroup", "apply_groups"]


@dataclass(frozen=True)
class Edit:
    """Replace bytes `start:end` of a file with `replacement`."""

    start: int
    end: int
    replacement: bytes


@dataclass(frozen=True)
class EditGroup:
    """The edits one match makes; applied together or not at all."""

    edits: tuple[Edit, ...]
    line: int
    """1-based line of the match, for the report."""

    @property
    def start(self) -> int:
        return min(e.start for e in self.edits)

    @property
    def end(self) -> int:
        return max(e.end for e in self.edits)


def apply_groups(data: bytes, groups: Sequence[EditGroup]) -> tuple[bytes, list[EditGroup]]:
    """`data` with every group applied that does not overlap an earlier one, and the deferred.

    Groups are taken in order of position (the outer one first when nested); a group
    overlapping one already taken is deferred, for another pass over the new text.
    """
    taken: list[EditGroup] = []
    deferred: list[EditGroup] = []
    last_end = -1
    for group in sorted(groups, key=lambda g: (g.start, -g.end)):
        if group.start < last_end or any(e.start > e.end or e.end > len(data) for e in group.edits):
            deferred.append(group)
            continue
        taken.append(group)
        last_end = max(last_end, group.end)
    edits = sorted((e for g in taken for e in g.edits), key=lambda e: e.start)
    out: list[bytes] = []
    cursor = 0
    for edit in edits:
        out.append(data[cursor : edit.start])
        out.append(edit.replacement)
        cursor = edit.end
    out.append(data[cursor:])
    return b"".join(out), deferred
