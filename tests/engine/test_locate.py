"""Locating a block by content, strictest level first: `patchsmith.engine.locate`."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine import locate as locate_module
from patchsmith.engine.blocks import block_from_hunk
from patchsmith.engine.indent import IndentMode
from patchsmith.engine.locate import (
    EXACT,
    LineKeys,
    Normalisation,
    NotPlaced,
    Placement,
    _occurrences,
    find_contiguous,
    fold_punctuation,
    lcs_table,
    place_block,
)
from patchsmith.engine.model import EngineOptions, Hunk, SkipReason, Strategy

DEFAULT = EngineOptions.default()

FILE = [
    "def f():",
    "    a = 1",
    "    b = 2",
    "    return a + b",
    "",
    "def g():",
    "    return 'done'",
]


def place(
    body: str, contents: list[str] = FILE, options: EngineOptions = DEFAULT, **numbers: object
) -> Placement | NotPlaced:
    """Place a hunk body written as text (one body line per line)."""
    hunk = Hunk(tuple(body.splitlines(keepends=True)), **numbers)  # type: ignore[arg-type]
    return place_block(contents, block_from_hunk(hunk), options)


def placed(result: Placement | NotPlaced) -> Placement:
    assert isinstance(result, Placement), result
    return result


def refused(result: Placement | NotPlaced) -> NotPlaced:
    assert isinstance(result, NotPlaced), result
    return result


class TestFoldPunctuation:
    def test_quotes_dashes_spaces(self) -> None:
        """Curly quotes, dashes, odd spaces and ellipses fold to ASCII."""
        assert "'a' \"b\" - c..." == fold_punctuation("‘a’\u00a0“b” — c…")

    def test_zero_width_removed(self) -> None:
        """Zero-width spaces and BOMs disappear."""
        assert "ab" == fold_punctuation("\ufeffa\u200bb")


class TestFindContiguous:
    def test_every_start(self) -> None:
        """Every run of consecutive whole lines is found."""
        assert [0, 2] == find_contiguous(["a", "b", "a", "b"], ["a", "b"])

    def test_whole_lines_only(self) -> None:
        """A line that merely contains the text is no match."""
        assert [] == find_contiguous(["xa", "b"], ["a", "b"])

    def test_leading_blank_probe(self) -> None:
        """Blank leading lines are checked, not used to probe."""
        assert [1] == find_contiguous(["x", "", "a"], ["", "a"])

    def test_past_the_end(self) -> None:
        """A run that would run past the end is not a match."""
        assert [] == find_contiguous(["a"], ["a", "b"])

    @given(
        st.lists(st.sampled_from(["a", "b", ""]), max_size=8),
        st.lists(st.sampled_from(["a", "b", ""]), min_size=1, max_size=3),
    )
    def test_matches_brute_force(self, fkeys: list[str], bkeys: list[str]) -> None:
        """The result equals a brute-force scan."""
        expected = [
            s for s in range(len(fkeys) - len(bkeys) + 1) if fkeys[s : s + len(bkeys)] == bkeys
        ]

        assert expected == find_contiguous(fkeys, bkeys)


class TestExactLevels:
    def test_exact(self) -> None:
        """Lines as in the file: DIRECT at their place."""
        result = placed(place("     a = 1\n-    b = 2\n+    b = 3\n"))

        assert (1, 3, Strategy.DIRECT) == (result.start, result.end, result.strategy)

    def test_blank_edges_stripped(self) -> None:
        """Blank context lines absent from the file are stripped from the hunk's edges."""
        result = placed(place(" \n     a = 1\n-    b = 2\n+    b = 3\n \n \n"))

        assert (Strategy.DIRECT_STRIPPED, 1) == (result.strategy, result.start)
        assert ((1, 1), (2, 2)) == result.pairs

    def test_trailing_whitespace(self) -> None:
        """Trailing whitespace differences are tolerated."""
        result = placed(place("     a = 1   \n-    b = 2\t\n+    b = 3\n"))

        assert Strategy.WHITESPACE_TOLERANT == result.strategy

    def test_trailing_whitespace_near_miss(self) -> None:
        """Leading whitespace is not trailing whitespace: that takes an indentation level."""
        result = placed(place("      a = 1\n-     b = 2\n+     b = 3\n"))

        assert Strategy.RELATIVE_INDENT == result.strategy

    def test_punctuation(self) -> None:
        """Curly quotes in the hunk match straight quotes in the file."""
        result = placed(place("-    return ‘done’\n+    return 'ok'\n"))

        assert (Strategy.PUNCTUATION_FOLDED, 6) == (result.strategy, result.start)

    def test_punctuation_near_miss(self) -> None:
        """A different character is not folded: no match."""
        assert SkipReason.NO_MATCH == refused(place("-    return `done`\n+    x\n")).reason


