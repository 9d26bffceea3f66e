"""The closest real region of a file to what a model thought was there, with line numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

from patchsmith.engine.locate import TIE_DISTANCE, fold_punctuation
from patchsmith.engine.similarity import bigram_similarity, bigrams

__all__ = [
    "LOOKALIKE_SIMILARITY",
    "MAX_LOOKALIKES",
    "Lookalike",
    "Region",
    "closest_region",
    "line_similarity",
    "lookalikes",
    "numbered_excerpt",
    "similar_regions",
]

MAX_EXCERPT_LINES = 30
# A file line this similar to a wanted line (Dice coefficient of character bigrams) may be
# the line the model meant: a typo, a renamed identifier, an added comment.
_SIMILAR = 0.5
_PER_LINE = 40
_CANDIDATES = 24
_DRIFT = 3
_LONGEST_COMPARED = 10_000
"""Characters beyond which a line is only matched exactly, never by likeness: its
character pairs would take seconds to list (a 20 MB line: 1.7 s), and no model retypes
such a line approximately."""


@dataclass(frozen=True)
class Region:
    """A file region like the wanted lines: 0-based [start, end) and how alike, 0 to 1.

    `score` is the mean, over the wanted non-blank lines, of each one's similarity to
    the file line it aligns with (1.0 for an identical line, 0 for none); `exact` counts
    the wanted lines found there verbatim (whitespace and punctuation aside).
    """

    start: int
    end: int
    score: float
    exact: int


def line_similarity(a: str, b: str) -> float:
    """How alike two lines are, 0 to 1: Dice coefficient of their character bigrams
    after folding punctuation and collapsing whitespace (1.0 when equal so)."""
    return bigram_similarity(_key(a), _key(b))


def similar_regions(
    contents: Sequence[str],
    wanted: Sequence[str],
    hint: int | None = None,
    *,
    limit: int = 1,
) -> list[Region]:
    """The file regions most like `wanted`, best first, at most `limit`, none overlapping.

    Every non-blank wanted line is compared with every file line (bigram Dice, bounded
    per line); each close pair votes for the region start it implies; the best-voted
    starts are then scored by aligning the wanted lines in order, allowing a few lines
    of drift (a line the model forgot or added). Empty when no wanted line resembles
    any file line. Ties go to the start nearest `hint`. The first region does not
    depend on `limit`.
    """
    solid = [(j, _key(w)) for j, w in enumerate(wanted) if w.strip()]
    if not contents or not solid:
        return []
    keys = [_key(line) for line in contents]
    close = _close_lines(keys, solid)
    votes: dict[int, float] = {}
    for j, found in close.items():
        for i, sim in found.items():
            votes[i - j] = votes.get(i - j, 0.0) + sim
    if not votes:
        return []
    anchor = hint if hint is not None else 0
    starts = sorted(votes, key=lambda s: (-votes[s], abs(s - anchor), s))[:_CANDIDATES]
    scored_regions = [_score(s, solid, close, len(wanted), len(contents), keys) for s in starts]
    scored_regions.sort(key=lambda r: (-r.score, abs(r.start - anchor), r.start))
    chosen: list[Region] = []
    for region in scored_regions:
        if all(region.end <= c.start or region.start >= c.end for c in chosen):
            chosen.append(region)
        if len(chosen) >= limit:
            break
    return chosen


def _close_lines(keys: list[str], solid: list[tuple[int, str]]) -> dict[int, dict[int, float]]:
    """For each wanted line `j`, the file lines at least `_SIMILAR` like it (identical ones
    first, then the most similar), at most `_PER_LINE`: file line -> similarity.

    A file line sharing no bigram with a wanted line is 0 like it, so only the lines each
    wanted bigram occurs in are counted (an index of the file's distinct lines, built
    once), not every pair of lines: a refused hunk in a large file is answered in a few
    milliseconds. Each counted pair's score is `bigram_similarity`'s Dice coefficient; a
    line longer than `_LONGEST_COMPARED` is matched exactly only.
    """
    exact_at: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        exact_at.setdefault(k, []).append(i)
    distinct = [k for k in exact_at if k]
    grams = [_compared_bigrams(k) for k in distinct]
    wanted = {key: _compared_bigrams(key) for _, key in solid}
    needed = frozenset().union(*wanted.values())
    having: dict[str, list[int]] = {}  # bigram -> the distinct lines holding it
    for d, g in enumerate(grams):
        for gram in g & needed:
            having.setdefault(gram, []).append(d)
    close: dict[int, dict[int, float]] = {}
    for j, key in solid:
        found: dict[int, float] = {i: 1.0 for i in exact_at.get(key, ())[:_PER_LINE]}
        if len(found) < _PER_LINE:
            wanted_grams = wanted[key]
            shared = Counter(chain.from_iterable(having.get(g, ()) for g in wanted_grams))
            # A Dice of `_SIMILAR` needs at least this many shared bigrams (a line has one).
            least = _SIMILAR * (len(wanted_grams) + 1) / 2
            scored: list[tuple[float, int]] = []
            for d, common in shared.most_common():
                if common < least:
                    break
                sim = 2 * common / (len(wanted_grams) + len(grams[d]))
                if sim >= _SIMILAR:
                    scored.extend((sim, i) for i in exact_at[distinct[d]] if i not in found)
            scored.sort(reverse=True)
            for sim, i in scored[: _PER_LINE - len(found)]:
                found[i] = sim
        close[j] = found
    return close


def _compared_bigrams(key: str) -> frozenset[str]:
    """`key`'s character pairs, none for a line too long to compare (`_LONGEST_COMPARED`)."""
    return bigrams(key) if len(key) <= _LONGEST_COMPARED else frozenset()


