"""Lazy edit snippets: a fenced block of new text with `# ... existing code ...` placeholders.

The path is taken from the fence's info string (```` ```python:src/x.py ````), the line
above the fence (plain, `backticked` or **bold**), or the prose just above it (one
path-like name, the most specific when it is written both as `x.py` and `src/x.py`).
Each block becomes an UPDATE with one `LazySnippet` op, merged by its anchors at
intake (`patchsmith.engine.lazy`). Auto-detection takes a block when its text has a
placeholder-shaped line, or when only the prose names its file; other path-named
blocks are left to the whole-file format.
"""

from __future__ import annotations

import re

from patchsmith.engine.diffparse import split_lines
from patchsmith.engine.placeholder import is_placeholder_shape
from patchsmith.formats._assemble import script
from patchsmith.formats._markdown import fence_close, fence_open, path_from_line
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditScript,
    FileEdit,
    LazySnippet,
    ParseProblem,
)
from patchsmith.formats.whole_file import fence_path, holds_file, truncated_problem

__all__ = ["detect", "parse", "parse_marked", "prose_path"]

# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_QUOTED = r"`([^`\s]+)`|\*\*([^*\s]+)\*\*|\(([^()\s]+)\)"
_PROSE_LINES = 3


def detect(text: str) -> bool:
    """True when `text` holds a path-named fence with placeholders, or one named only in prose."""
    edits, problems = _blocks(split_lines(text), everything=False)
    return bool(edits or problems)


def parse(text: str) -> EditScript:
    """Every path-named fenced block of `text` as a lazy snippet; never raises."""
    lines = split_lines(text)
    edits, problems = _blocks(lines, everything=True)
    return script(EditFormat.LAZY_SNIPPET, lines, edits, problems)


def parse_marked(text: str) -> EditScript:
    """The blocks auto-detection takes (placeholders, or a path only in prose); never raises."""
    lines = split_lines(text)
    edits, problems = _blocks(lines, everything=False)
    return script(EditFormat.LAZY_SNIPPET, lines, edits, problems)


def _blocks(lines: list[str], *, everything: bool) -> tuple[list[FileEdit], list[ParseProblem]]:
    edits: list[FileEdit] = []
    problems: list[ParseProblem] = []
    i = 0
    while i < len(lines):
        fence = fence_open(lines[i])
        if fence is None:
            i += 1
            continue
        close = fence_close(lines, i, fence)
        body = lines[i + 1 : close]
        path = fence_path(lines, i, fence)
        from_prose = False
        if path is None:
            path = prose_path(lines, i)
            from_prose = path is not None
        wanted = (
            path is not None
            and holds_file(fence, path, body)
            and (everything or from_prose or any(is_placeholder_shape(b, path) for b in body))
        )
        if wanted and path is not None:
            if close == len(lines):
                problems.append(truncated_problem(lines, path, i + 1))
            else:
                text = "".join(line if line.endswith("\n") else line + "\n" for line in body)
                op = (LazySnippet(text),)
                edits.append(FileEdit(path, Action.UPDATE, op, start_line=i, end_line=close + 1))
        i = close + 1
    return edits, problems


def prose_path(lines: list[str], fence_line: int) -> str | None:
    """The one file the prose just above a fence names (`x.py`, **src/x.py**), if exactly one."""
    index = fence_line - 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    found: list[str] = []
    seen = 0
    while index >= 0 and lines[index].strip() and seen < _PROSE_LINES:
        if fence_open(lines[index]) is not None:
            break
        for match in re.finditer(_QUOTED, lines[index]):
            token = next(group for group in match.groups() if group)
            path = path_from_line(token.rstrip(".,;:"))
            if path is not None and path not in found:
                found.append(path)
        index -= 1
        seen += 1
    specific = [p for p in found if not any(o != p and o.endswith("/" + p) for o in found)]
    return specific[0] if len(specific) == 1 else None
