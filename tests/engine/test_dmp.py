"""Unit tests of the JS-faithful line-mode diff-match-patch in `patchsmith.engine.dmp`."""

from __future__ import annotations

import pytest
from diff_match_patch import diff_match_patch
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.dmp import (
    DIFF_TIMEOUT_SECONDS,
    JsDiffMatchPatch,
    _boundary_score,
    diff_lines,
    line_diffs,
)

NUMBERED = "".join(f"{i}\n" for i in range(32))
# Found by search: the Python port's Unicode isalnum/isspace score line codes
# 9..32 differently from JS's ASCII classes. Expected answer recorded from node.
EDITED = "".join(f"{i}\n" for i in range(24)) + "210\n4\n25\n26\n27\n27\n28\n21\n9\n30\n31\n"
EDITED_EXPECTED = (
    [f" {i}\n" for i in range(24)]
    + [f"-{i}\n" for i in range(24, 30)]
    + ["+210\n", "+4\n", "+25\n", "+26\n", "+27\n", "+27\n", "+28\n", "+21\n", "+9\n"]
    + [" 30\n", " 31\n"]
)


def _python_port_lines(text1: str, text2: str) -> list[tuple[int, str]]:
    dmp = diff_match_patch()
    dmp.Diff_Timeout = DIFF_TIMEOUT_SECONDS
    chars1, chars2, array = dmp.diff_linesToChars(text1, text2)
    diffs: list[tuple[int, str]] = dmp.diff_main(chars1, chars2, False)
    dmp.diff_cleanupSemantic(diffs)
    dmp.diff_cleanupEfficiency(diffs)
    dmp.diff_charsToLines(diffs, array)
    return diffs


class TestDiffLines:
    def test_semantic_cleanup_absorbs_short_equality(self) -> None:
        """A one-line equality between insertions is folded into a replacement."""
        expected = ["-bravo\n", "+alpha\n", "+bravo\n", "+charlie\n"]

        assert expected == diff_lines("bravo\n", "alpha\nbravo\ncharlie\n")

    def test_js_boundary_scores(self) -> None:
        """With more than 9 distinct lines the answer is the JS package's."""
        assert EDITED_EXPECTED == diff_lines(NUMBERED, EDITED)

    def test_python_port_alone_would_differ(self) -> None:
        """The override is needed: the unmodified Python port answers otherwise here."""
        assert _python_port_lines(NUMBERED, EDITED) != line_diffs(NUMBERED, EDITED)

    def test_proto_line_never_matches(self) -> None:
        """A final `__proto__` line is never found again, as with a JS object table."""
        expected = [" a\n", " b\n", "-__proto__\n", "+__proto__\n"]

        assert expected == diff_lines("a\nb\n__proto__", "a\nb\n__proto__")

    def test_crlf_is_normalised(self) -> None:
        """CRLF input is diffed as LF."""
        assert [" a\n", "-b\n", "+c\n"] == diff_lines("a\r\nb\r\n", "a\nc\n")

    @given(st.text(alphabet="ab\n"), st.text(alphabet="ab\n"))
    def test_every_line_is_prefixed_and_terminated(self, old: str, new: str) -> None:
        """Each output line starts with an operation and ends with a newline."""
        for line in diff_lines(old, new):
            assert line[0] in " -+"
            assert line.endswith("\n")


class TestLinesToChars:
    def test_text1_limited_to_40000_lines(self) -> None:
        """Line 40000 of text1 and everything after it become one code, as in JS."""
        text1 = "".join(f"{i}\n" for i in range(40005))
        chars1, chars2, lines = JsDiffMatchPatch().diff_linesToChars(text1, "q\n")

        assert (40000, 1, 40002) == (len(chars1), len(chars2), len(lines))
        assert lines[40000].startswith("39999\n40000\n")

    def test_timeout_is_the_reference_value(self) -> None:
        """The diff timeout is 5 seconds, as the reference sets it."""
        assert 5 == JsDiffMatchPatch().Diff_Timeout


class TestBoundaryScore:
    @pytest.mark.parametrize(
        ("one", "two", "expected"),
        [
            ("", "x", 6),
            ("a\n\n", "x", 5),
            ("a\n", "x", 4),
            ("a.", " b", 3),
            ("a ", "b", 2),
            ("a", "-b", 1),
            ("a", "b", 0),
            ("a\ufeff", "b", 2),
            ("a\x85", "b", 1),
        ],
    )
    def test_js_character_classes(self, one: str, two: str, expected: int) -> None:
        """Scores use JS classes: ASCII alphanumerics; whitespace has U+FEFF, not U+0085."""
        assert expected == _boundary_score(one, two)


EDITS = st.lists(
    st.tuples(st.sampled_from([-1, 0, 1]), st.text(alphabet="ab .\n", min_size=1, max_size=6)),
    max_size=8,
)


class TestCleanupSemanticLossless:
    @given(EDITS)
    def test_agrees_with_port_on_ascii(self, diffs: list[tuple[int, str]]) -> None:
        """On ASCII letters, spaces and newlines both scorings agree, so both slides agree."""
        ours = list(diffs)
        theirs = list(diffs)
        JsDiffMatchPatch().diff_cleanupSemanticLossless(ours)
        diff_match_patch().diff_cleanupSemanticLossless(theirs)

        assert theirs == ours

    def test_emptied_equality_is_removed(self) -> None:
        """When the best slide empties the leading equality, that equality is deleted."""
        diffs = [(0, "a"), (1, "ba"), (0, "c")]
        JsDiffMatchPatch().diff_cleanupSemanticLossless(diffs)

        assert [(1, "ab"), (0, "ac")] == diffs
