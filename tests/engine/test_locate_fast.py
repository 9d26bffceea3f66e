"""The shortcuts in `patchsmith.engine.locate` answer exactly as the plain computations do.

Finding an anchor by one verbatim word of it, and answering the first searches of a file by
scanning instead of counting its lines, are speed-ups only: these properties hold them to the
plain definitions.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.locate import (
    EXACT,
    LineKeys,
    Normalisation,
    _anchor_at,
    _anchor_key,
    find_contiguous,
)

# Pieces that exercise folding (curly quotes, dashes, ellipsis, odd spaces), characters
# folding removes, whitespace runs and words that occur inside other words.
PIECES = [
    "def",
    "f",
    "x",
    "ab",
    "abc",
    "(a)",
    "'q'",
    "\u2018q\u2019",
    "\u201cq\u201d",
    "a-b",
    "a\u2014b",
    "...",
    "\u2026",
    " ",
    "  ",
    "\t",
    "\u00a0",
    "\u2009",
    "\u200b",
    "\ufeff",
    "\x0b",
    ".",
    "-",
    '"',
    "c",
]
line_text = st.lists(st.sampled_from(PIECES), max_size=5).map("".join)


def plain_anchor_at(anchor: str, contents: Sequence[str], start: int) -> int | None:
    """The definition: normalise every line, prefer equality, else containment."""
    want = _anchor_key(anchor)
    keys = [_anchor_key(line) for line in contents]
    whole = not want or want in keys
    for i in range(start, len(keys)):
        if keys[i] == want or (not whole and want in keys[i]):
            return i
    return None


@given(st.lists(line_text, max_size=12), line_text, st.integers(0, 13))
def test_anchor_at_matches_the_definition(contents: list[str], anchor: str, start: int) -> None:
    assert _anchor_at(anchor, contents, start) == plain_anchor_at(anchor, contents, start)


@given(st.lists(line_text, max_size=12), st.integers(0, 11), st.integers(0, 13))
def test_anchor_taken_from_the_file_is_found(contents: list[str], pick: int, start: int) -> None:
    if contents:
        anchor = contents[pick % len(contents)]
        assert _anchor_at(anchor, contents, start) == plain_anchor_at(anchor, contents, start)


WORDS = ["a", "b", "c", "d", "", "  a", "a ", "bb"]


@given(
    st.lists(st.sampled_from(WORDS), max_size=30),
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=6),
    st.one_of(st.none(), st.integers(0, 40)),
    st.sampled_from([EXACT, Normalisation(rstrip=True), Normalisation(True, False, True)]),
)
def test_scanning_then_counting_finds_the_same_places(
    contents: list[str], blocks: list[list[str]], near: int | None, key: Normalisation
) -> None:
    """Every search, the first ones (scanned) and the later ones (counted), as the plain scan."""
    keys = LineKeys(contents)
    normalised = key.lines(contents)
    for block in blocks:
        wanted = key.lines(block)
        assert keys.find(key, wanted, near) == find_contiguous(normalised, wanted)


def test_anchor_across_a_character_folding_removes() -> None:
    """A zero-width space inside a word vanishes when folded: the line still holds the anchor."""
    contents = ["x = 1", "def ab\u200bc():", "y = 2"]
    assert _anchor_at("def abc():", contents, 0) == 1
    assert _anchor_at("abc", contents, 0) == 1


def test_anchor_word_inside_a_folded_character() -> None:
    """A word next to a typographic character is found through the folded text."""
    contents = ["s = \u201cdone\u201d", "s = 'done'"]
    assert _anchor_at('s = "done"', contents, 0) == 0
    assert _anchor_at("s = 'done'", contents, 1) == 1


def test_find_contiguous_probes_any_line() -> None:
    """The probe (the longest line) need not be the first: every start is still found."""
    contents = ["x", "long line", "x", "x", "long line", "x"]
    assert find_contiguous(contents, ["x", "long line"]) == [0, 3]
    assert find_contiguous(contents, ["long line", "x"]) == [1, 4]
    assert find_contiguous(contents, ["x"]) == [0, 2, 3, 5]
    assert find_contiguous(contents, ["y", "x"]) == []
