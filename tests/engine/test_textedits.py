"""Tests for `engine.textedits`: where two texts differ, as replaced stretches."""

from __future__ import annotations

from typing import AnyStr

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.textedits import (
    REFINE_ABOVE,
    TextEdit,
    common_prefix,
    common_suffix,
    text_edits,
)


def _applied(old: AnyStr, new: AnyStr, edits: list[TextEdit]) -> AnyStr:
    """`old` with every edit's new stretch (taken from `new`) in place of its old one."""
    out = old[:0]
    at = 0
    for edit in edits:
        out += old[at : edit.old_start] + new[edit.new_start : edit.new_end]
        at = edit.old_end
    return out + old[at:]


def _well_formed(old: AnyStr, new: AnyStr, edits: list[TextEdit]) -> None:
    shift = 0
    last_end = -1
    for edit in edits:
        assert edit.old_start <= edit.old_end and edit.new_start <= edit.new_end
        assert edit.old_start > last_end  # in order, apart
        assert edit.new_start == edit.old_start + shift  # the text between agrees
        assert (edit.old_start, edit.new_start) != (edit.old_end, edit.new_end)
        shift += (edit.new_end - edit.new_start) - (edit.old_end - edit.old_start)
        last_end = edit.old_end
    assert _applied(old, new, edits) == new


_LINES = st.lists(st.sampled_from(["a\n", "b\n", "def f():\n", "    x\n", "é\n", ""]), max_size=40)


class TestTextEdits:
    def test_equal_texts_have_no_edit(self) -> None:
        assert [] == text_edits("abc\n", "abc\n")
        assert [] == text_edits(b"", b"")

    def test_one_local_edit(self) -> None:
        """A one-character change is one edit of that character."""
        assert [TextEdit(4, 5, 4, 6)] == text_edits("abc\nd\nef\n", "abc\nxy\nef\n")

    def test_bytes_positions_are_bytes(self) -> None:
        old, new = "é = 1\n".encode(), "é = 22\n".encode()

        assert [TextEdit(5, 6, 5, 7)] == text_edits(old, new)

    def test_edits_far_apart_stay_apart(self) -> None:
        """In a long text, two changed lines at either end are two edits, not one
        replacement of everything between them."""
        lines = [f"line {n}\n" for n in range(2000)]
        old = "".join(lines)
        new = "".join(["first\n", *lines[1:-1], "last\n"])
        assert len(old) > REFINE_ABOVE

        edits = text_edits(old, new)

        assert 2 == len(edits)
        assert edits[0].old_end < 20 and edits[1].old_start > len(old) - 20
        _well_formed(old, new, edits)

    def test_prefix_and_suffix_with_long_agreement(self) -> None:
        """Comparison by blocks finds the exact first and last difference."""
        old = "x" * 100_000 + "a" + "y" * 70_000
        new = "x" * 100_000 + "b" + "y" * 70_000

        assert 100_000 == common_prefix(old, new)
        assert 70_000 == common_suffix(old, new, len(old))
        assert [TextEdit(100_000, 100_001, 100_000, 100_001)] == text_edits(old, new)

    def test_suffix_is_bounded(self) -> None:
        """The suffix never overlaps the prefix (`aaa` to `aaaa`)."""
        assert 3 == common_prefix("aaa", "aaaa")
        assert 0 == common_suffix("aaa", "aaaa", 0)
        assert [TextEdit(3, 3, 3, 4)] == text_edits("aaa", "aaaa")

    @given(_LINES, _LINES, _LINES)
    def test_edits_rebuild_the_new_text(self, head: list[str], a: list[str], b: list[str]) -> None:
        """Any pair of texts: the edits are ordered, disjoint and turn old into new."""
        old, new = "".join(head + a), "".join(head + b)
        _well_formed(old, new, text_edits(old, new))
        _well_formed(old.encode(), new.encode(), text_edits(old.encode(), new.encode()))

    @settings(max_examples=30)
    @given(
        st.lists(st.integers(0, 3999), min_size=1, max_size=6, unique=True),
        st.sampled_from(["", "changed\n", "two\nlines\n"]),
    )
    def test_refined_edits_rebuild_the_new_text(self, rows: list[int], written: str) -> None:
        """Long texts with edits here and there (the line-by-line path)."""
        lines = [f"row {n}\n" for n in range(4000)]
        changed = list(lines)
        for row in sorted(rows, reverse=True):
            changed[row : row + 1] = [written]
        old, new = "".join(lines), "".join(changed)

        edits = text_edits(old, new)

        _well_formed(old, new, edits)
        assert len(edits) <= len(rows)
