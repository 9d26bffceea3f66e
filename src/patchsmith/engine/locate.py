"""Find the one place in a file where an `EditBlock`'s old lines belong.

Default mode locates by content, whole lines only, from strict to tolerant:
exact → blank edges stripped → trailing whitespace → typographic punctuation →
relative indentation → indentation columns (tabs/spaces) → partial context
(one dropped or altered context line, `...` elisions). Each level answers with
every place it matches; more than one place is ambiguous, and line numbers or
`@@` anchors may only choose between such equal places. A level that finds
several places stops the search: a looser level cannot make them fewer.
"""

from __future__ import annotations

import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import pairwise
from operator import methodcaller, neg
from typing import NamedTuple

from patchsmith.engine.blocks import BlockLine, EditBlock, Op, is_elision
from patchsmith.engine.indent import IndentMode, IndentShift, indent_shift, indent_width, leading_ws
from patchsmith.engine.model import EngineOptions, SkipReason, Strategy
from patchsmith.engine.similarity import bigram_similarity

__all__ = [
    "EXACT",
    "TIE_DISTANCE",
    "IndentShift",
    "LineKeys",
    "Normalisation",
    "NotPlaced",
    "Placement",
    "absent_from",
    "anchor_contradiction",
    "cannot_place",
    "find_contiguous",
    "fold_punctuation",
    "lcs_table",
    "missing_anchor",
    "place_block",
    "place_stale",
]

# Typographic characters models substitute for ASCII ones.
_PUNCTUATION = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u00a0": " ",
    "\u2007": " ",
    "\u202f": " ",
    "\u2009": " ",
    "\u200a": " ",
    "\u2002": " ",
    "\u2003": " ",
    "\u200b": "",
    "\ufeff": "",
    "\u2026": "...",
}

# How far a match may reach past the block's own length, in lines.
_SLACK = 2
_ELISION_GAP = 400
_MAX_WINDOWS = 60
_PROBE_POOL = 8
TIE_DISTANCE = 20
_ALIGN_CELLS = 8_000_000
"""Alignment-table cells the partial-context search may fill for one block, all windows."""


def fold_punctuation(text: str) -> str:
    """Map curly quotes, dashes, ellipses and unusual spaces to their ASCII forms."""
    return text if text.isascii() else _fold_text(text)


def _fold_text(text: str) -> str:
    # `str.translate` looks every character up in a dict; replacing just the few
    # typographic characters present is several times faster on source code.
    for char, plain in _PUNCTUATION.items():
        if char in text:
            text = text.replace(char, plain)
    return text


class Placement(NamedTuple):
    """Where the block goes: file lines [start, end), and which old line is which file line."""

    start: int
    end: int
    pairs: tuple[tuple[int, int], ...]
    """(index among the block's old lines, file line index), increasing."""
    strategy: Strategy
    indent: IndentShift | None = None
    differing: int = 0
    """Non-blank old lines that are not the file's own (partial and stale context)."""


class NotPlaced(NamedTuple):
    reason: SkipReason
    detail: str
    candidates: tuple[int, ...] = ()
    """0-based starts of the equally good places, for AMBIGUOUS."""


class Normalisation(NamedTuple):
    """What a level ignores when it compares lines: trailing space, punctuation, indentation.

    A named tuple rather than a dataclass: it keys the per-file caches, and a tuple's
    hashing and equality run in C.
    """

    rstrip: bool = False
    fold: bool = False
    dedent: bool = False

    def lines(self, texts: Sequence[str]) -> list[str]:
        """Every line normalised, with C-level string methods (no Python call per line)."""
        out = list(texts)
        # Every folded character is outside ASCII; the lines are asked one by one, since
        # joining a big file to ask once would copy it.
        if self.fold and out and not all(map(str.isascii, out)):
            out = _fold_text("\n".join(out)).split("\n")
        # In place, a slice at a time: a big file's list is a million references, and a
        # second list beside it would be one more copy of them at the peak.
        if self.rstrip:
            _map_in_place(str.rstrip, out)
        if self.dedent:
            _map_in_place(_DEDENT, out)
        return out


_MAP_SLICE = 1 << 16


def _map_in_place(function: Callable[[str], str], texts: list[str]) -> None:
    """`texts[:] = map(function, texts)`, a slice at a time (C-level calls still)."""
    for start in range(0, len(texts), _MAP_SLICE):
        stop = start + _MAP_SLICE
        texts[start:stop] = map(function, texts[start:stop])


_DEDENT = methodcaller("lstrip", " \t")
EXACT = Normalisation()


class _Level(NamedTuple):
    strategy: Strategy
    key: Normalisation
    indent: IndentMode | None = None


_LEVELS_SEEN: dict[int, tuple[EngineOptions, tuple[_Level, ...]]] = {}


def _levels(options: EngineOptions) -> tuple[_Level, ...]:
    """The contiguous-match levels the options allow, strictest first.

    Asked once per block: remembered by the options object itself (hashing the options
    by value costs more than making the levels).
    """
    seen = _LEVELS_SEEN.get(id(options))
    if seen is not None and seen[0] is options:
        return seen[1]
    levels = _levels_for(options)
    if len(_LEVELS_SEEN) >= 64:
        _LEVELS_SEEN.clear()
    _LEVELS_SEEN[id(options)] = (options, levels)
    return levels


@lru_cache(maxsize=64)
def _levels_for(options: EngineOptions) -> tuple[_Level, ...]:
    rstrip = options.whitespace_tolerant
    fold = options.fold_punctuation
    levels = [_Level(Strategy.DIRECT, EXACT)]
    if rstrip:
        levels.append(_Level(Strategy.WHITESPACE_TOLERANT, Normalisation(rstrip=True)))
    if fold:
        levels.append(_Level(Strategy.PUNCTUATION_FOLDED, Normalisation(rstrip, fold=True)))
    dedented = Normalisation(rstrip, fold, dedent=True)
    if options.relative_indent:
        levels.append(_Level(Strategy.RELATIVE_INDENT, dedented, IndentMode.PREFIX))
    if options.indent_tolerant:
        levels.append(_Level(Strategy.INDENT_TOLERANT, dedented, IndentMode.COLUMNS))
    return tuple(levels)