def _score(
    start: int,
    solid: list[tuple[int, str]],
    close: dict[int, dict[int, float]],
    size: int,
    length: int,
    keys: Sequence[str],
) -> Region:
    """Align the wanted lines in order near `start` (each within `_DRIFT` lines)."""
    total = 0.0
    exact = 0
    last = start - 1 - _DRIFT
    first_hit: int | None = None
    last_hit: int | None = None
    for j, key in solid:
        expected = start + j
        best_i, best = -1, 0.0
        for i, sim in close[j].items():
            if abs(i - expected) <= _DRIFT and i > last and sim > best:
                best_i, best = i, sim
        if best_i < 0:
            continue
        total += best
        exact += keys[best_i] == key
        last = best_i
        first_hit = best_i if first_hit is None else first_hit
        last_hit = best_i
    lo = max(min(start, first_hit if first_hit is not None else start), 0)
    hi = min(max(start + size, (last_hit or start) + 1), length)
    lo = min(lo, max(length - 1, 0))
    return Region(lo, max(hi, lo + 1), round(total / len(solid), 2), exact)


def _key(text: str) -> str:
    return " ".join(fold_punctuation(text).split())


def closest_region(
    contents: Sequence[str], wanted: Sequence[str], hint: int | None = None
) -> tuple[int, int] | None:
    """0-based [start, end) of the file region most like `wanted`; None for an empty file.

    Each non-blank wanted line votes for the start its every occurrence implies;
    the start with most votes wins (ties go to the one nearest `hint`). With no
    votes, the region around `hint` (or the top of the file) is returned.
    """
    if not contents:
        return None
    size = max(len(wanted), 1)
    positions: dict[str, list[int]] = {}
    wanted_keys = {_key(w) for w in wanted if w.strip()}
    for i, line in enumerate(contents):
        k = _key(line)
        if k in wanted_keys:
            positions.setdefault(k, []).append(i)
    votes: Counter[int] = Counter()
    for j, w in enumerate(wanted):
        for p in positions.get(_key(w), ())[:200]:
            votes[p - j] += 1
    if votes:
        best = max(votes.values())
        tied = [s for s, v in votes.items() if v == best]
        anchor = hint if hint is not None else 0
        start = min(tied, key=lambda s: (abs(s - anchor), s))
    else:
        start = hint if hint is not None else 0
    start = min(max(start, 0), max(len(contents) - 1, 0))
    return start, min(start + size, len(contents))


