"""jsdiff 5.2.2's Myers line diff and unidiff 1.0.4's hunk formatter, answer for answer.

The reference regenerates hunks with `unidiff.diffLines` + `unidiff.formatLines`;
unidiff@1.0.4 resolves its own `diff@5.2.2` (not the `diff@7` beside it). Which of
several equally short edit scripts Myers returns, and how the formatter cuts
context, leak straight into the hunk text, so no other diff library will do
(difflib, for one, finds different edit scripts): this is written out here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from patchsmith.engine._js import tokenize_lines

__all__ = ["Change", "diff_lines", "format_lines", "unidiff_diff_lines"]


@dataclass(frozen=True)
class Change:
    """One run of jsdiff's result: `count` tokens, added, removed or common."""

    value: str
    count: int
    added: bool = False
    removed: bool = False

    @property
    def type(self) -> str:
        """unidiff's change type code: `+`, `-` or `s` (same)."""
        if self.added:
            return "+"
        if self.removed:
            return "-"
        return "s"


class _Component:
    """A node of jsdiff's reversed linked list of runs."""

    __slots__ = ("added", "count", "previous", "removed", "value")

    def __init__(self, count: int, added: bool, removed: bool, previous: _Component | None) -> None:
        self.count = count
        self.added = added
        self.removed = removed
        self.previous = previous
        self.value = ""


class _Path:
    __slots__ = ("last", "old_pos")

    def __init__(self, old_pos: int, last: _Component | None) -> None:
        self.old_pos = old_pos
        self.last = last


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    """Follow the snake on `diagonal`; record a common run; return the new position."""
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while (
        new_pos + 1 < len(new) and old_pos + 1 < len(old) and new[new_pos + 1] == old[old_pos + 1]
    ):
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _add_to_path(path: _Path, added: bool, removed: bool, old_pos_inc: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _Path(
            path.old_pos + old_pos_inc, _Component(last.count + 1, added, removed, last.previous)
        )
    return _Path(path.old_pos + old_pos_inc, _Component(1, added, removed, last))


def _build_values(last: _Component | None, new: list[str], old: list[str]) -> list[Change]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    new_pos = old_pos = 0
    for pos in range(len(components)):
        component = components[pos]
        if not component.removed:
            component.value = "".join(new[new_pos : new_pos + component.count])
            new_pos += component.count
            if not component.added:
                old_pos += component.count
        else:
            component.value = "".join(old[old_pos : old_pos + component.count])
            old_pos += component.count
            # jsdiff finds insertions before removals and swaps them for output.
            if pos and components[pos - 1].added:
                components[pos - 1], components[pos] = components[pos], components[pos - 1]
    # jsdiff would merge a final empty-valued change into the one before; line
    # tokens are never empty, so there is none.
    return [Change(c.value, c.count, c.added, c.removed) for c in components]


def diff_lines(old: str, new: str) -> list[Change]:
    """`jsdiff.diffLines(old, new)` (5.2.2): runs of common, removed and added lines."""
    old_tokens = tokenize_lines(old)
    new_tokens = tokenize_lines(new)
    old_len = len(old_tokens)
    new_len = len(new_tokens)
    max_edit_length = old_len + new_len
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    seed = best[0]
    assert seed is not None
    new_pos = _extract_common(seed, new_tokens, old_tokens, 0)
    if seed.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return [Change("".join(new_tokens), new_len)]
    # Diagonals beyond these bounds cannot lead anywhere once an edge is reached.
    min_diagonal = -(max_edit_length + 1)
    max_diagonal = max_edit_length + 1
    edit_length = 1
    while edit_length <= max_edit_length:
        diagonal = max(min_diagonal, -edit_length)
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path.old_pos - diagonal < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if add_path is not None and (
                not can_remove
                or (
                    can_add
                    and remove_path is not None
                    and remove_path.old_pos + 1 < add_path.old_pos
                )
            ):
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new_tokens, old_tokens, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new_tokens, old_tokens)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("unreachable: an edit script of length old+new always exists")


def unidiff_diff_lines(old: Sequence[str], new: Sequence[str]) -> list[Change]:
    """`unidiff.diffLines` on arrays: each joined by `\\n` plus a final `\\n`; [] when equal."""
    changes = diff_lines("\n".join(old) + "\n", "\n".join(new) + "\n")
    if len(changes) == 1 and not changes[0].added and not changes[0].removed:
        return []
    return changes


@dataclass(frozen=True)
class _LineChange:
    type: str
    text: str


def _line_changes(change: Change, select: int | None) -> list[_LineChange]:
    """unidiff's lineChanges: all lines, the first `select`, or the last `-select`."""
    if select == 0:
        return []
    value = change.value
    if select is None:
        lines = value.split("\n")
        if not lines[-1]:
            lines.pop()
    elif select > 0:
        lines = value.split("\n")[:select]
    else:
        body = value[:-1] if value.endswith("\n") else value
        lines = body.split("\n")[select:]
    return [_LineChange(change.type, line) for line in lines]


class _Hunk:
    __slots__ = ("aoff", "boff", "changes")

    def __init__(self, aoff: int, boff: int, changes: list[_LineChange]) -> None:
        self.aoff = aoff
        self.boff = boff
        self.changes = changes

    @property
    def alen(self) -> int:
        return sum(1 for c in self.changes if c.type != "+")

    @property
    def blen(self) -> int:
        return sum(1 for c in self.changes if c.type != "-")

    def unified(self) -> str:
        alen, blen = self.alen, self.blen
        a_count = "" if alen == 1 else f",{alen}"
        b_count = "" if blen == 1 else f",{blen}"
        # unidiff shows an empty side at the line before it, as diff(1) does.
        a_start = self.aoff + (1 if alen else 0)
        b_start = self.boff + (1 if blen else 0)
        lines = [f"@@ -{a_start}{a_count} +{b_start}{b_count} @@"]
        lines.extend((" " if c.type == "s" else c.type) + c.text for c in self.changes)
        return "\n".join(lines)


def _make_hunks(changes: Sequence[Change], pre_context: int, post_context: int) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    pending: list[_LineChange] = []
    skipped = 0

    def finish() -> None:
        nonlocal pending, skipped
        if not pending:
            return
        aoff = boff = skipped
        if hunks:
            prev = hunks[-1]
            aoff += prev.aoff + prev.alen
            boff += prev.boff + prev.blen
        hunks.append(_Hunk(aoff, boff, pending))
        pending = []
        skipped = 0

    for index, change in enumerate(changes):
        if change.type != "s":
            pending.extend(_line_changes(change, None))
            continue
        after = post_context if index > 0 else 0
        before = pre_context if index < len(changes) - 1 else 0
        skip = max(change.count - (after + before), 0)
        if skip > 0:
            pending.extend(_line_changes(change, after))
            finish()
            pending.extend(_line_changes(change, -before))
            skipped = skip
        else:
            pending.extend(_line_changes(change, None))
    finish()
    return hunks


def format_lines(changes: Sequence[Change], context: int) -> str | None:
    """`unidiff.formatLines(changes, {context})`; None where unidiff throws.

    unidiff refuses two consecutive changes of the same type ("repeating change
    types are not handled"), which jsdiff produces when it swaps a removal in
    front of an insertion that follows another insertion.
    """
    for first, second in pairwise(changes):
        if first.type == second.type:
            return None
    hunks = _make_hunks(changes, context, context)
    if not hunks:
        return ""
    return "\n".join(["--- a", "+++ b", *(hunk.unified() for hunk in hunks)])
