"""The closest real region of a file, for refusal messages: `patchsmith.engine.excerpt`."""

from __future__ import annotations

from patchsmith.engine.excerpt import MAX_EXCERPT_LINES, closest_region, numbered_excerpt

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
