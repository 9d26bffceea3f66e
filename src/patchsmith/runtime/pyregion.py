"""Python's verdict on an edited file from the statements the edit touched.

A module is a sequence of statements. Where one top-level statement has ended and the
next physical line does not continue it (no backslash), Python's tokenizer starts afresh:
no bracket or string is open, its indentation stack is back to column 0. Such a row is a
*cut*. If the old text parsed, and an edit changes only rows between two cuts, the new
text parses exactly when the rows between those cuts parse on their own, under the few
conditions `region_outline` checks (docs/decisions/0043 gives the argument and every
place it falls back to the whole file). A file's cuts are its `Outline`, taken from the
`ast` of a parse that succeeded and carried from text to text as edits pass the checks.
The bodies of top-level classes are cut the same way one level down (`Block`): rows
between two of a body's cuts are parsed under a `class _:` line of their own.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from patchsmith.engine.textedits import TextEdit

__all__ = ["Outline", "outline_of", "region_outline"]

_PARSE_FAILED = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
"""What `ast.parse` raises on text it cannot read (NUL bytes, lone surrogates, depth)."""


class Block(NamedTuple):
    """The body of a top-level class: where it may be cut between its statements."""

    indent: int
    """The column of the body's statements."""
    cuts: tuple[int, ...]
    """As `Outline.cuts`, for the body's statements (less `shift`); the last is the
    class's end."""
    shift: int = 0
    """Rows to add to each of `cuts`: a block after an edit moves without being copied."""

    @property
    def first(self) -> int:
        return self.cuts[0] + self.shift

    @property
    def last(self) -> int:
        return self.cuts[-1] + self.shift

    def rows(self) -> tuple[int, ...]:
        """The cuts, moved by `shift`."""
        return tuple(cut + self.shift for cut in self.cuts) if self.shift else self.cuts


@dataclass(frozen=True)
class Outline:
    """Where a text that `ast` parses may be cut between top-level statements."""

    cuts: Sequence[int]
    """Sorted 0-based rows, each the row after a top-level statement's last line, where
    no statement continues (a `;` may put the next one on that last line, a backslash may
    join the next line to it: `region_outline` checks the line before a cut it uses)."""
    blocks: tuple[Block, ...] = ()
    """The bodies of top-level classes with two statements or more, in order; none for a
    text with a tab or a form feed (indentation is then not just a count of spaces)."""
    plain: bool = False
    """True when the text has no tab and no form feed."""

    @property
    def size(self) -> int:
        """How many cuts it holds, the class bodies' included."""
        return len(self.cuts) + sum(len(block.cuts) for block in self.blocks)


def outline_of(module: ast.Module, text: str) -> Outline | None:
    """The cuts of `text`, which `ast` read as `module`; `None` for a text the region check
    must not trust (a lone carriage return counts as a line break for Python but not for
    the rows here; `barry_as_FLUFL` changes what the parser accepts)."""
    if _lone_carriage_return(text) or "barry_as_FLUFL" in text:
        return None
    cuts = _cuts(module.body)
    if cuts is None:
        return None
    blocks: list[Block] = []
    plain = "\t" not in text and "\f" not in text
    if plain:
        for statement in module.body:
            if isinstance(statement, ast.ClassDef) and len(statement.body) > 1:
                inner = _cuts(statement.body)
                if inner is None:
                    return None
                blocks.append(Block(statement.body[0].col_offset, tuple(inner)))
    return Outline(cuts, tuple(blocks), plain)


def _cuts(body: Sequence[ast.stmt]) -> list[int] | None:
    cuts: list[int] = []
    for number, statement in enumerate(body):
        end = statement.end_lineno
        if end is None:
            return None
        if number + 1 < len(body) and body[number + 1].lineno <= end:
            continue  # the next statement starts on this one's last line (after a `;`)
        cuts.append(end)  # 1-based last line == the 0-based row after it
    return cuts