class TestIndentLevels:
    def test_relative_indent(self) -> None:
        """A hunk indented by a consistent prefix less is placed with that prefix shift."""
        result = placed(place(" a = 1\n-b = 2\n+b = 3\n"))

        assert result.indent is not None
        assert (Strategy.RELATIVE_INDENT, "    ") == (result.strategy, result.indent.add)

    def test_relative_indent_near_miss(self) -> None:
        """Lines shifted by different amounts are not placed by indentation."""
        assert isinstance(place(" def f():\n   a = 1\n-  b = 2\n+  b = 3\n"), NotPlaced)

    def test_tabs_for_spaces(self) -> None:
        """Tabs in the hunk against spaces in the file are an indentation-columns match."""
        result = placed(place(" def f():\n \ta = 1\n-\tb = 2\n+\tb = 3\n"))

        assert result.indent is not None
        assert (Strategy.INDENT_TOLERANT, IndentMode.COLUMNS) == (
            result.strategy,
            result.indent.mode,
        )

    def test_spaces_for_tabs(self) -> None:
        """Spaces in the hunk against tabs in the file are placed, noting the file uses tabs."""
        tabbed = ["func f() {", "\tif x {", "\t\treturn 1", "\t}", "}"]

        result = placed(
            place(" func f() {\n     if x {\n-        return 1\n+        return 2\n", tabbed)
        )

        assert result.indent is not None
        assert (Strategy.INDENT_TOLERANT, True) == (result.strategy, result.indent.use_tabs)


