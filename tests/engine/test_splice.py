"""Splicing a placed block into the file's lines: `patchsmith.engine.splice`."""

from __future__ import annotations

from patchsmith.engine.blocks import block_from_hunk
from patchsmith.engine.indent import indent_style
from patchsmith.engine.locate import Placement, place_block
from patchsmith.engine.model import EngineOptions, Hunk, Strategy
from patchsmith.engine.splice import splice_block
from patchsmith.engine.textlines import split_lines


def splice(source: str, body: str, *, keep_line_endings: bool = True, style: bool = False) -> str:
    """Place a hunk body in `source` with default options, splice it, return the text."""
    lines = split_lines(source)
    block = block_from_hunk(Hunk(tuple(body.splitlines(keepends=True))))
    placement = place_block(lines.contents, block, EngineOptions.default())
    assert isinstance(placement, Placement), placement
    file_style = indent_style(lines.contents) if style else None
    return splice_block(
        lines, block, placement, keep_line_endings=keep_line_endings, style=file_style
    ).text


class TestContextFromTheFile:
    def test_trailing_whitespace_kept(self) -> None:
        """A context line matched loosely is written as the file has it."""
        assert "a  \nB\n" == splice("a  \nb\n", " a\n-b\n+B\n")

    def test_punctuation_kept(self) -> None:
        """Curly quotes in the hunk's context do not replace the file's straight ones."""
        assert "s = 'q'\nX\n" == splice("s = 'q'\nx\n", " s = ‘q’\n-x\n+X\n")

    def test_dropped_context_line_kept(self) -> None:
        """A file line the hunk left out stays in place."""
        source = "def f():\n    a = 1\n    b = 2\n    return b\n"

        result = splice(source, " def f():\n-    b = 2\n+    b = 3\n     return b\n")

        assert "def f():\n    a = 1\n    b = 3\n    return b\n" == result

    def test_altered_context_line_kept(self) -> None:
        """A misremembered context line is replaced by the file's line in its place."""
        source = "def f():\n    a = 1\n    b = 2\n    return b\n"

        result = splice(source, " def f():\n     a = 100\n-    b = 2\n+    b = 3\n     return b\n")

        assert "def f():\n    a = 1\n    b = 3\n    return b\n" == result

    def test_elided_lines_kept(self) -> None:
        """Lines an elision stands for are kept."""
        source = "def f():\n    a = 1\n    b = 2\n    return b\n"

        result = splice(source, " def f():\n ...\n-    return b\n+    return a\n")

        assert "def f():\n    a = 1\n    b = 2\n    return a\n" == result


class TestLineEndings:
    def test_crlf_file_lf_hunk(self) -> None:
        """Added lines take the file's CRLF; untouched lines keep theirs."""
        assert "a\r\nB\r\nC\r\nc\r\n" == splice("a\r\nb\r\nc\r\n", " a\n-b\n+B\n+C\n c\n")

    def test_mixed_endings(self) -> None:
        """In a mixed file, added lines take the dominant ending; others keep their own."""
        assert "a\r\nB\nc\n" == splice("a\r\nb\nc\n", " a\n-b\n+B\n c\n")
        assert "a\r\nB\r\nc\n" == splice("a\r\nb\r\nc\n", " a\n-b\n+B\n c\n")

    def test_keep_line_endings_off(self) -> None:
        """With endings not kept, the spliced text is LF throughout."""
        assert "a\nB\nc\n" == splice("a\r\nb\r\nc\r\n", " a\n-b\n+B\n", keep_line_endings=False)

    def test_empty_file_takes_hunk_ending(self) -> None:
        """An empty file shows no ending, so added lines keep the hunk's CRLF (regression)."""
        assert "a\r\nb\r\n" == splice("", "+a\r\n+b\r\n")

    def test_single_unterminated_line_takes_hunk_ending(self) -> None:
        """A one-line file without newline takes the hunk's ending for the lines it gains."""
        assert "x\r\ny" == splice("x", " x\r\n+y\r\n")


