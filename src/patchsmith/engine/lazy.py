"""Merging a lazy edit snippet (new text with placeholder lines) into the file it edits.

The rule (the same one the corpora's ground truth is made with, see docs/formats.md):
a line is a placeholder when it has a placeholder's shape and the file does not hold
it; the runs of other lines are chunks. A chunk after a placeholder starts at its
head anchor, the shortest prefix of its lines that occurs exactly once in the file;
a chunk before a placeholder ends at its tail anchor, the shortest suffix that occurs
exactly once. The first chunk with no placeholder before it starts at the top of the
file, the last with none after it runs to the end. A placeholder stands for exactly
the file's lines between the anchor above it and the anchor below it. Anything else
(no anchor, an anchor that occurs twice, chunks out of order) is refused, never
guessed: every chunk of the snippet merges or none does.

A block without placeholders that is much shorter than a file of 20+ lines is a bare region: it
is merged as if placeholders stood above and below it (both anchors are then needed),
so that it replaces one unique stretch instead of the whole file. Up to a third of the
file it always is; up to half only when it is placed below the file's first line (a
cut-off whole file starts there), else it stays the whole file. A region one of whose ends
is nowhere in the file may reach the file's end (or start): it is placed there only when it
holds every line from its anchor to that end, but for one close variant of the last (first)
line.

Where the file parses (a `BlockStructure`, made by the runtime with tree-sitter, is passed
in; this module never parses), two more things hold. A placeholder indented deeper than the
line after it ends a block: when the next chunk's head anchor occurs several times, but
only once after the chunk before it and there right where a block holding the
placeholder's first line ends, the chunk starts there (the block's skipped lines must all
be deeper than the chunk's first line, and only blank lines may sit between). Otherwise
the snippet is refused as before. And a merge that makes a cleanly parsing file fail to
parse is refused (`BREAKS_SYNTAX`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Protocol

from patchsmith.engine.placeholder import placeholders_absent_from
from patchsmith.engine.textlines import Lines, dominant_ending, split_lines

__all__ = [
    "EDGE_SIMILARITY",
    "REGION_INNER_FRACTION",
    "REGION_MAX_FRACTION",
    "REGION_MIN_LINES",
    "BlockStructure",
    "MergeKind",
    "SnippetMerge",
    "SnippetRefusal",
    "SnippetRefused",
    "merge_snippet",
]

REGION_MIN_LINES = 20
"""Files shorter than this are rewritten whole for real (a short block is their new text);
the bare regions and quoted excerpts measured on the corpora come from files of 45+ lines."""
REGION_MAX_FRACTION = 1 / 3
"""A block without placeholders is read as a region when it has at most this share of the
file's lines; longer ones are plausibly the whole file. A truncated whole file is cut at
40% or more of its lines."""
REGION_INNER_FRACTION = 1 / 2
"""A longer block, under this share of the file, is read as a region too when it is placed
below the file's first line: a whole file cut off by a length limit always starts there.
Bare regions of other packages' functions reach 49% of short files (the tuning half of
`bench/gen_region_unmarked.py`, see docs/accuracy.md); refused as whole files, 4% of them
were lost."""

EDGE_SIMILARITY = 0.8
"""How alike (difflib's ratio) a bare region's last line must be to the file's last line to be
read as its new form, when the region reaches the end of the file (likewise the first)."""


class MergeKind(StrEnum):
    """How a snippet was read."""

    LAZY = "lazy"
    """Placeholders merged by their anchors."""
    REGION = "region"
    """A bare block that replaced one unique stretch of the file."""
    WHOLE = "whole"
    """The file's complete new text."""


class SnippetRefusal(StrEnum):
    """Why a snippet could not be merged."""

    NO_ANCHOR = "no-anchor"
    AMBIGUOUS = "ambiguous"
    OUT_OF_ORDER = "out-of-order"
    BREAKS_SYNTAX = "breaks-syntax"
    """The file parsed cleanly and the merged text does not."""


class BlockStructure(Protocol):
    """What a parser knows about the file a snippet is merged into (see `runtime.structure`)."""

    def block_ends(self, line: int) -> Sequence[int]:
        """Where the rest of each block holding 0-based `line` ends (exclusive), innermost
        first: before the block's closing line (`}`) when it has one, else after its last
        line. Empty when the file does not parse cleanly or no block holds the line."""
        ...  # pragma: no cover

    def breaks(self, merged: str) -> int | None:
        """The 1-based line of the first parse problem of `merged`, when the file parsed
        cleanly and `merged` does not; None otherwise."""
        ...  # pragma: no cover


@dataclass(frozen=True)
class SnippetMerge:
    """The merged text and how the snippet was read."""

    text: str
    kind: MergeKind
    by_structure: tuple[int, ...] = ()
    """1-based chunks whose start the file's block structure decided (anchors alone could not)."""


@dataclass(frozen=True)
class SnippetRefused:
    """A snippet that does not merge: why, which chunk, where its anchor could go."""

    reason: SnippetRefusal
    detail: str
    chunk: tuple[str, ...] = ()
    candidates: tuple[int, ...] = ()
    """0-based file lines where the chunk's anchor occurs (for AMBIGUOUS)."""
    size: int = 0
    """How many of the chunk's lines the ambiguous anchor is (for AMBIGUOUS)."""
    line: int | None = None
    """1-based line of the merged text's first parse problem (for BREAKS_SYNTAX)."""
    merged: str = ""
    """The merged text that does not parse (for BREAKS_SYNTAX)."""


@dataclass(frozen=True)
class _Chunk:
    lines: tuple[str, ...]
    after_placeholder: bool
    before_placeholder: bool
    after_block: bool = False
    """The placeholder before it is indented deeper than its first line: it ends a block."""


@dataclass(frozen=True)
class _Placed:
    start: int
    end: int
    by_structure: bool = False


def merge_snippet(
    original: str,
    snippet: str,
    path: str = "",
    *,
    region: bool = True,
    structure: BlockStructure | None = None,
) -> SnippetMerge | SnippetRefused:
    """Merge `snippet` (the new text of `path`, possibly with placeholders) into `original`.

    With `region` False a block without placeholders is always the whole file. With a
    `structure` of `original`, placeholders that end a block are read by it and the merge
    must parse when the file did (see the module's docstring).
    """
    old = split_lines(original)
    new = split_lines(snippet).contents
    if not old.contents:
        return SnippetMerge(snippet, MergeKind.WHOLE)
    marks = set(placeholders_absent_from(new, old.contents, path))
    # A longer bare block is a region only where no cut-off whole file could be: not at the top.
    inner_only = False
    if marks:
        chunks = _chunks(new, marks)
        kind = MergeKind.LAZY
    elif region and _region_sized(new, old.contents, REGION_MAX_FRACTION):
        chunks = [_Chunk(tuple(new), True, True)]
        kind = MergeKind.REGION
    elif region and _region_sized(new, old.contents, REGION_INNER_FRACTION, strict=True):
        chunks = [_Chunk(tuple(new), True, True)]
        kind, inner_only = MergeKind.REGION, True
    else:
        return SnippetMerge(snippet, MergeKind.WHOLE)
    placed = _place(old.contents, chunks, structure)
    if kind is MergeKind.REGION and isinstance(placed, SnippetRefused):
        edge = _at_an_edge(old.contents, new)
        placed = [edge] if edge is not None else placed
    if inner_only and (isinstance(placed, SnippetRefused) or placed[0].start == 0):
        return SnippetMerge(snippet, MergeKind.WHOLE)
    if isinstance(placed, SnippetRefused):
        return placed
    merged = _assemble(old, chunks, placed)
    broken = structure.breaks(merged) if structure is not None else None
    if broken is not None:
        return SnippetRefused(
            SnippetRefusal.BREAKS_SYNTAX,
            f"the merged file no longer parses (first problem at line {broken})",
            line=broken,
            merged=merged,
        )
    pinned = tuple(n for n, spot in enumerate(placed, start=1) if spot.by_structure)
    return SnippetMerge(merged, kind, pinned)


def _region_sized(
    new: Sequence[str], old: Sequence[str], fraction: float, *, strict: bool = False
) -> bool:
    if not new or len(old) < REGION_MIN_LINES:
        return False
    return len(new) < fraction * len(old) if strict else len(new) <= fraction * len(old)


def _at_an_edge(file: Sequence[str], block: Sequence[str]) -> _Placed | None:
    """Where a bare region goes that reaches the end (or the start) of the file, when one of
    its ends is nowhere in the file; None when that reading is not certain.

    A region whose first lines anchor it and whose last line occurs nowhere in the file
    reaches the file's end when it holds every line from its place to the end, in order,
    except at most the file's last line, and then only in a close variant (the same
    indentation, `EDGE_SIMILARITY` alike: `__version__ = "8.1.8"` for `"8.1.7"`); or when it
    holds the file's last two lines, the last one unique in the file and once in the region
    (lines after them are appended). A line that is not a variant of the last one may as well
    be new after a line above it, so the region may end before the file does: that is
    refused. The start of the file likewise, mirrored.
    """
    keys = [_key(line) for line in file]
    wanted = [_key(line) for line in block]
    index = _LineIndex(keys)
    head = _anchor(index, wanted, 1, from_end=False)
    tail = _anchor(index, wanted, 1, from_end=True)
    if isinstance(head, tuple) and _missing(tail):
        start = head[0]
        rest = keys[start:]
        same = _common(rest, wanted)
        if same < len(wanted) and (
            same == len(rest)
            or (same == len(rest) - 1 and _variant(rest[-1], wanted[same]))
            or _holds_the_edge(index, rest, wanted)
        ):
            return _Placed(start, len(keys))
    if isinstance(tail, tuple) and _missing(head):
        end = tail[0]
        top = keys[:end][::-1]
        same = _common(top, wanted[::-1])
        if same < len(wanted) and (
            same == len(top)
            or (same == len(top) - 1 and _variant(top[-1], wanted[-1 - same]))
            or _holds_the_edge(index, top, wanted[::-1])
        ):
            return _Placed(0, end)
    return None


def _holds_the_edge(index: _LineIndex, rest: Sequence[str], wanted: Sequence[str]) -> bool:
    """Whether the region holds the file's last two lines, the last one unique in the file and
    once in the region (then the region reaches the end, whatever it changed before them).
    Both sequences run from the region's anchored end towards the file's edge (`rest`
    reversed for the start of the file)."""
    last = rest[-1]
    if len(rest) < 2 or not last.strip() or index.count(last) != 1 or wanted.count(last) != 1:
        return False
    at = wanted.index(last)
    return at > 0 and wanted[at - 1] == rest[-2]


def _missing(found: object) -> bool:
    return isinstance(found, SnippetRefused) and found.reason is SnippetRefusal.NO_ANCHOR


def _common(a: Sequence[str], b: Sequence[str]) -> int:
    same = 0
    while same < min(len(a), len(b)) and a[same] == b[same]:
        same += 1
    return same


def _variant(old: str, new: str) -> bool:
    if (
        not old.strip()
        or _indent(old) != _indent(new)
        or old[: _indent(old)] != new[: _indent(new)]
    ):
        return False
    return SequenceMatcher(None, old.strip(), new.strip()).ratio() >= EDGE_SIMILARITY


def _chunks(lines: Sequence[str], marks: set[int]) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    current: list[str] = []
    before = False
    deeper = False
    mark_indent: int | None = None
    for index, line in enumerate(lines):
        if index in marks:
            if current:
                chunks.append(_Chunk(tuple(current), before, True, deeper))
                current = []
            before, deeper, mark_indent = True, False, _indent(line)
            continue
        if mark_indent is not None and line.strip():
            # The chunk's first non-blank line is shallower: the placeholder ended a block.
            deeper = _indent(line) < mark_indent
            mark_indent = None
        current.append(line)
    if current:
        chunks.append(_Chunk(tuple(current), before, False, deeper))
    return chunks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _key(line: str) -> str:
    return line.rstrip()


def _place(
    file: Sequence[str], chunks: Sequence[_Chunk], structure: BlockStructure | None
) -> list[_Placed] | SnippetRefused:
    index = _LineIndex([_key(line) for line in file])
    keys = index.keys
    placed: list[_Placed] = []
    floor = 0
    for number, chunk in enumerate(chunks, start=1):
        wanted = [_key(line) for line in chunk.lines]
        start, end, head_size, tail_size = 0, len(keys), 0, 0
        pinned = False
        if chunk.after_placeholder:
            head = _anchor(index, wanted, number, from_end=False)
            if isinstance(head, _Ambiguous) and structure is not None and placed:
                by_block = _after_block(keys, chunk, placed[-1].end, head, structure)
                if by_block is not None:
                    head, pinned = by_block, True
            if isinstance(head, _Ambiguous):
                return head.refusal()
            if isinstance(head, SnippetRefused):
                return head
            start, head_size = head
        if chunk.before_placeholder:
            tail = _anchor(index, wanted, number, from_end=True)
            if isinstance(tail, _Ambiguous):
                return tail.refusal()
            if isinstance(tail, SnippetRefused):
                return tail
            end, tail_size = tail
        if head_size + tail_size > len(wanted):
            # The anchors share lines of the chunk: it must then be verbatim in the file.
            fits = keys[start:end] == wanted
        else:
            fits = start + head_size <= end - tail_size
        if start < floor or not fits:
            return SnippetRefused(
                SnippetRefusal.OUT_OF_ORDER,
                f"chunk {number}'s anchors do not enclose one stretch after the chunk before it",
                chunk.lines,
            )
        placed.append(_Placed(start, end, pinned))
        floor = end
    return placed


class _LineIndex:
    """The file's lines and, for each distinct line, the 0-based places it occurs (ascending).

    Every anchor lookup starts from the rarest line of the lines it has read so far, so
    its cost follows how often that line occurs, not the file's length.
    """

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.where: dict[str, list[int]] = {}
        for number, key in enumerate(keys):
            self.where.setdefault(key, []).append(number)

    def count(self, line: str) -> int:
        return len(self.where.get(line, ()))

    def starts(
        self, pattern: Sequence[str], rarest: int, *, floor: int = 0, limit: int | None = None
    ) -> list[int]:
        """Where `pattern` occurs (0-based first lines, ascending, at or after `floor`), at most
        `limit` of them; `rarest` is the offset of its least frequent line."""
        keys, size = self.keys, len(pattern)
        wanted = list(pattern)
        places = self.where.get(pattern[rarest], [])
        found: list[int] = []
        for at in range(bisect_left(places, floor + rarest), len(places)):
            first = places[at] - rarest
            if first + size <= len(keys) and keys[first : first + size] == wanted:
                found.append(first)
                if limit is not None and len(found) >= limit:
                    break
        return found


@dataclass(frozen=True)
class _Ambiguous:
    """An anchor that occurs at several places: its lines, the refusal it makes, and a way to
    list its places from some line on without listing all of them."""

    index: _LineIndex
    pattern: tuple[str, ...]
    rarest: int
    wanted: tuple[str, ...]
    number: int
    side: str

    def starts(self, floor: int = 0, limit: int | None = None) -> list[int]:
        return self.index.starts(self.pattern, self.rarest, floor=floor, limit=limit)

    def refusal(self) -> SnippetRefused:
        starts = tuple(self.starts())
        return SnippetRefused(
            SnippetRefusal.AMBIGUOUS,
            f"chunk {self.number}'s {self.side} lines occur {len(starts)} times in the file "
            "and nothing in the snippet tells the places apart",
            self.wanted,
            starts,
            len(self.pattern),
        )


def _after_block(
    keys: Sequence[str],
    chunk: _Chunk,
    stretch: int,
    ambiguous: _Ambiguous,
    structure: BlockStructure,
) -> tuple[int, int] | None:
    """Where a chunk after a block-ending placeholder starts, when the file's blocks and the
    order of the chunks agree on one place; else None.

    The placeholder's stretch starts at `stretch`. Of the places the chunk's ambiguous
    anchor occurs, exactly one may lie at or after it (the chunks are in file order), and it
    must lie where a block holding `stretch` ends: only blank lines between, and every line
    of the block's rest indented deeper than the chunk's first line. A missing anchor is
    never placed this way: placeholders in real replies often stand for several blocks at
    once (see docs/decisions/0021), so the end of a block does not say where a new line goes.
    """
    if not chunk.after_block:
        return None
    later = ambiguous.starts(floor=stretch, limit=2)
    if len(later) != 1:
        return None
    (start,) = later
    for end in structure.block_ends(stretch):
        after = end
        while after < len(keys) and not keys[after].strip():
            after += 1
        if not stretch <= end <= start <= after < len(keys):
            continue
        floor = _indent(keys[after])
        if all(not k.strip() or _indent(k) > floor for k in keys[stretch:end]):
            return start, len(ambiguous.pattern)
    return None


def _anchor(
    index: _LineIndex,
    wanted: Sequence[str],
    number: int,
    *,
    from_end: bool,
) -> tuple[int, int] | _Ambiguous | SnippetRefused:
    """Where the shortest unique prefix starts (or the shortest unique suffix ends), and its
    length.

    The prefix (suffix) grows one line at a time. Two places where it occurs are kept as
    witnesses while they still match; only when one stops matching are places looked up
    again, from the rarest line read so far, and only until two are found.
    """
    side = "last" if from_end else "first"
    total = len(wanted)
    rarest, rarest_count = 0, -1
    witnesses: list[int] = []
    length = 0
    for length in range(1, total + 1):
        # The pattern is wanted[:length] (a head) or wanted[-length:] (a tail); a tail grows
        # at its front, so the offsets of its lines shift by one at every step.
        line = wanted[-length] if from_end else wanted[length - 1]
        if from_end:
            rarest += 1
        count = index.count(line)
        if rarest_count < 0 or count < rarest_count:
            rarest, rarest_count = (0 if from_end else length - 1), count
        if from_end:
            witnesses = [w - 1 for w in witnesses if w >= 1 and index.keys[w - 1] == line]
        else:
            witnesses = [
                w
                for w in witnesses
                if w + length <= len(index.keys) and index.keys[w + length - 1] == line
            ]
        if len(witnesses) < 2 and rarest_count:
            pattern = wanted[total - length :] if from_end else wanted[:length]
            witnesses = index.starts(pattern, rarest, limit=2)
        elif len(witnesses) < 2:
            witnesses = []
        if len(witnesses) == 1:
            first = witnesses[0]
            return (first + length if from_end else first), length
        if not witnesses:
            if length == 1:
                return SnippetRefused(
                    SnippetRefusal.NO_ANCHOR,
                    f"chunk {number}'s {side} lines do not occur in the file",
                    tuple(wanted),
                )
            # The lines kept next to the placeholder occur at several places and the
            # next line (a changed one) tells none of them apart.
            return _ambiguous(index, wanted, length - 1, number, from_end=from_end)
    return _ambiguous(index, wanted, length, number, from_end=from_end)


def _ambiguous(
    index: _LineIndex, wanted: Sequence[str], length: int, number: int, *, from_end: bool
) -> _Ambiguous:
    pattern = tuple(wanted[len(wanted) - length :] if from_end else wanted[:length])
    counts = [index.count(line) for line in pattern]
    rarest = counts.index(min(counts))
    return _Ambiguous(
        index, pattern, rarest, tuple(wanted), number, "last" if from_end else "first"
    )


def _assemble(old: Lines, chunks: Sequence[_Chunk], placed: Sequence[_Placed]) -> str:
    eol = dominant_ending(old.endings)
    contents: list[str] = []
    endings: list[str] = []
    cursor = 0
    for chunk, spot in zip(chunks, placed, strict=True):
        contents += old.contents[cursor : spot.start]
        endings += old.endings[cursor : spot.start]
        contents += chunk.lines
        endings += [eol] * len(chunk.lines)
        cursor = spot.end
    contents += old.contents[cursor:]
    endings += old.endings[cursor:]
    if endings:
        last_is_old = cursor < len(old.contents)
        endings[-1] = endings[-1] if last_is_old else (old.endings[-1] if old.endings else eol)
        endings = [e or eol for e in endings[:-1]] + [endings[-1]]
    return Lines(contents, endings).text