class TestPartialContext:
    def test_dropped_context_line(self) -> None:
        """One file line the hunk left out is tolerated."""
        result = placed(place(" def f():\n-    b = 2\n+    b = 3\n     return a + b\n"))

        assert (Strategy.PARTIAL_CONTEXT, 0, 4) == (result.strategy, result.start, result.end)
        assert ((0, 0), (1, 2), (2, 3)) == result.pairs

    def test_fits_are_worked_out_once_per_text(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Placing a block and weighing its rivals ask `_fuzzy_fits` the same questions:
        each is aligned once, until the text changes (`replace`)."""
        aligned: list[object] = []
        real = locate_module._aligned_fits

        def counted(*args: object) -> object:
            aligned.append(args[2])
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(locate_module, "_aligned_fits", counted)
        cache = LineKeys(list(FILE))
        body = " def f():\n-    b = 2\n+    b = 3\n     return a + b\n"
        block = block_from_hunk(Hunk(tuple(body.splitlines(keepends=True))))

        first = placed(place_block(cache.contents, block, DEFAULT, keys=cache))
        asked = len(aligned)
        assert first.strategy is Strategy.PARTIAL_CONTEXT and asked > 0
        again = placed(place_block(cache.contents, block, DEFAULT, keys=cache))
        assert (first, len(aligned)) == (again, asked)  # every answer kept

        cache.replace(6, 7, ["    return 'done'"], ["    return 'over'"], cache.contents)
        placed(place_block(cache.contents, block, DEFAULT, keys=cache))
        assert len(aligned) == 2 * asked  # worked out again for the new text

    def test_two_dropped_lines_refused(self) -> None:
        """Two file lines left out is too loose."""
        contents = ["def f():", "    x = 0", "    a = 1", "    b = 2", "    return a + b"]

        result = place(" def f():\n-    b = 2\n+    b = 3\n     return a + b\n", contents)

        assert SkipReason.NO_MATCH == refused(result).reason

    def test_altered_context_line(self) -> None:
        """One context line the model misremembered is tolerated when others anchor the hunk."""
        result = placed(
            place(" def f():\n     a = 100\n-    b = 2\n+    b = 3\n     return a + b\n")
        )

        assert Strategy.PARTIAL_CONTEXT == result.strategy
        assert 1 not in dict(result.pairs)

    def test_two_altered_lines_refused(self) -> None:
        """Two misremembered context lines are refused by partial context (stale context,
        which weighs the removed lines, is off here; see tests/engine/test_stale.py)."""
        body = " def f():\n     a = 100\n-    b = 2\n+    b = 3\n     return a - b\n"

        assert isinstance(place(body, options=replace(DEFAULT, stale_context=False)), NotPlaced)

    def test_altered_removed_line_refused(self) -> None:
        """A removed line must match; only context may be altered."""
        body = " def f():\n     a = 1\n-    b = 200\n+    b = 3\n     return a + b\n"

        assert SkipReason.NO_MATCH == refused(place(body)).reason

    def test_dots_elision(self) -> None:
        """A `...` line stands for any number of omitted lines."""
        result = placed(place(" def f():\n ...\n-    return a + b\n+    return a * b\n"))

        assert (Strategy.PARTIAL_CONTEXT, 0, 4) == (result.strategy, result.start, result.end)

    def test_comment_elision(self) -> None:
        """`# ... existing code ...` stands for omitted lines too."""
        body = " def f():\n     # ... existing code ...\n-    return a + b\n+    return a * b\n"

        assert Strategy.PARTIAL_CONTEXT == placed(place(body)).strategy

    def test_blanks_around_elision_paired(self) -> None:
        """Blank lines next to an elision pair with the file's blanks beside the solid lines."""
        source = ["def f():", "    a = 1", "", "    b = 2", "", "    return b"]
        body = " def f():\n     a = 1\n \n ...\n \n-    return b\n+    return c\n"

        result = placed(place(body, source))

        assert ((0, 0), (1, 1), (2, 2), (4, 4), (5, 5)) == result.pairs

    def test_one_solid_line_is_not_enough(self) -> None:
        """An elision next to one real line is too little evidence."""
        assert isinstance(place(" ...\n-    a = 1\n+    a = 2\n", [*FILE, "    a = 1"]), NotPlaced)

    def test_fuzzy_ambiguous(self) -> None:
        """Two places that fit once context is loosened are ambiguous."""
        twice = ["def f():", "    x = 1", "    y = 2", "", "def f():", "    z = 1", "    y = 2"]

        result = refused(place(" def f():\n     q = 1\n-    y = 2\n+    y = 3\n", twice))

        assert (SkipReason.AMBIGUOUS, (0, 4)) == (result.reason, result.candidates)

    def test_fuzzy_tie_broken_by_line_number(self) -> None:
        """Line numbers choose between loosened places too."""
        twice = ["def f():", "    x = 1", "    y = 2", "", "def f():", "    z = 1", "    y = 2"]

        result = placed(
            place(
                " def f():\n     q = 1\n-    y = 2\n+    y = 3\n", twice, old_start=5, old_count=3
            )
        )

        assert 4 == result.start

    def test_fuzzy_at_eof(self) -> None:
        """An End of File hunk fits only at the end, even loosened."""
        twice = ["def f():", "    x = 1", "    y = 2", "", "def f():", "    z = 1", "    y = 2"]
        hunk = Hunk((" def f():\n", "     q = 1\n", "-    y = 2\n", "+    y = 3\n"), at_eof=True)

        result = placed(place_block(twice, block_from_hunk(hunk), DEFAULT))

        assert 4 == result.start

    def test_fuzzy_with_indent_shift(self) -> None:
        """A dropped line and an indentation shift together are still placed."""
        nested = ["class A:", "    def f():", "        a = 1", "        b = 2", "        return b"]
        body = " def f():\n-    b = 2\n+    b = 3\n     return b\n"

        result = placed(place(body, nested))

        assert (Strategy.PARTIAL_CONTEXT, 1) == (result.strategy, result.start)
        assert result.indent is not None
        assert 4 == result.indent.columns

    def test_fuzzy_off(self) -> None:
        """With fuzzy context off, a dropped line is no match."""
        options = replace(DEFAULT, fuzzy_context=False)
        body = " def f():\n-    b = 2\n+    b = 3\n     return a + b\n"

        assert SkipReason.NO_MATCH == refused(place(body, options=options)).reason

    def test_fuzzy_with_every_tolerance_off(self) -> None:
        """Fuzzy context alone still aligns exact lines."""
        options = replace(EngineOptions.compat(), fuzzy_context=True)
        body = " def f():\n-    b = 2\n+    b = 3\n     return a + b\n"

        assert Strategy.PARTIAL_CONTEXT == placed(place(body, options=options)).strategy


class TestAmbiguity:
    TWICE: ClassVar[list[str]] = ["x = 1", "y = 2", "", "x = 1", "y = 2", "z"]

    def test_two_places(self) -> None:
        """Two equal places refuse with both as candidates."""
        result = refused(place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE))

        assert (SkipReason.AMBIGUOUS, (0, 3)) == (result.reason, result.candidates)

    def test_line_number_breaks_tie(self) -> None:
        """The hunk's line number picks the nearer of two equal places."""
        result = placed(place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE, old_start=4, old_count=2))

        assert 3 == result.start

    def test_line_number_too_far(self) -> None:
        """A line number far from both places does not choose."""
        twice = ["x", "y"] + ["-"] * 50 + ["x", "y"] + ["-"] * 50

        result = place(" x\n-y\n+Y\n", twice, old_start=200, old_count=2)

        assert SkipReason.AMBIGUOUS == refused(result).reason

    def test_line_number_halfway(self) -> None:
        """A line number equally near both places does not choose."""
        spaced = ["x = 1", "y = 2", "", "", "x = 1", "y = 2"]

        result = place(" x = 1\n-y = 2\n+y = 3\n", spaced, old_start=3, old_count=2)

        assert SkipReason.AMBIGUOUS == refused(result).reason

    def test_line_number_never_locates(self) -> None:
        """A unique match far from the line number is used; the number only breaks ties."""
        result = placed(place(" a = 1\n-b = 2\n+b = 3\n", ["a = 1", "b = 2"], old_start=90))

        assert 0 == result.start

    def test_anchor_breaks_tie(self) -> None:
        """An `@@ anchor` line keeps only places after it."""
        result = placed(place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE, anchors=("",)))

        assert 3 == result.start

    def test_anchor_after_every_place_does_not_choose(self) -> None:
        """An anchor found after every place leaves the tie."""
        result = place(
            " x = 1\n-y = 2\n+y = 3\n", [*self.TWICE, "class Late:"], anchors=("class Late:",)
        )

        assert SkipReason.AMBIGUOUS == refused(result).reason

    def test_missing_anchor_refuses(self) -> None:
        """An anchor absent from the file refuses the hunk, however unique its lines."""
        result = place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE[:3], anchors=("class Nope:",))

        assert SkipReason.ANCHOR_NOT_FOUND == refused(result).reason
        assert "class Nope:" in refused(result).detail

    def test_missing_anchor_unchecked_does_not_choose(self) -> None:
        """With anchor checks off, an anchor absent from the file leaves the tie."""
        options = replace(DEFAULT, check_anchors=False)
        result = place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE, options, anchors=("class Nope:",))

        assert SkipReason.AMBIGUOUS == refused(result).reason

    def test_section_header_is_an_anchor(self) -> None:
        """A unified diff's section header chooses between equal places, like an anchor."""
        contents = ["def a():", "    x = 1", "    y = 2", "def b():", "    x = 1", "    y = 2"]

        result = placed(place("     x = 1\n-    y = 2\n+    y = 3\n", contents, section="def b():"))

        assert 4 == result.start

    def test_section_header_prefix_counts(self) -> None:
        """A section header cut short (as git cuts long ones) still names its line."""
        contents = ["def build(self, name, value):", "    x = 1", "    y = 2"]

        result = place("     x = 1\n-    y = 2\n+    y = 3\n", contents, section="def build(self")

        assert 1 == placed(result).start

    def test_section_header_nowhere_refuses(self) -> None:
        """A section header naming no line of the file refuses the hunk."""
        contents = ["def build():", "    x = 1", "    y = 2"]

        result = place("     x = 1\n-    y = 2\n+    y = 3\n", contents, section="def nope():")

        assert SkipReason.ANCHOR_NOT_FOUND == refused(result).reason

    def test_nested_anchors_then_line_number(self) -> None:
        """Anchors narrow the places; line numbers choose among those left."""
        three = ["class A:", "x", "y", "x", "y", "x", "y"]

        result = placed(place(" x\n-y\n+Y\n", three, anchors=("class A:",), old_start=6))

        assert 5 == result.start

    def test_at_eof_breaks_tie(self) -> None:
        """An End of File hunk takes the place at the end."""
        result = placed(place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE[:5], at_eof=True))

        assert 3 == result.start

    def test_first_place_without_require_unique(self) -> None:
        """With uniqueness not required the first place is taken."""
        options = replace(DEFAULT, require_unique=False)

        assert 0 == placed(place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE, options=options)).start

    def test_tie_break_off(self) -> None:
        """With the line-number tie-break off, numbers do not choose."""
        options = replace(DEFAULT, line_number_tiebreak=False)
        result = place(" x = 1\n-y = 2\n+y = 3\n", self.TWICE, options=options, old_start=4)

        assert SkipReason.AMBIGUOUS == refused(result).reason