class _Region:
    """Old rows `first` to `stop` (exclusive; `None`: to the end) and where they lie.

    A plain class: a few are made per check, and a dataclass's generated methods would
    cost more to build at import than the check spends on them (docs/decisions/0047).
    """

    __slots__ = (
        "edit_row",
        "edit_start",
        "first",
        "grows",
        "grows_rows",
        "last",
        "last_row",
        "old_end",
        "old_start",
        "row_shift",
        "shift",
        "stop",
    )

    def __init__(
        self,
        first: int,
        stop: int | None,
        old_start: int,
        old_end: int,
        shift: int,
        row_shift: int,
        edit_row: int,
        edit_start: int,
    ) -> None:
        self.first = first
        self.stop = stop
        self.old_start = old_start
        self.old_end = old_end
        self.shift = shift  # how much longer the new text is than the old before this region
        self.row_shift = row_shift  # how many more rows the new text has before this region
        self.edit_row = edit_row  # the row of the first edit's start, `edit_start`
        self.edit_start = edit_start
        self.last_row = 0  # the row of the last edit's last character, `last`
        self.last = 0
        self.grows = 0  # how much longer the region is in the new text
        self.grows_rows = 0


def region_outline(
    outline: Outline, old: str, new: str, edits: Sequence[TextEdit], budget: int
) -> Outline | None:
    """The new text's outline when it surely parses, judged by re-parsing only the rows
    around `edits` (from `text_edits(old, new)`); `None` when the region check cannot
    tell (a region fails, or a condition of the argument does not hold): parse it all.

    `outline` must be the outline of `old`, a text `ast` parsed. Regions longer than
    `budget` characters in all are not tried.
    """
    if not edits:
        return outline
    regions = _regions(outline.cuts, old, new, edits)
    if len(regions) == 1 and outline.blocks:
        nested = _nested(outline, old, new, regions[0])
        if nested is not None:
            return nested
    pieces: list[str] = []
    total = 0
    for region in regions:
        start = region.old_start + region.shift
        piece = new[start : region.old_end + region.shift + region.grows]
        total += len(piece)
        if total > budget:
            return None
        pieces.append(piece)
    cuts: list[int] = []
    blocks: list[Block] = []
    plain = outline.plain
    taken = 0  # the old cuts before this index are placed already
    taken_blocks = 0
    row_shift = 0  # rows the new text has more than the old, before the current region
    for region, piece in zip(regions, pieces, strict=True):
        module = _piece_module(region, piece, old)
        inner = None if module is None else outline_of(module, piece)
        if inner is None:
            return None
        plain = plain and inner.plain
        upto = bisect_right(outline.cuts, region.first)
        _extend(cuts, [cut + row_shift for cut in outline.cuts[taken:upto]])
        before = _blocks_before(outline.blocks, region.first)
        blocks.extend(_shifted(block, row_shift) for block in outline.blocks[taken_blocks:before])
        base = region.first + region.row_shift
        _extend(cuts, [base + cut for cut in inner.cuts])
        blocks.extend(_shifted(block, base) for block in inner.blocks)
        row_shift = region.row_shift + region.grows_rows
        if region.stop is None:
            taken, taken_blocks = len(outline.cuts), len(outline.blocks)
        else:
            taken = bisect_left(outline.cuts, region.stop)
            taken_blocks = _blocks_before(outline.blocks, region.stop)
    _extend(cuts, [cut + row_shift for cut in outline.cuts[taken:]])
    blocks.extend(_shifted(block, row_shift) for block in outline.blocks[taken_blocks:])
    return Outline(cuts, tuple(blocks) if plain else (), plain)


def regions_parse(
    outline: Outline, old: str, new: str, edits: Sequence[TextEdit], budget: int
) -> bool:
    """True when the rows around each of `edits` (from `text_edits(old, new)`) parse on
    their own in `new` and in `old`, under the conditions `region_outline` checks: then
    `new` parses exactly when `old` does (docs/decisions/0049).

    `outline` holds cuts of `old` found by scanning it (`runtime.pycuts`), around the
    edits only; `old` is not known to parse. A region inside a class body with a block
    of cuts around it is parsed as that body's statements; regions longer than `budget`
    characters in all are not tried.
    """
    if outline.blocks:
        apart = _apart_in_blocks(outline, old, new, edits, budget)
        if apart is not None:
            return apart
    total = 0
    for region in _regions(outline.cuts, old, new, edits):
        if outline.blocks and _nested(outline, old, new, region, budget - total) is not None:
            continue
        start = region.old_start + region.shift
        piece = new[start : region.old_end + region.shift + region.grows]
        total += len(piece)
        if total > budget:
            return False
        if _piece_module(region, piece, old) is None:
            return False
        if _piece_module(region, old[region.old_start : region.old_end], old) is None:
            return False
    return True


