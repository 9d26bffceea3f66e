"""The exact fast path: hunks whose old side occurs once, verbatim, found in the joined text.

Most hunks a model writes match the file exactly at one place. For those, the line-based
path (`hunks.apply_hunk_list`) splits the file into line objects, builds blocks, runs the
safety checks and splices lines; here the same answer comes from C-level searches of the
file's text (`str.find`, `str.count`) and one string splice per hunk.

Identical results are the contract: `apply_exact` answers only when every hunk is one
whose outcome it can prove equal to the line-based path's (same text, outcome, line,
strategy, detail and notes), and returns None otherwise, so the caller runs the
line-based path from the start. What it takes, and why each condition suffices:

- One line ending throughout: no CR at all (LF), or every LF preceded by CR and no other
  CR (CRLF). With a newline appended when the file lacks a final one, every line is then
  `content + eol`: the old lines occur as consecutive whole lines exactly where their
  text (each line plus eol) occurs at the start of a line, and added lines get `eol`, as
  the line-based splice gives them. The missing final newline is put back the way the
  splice does it (kept, or set by a `\\ No newline` marker when the hunk reaches the end;
  gone when the hunk deletes the last lines).
- Hunk lines without CR or embedded newlines: the block's line texts are the raw lines
  minus their "\n".
- No anchors (`@@ … @@ section` or envelope `@@ line`), no `End of File`, and no
  indentation style that could re-indent added lines: those add checks and rewrites
  this path does not repeat.
- The old side occurs exactly once: the exact level, tried first, places the block there
  and no tie-break runs. When the block's line number is farther than the tie distance
  from that place, the line-based path looks for a looser match (a rival) at the named
  place: here some non-blank old line must occur nowhere in the text around the named
  place, even as a substring, or the call is handed back.
- The new side occurs nowhere as text, so it cannot already be around the place
  (the already-applied check), and differs from the old side (so the text changes).

Two refusals are repeated too, with the line-based path's reasons and details: a hunk
with only context lines (NO_CHANGE), and a hunk one of whose removed lines occurs nowhere
in the text, even loosely, while one of its new lines is missing too (NO_MATCH: no
strategy can place it, and it cannot be already applied). Anything else is handed back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from patchsmith.engine.blocks import Op, is_elision, usable_section
from patchsmith.engine.indent import style_may_matter
from patchsmith.engine.linespans import SpanLog
from patchsmith.engine.locate import TIE_DISTANCE, absent_from, cannot_place, fold_punctuation
from patchsmith.engine.model import (
    EngineOptions,
    Hunk,
    HunkOutcome,
    HunkResult,
    SkipReason,
    Strategy,
)

__all__ = ["apply_exact"]

_FEW_HUNKS = 16
_SCAN_BUDGET = 8_000_000
"""Characters scanned at most (file length × hunks) when there are more than `_FEW_HUNKS`
hunks. Each hunk here costs a few C-level passes over the text, about 1 ns per character;
the line-based path splits the file once (about 8 ns per character) and then finds a hunk
near its line number without a pass: past about 16 hunks on one file it is the faster."""

_ONLY_CONTEXT = "the hunk holds only context lines: nothing to change"
_NOT_FOUND = "the hunk's old lines were not found in the file"
_LOOKED_FOR = 3
"""New lines `_surely_absent` looks for at most: each look scans the whole text."""


def _file_eol(source: str) -> str | None:
    """The file's one line ending, or None when it mixes endings or holds a stray CR."""
    if "\r" not in source:
        return "\n"
    # Every LF in a CRLF pair and no other CR: nothing is left once the pairs are gone
    # (one copy and two C-level scans; counting characters is a slower loop).
    rest = source.replace("\r\n", "")
    if "\r" in rest or "\n" in rest:
        return None
    return "\r\n"


