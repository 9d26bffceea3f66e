"""`EditBlock`: a hunk or a search/replace pair as a list of context/removed/added lines.

Default mode works on whole lines; this is where a hunk's body (as the model
wrote it) and a SEARCH/REPLACE pair become the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from patchsmith.engine.linediff import line_opcodes
from patchsmith.engine.model import Hunk

__all__ = ["BlockLine", "EditBlock", "Op", "block_from_hunk", "block_from_search_replace"]


class Op(StrEnum):
    CONTEXT = " "
    REMOVE = "-"
    ADD = "+"


# A context line that stands for "unchanged lines left out here": `...`, `…`, or
# a comment such as `# ... existing code ...` / `// ...`.
_ELISION = re.compile(
    r"^\s*(?:(?:#|//|/\*|--|;|<!--|\*)\s*)?(?:\.\.\.|…)"
    r"(?:\s*[\w ,'’-]*\s*(?:\.\.\.|…)?)?\s*(?:\*/|-->)?\s*$"
)


def is_elision(text: str) -> bool:
    """True for a line that says "unchanged lines omitted here" rather than being one."""
    return bool(_ELISION.match(text)) and len(text) < 80


class BlockLine(NamedTuple):
    """One line of a block (a named tuple: blocks are built per hunk on every apply)."""

    op: Op
    text: str
    """The line without its ending."""


_OPS = {" ": Op.CONTEXT, "-": Op.REMOVE, "+": Op.ADD}


@dataclass(frozen=True)
class EditBlock:
    """Context, removed and added lines, plus what the model said about position and EOF."""

    lines: tuple[BlockLine, ...]
    old_no_eol: bool = False
    new_no_eol: bool = False
    eol_marked: bool = False
    """The model wrote a `\\ No newline at end of file` marker somewhere in this block."""
    hint: int | None = None
    """0-based index where the old side should start, from the model's line numbers."""
    anchors: tuple[str, ...] = ()
    at_eof: bool = False
    ending: str = "\n"
    """The line ending most of the hunk's own lines carry; used only where the file shows none."""

    @property
    def old(self) -> list[str]:
        # Locating asks for the old side once per tolerance level: build it once. The
        # block is frozen, so the copy is kept in its __dict__ directly.
        cached = self.__dict__.get("_old")
        if cached is None:
            cached = tuple(ln.text for ln in self.lines if ln.op is not Op.ADD)
            self.__dict__["_old"] = cached
        return list(cached)

    @property
    def new(self) -> list[str]:
        return [ln.text for ln in self.lines if ln.op is not Op.REMOVE]

    @property
    def changes(self) -> bool:
        return any(ln.op is not Op.CONTEXT for ln in self.lines)

    def without_blank_edges(self) -> EditBlock | None:
        """The block with blank context lines stripped from both ends (never the file)."""
        lines = list(self.lines)
        start, end = 0, len(lines)
        while start < end and lines[start].op is Op.CONTEXT and not lines[start].text.strip():
            start += 1
        while end > start and lines[end - 1].op is Op.CONTEXT and not lines[end - 1].text.strip():
            end -= 1
        if (start, end) == (0, len(lines)):
            return None
        return EditBlock(
            tuple(lines[start:end]),
            self.old_no_eol,
            self.new_no_eol,
            self.eol_marked,
            None if self.hint is None else self.hint + start,
            self.anchors,
            self.at_eof and end == len(lines),
            self.ending,
        )


def _strip_ending(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def _hunk_ending(raw_lines: Sequence[str]) -> str:
    """CRLF when most body lines end so; a line before a no-newline marker has no real ending."""
    if not any("\r" in raw for raw in raw_lines):
        return "\n"  # no line can end in CRLF
    crlf = lf = 0
    for raw, after in zip(raw_lines, [*raw_lines[1:], ""], strict=True):
        if raw.startswith("\\") or after.startswith("\\"):
            continue
        if raw.endswith("\r\n"):
            crlf += 1
        elif raw.endswith("\n"):
            lf += 1
    return "\r\n" if crlf > lf else "\n"


def usable_section(section: str) -> bool:
    """A section header that names a line: not empty, not an elision, some word in it."""
    if not section or is_elision(section):
        return False
    return sum(ch.isalnum() for ch in section) >= 3


def block_from_hunk(hunk: Hunk, *, honour_no_newline_marker: bool = True) -> EditBlock:
    """Read a hunk body: " x", "-x", "+x", "\\ marker"; an empty line is blank context.

    A line with any other first character is taken as context the model forgot
    to prefix; it still has to match the file to be of any use.
    """
    lines: list[BlockLine] = []
    old_no_eol = new_no_eol = marked = False
    ending = _hunk_ending(hunk.lines)
    for raw in hunk.lines:
        line = _strip_ending(raw)
        if line.startswith("\\"):
            marked = True
            if honour_no_newline_marker and lines:
                last = lines[-1].op
                if last is not Op.ADD:
                    old_no_eol = True
                if last is not Op.REMOVE:
                    new_no_eol = True
            continue
        if not line:
            lines.append(BlockLine(Op.CONTEXT, ""))
        elif line[0] in _OPS:
            lines.append(BlockLine(_OPS[line[0]], line[1:]))
        else:
            lines.append(BlockLine(Op.CONTEXT, line))
    hint = None
    if hunk.old_start is not None:
        hint = hunk.old_start if hunk.old_count == 0 else max(hunk.old_start - 1, 0)
    anchors = hunk.anchors
    if not anchors and usable_section(hunk.section):
        # `@@ -a,b +c,d @@ def f():` names a line above the hunk, like an envelope anchor.
        anchors = (hunk.section,)
    return EditBlock(
        tuple(lines),
        old_no_eol,
        new_no_eol,
        marked,
        hint,
        anchors,
        hunk.at_eof,
        ending,
    )


def block_from_search_replace(search: str, replace: str, line_hint: int | None = None) -> EditBlock:
    """Turn a SEARCH/REPLACE pair into context/removed/added lines.

    The alignment has a bounded cost (`engine.linediff`): a huge, repetitive pair
    may come out as all removed then all added, which locates the same way.
    """
    old = [_strip_ending(x) for x in search.split("\n")]
    new = [_strip_ending(x) for x in replace.split("\n")]
    # "a\nb\n".split("\n") ends with "", which is not a line.
    if old and old[-1] == "" and search.endswith("\n"):
        old.pop()
    if new and new[-1] == "" and replace.endswith("\n"):
        new.pop()
    if not search:
        old = []
    if not replace:
        new = []
    lines: list[BlockLine] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            lines.extend(BlockLine(Op.CONTEXT, x) for x in old[i1:i2])
            continue
        lines.extend(BlockLine(Op.REMOVE, x) for x in old[i1:i2])
        lines.extend(BlockLine(Op.ADD, x) for x in new[j1:j2])
    hint = None if line_hint is None else max(line_hint - 1, 0)
    return EditBlock(tuple(lines), hint=hint)


def old_kinds(block: EditBlock) -> Sequence[Op]:
    return [ln.op for ln in block.lines if ln.op is not Op.ADD]