def numbered_excerpt(
    contents: Sequence[str], start: int, end: int, *, margin: int = 3
) -> tuple[str, int, int]:
    """Lines [start-margin, end+margin) as `  12 | text`, at most 30; also the 1-based span."""
    lo = max(start - margin, 0)
    hi = min(end + margin, len(contents))
    if hi - lo > MAX_EXCERPT_LINES:
        hi = lo + MAX_EXCERPT_LINES
    width = len(str(hi))
    lines = [f"{i + 1:>{width}} | {contents[i]}" for i in range(lo, hi)]
    return "\n".join(lines), lo + 1, hi


LOOKALIKE_SIMILARITY = 0.75
"""A region at least this like the edit's old lines (and near the best one) is a look-alike."""
_LOOKALIKE_SPREAD = 0.15
MAX_LOOKALIKES = 8
"""The most look-alikes named: `similar_regions` with this `limit` is what `lookalikes` reads."""


@dataclass(frozen=True)
class Lookalike:
    """A region a refused edit may have meant: 0-based [start, end), how alike, which of its
    lines (0-based) are not the edit's old lines as written, and whether the edit names it."""

    start: int
    end: int
    score: float
    differing: tuple[int, ...]
    named: bool


def lookalikes(
    contents: Sequence[str],
    wanted: Sequence[str],
    hint: int | None = None,
    starts: Sequence[int] = (),
    *,
    regions: Sequence[Region] | None = None,
) -> list[Lookalike]:
    """Every region like `wanted`, when there are two or more; else empty.

    `starts` (0-based), when given, are the places a locator found (an ambiguous match):
    each is one region. Otherwise the most similar regions that score at least
    `LOOKALIKE_SIMILARITY` and within a small spread of the best are; `regions`, when
    given, is `similar_regions(contents, wanted, hint, limit=MAX_LOOKALIKES)` already
    found by the caller. The one nearest `hint` (0-based, within the tie distance) is
    `named`; it comes first.
    """
    size = max(len(wanted), 1)
    if starts:
        found = [_region_at(contents, wanted, s, size) for s in starts]
    else:
        if regions is None:
            regions = similar_regions(contents, wanted, hint, limit=MAX_LOOKALIKES)
        top = regions[0].score if regions else 0.0
        found = [
            r
            for r in regions
            if r.score >= LOOKALIKE_SIMILARITY and r.score >= top - _LOOKALIKE_SPREAD
        ]
    if len(found) < 2:
        return []
    named_at: int | None = None
    if hint is not None:
        near = min(found, key=lambda r: (abs(r.start - hint), r.start))
        if abs(near.start - hint) <= TIE_DISTANCE:
            named_at = near.start
    keys = {_key(w) for w in wanted if w.strip()}
    out = [
        Lookalike(
            r.start,
            r.end,
            r.score,
            tuple(
                i
                for i in range(r.start, r.end)
                if contents[i].strip() and _key(contents[i]) not in keys
            ),
            r.start == named_at,
        )
        for r in found[:MAX_LOOKALIKES]
    ]
    return sorted(out, key=lambda x: (not x.named, x.start))


def _region_at(contents: Sequence[str], wanted: Sequence[str], start: int, size: int) -> Region:
    """The region of `size` lines from `start`, scored line for line against `wanted`."""
    end = min(start + size, len(contents))
    pairs = [
        (w, contents[start + j]) for j, w in enumerate(wanted) if w.strip() and start + j < end
    ]
    total = sum(line_similarity(w, f) for w, f in pairs)
    exact = sum(1 for w, f in pairs if _key(w) == _key(f))
    solid = sum(1 for w in wanted if w.strip()) or 1
    return Region(start, max(end, start + 1), round(total / solid, 2), exact)