def apply_exact(
    source: str,
    hunks: Sequence[Hunk],
    options: EngineOptions,
    tested: list[int] | None = None,
) -> HunkResult | None:
    """The line-based path's result for `hunks` on `source`, or None when not provably equal.

    `tested`, if given, receives the index of a hunk whose refusal test (`cannot_place`)
    ran on the unchanged file without settling it: the line-based path need not repeat it.
    """
    if len(hunks) > _FEW_HUNKS and len(source) * len(hunks) > _SCAN_BUDGET:
        return None  # each hunk scans the text: many hunks on a big file go line by line
    eol = _file_eol(source)
    if eol is None or not options.keep_line_endings or not options.whole_lines:
        return None
    # Whether the file's indentation style may re-indent added lines: asked only once a
    # hunk is to be applied (refusals do not depend on it).
    style_checked = not options.indent_tolerant
    # The text with every line ending in `eol`; `no_eol` says the last one really has none.
    no_eol = bool(source) and not source.endswith("\n")
    text = source + eol if no_eol else source
    outcomes: list[HunkOutcome] = []
    shift = applied = 0
    folded: list[str] = []
    log = SpanLog()
    for index, hunk in enumerate(hunks):
        sides = _sides(hunk, options.honour_no_newline_marker)
        if sides is None:
            return None
        old, new = sides.old, sides.new
        if not sides.changes:
            outcomes.append(
                HunkOutcome(
                    index=index,
                    applied=False,
                    hunk_text=sides.body,
                    reason=SkipReason.NO_CHANGE,
                    detail=_ONLY_CONTEXT,
                )
            )
            continue
        if not old or new == old:
            return None
        old_text = eol.join(old) + eol
        at = _only_line_start(text, old_text)
        if at < 0:
            # Several places: a tie to break. None: perhaps a refusal this path can prove.
            if at == -2:
                return None
            if not _surely_absent(text, eol, sides):
                if tested is not None and not applied:  # no hunk applied: the file as given
                    tested.append(index)
                return None
            outcomes.append(
                HunkOutcome(index, False, sides.body, None, None, SkipReason.NO_MATCH, _NOT_FOUND)
            )
            continue
        start = text.count("\n", 0, at)
        hint = _hint(hunk)
        if hint is not None:
            if shift:
                hint = max(hint + shift, 0)
            if abs(start - hint) > TIE_DISTANCE and not _no_rival(text, sides, hint, at, start):
                return None
        if not _loosely_unique(text, old, folded):
            return None  # another place may hold it re-indented or respelled: a rival
        if not style_checked:
            if style_may_matter(source, hunks):
                return None
            style_checked = True
        new_text = eol.join(new) + eol if new else ""
        # A non-blank new line is a non-whitespace character in the new text.
        if new_text.strip() and new_text in text:
            return None  # the already-applied check would have to look around the place
        end = at + len(old_text)
        if end == len(text):  # the hunk reaches the end of the file
            if not new:
                no_eol = False  # the line above becomes the last and keeps its ending
            elif sides.marked:
                no_eol = sides.new_no_eol
        if text.find(old_text, 0, end) == at:
            # Its first occurrence anywhere: `replace` builds the result in one allocation,
            # where slicing around it would copy the rest of the text once more (peak memory).
            text = text.replace(old_text, new_text, 1)
        else:  # one join: `a + b + c` would make a copy of the head on the way
            text = "".join((text[:at], new_text, text[end:]))
        log.edit(start, start + len(old), len(new))
        folded.clear()
        shift += len(new) - len(old)
        applied += 1
        outcomes.append(HunkOutcome(index, True, sides.body, Strategy.DIRECT, start + 1))
    if no_eol and text:
        text = text[: -len(eol)]
    return HunkResult(text, applied, len(hunks), tuple(outcomes), log.spans)


class _Sides(NamedTuple):
    body: str
    """The hunk's text (`Hunk.text`)."""
    old: list[str]
    new: list[str]
    plain: list[str] | None
    """The body lines without endings, when every one is context, removed, added or empty
    (None for a hunk with markers or unprefixed lines): enough to build the block's lines."""
    changes: bool
    marked: bool
    """A `\\ No newline at end of file` marker is in the hunk."""
    new_no_eol: bool
    """The marker says the new side ends without a newline (when honoured)."""


_OPS = {" ": Op.CONTEXT, "": Op.CONTEXT, "-": Op.REMOVE, "+": Op.ADD}
_PLAIN_OPS = frozenset(_OPS)
"""First characters of body lines that need no special reading ("" is an empty line)."""


def _sides(hunk: Hunk, honour_marker: bool) -> _Sides | None:
    """The hunk's old and new lines, as `blocks.block_from_hunk` reads them; None if out of scope.

    An empty line is blank context; a line without a known prefix is context the model
    forgot to prefix; a marker after a line that is not removed ends the new side
    without a newline.
    """
    if hunk.anchors or hunk.at_eof or usable_section(hunk.section):
        return None
    lines = hunk.lines
    body = "".join(lines)
    if "\r" in body or not lines:
        return None
    texts = body.split("\n")
    tail = texts.pop()  # "" when the last line ends in a newline
    if tail:
        texts.append(tail)
    # Each line must be its text plus one newline (the last may have none): a line with a
    # newline inside, or a middle line without one, splits differently from the block.
    expected = [text + "\n" for text in texts]
    if tail:
        expected[-1] = tail
    if len(expected) != len(lines) or expected != list(lines):
        return None
    ops = [text[:1] for text in texts]
    if _PLAIN_OPS.issuperset(ops):
        # The common case, in comprehensions: an empty line is blank context either way.
        old = [text[1:] for text in texts if text[:1] != "+"]
        new = [text[1:] for text in texts if text[:1] != "-"]
        return _Sides(body, old, new, texts, "-" in ops or "+" in ops, False, False)
    old = []
    new = []
    changes = marked = new_no_eol = False
    last = ""
    for line in texts:
        op = line[:1]
        if op == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif op == "-":
            old.append(line[1:])
            changes = True
        elif op == "+":
            new.append(line[1:])
            changes = True
        elif op == "\\":
            marked = True
            if honour_marker and last and last != "-":
                new_no_eol = True
            continue
        else:
            old.append(line)
            new.append(line)
            op = " "
        last = op
    return _Sides(body, old, new, None, changes, marked, new_no_eol)


