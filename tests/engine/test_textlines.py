"""Lines that remember their endings: `patchsmith.engine.textlines`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.textlines import Lines, dominant_ending, join_lines, split_lines


class TestSplitLines:
    def test_empty(self) -> None:
        """The empty text has no lines."""
        assert Lines([], []) == split_lines("")

    def test_lf_and_crlf(self) -> None:
        """Each line keeps its own ending, LF or CRLF."""
        assert Lines(["a", "b"], ["\r\n", "\n"]) == split_lines("a\r\nb\n")

    def test_no_final_newline(self) -> None:
        """Only the last line may lack an ending."""
        assert Lines(["a", "b"], ["\n", ""]) == split_lines("a\nb")

    def test_lone_carriage_return_is_content(self) -> None:
        """A `\\r` not followed by `\\n` stays inside the line."""
        assert Lines(["a\rb"], ["\n"]) == split_lines("a\rb\n")

    def test_unicode_line_breaks_are_content(self) -> None:
        """U+2028 and form feeds do not split lines (str.splitlines would)."""
        assert ["a\u2028b\x0cc"] == split_lines("a\u2028b\x0cc\n").contents

    def test_blank_lines(self) -> None:
        """Blank lines are lines with empty contents."""
        assert Lines(["", ""], ["\n", "\n"]) == split_lines("\n\n")

    @given(st.text(alphabet="ab\r\n\t é"))
    def test_round_trip(self, text: str) -> None:
        """Splitting then joining gives the text back exactly."""
        assert text == split_lines(text).text


class TestLines:
    def test_len(self) -> None:
        """The length is the number of lines."""
        assert 2 == len(split_lines("a\nb"))

    def test_text(self) -> None:
        """`text` joins contents and endings."""
        assert "a\r\nb" == Lines(["a", "b"], ["\r\n", ""]).text


class TestJoinLines:
    def test_join(self) -> None:
        """Contents and endings are interleaved."""
        assert "x\r\ny\n" == join_lines(["x", "y"], ["\r\n", "\n"])


class TestDominantEnding:
    def test_crlf_majority(self) -> None:
        """CRLF wins when most lines use it."""
        assert "\r\n" == dominant_ending(["\r\n", "\r\n", "\n"])

    def test_tie_is_lf(self) -> None:
        """A tie goes to LF."""
        assert "\n" == dominant_ending(["\r\n", "\n"])

    def test_no_endings_is_lf(self) -> None:
        """With no endings shown, LF."""
        assert "\n" == dominant_ending(["", ""])