class LineKeys:
    """A file's lines under each normalisation, and how often each occurs, computed on first use.

    It can outlive one placement: after a block is spliced in, `replace` updates
    every computed list and count, so a file with many hunks is normalised once
    and a block whose rarest line occurs once is found without scanning the file.
    """

    def __init__(
        self,
        contents: Sequence[str],
        text: str | None = None,
        wanted: Sequence[str] | None = None,
    ) -> None:
        """`text`, when given, must be `"\\n".join(contents)`, perhaps with a final "\\n"
        (a caller may know it cheaply).

        `wanted`, when given, are the texts of the lines the blocks to place hold (their
        hunks' lines): only those are counted in one pass per normalisation, any other
        line when it is asked about (`_LineCounts`), never every line of the file.
        """
        self.contents = contents
        self._keys: dict[Normalisation, list[str]] = {}
        self._counts: dict[Normalisation, Counter[str] | _LineCounts] = {}
        self._scans: dict[Normalisation, int] = {}
        self._text = text
        self._wanted = None if wanted is None else tuple(wanted)
        self.fuzzy_fits: dict[
            tuple[EditBlock, Normalisation, IndentMode | None], dict[tuple[int, int], _Fit] | None
        ] = {}
        """`_fuzzy_fits` answers for this text (placing a block, then weighing its rivals,
        asks the same questions); emptied by `replace`."""

    def known_text(self) -> str | None:
        """The file's lines joined by LF, when the caller gave it and no edit happened since.

        The refusal pre-tests are worth one pass over the text, not a join of every line
        after each edit of a file with many hunks: without it they do not run.
        """
        return self._text

    def keys(self, key: Normalisation) -> Sequence[str]:
        if key == EXACT:
            return self.contents
        if key not in self._keys:
            self._keys[key] = key.lines(self.contents)
        return self._keys[key]

    def counts(self, key: Normalisation) -> Counter[str] | _LineCounts:
        """How many file lines have each normalised text."""
        if key not in self._counts:
            if self._wanted is None:
                self._counts[key] = Counter(self.keys(key))
            else:
                seeds = set(key.lines(self._wanted))
                self._counts[key] = _LineCounts(self, key, seeds)
        return self._counts[key]

    def replace(
        self,
        start: int,
        end: int,
        old: Sequence[str],
        region: Sequence[str],
        contents: Sequence[str],
    ) -> None:
        """Lines [start, end), whose texts were `old`, are now `region`; the file is `contents`.

        `contents` may be the very list that was edited in place.
        """
        for key, counts in self._counts.items():
            counts.subtract(old if key == EXACT else key.lines(old))
            counts.update(region if key == EXACT else key.lines(region))
        for key, keys in self._keys.items():
            keys[start:end] = key.lines(region)
        self.contents = contents
        self._text = None
        self.fuzzy_fits.clear()

    def find(self, key: Normalisation, bkeys: list[str], near: int | None) -> list[int]:
        """Every start where `bkeys` occurs at `key`, as `find_contiguous` finds them.

        When the block's rarest solid line occurs once in the file, that one place is
        the only candidate: it is looked for near `near` first, so a file edited by
        many hunks is not scanned once per hunk.
        """
        fkeys = self.keys(key)
        counts = self._counts.get(key)
        if counts is None:
            # Counting hashes every line of the file: for the first few searches one
            # C-level scan for a probe line is cheaper, and finds the same places.
            scans = self._scans.get(key, 0) + 1
            self._scans[key] = scans
            if scans <= _SCANS_BEFORE_COUNTING:
                return find_contiguous(fkeys, bkeys)
            counts = self.counts(key)
        solid = [j for j, k in enumerate(bkeys) if k.strip()]
        if not solid:
            return find_contiguous(fkeys, bkeys)
        j = min(solid, key=lambda i: counts[bkeys[i]])
        seen = counts[bkeys[j]]
        if seen <= 0:
            return []
        if seen > 1 or not isinstance(fkeys, list):
            return find_contiguous(fkeys, bkeys)
        probe = bkeys[j]
        at = -1
        if near is not None:
            lo = max(near + j - _NEAR, 0)
            hi = max(min(near + j + _NEAR, len(fkeys)), lo)
            at = _index(fkeys, probe, lo, hi)
        if at < 0:
            at = _index(fkeys, probe, 0, len(fkeys))
        s = at - j
        m = len(bkeys)
        if at < 0 or s < 0 or s + m > len(fkeys):
            return []
        return [s] if _same(fkeys, s, bkeys) else []


class _LineCounts:
    """How often some normalised line texts occur in a file: the expected ones (`seeds`)
    counted in one C-level pass, any other counted (`list.count`) when first asked.

    Kept up to date by `update`/`subtract` like a `Counter`, for the texts it holds.
    """

    def __init__(self, cache: LineKeys, key: Normalisation, seeds: set[str]) -> None:
        # A weak reference: the cache holds this count, and a cycle would keep the file's
        # lines alive until the garbage collector runs.
        self._cache = weakref.ref(cache)
        self._key = key
        self._known: dict[str, int] = dict.fromkeys(seeds, 0)
        self._known.update(Counter(filter(seeds.__contains__, cache.keys(key))))

    def __getitem__(self, text: str) -> int:
        known = self._known.get(text)
        if known is None:
            cache = self._cache()
            assert cache is not None, "counts outlived their file's lines"
            known = self._known[text] = cache.keys(self._key).count(text)
        return known

    def update(self, texts: Sequence[str]) -> None:
        known = self._known
        for text in texts:
            if text in known:
                known[text] += 1

    def subtract(self, texts: Sequence[str]) -> None:
        known = self._known
        for text in texts:
            if text in known:
                known[text] -= 1


_NEAR = 64
"""How far around the named line a unique probe line is looked for before the whole file."""

_SCANS_BEFORE_COUNTING = 3
"""Searches at one normalisation answered by scanning before the file's lines are counted."""
"""How far around the named line a unique probe line is looked for before the whole file."""


def _same(fkeys: Sequence[str], start: int, bkeys: list[str]) -> bool:
    """Whether the file's lines from `start` are `bkeys` (one C-level slice comparison)."""
    return list(fkeys[start : start + len(bkeys)]) == bkeys


def _index(keys: list[str], wanted: str, lo: int, hi: int) -> int:
    try:
        return keys.index(wanted, lo, hi)
    except ValueError:
        return -1


def find_contiguous(fkeys: Sequence[str], bkeys: list[str]) -> list[int]:
    """Every start where `bkeys` occurs as consecutive whole lines."""
    m, n = len(bkeys), len(fkeys)
    # The longest line is the likeliest to be rare: fewer candidate places to compare.
    probe_at = max(range(m), key=lambda j: len(bkeys[j]), default=0)
    probe = bkeys[probe_at]
    starts: list[int] = []
    index = getattr(fkeys, "index", None)
    i = probe_at
    while i < n and index is not None:
        try:
            p = index(probe, i)
        except ValueError:
            break
        s = p - probe_at
        if 0 <= s and s + m <= n and _same(fkeys, s, bkeys):
            starts.append(s)
        i = p + 1
    return starts


def _break_tie(
    starts: list[int], block: EditBlock, contents: Sequence[str], options: EngineOptions
) -> int | None:
    """Choose between equal places using `@@` anchors, then line numbers; None if still tied."""
    if block.anchors:
        after = _after_anchors(block.anchors, contents)
        if after is not None:
            kept = [s for s in starts if s >= after]
            if len(kept) == 1:
                return kept[0]
            if kept:
                starts = kept
    if block.at_eof:
        kept = [s for s in starts if s + len(block.old) >= len(contents)]
        if len(kept) == 1:
            return kept[0]
    hint = block.hint
    if options.line_number_tiebreak and hint is not None:
        ranked = sorted(starts, key=lambda s: abs(s - hint))
        nearest = abs(ranked[0] - hint)
        if nearest <= TIE_DISTANCE and (len(ranked) == 1 or abs(ranked[1] - hint) > nearest):
            return ranked[0]
    return None


def _anchor_key(text: str) -> str:
    return " ".join(fold_punctuation(text).split())