def _surely_absent(text: str, eol: str, sides: _Sides) -> bool:
    """Whether the line-based path refuses the hunk as not found (NO_MATCH), plainly.

    It does when no strategy can place the block (`locate.cannot_place`) and the
    already-applied check finds nothing: it needs enough solid new lines, as that check
    asks, and one new line that is not even a substring of the text proves it absent.
    """
    if sides.plain is None:
        return False
    ops = [_OPS[line[:1]] for line in sides.plain]
    texts = [line[1:] for line in sides.plain]
    joined = text[: -len(eol)]  # the lines without the last ending, as `cannot_place` reads
    if not cannot_place(ops, texts, joined):
        return False
    solid = [
        op for op, line in zip(ops, texts, strict=True) if op is not Op.REMOVE and line.strip()
    ]
    has_context = Op.CONTEXT in solid
    if not (has_context and len(solid) >= 2) and len(solid) < 3:
        return True  # too little to be evidence of an earlier application
    return any(line.rstrip() not in text for line in sides.new[:_LOOKED_FOR])


def _no_rival(text: str, sides: _Sides, hint: int, at: int, start: int) -> bool:
    """Whether no looser match of the old lines can start within the tie distance of `hint`.

    Such a match would cover only lines [hint - TIE_DISTANCE, hint + TIE_DISTANCE +
    len(old)). Every tolerance pairs each removed line with a file line, and none lets
    more than three context lines differ (drifted context): a non-blank removed line, or
    four non-blank context lines, absent from that stretch rule it out.
    """
    if sides.plain is None:
        return False
    old = [(line[:1], line[1:]) for line in sides.plain if line[:1] != "+"]
    if any(op != "-" and is_elision(line) for op, line in old):
        return False  # an elision may stand for any number of lines
    first = max(hint - TIE_DISTANCE, 0)
    stop = hint + TIE_DISTANCE + len(old)
    window = text[_line_offset(text, first, at, start) : _line_offset(text, stop, at, start)]
    missing = 0
    for op, line in old:
        if line.strip() and absent_from(window, line):
            if op == "-":
                return True
            missing += 1
    return missing > _MAX_DRIFTED


_MAX_DRIFTED = 3
"""Context lines drifted context lets differ (`locate._STALE_MAX_ALTERED`)."""


def _loosely_unique(text: str, old: Sequence[str], folded: list[str]) -> bool:
    """Whether some non-blank old line's loosest key is in the text only once.

    Then no second place holds the old lines at any contiguous tolerance (trailing
    space, punctuation, indentation), as the line-based path's rival check finds.
    `folded` keeps the folded text across hunks of a non-ASCII file.
    """
    haystack = text
    if not text.isascii():
        if not folded:
            folded.append(fold_punctuation(text))
        haystack = folded[0]
    return any(_one_line_holds(haystack, key) for key in _keys(old))


def _keys(old: Sequence[str]) -> list[str]:
    """The old lines' loosest keys (`locate._loosest`), longest (likeliest rare) first."""
    keys = {fold_punctuation(line).rstrip().lstrip(" \t") for line in old}
    return sorted((k for k in keys if k), key=len, reverse=True)


_OCCURRENCES = 16
"""Occurrences of a key inside other lines `_one_line_holds` looks past before it gives up."""


def _one_line_holds(text: str, key: str) -> bool:
    """Whether exactly one line of `text` is `key` between leading spaces/tabs and trailing
    whitespace (False also when unsure: past `_OCCURRENCES` occurrences)."""
    whole = 0
    at = text.find(key)
    for _ in range(_OCCURRENCES):
        if at < 0:
            return whole == 1
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if not text[start:at].strip(" \t") and not text[at + len(key) : end].strip():
            whole += 1
            if whole > 1:
                return False
        at = text.find(key, at + 1)
    return False


def _line_offset(text: str, line: int, at: int, start: int) -> int:
    """Where 0-based `line` starts in `text` (its length past the end); `at` starts `start`.

    A binary search on C-level newline counts, from the known line towards the wanted one.
    """
    if line <= start:
        lo, hi, origin, base = 0, at, 0, 0
    else:
        lo, hi, origin, base = at, len(text), at, start
    while lo < hi:
        mid = (lo + hi) // 2
        if base + text.count("\n", origin, mid) >= line:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _hint(hunk: Hunk) -> int | None:
    """Where the old side should start (0-based), as `blocks.block_from_hunk` reads it."""
    if hunk.old_start is None:
        return None
    return hunk.old_start if hunk.old_count == 0 else max(hunk.old_start - 1, 0)


def _only_line_start(text: str, wanted: str) -> int:
    """The offset of `wanted`'s one occurrence at the start of a line; -1 if there is
    none, -2 if there are several.

    Looking for "\n" + `wanted` finds only line starts (overlapping ones too, as the
    search resumes one character on), so at most two searches run.
    """
    found = 0 if text.startswith(wanted) else -1
    at = text.find("\n" + wanted)
    if at >= 0:
        if found >= 0 or text.find("\n" + wanted, at + 1) >= 0:
            return -2
        found = at + 1
    return found
