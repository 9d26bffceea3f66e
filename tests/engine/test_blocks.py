"""Hunks and search/replace pairs as edit blocks: `patchsmith.engine.blocks`."""

from __future__ import annotations

import pytest

from patchsmith.engine.blocks import (
    BlockLine,
    EditBlock,
    Op,
    block_from_hunk,
    block_from_search_replace,
    is_elision,
    old_kinds,
)
from patchsmith.engine.model import Hunk


class TestIsElision:
    @pytest.mark.parametrize(
        "line",
        [
            "...",
            "    ...",
            "…",
            "# ... existing code ...",
            "// ... rest of file ...",
            "/* ... */",
            "<!-- ... -->",
            "  # ...",
            "-- ... unchanged ...",
        ],
    )
    def test_elisions(self, line: str) -> None:
        """Ellipses alone or inside a comment stand for omitted lines."""
        assert is_elision(line)

    @pytest.mark.parametrize(
        "line",
        [
            "x = ...",
            "print('...')",
            "def f(): ...",
            "# TODO: finish this",
            "# ... " + "words " * 20 + "...",
            "",
        ],
    )
    def test_near_misses(self, line: str) -> None:
        """Code that uses an ellipsis, plain comments and overlong lines are not elisions."""
        assert not is_elision(line)


class TestBlockFromHunk:
    def test_ops(self) -> None:
        """Prefixes give the operation; endings are dropped."""
        block = block_from_hunk(Hunk((" a\n", "-b\r\n", "+c\n")))

        expected = (
            BlockLine(Op.CONTEXT, "a"),
            BlockLine(Op.REMOVE, "b"),
            BlockLine(Op.ADD, "c"),
        )
        assert expected == block.lines

    def test_empty_line_is_blank_context(self) -> None:
        """A line that lost its leading space is a blank context line."""
        assert (BlockLine(Op.CONTEXT, ""),) == block_from_hunk(Hunk(("\n", "+x\n"))).lines[:1]

    def test_unprefixed_line_is_context(self) -> None:
        """A line with no recognised prefix is kept whole as context."""
        assert BlockLine(Op.CONTEXT, "oops") == block_from_hunk(Hunk(("oops\n",))).lines[0]

    def test_marker_after_removed_line(self) -> None:
        """A marker after a removed line concerns the old side only."""
        block = block_from_hunk(Hunk(("-a\n", "\\ No newline at end of file\n", "+b\n")))

        assert (True, False, True) == (block.old_no_eol, block.new_no_eol, block.eol_marked)

    def test_marker_after_added_line(self) -> None:
        """A marker after an added line concerns the new side only."""
        block = block_from_hunk(Hunk(("-a\n", "+b\n", "\\ No newline at end of file\n")))

        assert (False, True) == (block.old_no_eol, block.new_no_eol)

    def test_marker_after_context_line(self) -> None:
        """A marker after a context line concerns both sides."""
        block = block_from_hunk(Hunk(("-a\n", " b\n", "\\ No newline at end of file\n")))

        assert (True, True) == (block.old_no_eol, block.new_no_eol)

    def test_marker_ignored_when_not_honoured(self) -> None:
        """With the marker not honoured the sides keep their newline, but the marker is noted."""
        hunk = Hunk(("-a\n", "+b\n", "\\ No newline at end of file\n"))

        block = block_from_hunk(hunk, honour_no_newline_marker=False)

        assert (False, False, True) == (block.old_no_eol, block.new_no_eol, block.eol_marked)

    def test_leading_marker_is_ignored(self) -> None:
        """A marker before any line has nothing to refer to."""
        block = block_from_hunk(Hunk(("\\ No newline at end of file\n", "+a\n")))

        assert (False, False, 1) == (block.old_no_eol, block.new_no_eol, len(block.lines))

    def test_hint_from_old_start(self) -> None:
        """The hint is the 0-based old start."""
        assert 4 == block_from_hunk(Hunk((" a\n",), old_start=5, old_count=1)).hint

    def test_hint_of_pure_insertion(self) -> None:
        """With an old count of 0 the old start names the line after which to insert."""
        assert 5 == block_from_hunk(Hunk(("+a\n",), old_start=5, old_count=0)).hint

    def test_no_numbers_no_hint(self) -> None:
        """A header without numbers gives no hint."""
        assert block_from_hunk(Hunk((" a\n",))).hint is None

    def test_anchors_and_eof_carried(self) -> None:
        """apply_patch anchors and End of File are kept."""
        block = block_from_hunk(Hunk(("+a\n",), anchors=("def f():",), at_eof=True))

        assert (("def f():",), True) == (block.anchors, block.at_eof)

    def test_crlf_hunk_ending(self) -> None:
        """The block remembers CRLF when most of the hunk's lines end so."""
        assert "\r\n" == block_from_hunk(Hunk(("+a\r\n", "+b\r\n", " c\n"))).ending

    def test_line_before_marker_does_not_vote(self) -> None:
        """A line followed by a no-newline marker shows no real ending."""
        hunk = Hunk(("+a\r\n", "+b\n", "\\ No newline at end of file\n"))

        assert "\r\n" == block_from_hunk(hunk).ending