def _anchor_at(anchor: str, contents: Sequence[str], start: int) -> int | None:
    """The first line at or after `start` that is the anchor; None if there is none.

    A line equal to the anchor (whitespace and punctuation aside) is preferred; when
    the file has no such line anywhere, a line that contains it counts (git cuts long
    section headers short, models quote part of a signature).
    """
    want = _anchor_key(anchor)
    lines = _anchor_candidates(want, contents)
    keys = {i: _anchor_key(contents[i]) for i in lines}
    whole = not want or want in keys.values()  # an empty anchor names a blank line, exactly
    for i in lines:
        if i >= start and (keys[i] == want or (not whole and want in keys[i])):
            return i
    return None


# Characters folding can produce or remove: a word of the anchor holding none of them
# appears as it is in every line whose normalised form holds the anchor.
_FOLD_IMAGES = frozenset("'\"-.")
_FOLD_REMOVED = ("\u200b", "\ufeff")


def _anchor_candidates(want: str, contents: Sequence[str]) -> Sequence[int]:
    """The lines that may hold `want` once normalised, in order (a superset; all of them
    when no word of `want` is safe to look for verbatim).

    Normalising every line of a file costs a Python call per line; finding one
    distinctive word of the anchor in the joined text is a C-level search.
    """
    words = [w for w in want.split(" ") if w and _FOLD_IMAGES.isdisjoint(w)]
    if not words:
        return range(len(contents))
    joined = "\n".join(contents)
    if any(char in joined for char in _FOLD_REMOVED):
        return range(len(contents))
    word = max(words, key=len)
    found: list[int] = []
    line = 0
    counted = 0
    at = joined.find(word)
    while at >= 0:
        line += joined.count("\n", counted, at)
        found.append(line)
        end = joined.find("\n", at)
        if end < 0:
            break
        line += 1
        counted = end + 1
        at = joined.find(word, counted)
    return found


def _after_anchors(anchors: Sequence[str], contents: Sequence[str]) -> int | None:
    """The line after the last of the nested anchors, found in order; None if one is missing."""
    pos = 0
    for anchor in anchors:
        found = _anchor_at(anchor, contents, pos)
        if found is None:
            return None
        pos = found + 1
    return pos


def missing_anchor(block: EditBlock, contents: Sequence[str]) -> str | None:
    """The first of the block's anchors that occurs nowhere in the file (in order), if any."""
    pos = 0
    for anchor in block.anchors:
        found = _anchor_at(anchor, contents, pos)
        if found is None:
            return anchor
        pos = found + 1
    return None


def anchor_contradiction(block: EditBlock, contents: Sequence[str], placed: Placement) -> str:
    """Why the block's anchors contradict where it landed ("" when they agree).

    They contradict when the innermost anchor occurs only below the place: an anchor
    names a line above (or at the top of) the lines it leads to.
    """
    if not block.anchors:
        return ""
    after = _after_anchors(block.anchors, contents)
    if after is None:
        return f"the anchor {block.anchors[-1]!r} occurs nowhere in the file"
    last = max(placed.end - 1, placed.start)
    if after - 1 <= last:
        return ""
    return (
        f"the anchor {block.anchors[-1]!r} is at line {after}, below the place the hunk "
        f"landed (line {placed.start + 1})"
    )


def place_block(
    contents: Sequence[str],
    block: EditBlock,
    options: EngineOptions,
    keys: LineKeys | None = None,
) -> Placement | NotPlaced:
    """Locate `block` in the file lines `contents`: one place, or why not.

    `keys` may carry the file's normalised lines from an earlier placement.
    """
    old = block.old
    if options.check_anchors and block.anchors:
        missing = missing_anchor(block, contents)
        if missing is not None:
            return NotPlaced(
                SkipReason.ANCHOR_NOT_FOUND,
                f"the anchor {missing!r} occurs nowhere in the file",
            )
    if not old:
        return _place_insertion(contents, block)
    cache = keys if keys is not None and keys.contents is contents else LineKeys(contents)
    attempts: list[tuple[EditBlock, Strategy | None]] = [(block, None)]
    if options.strip_hunk_edges_only:
        stripped = block.without_blank_edges()
        if stripped is not None and stripped.old:
            attempts.append((stripped, Strategy.DIRECT_STRIPPED))
    levels = _levels(options)
    for depth, level in enumerate(levels):
        if depth == 1 and _cannot_place_block(cache, block):
            # No exact match; a few C-level searches prove that nothing looser can match.
            return _NO_MATCH
        for candidate, override in attempts:
            found = _place_contiguous(cache, candidate, level, options)
            if found is None:
                continue
            if isinstance(found, Placement):
                rival = _contiguous_rivals(cache, block, found, levels, depth, attempts, options)
                if rival is not None:
                    return rival
            if isinstance(found, Placement) and candidate is not block:
                found = _widen(found, block, candidate)
                if override is not None and level.strategy is Strategy.DIRECT:
                    found = Placement(found.start, found.end, found.pairs, override, found.indent)
            return found
    if options.fuzzy_context:
        fuzzy = _place_fuzzy(cache, block, options)
        if isinstance(fuzzy, Placement):
            return _judge(
                block, cache.contents, options, fuzzy, _loose_rivals(cache, block, options)
            )
        if fuzzy is not None:
            return fuzzy
    if options.stale_context:
        stale = place_stale(cache, block, options)
        if isinstance(stale, Placement) and not _named(block, stale.start, cache.contents):
            # Drifted places are weighed by likeness (`_STALE_MARGIN`); one the hunk's
            # line numbers or anchors name is a rival however it scores.
            named = [
                r
                for r in _loose_rivals(cache, block, options)
                if _named(block, r.start, cache.contents)
            ]
            return _judge(block, cache.contents, options, stale, named)
        if stale is not None:
            return stale
    return _NO_MATCH


_NO_MATCH = NotPlaced(SkipReason.NO_MATCH, "the hunk's old lines were not found in the file")


def _cannot_place_block(cache: LineKeys, block: EditBlock) -> bool:
    """`cannot_place` for `block` when the file's joined text is at hand (else False)."""
    text = cache.known_text()
    if text is None:
        return False
    ops = [ln.op for ln in block.lines]
    return cannot_place(ops, [ln.text for ln in block.lines], text)


def _loosest(line: str) -> str:
    """A line's key under the loosest normalisation: folded, right-stripped, dedented.

    Two lines equal under any level's normalisation (or under partial or stale
    context's) are equal under this one too: each of those keys determines it.
    """
    return fold_punctuation(line).rstrip().lstrip(" \t")


_OCCURRENCES = 8
"""Occurrences of a key inside longer lines `_holds_line` looks past before it gives up."""


def _lines_with(
    text: str, needle: str, *, next_line: bool
) -> Iterator[tuple[int, int, int] | None]:
    """(line start, position, line end) of each occurrence of `needle` in `text`, then `None`
    once past `_OCCURRENCES` of them (the caller answers "maybe"). With `next_line`, the
    search goes on from the end of the line that held one."""
    at = text.find(needle)
    seen = 0
    while at >= 0:
        seen += 1
        if seen > _OCCURRENCES:
            yield None
            return
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield start, at, end
        at = text.find(needle, end if next_line else at + 1)


