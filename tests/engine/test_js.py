"""Unit tests of the JavaScript string semantics in `patchsmith.engine._js`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine import _js


class TestUtf16Len:
    def test_astral_counts_twice(self) -> None:
        """A character outside the BMP is two UTF-16 units, a BMP one is one."""
        assert 5 == _js.utf16_len("a🎉中é")

    @given(st.text())
    def test_matches_utf16_encoding(self, text: str) -> None:
        """The length equals the UTF-16 encoding's size in units."""
        assert len(text.encode("utf-16-le", "surrogatepass")) // 2 == _js.utf16_len(text)


class TestCharAt:
    def test_astral_first_unit_is_high_surrogate(self) -> None:
        """`line[0]` of an emoji line is its high surrogate, not the emoji."""
        assert "\ud83c" == _js.char_at("🎉x", 0)

    def test_out_of_range_is_empty(self) -> None:
        """An index past the end (or negative) gives the empty string."""
        assert ("", "") == (_js.char_at("ab", 2), _js.char_at("ab", -1))

    def test_first_unit_code_of_empty_is_zero(self) -> None:
        """The empty string's first unit code is reported as 0."""
        assert 0 == _js.first_unit_code("")


class TestTrim:
    def test_bom_trimmed_nel_kept(self) -> None:
        """JS trims U+FEFF but not U+0085, unlike Python's str.strip."""
        assert "\x85x" == _js.js_trim("\ufeff\x85x\u3000")

    def test_trim_end_keeps_leading(self) -> None:
        """trimEnd only strips the right side."""
        assert "  x" == _js.js_trim_end("  x \u2028")


class TestReplaceFirst:
    def test_dollar_patterns_are_literal(self) -> None:
        """`$&` in the replacement is inserted literally."""
        assert "a$&b" == _js.replace_first("aXb", "X", "$&")

    def test_empty_search_inserts_at_start(self) -> None:
        """An empty search string matches at index 0."""
        assert "-abc" == _js.replace_first("abc", "", "-")


class TestSplitLines:
    def test_crlf_and_lf(self) -> None:
        """Both `\\r\\n` and `\\n` split; a lone `\\r` does not."""
        assert ["a", "b\rc", ""] == _js.split_lines("a\r\nb\rc\n")

    def test_empty_is_one_empty_line(self) -> None:
        """Splitting the empty string gives one empty string."""
        assert [""] == _js.split_lines("")


class TestTokenizeLines:
    @given(st.text(alphabet="ab\r\n"))
    def test_tokens_rejoin_to_the_text(self, text: str) -> None:
        """Tokens are non-empty and concatenate back to the input."""
        tokens = _js.tokenize_lines(text)

        assert text == "".join(tokens)
        assert all(tokens)


class TestIndexing:
    def test_index_of_counts_utf16_units(self) -> None:
        """indexOf after an emoji counts the emoji as two units."""
        assert 3 == _js.index_of("🎉ab", "b")

    def test_last_index_of_without_start(self) -> None:
        """lastIndexOf with no start searches the whole string."""
        assert 2 == _js.last_index_of("a\na\n", "a")

    def test_substring_in_units_keeps_pairs(self) -> None:
        """A substring covering a whole surrogate pair gives the character back."""
        assert "🎉" == _js.substring("x🎉y", 1, 3)

    def test_substring_can_split_a_pair(self) -> None:
        """A substring ending inside a pair returns the lone high surrogate."""
        assert "x\ud83c" == _js.substring("x🎉y", 0, 2)

    def test_substring_without_end(self) -> None:
        """Without an end the substring runs to the end."""
        assert "cd" == _js.substring("abcd", 2)


class TestTruthy:
    def test_empty_and_none_are_falsy(self) -> None:
        """`undefined` and `""` are falsy; any other string is truthy."""
        assert (False, False, True) == (_js.truthy(None), _js.truthy(""), _js.truthy(" "))