class TestEditBlock:
    BLOCK = block_from_hunk(Hunk((" a\n", "-b\n", "+c\n", " d\n")))

    def test_old_and_new(self) -> None:
        """The old side drops added lines, the new side removed ones."""
        assert (["a", "b", "d"], ["a", "c", "d"]) == (self.BLOCK.old, self.BLOCK.new)

    def test_changes(self) -> None:
        """A block of only context changes nothing."""
        assert (True, False) == (
            self.BLOCK.changes,
            block_from_hunk(Hunk((" a\n", " b\n"))).changes,
        )

    def test_without_blank_edges(self) -> None:
        """Blank context at both ends is stripped and the hint follows the new start."""
        block = block_from_hunk(Hunk(("\n", " \n", "-x\n", "+y\n", " \n"), old_start=3))

        stripped = block.without_blank_edges()

        assert stripped is not None
        assert (["x"], 4) == (stripped.old, stripped.hint)

    def test_without_blank_edges_none_when_nothing_to_strip(self) -> None:
        """A block with no blank edge gives None."""
        assert self.BLOCK.without_blank_edges() is None

    def test_stripping_the_tail_drops_eof(self) -> None:
        """An End of File block loses that claim when trailing lines are stripped."""
        block = EditBlock(
            (BlockLine(Op.REMOVE, "x"), BlockLine(Op.CONTEXT, "")), at_eof=True, hint=None
        )

        stripped = block.without_blank_edges()

        assert stripped is not None
        assert (False, None) == (stripped.at_eof, stripped.hint)

    def test_blank_removed_lines_are_kept(self) -> None:
        """Removed blank lines are changes, never stripped."""
        block = block_from_hunk(Hunk(("-\n", "+x\n")))

        assert block.without_blank_edges() is None


class TestBlockFromSearchReplace:
    def test_alignment(self) -> None:
        """Equal lines become context, the rest removed then added."""
        block = block_from_search_replace("a\nb\nc\n", "a\nB\nc\n", line_hint=3)

        assert [" a", "-b", "+B", " c"] == [ln.op.value + ln.text for ln in block.lines]
        assert 2 == block.hint

    def test_empty_search(self) -> None:
        """An empty search has no old lines."""
        block = block_from_search_replace("", "x\n")

        assert ([], ["x"], None) == (block.old, block.new, block.hint)

    def test_empty_replace(self) -> None:
        """An empty replacement removes every line."""
        assert [] == block_from_search_replace("a\r\nb", "").new

    def test_no_final_newline(self) -> None:
        """Text without a final newline keeps its last line."""
        assert ["a", "b"] == block_from_search_replace("a\nb", "a\n").old


class TestOldKinds:
    def test_kinds(self) -> None:
        """The operations of the old side, in order."""
        block = block_from_hunk(Hunk((" a\n", "+n\n", "-b\n")))

        assert [Op.CONTEXT, Op.REMOVE] == list(old_kinds(block))