def _holds_line(text: str, key: str) -> bool:
    """Whether some line of `text` is `key` between leading spaces/tabs and trailing
    whitespace (True also when unsure: past `_OCCURRENCES` occurrences inside lines)."""
    for place in _lines_with(text, key, next_line=False):
        if place is None:
            return True
        start, at, end = place
        if not text[start:at].strip(" \t") and not text[at + len(key) : end].strip():
            return True
    return False


def _line_with_key(text: str, key: str) -> bool:
    """Whether some line of `text`, folded, has the loosest key `key` (True when unsure).

    Folding a whole non-ASCII file costs a copy per typographic character in it; instead
    a word of `key` that folding cannot produce is looked for verbatim, and only the
    lines holding it are folded (as `_anchor_candidates` does for anchors).
    """
    if text.isascii():  # folding changes nothing
        return _holds_line(text, key)
    words = [w for w in key.split(" ") if w and _FOLD_IMAGES.isdisjoint(w)]
    if not words or any(char in text for char in _FOLD_REMOVED):
        return _holds_line(fold_punctuation(text), key)
    word = max(words, key=len)
    for place in _lines_with(text, word, next_line=True):
        if place is None:
            return True
        start, _, end = place
        if _loosest(text[start:end]) == key:
            return True
    return False


def absent_from(text: str, line: str) -> bool:
    """Whether no line of `text` can equal `line` under any normalisation (C-level searches).

    No line of the folded text has `line`'s loosest key (see `_loosest`). `text` holds
    whole lines; an ending's CR counts as trailing whitespace, as the key drops it.
    """
    key = _loosest(line)
    return bool(key) and not _line_with_key(text, key)


# ASCII whitespace other than space, tab, CR and LF: a line of them alone is blank too.
_RARE_SPACES = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


_BLANK_SCAN = 4096
"""Longest text `_has_blank_line` scans line by line (past it, it answers "maybe")."""


def _has_blank_line(text: str) -> bool:
    """Whether some line of `text` (lines joined by LF) is only whitespace; True when unsure.

    An empty line is found by one C-level search; a line of spaces and tabs only by
    scanning the lines, which is done for short texts only. Other whitespace (rare) and
    non-ASCII text are not looked into.
    """
    if not text or "\n\n" in text or text[0] == "\n" or text[-1] == "\n":
        return True
    if len(text) > _BLANK_SCAN or not text.isascii():
        return True
    if any(char in text for char in _RARE_SPACES):
        return True
    return any(not line.strip(" \t\r") for line in text.split("\n"))


_PRECHECKED = 3
"""Lines `cannot_place` looks for at most: each look scans the whole file."""


def cannot_place(ops: Sequence[Op], texts: Sequence[str], text: str) -> bool:
    """Whether no level, partial context or stale context can place a block (C-level tests).

    `ops` and `texts` are the block's lines (operation, text without ending); `text` is
    the file's lines joined by LF (CR endings allowed). A non-blank line matches only a
    file line with its loosest key (`absent_from`), a blank one only a blank file line
    (after folding). Every strategy pairs each
    removed line with a file line; stale context needs a non-blank removed line; the
    exact levels need every non-blank old line (blank context at the block's edges may
    be stripped), and partial context two non-blank lines (elisions aside) of which at
    most one is missing. Conservative: False whenever unsure, and only a few lines are
    looked for.
    """
    blank: list[bool] = []

    def absent(line: str) -> bool:
        if line.strip():
            return absent_from(text, line)
        if not blank:
            blank.append(_has_blank_line(text))
        return not blank[0]

    old = [(op, text) for op, text in zip(ops, texts, strict=True) if op is not Op.ADD]
    removed = [text for op, text in old if op is Op.REMOVE]
    if any(absent(line) for line in removed[:_PRECHECKED]):
        return True
    if any(line.strip() for line in removed):
        return False  # stale context may still place it
    solid = [
        text for op, text in old if text.strip() and not (op is Op.CONTEXT and is_elision(text))
    ]
    if len(solid) < 2:
        # Partial context cannot place it; the exact levels need every non-blank line
        # (blank context at the edges may be stripped).
        solid_old = [text for _, text in old if text.strip()]
        return any(absent(line) for line in solid_old[:_PRECHECKED])
    missing = 0
    looked = solid[:_PRECHECKED]
    for seen, line in enumerate(looked, 1):
        missing += absent(line)
        if missing >= 2:
            return True
        if missing + len(looked) - seen < 2:
            return False  # too few lines left to look for
    return False


# -- stale context -------------------------------------------------------------------------------

# Someone edited a few of the hunk's context lines after the model read the file. The
# removed lines still pin the place; the context only has to look like the file's.
_STALE_MAX_ALTERED = 3
_STALE_LINE = 0.5
"""Each altered context line must be at least this like the file line in its place."""
_STALE_MARGIN = 0.25
"""The chosen place's context must beat every other place's by this much (mean score)."""


def _stale_similarity(a: str, b: str, shortest: int = 4) -> float:
    """Line likeness for stale context: a line with a comment appended is still itself
    (when the shorter of the two has at least `shortest` characters)."""
    ka, kb = " ".join(a.split()), " ".join(b.split())
    if ka == kb:
        return 1.0
    if ka and kb and (kb.startswith(ka) or ka.startswith(kb)) and min(len(ka), len(kb)) >= shortest:
        return 0.9
    return bigram_similarity(ka, kb)


class _StaleFit(NamedTuple):
    start: int
    score: float
    """Mean likeness of the non-blank context lines to the file lines in their places."""
    altered: int


def place_stale(
    cache: LineKeys, block: EditBlock, options: EngineOptions
) -> Placement | NotPlaced | None:
    """Place a block whose context drifted, line for line, when nothing else can be meant.

    Accepted only when: the block removes at least one non-blank line and every removed
    line is in the file verbatim (trailing whitespace and typographic punctuation aside)
    at its own offset; blank lines face blank lines; at most three non-blank context
    lines differ, each still alike the file line in its place; at least two lines
    (removed or context) are exact; and no other place in the file, including places
    whose lines match only with indentation ignored, scores within `_STALE_MARGIN` of it.
    The file's context lines are kept, never the block's.
    """
    kinds = [ln for ln in block.lines if ln.op is not Op.ADD]
    if any(ln.op is Op.CONTEXT and is_elision(ln.text) for ln in kinds):
        return None
    removed = [j for j, ln in enumerate(kinds) if ln.op is Op.REMOVE and ln.text.strip()]
    if not removed or len(kinds) > len(cache.contents):
        return None
    exact = Normalisation(options.whitespace_tolerant, options.fold_punctuation)
    loose = Normalisation(options.whitespace_tolerant, options.fold_punctuation, dedent=True)
    fits = [f for f in _stale_fits(cache, kinds, removed, exact) if f.altered]
    if not fits:
        return None
    best = max(fits, key=lambda f: f.score)
    rivals = [f for f in fits if f.start != best.start]
    rivals += [
        f
        for f in _stale_fits(cache, kinds, removed, loose, strict_blanks=False)
        if abs(f.start - best.start) >= len(kinds)
    ]
    if any(r.score > best.score - _STALE_MARGIN for r in rivals):
        starts = sorted({best.start, *(r.start for r in rivals)})
        return NotPlaced(
            SkipReason.AMBIGUOUS,
            "the hunk's context drifted and it fits several places about equally well",
            tuple(starts),
        )
    if block.at_eof and best.start + len(kinds) < len(cache.contents):
        return None
    pairs = tuple((j, best.start + j) for j in range(len(kinds)))
    return Placement(
        best.start, best.start + len(kinds), pairs, Strategy.STALE_CONTEXT, differing=best.altered
    )


