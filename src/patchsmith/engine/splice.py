"""Put a placed `EditBlock` into the file's lines, keeping the file's own text and endings."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.engine.blocks import EditBlock, Op, is_elision
from patchsmith.engine.indent import IndentStyle, indent_unit
from patchsmith.engine.locate import Placement
from patchsmith.engine.textlines import Lines, dominant_ending

__all__ = ["in_text_literal", "splice_block"]


_LITERAL_DELIMITERS = ('"""', "'''", "`")


def in_text_literal(contents: Sequence[str], line: int) -> bool:
    """Whether file line `line` seems to sit inside a multi-line string literal.

    A delimiter that spans lines (a Python triple quote, a JavaScript template
    backtick) occurring an odd number of times before the line leaves it open.
    A heuristic, used only to keep added text as the model wrote it.
    """
    before = "\n".join(contents[:line])
    return any(before.count(mark) % 2 == 1 for mark in _LITERAL_DELIMITERS)


def _changes_any(style: IndentStyle, block: EditBlock) -> bool:
    unit = indent_unit([ln.text for ln in block.lines])
    return any(ln.op is Op.ADD and style.conform(ln.text, unit) != ln.text for ln in block.lines)


def splice_block(
    lines: Lines,
    block: EditBlock,
    placement: Placement,
    *,
    keep_line_endings: bool = True,
    style: IndentStyle | None = None,
    eol: str | None = None,
    in_place: bool = False,
) -> Lines:
    """The file with `placement`'s span replaced by the block's new side.

    Context lines are copied from the file, not from the block, so whatever
    tolerance located them never changes them; file lines inside the span that
    the block left out (a dropped context line, an elision) are kept in place.
    Added lines get the file's indentation (when the placement shifted it, or
    when they use tabs where the file uses only spaces, or back) and its
    dominant line ending.
    """
    contents, endings = lines.contents, lines.endings
    if eol is None:
        # A file that shows no line ending (empty, or one unterminated line) takes the hunk's.
        shown = any(endings)
        eol = (dominant_ending(endings) if shown else block.ending) if keep_line_endings else "\n"
    pairs = dict(placement.pairs)
    aligned = sorted(pairs.values())
    out_c: list[str] = []
    out_e: list[str] = []

    def take(i: int) -> None:
        out_c.append(contents[i])
        out_e.append(endings[i])

    cursor = placement.start
    old_index = 0
    next_aligned = iter(aligned)
    upcoming = next(next_aligned, placement.end)
    if style is not None and not style.applies_to(block.old):
        style = None
    if (
        style is not None
        and _changes_any(style, block)
        and in_text_literal(contents, placement.start)
    ):
        # A template inside a string (a Makefile in a .py file) keeps its own tabs.
        style = None
    block_unit = indent_unit([ln.text for ln in block.lines]) if style else 4
    for ln in block.lines:
        if ln.op is Op.ADD:
            if placement.indent:
                text = placement.indent.rewrite(ln.text)
            elif style:
                text = style.conform(ln.text, block_unit)
            else:
                text = ln.text
            out_c.append(text)
            out_e.append(eol)
            continue
        at = pairs.get(old_index)
        old_index += 1
        if at is None:
            # An altered context line stands for the file line in its place.
            if ln.op is Op.CONTEXT and not is_elision(ln.text) and cursor < upcoming:
                take(cursor)
                cursor += 1
            continue
        while cursor < at:
            take(cursor)
            cursor += 1
        if ln.op is Op.CONTEXT:
            take(at)
        cursor = at + 1
        upcoming = next(next_aligned, placement.end)
        while upcoming < cursor:
            upcoming = next(next_aligned, placement.end)
    while cursor < placement.end:
        take(cursor)
        cursor += 1

    had_final_newline = not endings or endings[-1] != ""
    # One copy and one in-place splice each (cheaper than joining three slices); with
    # `in_place` the caller's lists are edited and no copy is made.
    new_contents = contents if in_place else contents.copy()
    new_contents[placement.start : placement.end] = out_c
    new_endings = endings if in_place else endings.copy()
    new_endings[placement.start : placement.end] = out_e
    at_eof = placement.start + len(out_c) == len(new_contents)
    # Every line but the last needs an ending. Only the file's old last line can lack
    # one, and it now sits inside the new region or just before it.
    last = len(new_endings) - 1
    for i in range(max(placement.start - 1, 0), min(placement.start + len(out_c), last)):
        if not new_endings[i]:
            new_endings[i] = eol
    if new_endings and at_eof and out_c:
        if block.eol_marked:
            new_endings[-1] = "" if block.new_no_eol else (new_endings[-1] or eol)
        elif not had_final_newline:
            new_endings[-1] = ""
    if not keep_line_endings and not in_place:  # in place: the caller made every ending LF
        new_endings[:] = ["\n" if e else "" for e in new_endings]
    return Lines(new_contents, new_endings)