class TestInsertion:
    def test_empty_file(self) -> None:
        """Anything goes into an empty file at its start."""
        assert (0, 0, Strategy.DIRECT) == _span(place("+a\n", []))

    def test_line_number(self) -> None:
        """A line number places an insertion without context."""
        assert (2, 2, Strategy.LINE_NUMBER) == _span(
            place("+a\n", ["x", "y"], old_start=2, old_count=0)
        )

    def test_line_number_past_end(self) -> None:
        """A line number beyond the file does not place it."""
        assert (
            SkipReason.AMBIGUOUS == refused(place("+a\n", ["x"], old_start=5, old_count=0)).reason
        )

    def test_end_of_file(self) -> None:
        """`End of File` appends."""
        assert (2, 2, Strategy.APPEND) == _span(place("+a\n", ["x", "y"], at_eof=True))

    def test_no_position_refused(self) -> None:
        """No context, number or End of File: refused as ambiguous."""
        assert SkipReason.AMBIGUOUS == refused(place("+a\n", ["x"])).reason


def _span(result: Placement | NotPlaced) -> tuple[int, int, Strategy]:
    p = placed(result)
    return p.start, p.end, p.strategy


class TestLineKeys:
    """The cached normalised lines stay equal to a fresh computation across splices."""

    @given(
        st.lists(st.sampled_from(["a", " a ", "\tb", "“c”", "", "  ", "d\u00a0e"]), max_size=12),
        st.integers(0, 12),
        st.integers(0, 4),
        st.lists(st.sampled_from(["x ", "\ty", "‘z’", ""]), max_size=4),
    )
    def test_replace_matches_recomputation(
        self, contents: list[str], start: int, width: int, region: list[str]
    ) -> None:
        """After `replace`, every computed key list equals normalising the new file afresh."""
        start = min(start, len(contents))
        end = min(start + width, len(contents))
        keys = LineKeys(contents)
        norms = [
            Normalisation(rstrip=True),
            Normalisation(True, True),
            Normalisation(True, True, True),
        ]
        for norm in norms:
            keys.keys(norm)
            keys.counts(norm)
        keys.counts(EXACT)
        new_contents = contents[:start] + region + contents[end:]

        keys.replace(start, end, contents[start:end], region, new_contents)

        for norm in [*norms, EXACT]:
            assert norm.lines(new_contents) == list(keys.keys(norm))
            assert Counter(norm.lines(new_contents)) == +keys.counts(norm)

    def test_bulk_equals_per_line(self) -> None:
        """Normalising the joined text gives what normalising each line would."""
        lines = ["  a \u00a0", "\t“b”\t", "", " \u2026 ", "c\x0c"]
        norm = Normalisation(rstrip=True, fold=True, dedent=True)

        assert ["a", '"b"', "", "...", "c"] == norm.lines(lines)