def _stale_fits(
    cache: LineKeys,
    kinds: list[BlockLine],
    removed: list[int],
    key: Normalisation,
    *,
    strict_blanks: bool = True,
    shortest: int = 4,
) -> list[_StaleFit]:
    fkeys = cache.keys(key)
    bkeys = key.lines([ln.text for ln in kinds])
    first = removed[0]
    fits = []
    places = _occurrences(fkeys, bkeys[first], _MAX_WINDOWS + 1, cache.counts(key)[bkeys[first]])
    if len(places) > _MAX_WINDOWS:
        # Too many places to weigh against each other: no margin can be trusted.
        return [_StaleFit(p - first, 1.0, 1) for p in places[:2]]
    for p in places:
        s = p - first
        if s < 0 or s + len(kinds) > len(fkeys):
            continue
        if any(fkeys[s + j] != bkeys[j] for j in removed):
            continue
        fit = _stale_fit(s, kinds, bkeys, fkeys, strict_blanks, shortest)
        if fit is not None:
            fits.append(fit)
    return fits


def _drifted_fits(cache: LineKeys, kinds: list[BlockLine], key: Normalisation) -> list[_StaleFit]:
    """Places where the old lines fit line for line with up to three context lines changed
    (as `place_stale` weighs them), also for a block that removes nothing: its rarest
    context lines propose the places."""
    removed = [j for j, ln in enumerate(kinds) if ln.op is Op.REMOVE and ln.text.strip()]
    if len(kinds) > len(cache.contents):
        return []
    if removed:
        return _stale_fits(cache, kinds, removed, key, shortest=1)
    bkeys = key.lines([ln.text for ln in kinds])
    fkeys = cache.keys(key)
    counts = cache.counts(key)
    solid = sorted((j for j, k in enumerate(bkeys) if k.strip()), key=lambda j: counts[bkeys[j]])
    starts: set[int] = set()
    # Any four solid lines hold one the place has unchanged (at most three differ).
    for j in solid[: _STALE_MAX_ALTERED + 1]:
        starts.update(p - j for p in _occurrences(fkeys, bkeys[j], _MAX_WINDOWS, counts[bkeys[j]]))
    fits = []
    for s in sorted(starts):
        if s < 0 or s + len(kinds) > len(fkeys):
            continue
        fit = _stale_fit(s, kinds, bkeys, fkeys, True, shortest=1)
        if fit is not None:
            fits.append(fit)
    return fits


def _stale_fit(
    s: int,
    kinds: list[BlockLine],
    bkeys: list[str],
    fkeys: Sequence[str],
    strict_blanks: bool,
    shortest: int = 4,
) -> _StaleFit | None:
    scores: list[float] = []
    altered = exact = 0
    for j, ln in enumerate(kinds):
        here = fkeys[s + j]
        if not bkeys[j].strip():
            if here.strip() and strict_blanks:
                return None
            continue
        if ln.op is Op.REMOVE:
            exact += 1
            continue
        sim = _stale_similarity(bkeys[j], here, shortest)
        if sim < 1.0:
            altered += 1
            if sim < _STALE_LINE and strict_blanks:
                return None
        else:
            exact += 1
        scores.append(sim)
    if strict_blanks and (altered > _STALE_MAX_ALTERED or exact < 2):
        return None
    score = sum(scores) / len(scores) if scores else 1.0
    return _StaleFit(s, score, altered)


def _named(block: EditBlock, start: int, contents: Sequence[str]) -> bool:
    """Whether a place starting at `start` is where the block's line numbers or anchors point."""
    if block.hint is not None and abs(start - block.hint) <= TIE_DISTANCE:
        return True
    if block.anchors:
        after = _after_anchors(block.anchors, contents)
        return after is not None and start >= after
    return False


# -- rivals at other tolerances (docs/decisions/0029-one-rule-for-rival-candidates.md) -----------

_RANK = {
    Strategy.DIRECT: 0,
    Strategy.DIRECT_STRIPPED: 0,
    Strategy.WHITESPACE_TOLERANT: 1,
    Strategy.PUNCTUATION_FOLDED: 2,
    Strategy.RELATIVE_INDENT: 3,
    Strategy.INDENT_TOLERANT: 3,
    Strategy.PARTIAL_CONTEXT: 4,
    Strategy.STALE_CONTEXT: 5,
}
"""The tolerance ladder: exact < whitespace < punctuation < indentation < partial < drifted."""
_DRIFTED = 5
_RESHAPED = 3
"""From this rank on a placement changes the block's shape (indentation, then lines)."""
_RANK_WORDS = (
    "exactly",
    "with other trailing whitespace",
    "with other punctuation",
    "re-indented",
    "with one context line changed or dropped",
    "with several context lines changed",
)


class Rival(NamedTuple):
    """Another place a block fits: file lines [start, end) at ladder rank `rank`."""

    start: int
    end: int
    rank: int
    reshaped: bool
    """Fitting there needs re-indentation or changed/dropped lines (not just spelling)."""


def rank_of(strategy: Strategy) -> int:
    """A strategy's step on the tolerance ladder (0 exact ... 5 drifted context)."""
    return _RANK.get(strategy, _DRIFTED)


def _judge(
    block: EditBlock,
    contents: Sequence[str],
    options: EngineOptions,
    found: Placement,
    rivals: Sequence[Rival],
) -> Placement | NotPlaced:
    """`found`, or AMBIGUOUS when a comparable rival elsewhere puts it in doubt.

    Accepted only when every rival that does not overlap it fits at the same rank (a
    tie its line numbers or anchors already broke) or at a looser rank that needs
    re-indentation or changed lines, and `found` is the place the numbers or anchors
    name among them all.
    """
    rank = rank_of(found.strategy)
    best: dict[int, Rival] = {}
    for r in rivals:
        if r.start < found.end and found.start < r.end:
            continue
        if r.start not in best or r.rank < best[r.start].rank:
            best[r.start] = r
    if not best or not options.require_unique:
        return found
    starts = sorted({found.start, *best})
    named = _break_tie(starts, block, contents, options)
    if named == found.start and all(
        r.rank == rank or (r.rank > rank and r.reshaped) for r in best.values()
    ):
        return found
    places = "; ".join(
        f"line {s + 1} {_RANK_WORDS[rank if s == found.start else best[s].rank]}" for s in starts
    )
    return NotPlaced(
        SkipReason.AMBIGUOUS,
        f"the hunk fits {len(starts)} places at comparable tolerances ({places}); its line "
        "numbers or anchors do not settle which one is meant",
        tuple(starts),
    )


def _unique_loosely(cache: LineKeys, block: EditBlock) -> bool:
    """Whether some non-blank old line occurs once in the file under the loosest key.

    Then no other place can hold the block at any contiguous level (every level's key
    determines the loosest one).
    """
    counts = cache.counts(_LOOSEST)
    return any(k.strip() and counts[k] == 1 for k in _LOOSEST.lines(block.old))