class TestFinalNewline:
    def test_no_marker_keeps_missing_newline(self) -> None:
        """Without a marker, a file lacking a final newline keeps lacking it."""
        assert "a\nc" == splice("a\nb", " a\n-b\n+c\n")

    def test_no_marker_last_line_context(self) -> None:
        """The file's unterminated last line, as context, stays unterminated."""
        assert "A\nb" == splice("a\nb", "-a\n+A\n b\n")

    def test_added_after_unterminated_line(self) -> None:
        """A line added after the unterminated last line gives that line an ending."""
        assert "a\nb\nc" == splice("a\nb", " b\n+c\n")

    def test_marker_on_new_side(self) -> None:
        """A marker after the added last line removes the final newline."""
        assert "a\nc" == splice("a\nb\n", " a\n-b\n+c\n\\ No newline at end of file\n")

    def test_marker_on_old_side_only(self) -> None:
        """A marker on the old side only adds the final newline the new side has."""
        assert "a\nc\n" == splice("a\nb", " a\n-b\n\\ No newline at end of file\n+c\n")

    def test_marker_on_both_sides(self) -> None:
        """Markers on both sides keep the file without a final newline."""
        body = " a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"

        assert "a\nc" == splice("a\nb", body)

    def test_marker_not_at_end_ignored(self) -> None:
        """A hunk away from the end of the file leaves the final newline alone."""
        assert "A\nb\n" == splice("a\nb\n", "-a\n+A\n\\ No newline at end of file\n")

    def test_marker_keeps_crlf(self) -> None:
        """Removing the marker's missing newline in a CRLF file adds CRLF."""
        assert "a\r\nc\r\n" == splice("a\r\nb", " a\n-b\n\\ No newline at end of file\n+c\n")


class TestIndentation:
    def test_prefix_shift(self) -> None:
        """Added lines get the prefix the file adds to the hunk's lines."""
        source = "class A:\n    def f(self):\n        return 1\n"

        result = splice(source, " def f(self):\n-    return 1\n+    x = 2\n+    return x\n")

        assert "class A:\n    def f(self):\n        x = 2\n        return x\n" == result

    def test_columns_shift_to_tabs(self) -> None:
        """Space-indented added lines go into a tab file as tabs."""
        source = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n"
        body = " func f() {\n     if x {\n-        return 1\n+        y := 2\n+        return y\n"

        result = splice(source, body)

        assert "func f() {\n\tif x {\n\t\ty := 2\n\t\treturn y\n\t}\n}\n" == result

    def test_style_conformed_when_context_shows_none(self) -> None:
        """In a tab file, space-indented added lines under unindented context become tabs."""
        source = "func f() {\n\ta()\n\tb()\n\treturn 1\n}\n"

        result = splice(source, " }\n+func g() {\n+    return 2\n+}\n", style=True)

        assert source + "func g() {\n\treturn 2\n}\n" == result

    def test_style_kept_when_context_matches_file(self) -> None:
        """A block whose context uses the file's tabs keeps its space-indented additions."""
        source = "func f() {\n\treturn 1\n}\n"

        result = splice(source, " func f() {\n-\treturn 1\n+    return 2\n", style=True)

        assert "func f() {\n    return 2\n}\n" == result

    def test_style_to_spaces(self) -> None:
        """In a space file, tab-indented added lines under tab context become spaces."""
        source = "def f():\n  if x:\n    return 1\n"

        result = splice(source, " def f():\n \tif x:\n-\t\treturn 1\n+\t\treturn 2\n", style=True)

        assert "def f():\n  if x:\n    return 2\n" == result


class TestPlacementReported:
    def test_strategy_untouched(self) -> None:
        """Splicing never changes the text outside the placement."""
        source = "keep\na\nb\nkeep\n"

        assert "keep\na\nB\nkeep\n" == splice(source, " a\n-b\n+B\n")

    def test_direct_strategy(self) -> None:
        """A sanity check that the helper places exactly."""
        lines = split_lines("a\n")
        block = block_from_hunk(Hunk(("-a\n", "+b\n")))

        placement = place_block(lines.contents, block, EngineOptions.default())

        assert isinstance(placement, Placement)
        assert Strategy.DIRECT == placement.strategy
