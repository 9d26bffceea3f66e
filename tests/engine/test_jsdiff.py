"""Unit tests of jsdiff's Myers line diff and unidiff's formatter in `patchsmith.engine.jsdiff`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.jsdiff import Change, diff_lines, format_lines, unidiff_diff_lines

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d\r\n"]), max_size=12)


class TestDiffLines:
    def test_identical_is_one_common_run(self) -> None:
        """Equal texts give a single common change holding every line."""
        assert [Change("a\nb\n", 2)] == diff_lines("a\nb\n", "a\nb\n")

    def test_both_empty(self) -> None:
        """Two empty texts give one empty common change."""
        assert [Change("", 0)] == diff_lines("", "")

    def test_removal_is_listed_before_insertion(self) -> None:
        """A replaced line comes out as the removal, then the insertion."""
        expected = [Change("a\n", 1), Change("b\n", 1, removed=True), Change("B\n", 1, added=True)]

        assert expected == diff_lines("a\nb\n", "a\nB\n")

    def test_tie_break_matches_jsdiff(self) -> None:
        """Of two equal-cost scripts, jsdiff's own is chosen (answer recorded from node)."""
        expected = [
            Change("b\n", 1, added=True),
            Change("a\n", 1),
            Change("b\n", 1, removed=True),
        ]

        assert expected == diff_lines("a\nb\n", "b\na\n")

    @given(LINES, LINES)
    def test_changes_rebuild_both_texts(self, old: list[str], new: list[str]) -> None:
        """Common+removed runs rebuild the old text, common+added runs the new one."""
        changes = diff_lines("".join(old), "".join(new))

        assert "".join(old) == "".join(c.value for c in changes if not c.added)
        assert "".join(new) == "".join(c.value for c in changes if not c.removed)


class TestUnidiffDiffLines:
    def test_equal_arrays_give_no_changes(self) -> None:
        """unidiff returns [] instead of a lone common change."""
        assert [] == unidiff_diff_lines(["a", "b"], ["a", "b"])

    def test_arrays_are_joined_with_newlines(self) -> None:
        """Array items are joined by `\\n` and terminated by one, so `x\\n` items double up."""
        changes = unidiff_diff_lines(["x\n"], ["y\n"])
        expected = [Change("x\n", 1, removed=True), Change("y\n", 1, added=True), Change("\n", 1)]

        assert expected == changes


class TestFormatLines:
    def test_no_changes_is_empty(self) -> None:
        """An empty change list formats to the empty string."""
        assert "" == format_lines([], 3)

    def test_repeated_types_are_refused(self) -> None:
        """Two consecutive insertions make unidiff throw, reported as None."""
        changes = [Change("a\n", 1, added=True), Change("b\n", 1, added=True)]

        assert format_lines(changes, 1) is None

    def test_far_apart_changes_make_two_hunks(self) -> None:
        """With context 0, changes separated by common lines become separate hunks."""
        changes = unidiff_diff_lines(["a", "b", "c"], ["A", "b", "C"])

        assert "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+A\n@@ -3 +3 @@\n-c\n+C" == format_lines(changes, 0)

    def test_single_line_sides_omit_counts(self) -> None:
        """A side of exactly one line has no `,count` in the header."""
        changes = unidiff_diff_lines(["a"], ["b"])

        assert "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b" == format_lines(changes, 1)

    def test_context_is_cut_to_size(self) -> None:
        """Only `context` common lines are kept on each side of a change."""
        changes = unidiff_diff_lines(list("abcdefg"), list("abcDefg"))

        assert "--- a\n+++ b\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e" == format_lines(changes, 1)