_LOOSEST = Normalisation(rstrip=True, fold=True, dedent=True)


def _contiguous_rivals(
    cache: LineKeys,
    block: EditBlock,
    found: Placement,
    levels: Sequence[_Level],
    depth: int,
    attempts: Sequence[tuple[EditBlock, Strategy | None]],
    options: EngineOptions,
) -> NotPlaced | None:
    """AMBIGUOUS when a contiguous match at another level, or a looser match at the place
    the block's line numbers or anchors name, competes with `found`."""
    contents = cache.contents
    rivals: list[Rival] = []
    if not _unique_loosely(cache, block):
        for level in levels[depth:]:
            rank = _RANK[level.strategy]
            for candidate, _ in attempts:
                size = len(candidate.old)
                for start in _contiguous_starts(cache, candidate, level):
                    rivals.append(Rival(start, start + size, rank, level.indent is not None))
    reshaped = _RANK[found.strategy] >= _RESHAPED
    if reshaped or (
        (block.hint is not None or block.anchors) and not _named(block, found.start, contents)
    ):
        # A re-indented placement is a guess about structure: a place that fits with
        # changed lines is as good a guess. An exact one is doubted only at the named place.
        for candidate, _ in attempts:
            rivals += [
                r
                for r in _loose_rivals(cache, candidate, options)
                if reshaped or _named(block, r.start, contents)
            ]
    judged = _judge(block, contents, options, found, rivals)
    return judged if isinstance(judged, NotPlaced) else None


def _loose_rivals(cache: LineKeys, block: EditBlock, options: EngineOptions) -> list[Rival]:
    """Places the block fits with context changed: partial context at every key the
    options allow, and drifted context (up to three changed lines, indentation aside)."""
    rivals: list[Rival] = []
    kinds = [ln for ln in block.lines if ln.op is not Op.ADD]
    if options.fuzzy_context:
        elided = [ln.op is Op.CONTEXT and is_elision(ln.text) for ln in kinds]
        solid = [j for j, ln in enumerate(kinds) if ln.text.strip() and not elided[j]]
        if len(solid) >= 2:
            for key, indent in _fuzzy_keys(options):
                fits = _fuzzy_fits(cache, block, kinds, elided, solid, key, indent) or {}
                rivals += [Rival(s, e, _RANK[Strategy.PARTIAL_CONTEXT], True) for s, e in fits]
    if options.stale_context and not any(
        ln.op is Op.CONTEXT and is_elision(ln.text) for ln in kinds
    ):
        loose = Normalisation(options.whitespace_tolerant, options.fold_punctuation, dedent=True)
        for fit in _drifted_fits(cache, kinds, loose):
            rivals.append(Rival(fit.start, fit.start + len(kinds), _DRIFTED, True))
    return rivals


def _widen(found: Placement, block: EditBlock, stripped: EditBlock) -> Placement:
    """Express a placement of the edge-stripped block in terms of the full block."""
    lead = 0
    for ln in block.lines:
        if ln.op is Op.CONTEXT and not ln.text.strip():
            lead += 1
        else:
            break
    pairs = tuple((i + lead, f) for i, f in found.pairs)
    return Placement(found.start, found.end, pairs, found.strategy, found.indent)


def _place_insertion(contents: Sequence[str], block: EditBlock) -> Placement | NotPlaced:
    """A block with no old lines: only an empty file, `End of File` or line numbers place it."""
    if not contents:
        return Placement(0, 0, (), Strategy.DIRECT)
    if block.at_eof:
        return Placement(len(contents), len(contents), (), Strategy.APPEND)
    if block.hint is not None and 0 <= block.hint <= len(contents):
        return Placement(block.hint, block.hint, (), Strategy.LINE_NUMBER)
    return NotPlaced(
        SkipReason.AMBIGUOUS,
        "the hunk only adds lines and gives no context or line number to place them",
    )


def _contiguous_starts(
    cache: LineKeys, block: EditBlock, level: _Level
) -> dict[int, IndentShift | None]:
    """Every start where the block's old lines match at `level`, with its indentation shift."""
    old = block.old
    if len(old) > len(cache.contents):
        return {}  # cannot fit; skip normalising a huge hunk against a small file
    starts = cache.find(level.key, level.key.lines(old), block.hint)
    if level.indent is None:
        return dict.fromkeys(starts)
    shifts: dict[int, IndentShift | None] = {}
    for s in starts:
        shift = indent_shift(old, cache.contents[s : s + len(old)], level.indent)
        if shift is not None:
            shifts[s] = shift
    return shifts


def _place_contiguous(
    cache: LineKeys, block: EditBlock, level: _Level, options: EngineOptions
) -> Placement | NotPlaced | None:
    old = block.old
    shifts = _contiguous_starts(cache, block, level)
    starts = list(shifts)
    if not starts:
        return None
    if len(starts) > 1:
        chosen = _break_tie(starts, block, cache.contents, options)
        if chosen is None:
            if not options.require_unique:
                chosen = starts[0]
            else:
                return NotPlaced(
                    SkipReason.AMBIGUOUS,
                    f"the hunk's old lines occur {len(starts)} times",
                    tuple(starts),
                )
        starts = [chosen]
    s = starts[0]
    pairs = tuple((j, s + j) for j in range(len(old)))
    return Placement(s, s + len(old), pairs, level.strategy, shifts.get(s))


# -- partial context ---------------------------------------------------------------------------


class _Fit(NamedTuple):
    pairs: tuple[tuple[int, int], ...]
    score: int


def _fuzzy_keys(options: EngineOptions) -> list[tuple[Normalisation, IndentMode | None]]:
    """The keys partial context compares lines under, strictest first."""
    keys: list[tuple[Normalisation, IndentMode | None]] = []
    for level in _levels(options):
        if level.strategy is Strategy.DIRECT or level.indent is IndentMode.PREFIX:
            continue
        keys.append((level.key, level.indent))
    return keys or [(EXACT, None)]


def _place_fuzzy(
    cache: LineKeys, block: EditBlock, options: EngineOptions
) -> Placement | NotPlaced | None:
    """Align the old lines with one dropped/altered context line or elisions allowed."""
    kinds = [ln for ln in block.lines if ln.op is not Op.ADD]
    elided = [ln.op is Op.CONTEXT and is_elision(ln.text) for ln in kinds]
    solid = [j for j, ln in enumerate(kinds) if ln.text.strip() and not elided[j]]
    if len(solid) < 2:
        return None
    if sum(1 for ln in kinds if ln.op is Op.REMOVE) > len(cache.contents):
        return None  # every removed line must match its own file line
    for key, indent in _fuzzy_keys(options):
        found = _fuzzy_with_key(cache, block, kinds, elided, solid, key, indent, options)
        if found is not None:
            return found
    return None


def _fuzzy_fits(
    cache: LineKeys,
    block: EditBlock,
    kinds: list[BlockLine],
    elided: list[bool],
    solid: list[int],
    key: Normalisation,
    indent: IndentMode | None,
) -> dict[tuple[int, int], _Fit] | None:
    """Every span [start, end) the block aligns with at `key`, with its best fit; None
    when the alignment budget runs out first. Asked again for the same block and text,
    the answer kept in `cache` (the other arguments follow from the block)."""
    memo = (block, key, indent)
    if memo in cache.fuzzy_fits:
        return cache.fuzzy_fits[memo]
    found = _aligned_fits(cache, block, kinds, elided, solid, key, indent)
    cache.fuzzy_fits[memo] = found
    return found