class TestLineKeysFind:
    """`LineKeys.find` answers as `find_contiguous` does, with or without a nearby line number."""

    @given(
        st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=30),
        st.lists(st.sampled_from(["a", "b", "c", "d", ""]), min_size=1, max_size=4),
        st.one_of(st.none(), st.integers(0, 40)),
    )
    def test_same_starts(self, contents: list[str], block: list[str], near: int | None) -> None:
        keys = LineKeys(contents)
        assert find_contiguous(contents, block) == keys.find(EXACT, block, near)


class TestOccurrences:
    """`_occurrences` finds what a scan from the top finds, however it looks."""

    @given(
        st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=300),
        st.sampled_from(["a", "b", "c", "d"]),
        st.integers(1, 5),
        st.one_of(st.none(), st.integers(-70, 400)),
    )
    def test_the_first_places_from_the_top(
        self, keys: list[str], wanted: str, limit: int, near: int | None
    ) -> None:
        expected = [i for i, key in enumerate(keys) if key == wanted][:limit]
        assert _occurrences(keys, wanted, limit, keys.count(wanted), near) == expected


def _textbook_lcs(block: list[str | None], window: list[str]) -> list[list[int]]:
    """The recurrence `lcs_table` must equal (`None`: a block line that matches nothing)."""
    table = [[0] * (len(window) + 1) for _ in range(len(block) + 1)]
    for j in range(len(block) - 1, -1, -1):
        for i in range(len(window) - 1, -1, -1):
            if block[j] is not None and block[j] == window[i]:
                table[j][i] = table[j + 1][i + 1] + 1
            else:
                table[j][i] = max(table[j + 1][i], table[j][i + 1])
    return table


class TestLcsTable:
    @given(
        st.lists(st.none() | st.sampled_from("abcde"), max_size=12),
        st.lists(st.sampled_from("abcdef"), max_size=30),
    )
    def test_equals_the_recurrence(self, block: list[str | None], window: list[str]) -> None:
        """Built from the matches alone, the table is the textbook one, cell for cell."""
        matches = [[i for i, x in enumerate(window) if x == b] if b else [] for b in block]

        assert _textbook_lcs(block, window) == lcs_table(matches, len(window))

    def test_rows_without_matches_repeat_the_row_below(self) -> None:
        """A block line found nowhere in the window adds nothing to any suffix's LCS."""
        table = lcs_table([[1], [], [0, 2]], 3)

        assert table == [[2, 2, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0]]
