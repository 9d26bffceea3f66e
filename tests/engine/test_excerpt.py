"""The closest real region of a file, for refusal messages: `patchsmith.engine.excerpt`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.excerpt import (
    _CANDIDATES,
    _LONGEST_COMPARED,
    _PER_LINE,
    _SIMILAR,
    MAX_EXCERPT_LINES,
    MAX_LOOKALIKES,
    _close_lines,
    _key,
    closest_region,
    lookalikes,
    numbered_excerpt,
    similar_regions,
)
from patchsmith.engine.similarity import bigram_similarity

FILE = ["import os", "", "def f():", "    a = 1", "    return a", "", "def g():", "    return 2"]


class TestClosestRegion:
    def test_empty_file(self) -> None:
        """An empty file has no region."""
        assert closest_region([], ["x"]) is None

    def test_most_votes(self) -> None:
        """The start most wanted lines agree on wins, even with one line misremembered."""
        assert (2, 5) == closest_region(FILE, ["def f():", "    a = 100", "    return a"])

    def test_folds_punctuation_and_spacing(self) -> None:
        """Lines compare with punctuation folded and whitespace collapsed."""
        assert (6, 8) == closest_region(FILE, ["def  g():", "    return 2"])

    def test_tie_goes_to_hint(self) -> None:
        """Equal votes go to the start nearest the hint."""
        assert (2, 3) == closest_region(["x", "y", "x", "y"], ["x"], hint=3)

    def test_tie_without_hint(self) -> None:
        """Equal votes without a hint go to the earliest start."""
        assert (0, 1) == closest_region(["x", "y", "x", "y"], ["x"])

    def test_no_votes_uses_hint(self) -> None:
        """Nothing in common: the region at the hint."""
        assert (3, 5) == closest_region(FILE, ["zzz", "yyy"], hint=3)

    def test_no_votes_no_hint(self) -> None:
        """Nothing in common and no hint: the top of the file."""
        assert (0, 1) == closest_region(FILE, [])

    def test_clamped(self) -> None:
        """A start implied before the file or a hint past it is clamped into the file."""
        assert (0, 3) == closest_region(FILE, ["x", "y", "import os"])
        assert (7, 8) == closest_region(FILE, ["zzz"], hint=100)


class TestNumberedExcerpt:
    def test_margin_and_numbers(self) -> None:
        """Lines around the region, numbered from 1, with the span returned."""
        text, first, last = numbered_excerpt(FILE, 3, 4, margin=1)

        assert (
            "3 |     def f():\n4 |     a = 1\n5 |     return a".replace("|     def", "| def")
            == text
        )
        assert (3, 5) == (first, last)

    def test_width_follows_last_number(self) -> None:
        """Numbers are right-aligned to the widest one."""
        contents = [str(i) for i in range(12)]

        text, _, _ = numbered_excerpt(contents, 8, 9)

        assert text.splitlines()[0] == " 6 | 5"
        assert text.splitlines()[-1] == "12 | 11"

    def test_bounded(self) -> None:
        """An excerpt never exceeds the maximum number of lines."""
        contents = ["x"] * 100

        text, first, last = numbered_excerpt(contents, 0, 100)

        assert (MAX_EXCERPT_LINES, 1, MAX_EXCERPT_LINES) == (len(text.splitlines()), first, last)


# Lines that resemble each other: a few tokens, reused, so most pairs share bigrams and
# some reach the similarity threshold; single characters and blank lines included.
_WORDS = ("x", "}", "result", "item", "items", "+=", "return", "for", "in", "=", "0", "()", " ")
_LINES = st.lists(st.sampled_from(_WORDS), max_size=6).map(" ".join)


def _pairwise(keys: list[str], solid: list[tuple[int, str]]) -> dict[int, dict[int, float]]:
    """The definition `_close_lines` must keep: every wanted line against every file line."""
    close: dict[int, dict[int, float]] = {}
    for j, key in solid:
        exact = [i for i, k in enumerate(keys) if k == key][:_PER_LINE]
        found = {i: 1.0 for i in exact}
        scored = sorted(
            (
                (bigram_similarity(key, k), i)
                for i, k in enumerate(keys)
                if k and i not in found and bigram_similarity(key, k) >= _SIMILAR
            ),
            reverse=True,
        )
        for sim, i in scored[: _PER_LINE - len(found)]:
            found[i] = sim
        close[j] = found
    return close


class TestCloseLines:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(_LINES, max_size=60), st.lists(_LINES, min_size=1, max_size=8))
    def test_index_finds_what_every_pair_would(
        self, contents: list[str], wanted: list[str]
    ) -> None:
        """Counting shared bigrams through an index gives each wanted line the same close
        file lines, with the same scores, in the same order, as comparing every pair."""
        keys = [_key(line) for line in contents]
        solid = [(j, _key(w)) for j, w in enumerate(wanted) if w.strip()]

        found = _close_lines(keys, solid)

        expected = _pairwise(keys, solid)
        assert found == expected
        assert [list(f) for f in found.values()] == [list(f) for f in expected.values()]

    def test_bounded_per_line(self) -> None:
        """A wanted line close to many file lines keeps the best `_PER_LINE` of them."""
        contents = [f"result += item{n}" for n in range(3 * _PER_LINE)]

        found = _close_lines([_key(c) for c in contents], [(0, _key("result += item"))])

        assert len(found[0]) == _PER_LINE

    def test_an_overlong_line_is_matched_exactly_only(self) -> None:
        """A line past `_LONGEST_COMPARED` finds its exact copies and nothing merely like
        it (listing its character pairs is what would cost seconds)."""
        long = "x" * _LONGEST_COMPARED + " = 1"
        contents = [long, long + "2", "short line", long]

        found = _close_lines([_key(c) for c in contents], [(0, _key(long)), (1, "short lines")])

        assert found[0] == {0: 1.0, 3: 1.0}
        assert list(found[1]) == [2]  # a short line is still compared by likeness


class TestSimilarRegions:
    @settings(max_examples=200, deadline=None)
    @given(
        st.lists(_LINES, max_size=50),
        st.lists(_LINES, min_size=1, max_size=6),
        st.none() | st.integers(0, 50),
    )
    def test_first_region_does_not_depend_on_limit(
        self, contents: list[str], wanted: list[str], hint: int | None
    ) -> None:
        """A refusal finds its regions once, for the excerpt (the best) and the look-alikes."""
        one = similar_regions(contents, wanted, hint)
        many = similar_regions(contents, wanted, hint, limit=MAX_LOOKALIKES)

        assert one == many[:1]
        assert len(many) <= min(MAX_LOOKALIKES, _CANDIDATES)
        assert lookalikes(contents, wanted, hint, regions=many) == lookalikes(
            contents, wanted, hint
        )