def _aligned_fits(
    cache: LineKeys,
    block: EditBlock,
    kinds: list[BlockLine],
    elided: list[bool],
    solid: list[int],
    key: Normalisation,
    indent: IndentMode | None,
) -> dict[tuple[int, int], _Fit] | None:
    """`_fuzzy_fits` worked out."""
    old = [ln.text for ln in kinds]
    bkeys = key.lines(old)
    fkeys = cache.keys(key)
    removed = [j for j in solid if kinds[j].op is Op.REMOVE]
    # The rarest few lines (removed ones first) propose where the block may start;
    # counting and scanning run in C, so this stays linear in the file's length.
    pool = (removed or solid)[:_PROBE_POOL]
    counts = cache.counts(key)
    probes = sorted(pool, key=lambda j: counts[bkeys[j]])
    gap = _ELISION_GAP if any(elided) else 0
    starts: set[int] = set()
    for j in probes[:3]:
        near = None if block.hint is None else block.hint + j
        for p in _occurrences(fkeys, bkeys[j], _MAX_WINDOWS, counts[bkeys[j]], near):
            starts.add(p - j)
        if len(starts) >= _MAX_WINDOWS:
            break
    fits: dict[tuple[int, int], _Fit] = {}
    cells = 0
    for s in sorted(starts):
        lo = max(0, s - _SLACK - gap)
        hi = min(len(fkeys), s + len(old) + _SLACK + gap)
        cells += len(old) * (hi - lo)
        if cells > _ALIGN_CELLS:
            # Each window costs a table of block × window cells in Python; past the
            # budget the block is refused rather than aligned for minutes.
            return None
        fit = _align(bkeys, kinds, elided, fkeys, lo, hi, cache.contents)
        if fit is None:
            continue
        span = (fit.pairs[0][1], fit.pairs[-1][1] + 1)
        if indent is not None:
            shift = indent_shift(
                [old[j] for j, _ in fit.pairs], [cache.contents[i] for _, i in fit.pairs], indent
            )
            if shift is None:
                continue
        if block.at_eof and span[1] < len(fkeys):
            continue
        if span not in fits or fits[span].score < fit.score:
            fits[span] = fit
    return fits


def _fuzzy_with_key(
    cache: LineKeys,
    block: EditBlock,
    kinds: list[BlockLine],
    elided: list[bool],
    solid: list[int],
    key: Normalisation,
    indent: IndentMode | None,
    options: EngineOptions,
) -> Placement | NotPlaced | None:
    fits = _fuzzy_fits(cache, block, kinds, elided, solid, key, indent)
    if not fits:
        return None
    old = [ln.text for ln in kinds]
    bkeys = key.lines(old)
    fkeys = cache.keys(key)
    groups = _distinct(fits)
    if len(groups) > 1:
        chosen = _break_tie(sorted(s for s, _ in groups), block, cache.contents, options)
        if chosen is None and options.require_unique:
            return NotPlaced(
                SkipReason.AMBIGUOUS,
                f"the hunk fits {len(groups)} places once context is loosened",
                tuple(sorted(s for s, _ in groups)),
            )
        groups = [g for g in groups if g[0] == chosen] or groups[:1]
    span = groups[0]
    fit = fits[span]
    shift = None
    if indent is not None:
        shift = indent_shift(
            [old[j] for j, _ in fit.pairs], [cache.contents[i] for _, i in fit.pairs], indent
        )
    pairs = _pair_edges(fit.pairs, bkeys, kinds, elided, fkeys)
    paired = dict(pairs)
    differing = sum(
        1
        for j, key in enumerate(bkeys)
        if key.strip() and not elided[j] and (j not in paired or key != fkeys[paired[j]])
    )
    return Placement(
        pairs[0][1], pairs[-1][1] + 1, pairs, Strategy.PARTIAL_CONTEXT, shift, differing
    )


# An altered edge context line stands for the file line in its place when the two are
# at least this alike (a renamed identifier, an added comment).
_EDGE_SIMILARITY = 0.5


def _pair_edges(
    pairs: tuple[tuple[int, int], ...],
    bkeys: list[str],
    kinds: list[BlockLine],
    elided: list[bool],
    fkeys: Sequence[str],
) -> tuple[tuple[int, int], ...]:
    """Pair the altered context lines at the block's edges with the file lines in their place.

    Without this, a hunk whose last context line was edited in the file (and which adds
    lines after it, as an insertion at the end of a function does) would end its span
    before that line and put the added lines above it, inside the wrong statement.
    """
    out = list(pairs)
    j0, i0 = out[0]
    j, i = j0 - 1, i0 - 1
    while j >= 0 and i >= 0 and _stands_for(j, i, bkeys, kinds, elided, fkeys):
        out.insert(0, (j, i))
        j, i = j - 1, i - 1
    j, i = out[-1][0] + 1, out[-1][1] + 1
    while j < len(bkeys) and i < len(fkeys) and _stands_for(j, i, bkeys, kinds, elided, fkeys):
        out.append((j, i))
        j, i = j + 1, i + 1
    return tuple(out)


def _stands_for(
    j: int,
    i: int,
    bkeys: list[str],
    kinds: list[BlockLine],
    elided: list[bool],
    fkeys: Sequence[str],
) -> bool:
    if kinds[j].op is not Op.CONTEXT or elided[j] or not bkeys[j].strip():
        return False
    return bigram_similarity(" ".join(bkeys[j].split()), " ".join(fkeys[i].split())) >= (
        _EDGE_SIMILARITY
    )


def _occurrences(
    keys: Sequence[str], wanted: str, limit: int, present: int, near: int | None = None
) -> list[int]:
    """Up to `limit` indexes of `wanted` in `keys`, in order; `present` is how many there
    are (the file's count), so the scan stops at the last one instead of running on to
    the end of the file to learn there is no other. A line there once is looked for
    around `near` first (a hunk's line number), as `LineKeys.find` does."""
    limit = min(limit, present)
    if present == 1 and near is not None and isinstance(keys, list):
        at = _index(keys, wanted, max(near - _NEAR, 0), max(min(near + _NEAR, len(keys)), 0))
        if at >= 0:
            return [at]
    found: list[int] = []
    index = getattr(keys, "index", None)
    i = 0
    while index is not None and len(found) < limit:
        try:
            i = index(wanted, i)
        except ValueError:
            break
        found.append(i)
        i += 1
    return found


def _distinct(fits: dict[tuple[int, int], _Fit]) -> list[tuple[int, int]]:
    """Spans that do not overlap one another; of overlapping ones, the best fit."""
    chosen: list[tuple[int, int]] = []
    for span in sorted(fits, key=lambda sp: (-fits[sp].score, sp)):
        if all(span[1] <= c[0] or span[0] >= c[1] for c in chosen):
            chosen.append(span)
    return sorted(chosen)