def _apart_in_blocks(
    outline: Outline, old: str, new: str, edits: Sequence[TextEdit], budget: int
) -> bool | None:
    """`regions_parse` with the regions bounded by the class bodies' cuts as well as the
    top-level ones, so that edits apart in one class are parsed apart: `None` when a
    region is bounded by cuts of two levels, or its rows are not that class's body (a
    class written in the middle of one): the caller tries the top-level regions, which
    are the same here outside the classes."""
    top = set(outline.cuts)
    rows = [set(block.rows()) for block in outline.blocks]
    cuts = sorted(top.union(*rows))
    total = 0
    for region in _regions(cuts, old, new, edits):
        start = region.old_start + region.shift
        piece = new[start : region.old_end + region.shift + region.grows]
        total += len(piece)
        if total > budget:
            return False
        before = old[region.old_start : region.old_end]
        inside = next(
            (
                block
                for block, own in zip(outline.blocks, rows, strict=True)
                if region.first in own and region.stop in own and region.first != block.last
            ),
            None,
        )
        if inside is not None:
            for text in (piece, before):
                if _class_body(region, text, old, inside.indent) is None:
                    return None
        elif (region.first == 0 or region.first in top) and (
            region.stop is None or region.stop in top
        ):
            for text in (piece, before):
                if _piece_module(region, text, old) is None:
                    return False
        else:
            return None
    return True


def _blocks_before(blocks: Sequence[Block], row: int) -> int:
    """How many of `blocks` start before `row` (a top-level cut: no block spans it)."""
    return bisect_left([block.first for block in blocks], row) if blocks else 0


def _shifted(block: Block, rows: int) -> Block:
    return Block(block.indent, block.cuts, block.shift + rows) if rows else block


def _nested(
    outline: Outline, old: str, new: str, region: _Region, budget: int | None = None
) -> Outline | None:
    """The new outline when every edit lies between two cuts of one class's body and
    those rows parse as that body's statements; `None` when that cannot be told (the
    caller goes on with the top-level region).

    The rows are parsed under a `class _:` line of their own: they must be the one
    class's body (no statement left at column 0), at the class body's column. With a
    `budget` (cuts found by a scan), rows longer than that are not tried, and the old
    rows must parse the same way too.
    """
    starts = [block.first for block in outline.blocks]
    at = bisect_right(starts, region.edit_row) - 1
    if at < 0:
        return None
    block = outline.blocks[at]
    if not region.last_row < block.last:
        return None
    own = block.rows()
    first = own[bisect_right(own, region.edit_row) - 1]
    stop = own[bisect_right(own, region.last_row)]
    start = _row_start_back(old, region.edit_start, region.edit_row, first)
    end = _row_start(old, region.last, region.last_row, stop)
    piece = new[start + region.shift : end + region.shift + region.grows]
    if budget is not None and len(piece) > budget:
        return None
    inside = _Region(first, stop, start, end, region.shift, region.row_shift, first, start)
    wrapped = _class_body(inside, piece, old, block.indent)
    if wrapped is None:
        return None
    if budget is not None and _class_body(inside, old[start:end], old, block.indent) is None:
        return None
    inner = _cuts(wrapped.body)
    if inner is None:
        return None
    rows = region.grows_rows
    base = first + region.row_shift - 1  # the wrapper's line 1 is the `class _:` line
    body = list(own[: bisect_right(own, first)])
    _extend(body, [base + cut for cut in inner])
    _extend(body, [cut + rows for cut in own[bisect_left(own, stop) :]])
    above = bisect_right(outline.cuts, first)
    cuts = [*outline.cuts[:above], *(cut + rows for cut in outline.cuts[above:])]
    blocks = [
        *outline.blocks[:at],
        Block(block.indent, tuple(body)),
        *(_shifted(later, rows) for later in outline.blocks[at + 1 :]),
    ]
    return Outline(cuts, tuple(blocks), plain=True)


def _class_body(region: _Region, piece: str, old: str, indent: int) -> ast.ClassDef | None:
    """`piece` parsed under a `class _:` line when its rows are all that class's body, at
    column `indent` (and hold no tab or form feed); else `None`."""
    if "\t" in piece or "\f" in piece:
        return None
    module = _piece_module(region, piece, old, wrapper="class _:\n")
    if module is None:
        return None
    # the rows must all be the wrapper class's body, at the real body's column
    wrapped = module.body[0] if len(module.body) == 1 else None
    if not isinstance(wrapped, ast.ClassDef) or wrapped.body[0].col_offset != indent:
        return None
    return wrapped


