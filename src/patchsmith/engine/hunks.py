"""Default mode: apply hunks by whole-line content, refusing whenever unsure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from patchsmith.engine.blocks import EditBlock, Op, block_from_hunk
from patchsmith.engine.exact import apply_exact
from patchsmith.engine.indent import IndentStyle, indent_style, style_may_matter
from patchsmith.engine.linespans import LineIndex, LineSpan, SpanLog
from patchsmith.engine.locate import (
    LineKeys,
    Normalisation,
    NotPlaced,
    Placement,
    anchor_contradiction,
    find_contiguous,
    place_block,
)
from patchsmith.engine.model import (
    EngineOptions,
    Hunk,
    HunkOutcome,
    HunkResult,
    SkipReason,
    Strategy,
)
from patchsmith.engine.splice import splice_block
from patchsmith.engine.textlines import Lines, join_lines, split_lines

__all__ = ["apply_block", "apply_hunk_list", "tolerance_detail"]


def tolerance_detail(placed: Placement) -> str:
    """How much a located block's old lines differ from the file's, in words ("" if not)."""
    if placed.strategy not in (Strategy.PARTIAL_CONTEXT, Strategy.STALE_CONTEXT):
        return ""
    parts = [f"{placed.differing} context line(s) of the hunk differ from the file"]
    extra = (placed.end - placed.start) - len(placed.pairs)
    if extra > 0:
        parts.append(f"{extra} file line(s) in the region are not in the hunk")
    return "; ".join(parts)


def apply_block(
    lines: Lines,
    block: EditBlock,
    options: EngineOptions,
    style: IndentStyle | None = None,
    keys: LineKeys | None = None,
    endings: Counter[str] | None = None,
) -> tuple[Lines, Placement] | NotPlaced:
    """Locate and splice one block; the new lines and where it went, or why not.

    `keys` (the file's normalised lines) is reused and kept up to date across calls.
    With `endings` (how many lines end in LF and CRLF, kept up to date here), `lines`
    is edited in place and returned: no copy of the file per block.
    """
    if not block.changes:
        return NotPlaced(
            SkipReason.NO_CHANGE, "the hunk holds only context lines: nothing to change"
        )
    placed = place_block(lines.contents, block, options, keys)
    if isinstance(placed, NotPlaced):
        if placed.reason is SkipReason.NO_MATCH and _already_applied(lines, block, keys):
            return NotPlaced(
                SkipReason.ALREADY_APPLIED,
                "the hunk's new lines are already in the file and its old lines are not",
            )
        return placed
    if _insertion_already_there(lines, block, placed):
        return NotPlaced(
            SkipReason.ALREADY_APPLIED,
            "the lines this hunk inserts are already at the place it names",
        )
    if _new_side_around(lines, block, placed):
        return NotPlaced(
            SkipReason.ALREADY_APPLIED,
            "the hunk's new lines are already in the file, around the place its old lines match",
        )
    if endings is None:
        new_lines = splice_block(
            lines, block, placed, keep_line_endings=options.keep_line_endings, style=style
        )
        if new_lines.contents == lines.contents and new_lines.endings == lines.endings:
            return NotPlaced(SkipReason.NO_CHANGE, "applying the hunk leaves the text unchanged")
        if keys is not None and keys.contents is lines.contents:
            start, end = placed.start, placed.end
            added = len(new_lines) - len(lines) + (end - start)
            region = new_lines.contents[start : start + added]
            keys.replace(start, end, lines.contents[start:end], region, new_lines.contents)
        return new_lines, placed
    return _splice_in_place(lines, block, placed, options, style, keys, endings)


def _splice_in_place(
    lines: Lines,
    block: EditBlock,
    placed: Placement,
    options: EngineOptions,
    style: IndentStyle | None,
    keys: LineKeys | None,
    endings: Counter[str],
) -> tuple[Lines, Placement] | NotPlaced:
    """`splice_block` on `lines` itself; only the lines around the span are compared after."""
    start, end = placed.start, placed.end
    # The splice may also end the line before the span, and the file's last line.
    first = max(start - 1, 0)
    old_contents = lines.contents[first:end]
    old_endings = lines.endings[first:end]
    before = len(lines)
    if not options.keep_line_endings:
        eol = "\n"
    elif endings["\n"] or endings["\r\n"]:
        eol = "\r\n" if endings["\r\n"] > endings["\n"] else "\n"
    else:
        eol = block.ending
    splice_block(
        lines,
        block,
        placed,
        keep_line_endings=options.keep_line_endings,
        style=style,
        eol=eol,
        in_place=True,
    )
    stop = end + len(lines) - before
    new_contents = lines.contents[first:stop]
    new_endings = lines.endings[first:stop]
    if new_contents == old_contents and new_endings == old_endings:
        return NotPlaced(SkipReason.NO_CHANGE, "applying the hunk leaves the text unchanged")
    endings.subtract(old_endings)
    endings.update(new_endings)
    if keys is not None and keys.contents is lines.contents:
        keys.replace(first, end, old_contents, new_contents, lines.contents)
    return lines, placed


def _insertion_already_there(lines: Lines, block: EditBlock, placed: Placement) -> bool:
    """A context-free insertion whose lines already sit where it would put them.

    Without context nothing tells a first application from a second, and a
    second would duplicate the lines; refusing is the safe reading.
    """
    if placed.strategy not in (Strategy.LINE_NUMBER, Strategy.APPEND):
        return False
    new = [x.rstrip() for x in block.new]
    start = placed.start if placed.strategy is Strategy.LINE_NUMBER else len(lines) - len(new)
    if start < 0:
        return False
    return [c.rstrip() for c in lines.contents[start : start + len(new)]] == new


def _new_side_around(lines: Lines, block: EditBlock, placed: Placement) -> bool:
    """The new side already occurs over the matched old lines (an insertion next to context).

    Applying such a hunk to its own result finds the old lines again, inside the
    new ones; nothing in the text tells that apart from a first application.
    """
    new = block.new
    if placed.start == placed.end or new == block.old or not any(x.strip() for x in new):
        return False
    contents = lines.contents
    # Only a copy of the new side that covers the matched span matters: look just there.
    first = max(placed.end - len(new), 0)
    return any(
        contents[s : s + len(new)] == new
        for s in range(first, min(placed.start, len(contents)) + 1)
    )


def _already_applied(lines: Lines, block: EditBlock, keys: LineKeys | None = None) -> bool:
    """The new side occurs at exactly one place, and is long enough to be evidence.

    Called only once the old side matched nowhere. One or two changed lines
    without context happen to occur elsewhere too often: the new side must hold
    an unchanged (context) line besides an added one, or three non-blank lines.
    """
    new = [x.rstrip() for x in block.new]
    solid = [ln for ln in block.lines if ln.op is not Op.REMOVE and ln.text.strip()]
    has_context = any(ln.op is Op.CONTEXT for ln in solid)
    if not (has_context and len(solid) >= 2) and len(solid) < 3:
        return False
    if keys is not None and keys.contents is lines.contents:
        # A new line that occurs nowhere in the file's text cannot equal a file line
        # (a few lines looked for, when the text is at hand: each look scans the file).
        text = keys.known_text()
        if text is not None and any(line not in text for line in new[:3]):
            return False
        found = keys.find(_RSTRIPPED, new, block.hint)
    else:
        found = find_contiguous([c.rstrip() for c in lines.contents], new)
    return len(found) == 1


_RSTRIPPED = Normalisation(rstrip=True)


def apply_hunk_list(
    source: str, hunks: Sequence[Hunk], options: EngineOptions, *, fast: bool = True
) -> HunkResult:
    """Apply each hunk in order to `source`; one outcome per hunk, partial results allowed.

    With `fast`, hunks that all match verbatim at one place are applied by `engine.exact`
    on the text (same result, no line objects); `fast=False` forces the line-based path.
    """
    tested: list[int] = []
    if fast:
        exact = apply_exact(source, hunks, options, tested)
        if exact is not None:
            return exact
    lines = split_lines(source)
    # Where the hunks changed the text, for the line diff; None once that is not known.
    log: SpanLog | None = SpanLog()
    if options.keep_line_endings is False:
        lines = Lines(lines.contents, ["\n" if e else "" for e in lines.endings])
        if "\r" in source:
            log = None  # every CRLF line changed
    style = (
        indent_style(lines.contents)
        if options.indent_tolerant and style_may_matter(source, hunks)
        else None
    )
    # The joined text lets the refusal pre-tests run; when the fast path already ran them on
    # this file without settling the hunk, they are not run twice.
    blocks = [
        block_from_hunk(hunk, honour_no_newline_marker=options.honour_no_newline_marker)
        for hunk in hunks
    ]
    # Only the lines the blocks hold are counted (once per normalisation), not every line.
    wanted = [ln.text for block in blocks for ln in block.lines]
    keys = LineKeys(lines.contents, None if tested else _joined(source), wanted)
    endings = _count_endings(lines.endings)
    outcomes: list[HunkOutcome] = []
    applied = 0
    shift = 0
    for index, (hunk, block) in enumerate(zip(hunks, blocks, strict=True)):
        if block.hint is not None and shift:
            # Earlier hunks moved the lines below them; their numbers did not.
            block = replace(block, hint=max(block.hint + shift, 0))
        before = len(lines)
        result = apply_block(lines, block, options, style, keys, endings)
        if isinstance(result, NotPlaced) and not options.whole_lines:
            result = _substring_fallback(lines, hunk, result)
        if isinstance(result, NotPlaced):
            outcomes.append(
                HunkOutcome(
                    index=index,
                    applied=False,
                    hunk_text=hunk.text,
                    reason=result.reason,
                    detail=result.detail,
                    candidates=tuple(c + 1 for c in result.candidates),
                )
            )
            continue
        new_lines, placed = result
        notes: tuple[str, ...] = ()
        if options.check_anchors:
            # Lines above the place are as they were; the anchor names one of them.
            contradiction = anchor_contradiction(block, new_lines.contents, placed)
            notes = (contradiction,) if contradiction else ()
        detail = tolerance_detail(placed)
        shift += len(new_lines) - before
        if new_lines is not lines:  # the substring fallback made a new text: recount it
            keys = LineKeys(new_lines.contents)
            endings = _count_endings(new_lines.endings)
            log = None
        elif log is not None:
            # The splice may also end the line before the span (`_splice_in_place`).
            first = max(placed.start - 1, 0)
            log.edit(first, placed.end, placed.end - first + len(new_lines) - before)
        lines = new_lines
        applied += 1
        outcomes.append(
            HunkOutcome(
                index=index,
                applied=True,
                hunk_text=hunk.text,
                strategy=placed.strategy,
                line=placed.start + 1,
                detail=detail,
                notes=notes,
            )
        )
    spans = None if log is None else log.spans
    if not spans or len(source) < REBUILD_CHARS:
        return HunkResult(lines.text, applied, len(hunks), tuple(outcomes), spans)
    # A big file: its new text is the source between the spans and the spans' new lines,
    # built once its line objects are gone (joining them would hold both at once).
    pieces = _span_texts(source, lines, spans)
    if pieces is None:
        return HunkResult(lines.text, applied, len(hunks), tuple(outcomes), spans)
    del lines, keys, style, blocks, result, new_lines
    text = _rebuilt(source, spans, pieces)
    return HunkResult(text, applied, len(hunks), tuple(outcomes), spans)


REBUILD_CHARS = 1 << 20
"""A source this long or longer gets its new text rebuilt from the spans, not joined."""


def _span_texts(
    source: str, lines: Lines, spans: Sequence[LineSpan]
) -> tuple[LineIndex[str], list[str]] | None:
    """The text of each span's new lines, and the source's line index; None when the text
    rebuilt from them would not be `lines.text` in length (then it is joined)."""
    index = LineIndex(source)
    if len(index) - sum(s.old_stop - s.old_start for s in spans) != len(lines) - sum(
        s.new_stop - s.new_start for s in spans
    ):
        return None
    texts = [
        join_lines(
            lines.contents[s.new_start : s.new_stop], lines.endings[s.new_start : s.new_stop]
        )
        for s in spans
    ]
    kept = len(source) - sum(index.offset(s.old_stop) - index.offset(s.old_start) for s in spans)
    whole = sum(map(len, lines.contents)) + sum(map(len, lines.endings))
    if kept + sum(map(len, texts)) != whole:
        return None
    return index, texts


def _rebuilt(
    source: str, spans: Sequence[LineSpan], pieces: tuple[LineIndex[str], list[str]]
) -> str:
    """The source with each span's old lines replaced by its new text."""
    index, texts = pieces
    parts: list[str] = []
    at = 0
    for span, text in zip(spans, texts, strict=True):
        parts.append(source[at : index.offset(span.old_start)])
        parts.append(text)
        at = index.offset(span.old_stop)
    parts.append(source[at:])
    return "".join(parts)


def _joined(source: str) -> str | None:
    """The file's lines joined by LF for the refusal pre-tests, when `source` is that (no
    CR), else None. A final newline is left on: the pre-tests look for lines of text,
    never for a newline, and a copy of a big file without it would cost its size again.
    """
    if "\r" in source:
        return None
    return source


def _count_endings(endings: list[str]) -> Counter[str]:
    """How many lines end in LF, CRLF and nothing (`list.count` runs in C; hashing does not)."""
    return Counter({ending: endings.count(ending) for ending in ("\n", "\r\n", "")})


def _substring_fallback(
    lines: Lines, hunk: Hunk, refusal: NotPlaced
) -> tuple[Lines, Placement] | NotPlaced:
    """With `whole_lines` off: the reference's substring search with shrinking context."""
    from patchsmith.engine.compat import apply_hunk  # the reference's own search

    text = lines.text
    located = apply_hunk(text, list(hunk.lines))
    if not located or located == text:
        return refusal
    new_lines = split_lines(located)
    return new_lines, Placement(0, len(lines), (), Strategy.PARTIAL_CONTEXT)