def _align(
    bkeys: list[str],
    kinds: list[BlockLine],
    elided: list[bool],
    fkeys: Sequence[str],
    lo: int,
    hi: int,
    contents: Sequence[str],
) -> _Fit | None:
    """Longest common subsequence of old lines and file[lo:hi], then the tolerance rules.

    Accepted only if every removed line matched, at most one non-blank context
    line is unmatched (altered), and at most one non-blank file line is
    unaccounted for (a dropped context line), elisions aside.
    """
    window = fkeys[lo:hi]
    m, w = len(bkeys), len(window)
    if w == 0:
        return None
    # Blank lines carry no evidence and would let the alignment wander; they are
    # paired afterwards, inside the gaps the solid lines leave.
    usable = [not elided[j] and bool(bkeys[j].strip()) for j in range(m)]
    at: dict[str, list[int]] = {}
    for i, key in enumerate(window):
        at.setdefault(key, []).append(i)
    table = lcs_table([at.get(bkeys[j], []) if usable[j] else [] for j in range(m)], w)
    solid_pairs: list[tuple[int, int]] = []
    j = i = 0
    # Right after an elision the next match should be as late as possible (the
    # lines the model left out come first); elsewhere as early as possible.
    after_elision = False
    while j < m and i < w:
        if after_elision and table[j][i + 1] == table[j][i]:
            i += 1
        elif usable[j] and bkeys[j] == window[i] and table[j][i] == table[j + 1][i + 1] + 1:
            solid_pairs.append((j, lo + i))
            j += 1
            i += 1
            after_elision = False
        elif table[j + 1][i] >= table[j][i + 1]:
            after_elision = after_elision or elided[j]
            j += 1
        else:
            i += 1
    if not solid_pairs:
        return None
    for (j1, i1), (j2, i2) in pairwise(solid_pairs):
        marker = next((j for j in range(j1 + 1, j2) if elided[j]), None)
        if (
            marker is not None
            and _inside_opener(kinds, j1, marker)
            and not _stays_inside(contents, i1, i2)
        ):
            return None
    pairs = _pair_blanks(solid_pairs, bkeys, elided, fkeys)
    matched = {j for j, _ in pairs}
    altered = 0
    for j, ln in enumerate(kinds):
        if j in matched or elided[j]:
            continue
        if ln.op is Op.REMOVE:
            return None
        if not ln.text.strip():
            continue
        altered += 1
    if altered > (1 if sum(usable) >= 3 else 0):
        return None
    extra = 0
    for (j1, i1), (j2, i2) in pairwise(pairs):
        if any(elided[j1 + 1 : j2]):
            continue
        skipped_block = sum(1 for j in range(j1 + 1, j2) if bkeys[j].strip())
        skipped_file = sum(1 for i in range(i1 + 1, i2) if fkeys[i].strip())
        extra += max(0, skipped_file - skipped_block)
    if extra > 1:
        return None
    score = sum(1 for j, _ in pairs if bkeys[j].strip())
    if score < 2:
        return None
    return _Fit(tuple(pairs), score)


def lcs_table(matches: Sequence[Sequence[int]], width: int) -> list[list[int]]:
    """The longest-common-subsequence table of a block against a window of `width` lines:
    `table[j][i]` is the LCS of block lines `j:` and window lines `i:`, where
    `matches[j]` lists (ascending) the window lines block line `j` equals.

    The same table as the textbook recurrence (`below[i + 1] + 1` at a match, else the
    larger of `below[i]` and `row[i + 1]`), built from the matches alone: a row never
    increases left to right, so `row[i]` is the larger of `below[i]` and the best match
    at or after `i`, and each stretch between matches is `below` up to where it drops
    under that value, then the value (a slice, not a loop). A line with no match copies
    the row below (shared: rows are never written once built). Fuzzy placement aligns
    blocks against windows of hundreds of lines, where the recurrence's inner loop in
    Python took milliseconds.
    """
    below = [0] * (width + 1)
    rows = [below]
    for found in reversed(matches):
        if found:
            row = below[:]
            best = 0
            end = width
            for k in reversed(found):
                _raise_to(row, below, k + 1, end, best)
                best = below[k + 1] + 1
                row[k] = best
                end = k
            _raise_to(row, below, 0, end, best)
            below = row
        rows.append(below)
    rows.reverse()
    return rows


def _raise_to(row: list[int], below: list[int], lo: int, hi: int, value: int) -> None:
    """`row[i] = max(below[i], value)` for `lo <= i < hi` (`row` starts as a copy of
    `below`, which never increases, so only a tail of the stretch changes)."""
    if lo >= hi or below[hi - 1] >= value:
        return
    cut = bisect_right(below, -value, lo, hi, key=neg)
    row[cut:hi] = [value] * (hi - cut)


def _inside_opener(kinds: Sequence[BlockLine], before: int, marker: int) -> bool:
    """Whether the block indents its elision deeper than the solid line before it.

    `def foo():` followed by an indented `...` says "the rest of foo's body here",
    so the lines it stands for must all be inside foo.
    """
    text = kinds[before].text
    deeper = indent_width(leading_ws(kinds[marker].text), 8)
    return deeper > indent_width(leading_ws(text), 8)


def _stays_inside(contents: Sequence[str], first: int, last: int) -> bool:
    """Whether every file line strictly between `first` and `last` is indented deeper than `first`.

    A line at `first`'s depth or shallower ends the block `first` opens (the next
    `def`, a closing brace): an elision must not stretch past it.
    """
    opener = indent_width(leading_ws(contents[first]), 8)
    return all(
        indent_width(leading_ws(line), 8) > opener
        for line in contents[first + 1 : last + 1]
        if line.strip()
    )


def _pair_blanks(
    solid: list[tuple[int, int]], bkeys: list[str], elided: list[bool], fkeys: Sequence[str]
) -> list[tuple[int, int]]:
    """Add blank old lines to the alignment, each with a blank file line in the same gap."""

    def blank_block(j: int) -> bool:
        return not elided[j] and not bkeys[j].strip()

    def blank_file(i: int) -> bool:
        return 0 <= i < len(fkeys) and not fkeys[i].strip()

    pairs = list(solid)
    j0, i0 = solid[0]
    j, i = j0 - 1, i0 - 1
    while j >= 0 and blank_block(j) and blank_file(i):
        pairs.append((j, i))
        j, i = j - 1, i - 1
    for (j1, i1), (j2, i2) in pairwise(solid):
        cut = next((j for j in range(j1 + 1, j2) if elided[j]), None)
        if cut is None:
            block_blanks = [j for j in range(j1 + 1, j2) if blank_block(j)]
            file_blanks = [i for i in range(i1 + 1, i2) if blank_file(i)]
            pairs.extend(zip(block_blanks, file_blanks, strict=False))
            continue
        # Around an elision, blanks hug the solid line they sit next to.
        j, i = j1 + 1, i1 + 1
        while j < cut and blank_block(j) and blank_file(i) and i < i2:
            pairs.append((j, i))
            j, i = j + 1, i + 1
        j, i = j2 - 1, i2 - 1
        while j > cut and blank_block(j) and blank_file(i) and i > i1:
            pairs.append((j, i))
            j, i = j - 1, i - 1
    j, i = solid[-1][0] + 1, solid[-1][1] + 1
    while j < len(bkeys) and blank_block(j) and blank_file(i):
        pairs.append((j, i))
        j, i = j + 1, i + 1
    return sorted(pairs)