def _extend(cuts: list[int], more: list[int]) -> None:
    """`cuts` followed by those of `more` (increasing) that lie after its last."""
    skip = 0
    while cuts and skip < len(more) and more[skip] <= cuts[-1]:
        skip += 1
    cuts.extend(more[skip:])


def _regions(cuts: Sequence[int], old: str, new: str, edits: Sequence[TextEdit]) -> list[_Region]:
    """The rows between cuts that hold the edits, joined where they overlap."""
    regions: list[_Region] = []
    row, at = 0, 0  # the row of old position `at`
    shift = row_shift = 0
    for edit in edits:
        row += old.count("\n", at, edit.old_start)
        at = edit.old_start
        last = max(edit.old_end - 1, edit.old_start)
        last_row = row + old.count("\n", edit.old_start, last)
        below = bisect_right(cuts, row) - 1
        first = cuts[below] if below >= 0 else 0
        above = bisect_right(cuts, last_row)
        stop = cuts[above] if above < len(cuts) else None
        added_rows = new.count("\n", edit.new_start, edit.new_end) - old.count(
            "\n", edit.old_start, edit.old_end
        )
        added = (edit.new_end - edit.new_start) - (edit.old_end - edit.old_start)
        if regions and (regions[-1].stop is None or first < regions[-1].stop):
            region = regions[-1]  # overlaps the region before: one region
            if region.stop is not None and (stop is None or stop > region.stop):
                region.stop, region.old_end = stop, _row_start(old, last, last_row, stop)
        else:
            start = _row_start_back(old, edit.old_start, row, first)
            end = _row_start(old, last, last_row, stop)
            region = _Region(first, stop, start, end, shift, row_shift, row, edit.old_start)
            regions.append(region)
        region.last_row, region.last = last_row, last
        region.grows += added
        region.grows_rows += added_rows
        shift += added
        row_shift += added_rows
    return regions


def _row_start_back(text: str, position: int, row: int, first: int) -> int:
    """Where row `first` starts, `position` lying in row `row` (`first <= row`)."""
    start = text.rfind("\n", 0, position) + 1
    for _ in range(row - first):
        start = text.rfind("\n", 0, start - 1) + 1
    return start


def _row_start(text: str, position: int, row: int, stop: int | None) -> int:
    """Where row `stop` starts, `position` lying in row `row` (`row < stop`); the end of
    the text for `None`, or for a row past the text's last line break."""
    if stop is None:
        return len(text)
    end = position
    for _ in range(stop - row):
        found = text.find("\n", end)
        if found < 0:
            return len(text)
        end = found + 1
    return end


def _piece_module(region: _Region, piece: str, old: str, wrapper: str = "") -> ast.Module | None:
    """The module of the new rows of `region` (`piece`, parsed after `wrapper`), when
    they parse and the argument's conditions hold; else `None`."""
    if region.first > 0 and _continued(old, region.old_start):
        return None  # the old line before the region runs on into it
    if region.stop is not None and region.old_end < len(old):
        if _continued(old, region.old_end):
            return None  # the region's old last line ran on into the rows after it
        if piece and (not piece.endswith("\n") or _continued(piece, len(piece))):
            return None  # the new rows would run on into the rows after them
        # (no rows at all: the rows before the region meet those after it at a cut)
    if _lone_carriage_return(piece) or "barry_as_FLUFL" in piece:
        return None
    if region.first > 0 and "__future__" in piece:
        return None  # a future import must open the file: leave it to the whole parse
    text = wrapper + piece
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except _PARSE_FAILED:
            return None


def _continued(text: str, start: int) -> bool:
    """True when the line that ends just before `start` (a line's start) ends with a
    backslash: Python joins the next line to it (or it is a comment: counted all the same)."""
    line_end = start - 1
    if line_end > 0 and text[line_end - 1] == "\r":
        line_end -= 1
    return line_end > 0 and text[line_end - 1] == "\\"


def _lone_carriage_return(text: str) -> bool:
    return "\r" in text and text.count("\r") != text.count("\r\n")
