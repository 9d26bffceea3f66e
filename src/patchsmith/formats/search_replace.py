"""aider SEARCH/REPLACE blocks (`<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE`).

The path is the line before the opening fence, the line right before the block (also the
first line inside the fence), or the fence's info string; a block without one reuses the
previous block's path, or gets "" (the caller picks the file). Markers of 5 to 9 characters
are accepted. An empty SEARCH appends (or creates); `...` lines are kept for the locator.
"""

from __future__ import annotations

import re

from patchsmith.engine.diffparse import split_lines
from patchsmith.formats._assemble import problem, script
from patchsmith.formats._markdown import fence_open, info_path, path_from_line
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditScript,
    FileEdit,
    ParseProblem,
    SearchReplace,
)

__all__ = ["detect", "parse"]

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\b", re.IGNORECASE)
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b", re.IGNORECASE)
_DETECT = re.compile(r"^[ \t]*<{5,9} ?SEARCH\b", re.IGNORECASE | re.MULTILINE)


def detect(text: str) -> bool:
    """True when `text` holds a `<<<<<<< SEARCH` line."""
    return _DETECT.search(text) is not None


def parse(text: str) -> EditScript:
    """Every SEARCH/REPLACE block in `text`, one UPDATE per file; never raises."""
    lines = split_lines(text)
    edits: list[FileEdit] = []
    problems: list[ParseProblem] = []
    previous = ""
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        start = i
        path = _block_path(lines, start) or previous
        divider = _scan(lines, start + 1, _DIVIDER)
        if divider is None or not _DIVIDER.match(lines[divider]):
            stop = len(lines) if divider is None else divider
            problems.append(problem(lines, "SEARCH block without =======", start + 1, stop))
            i = stop
            continue
        end = _scan(lines, divider + 1, _REPLACE)
        if end is None or not _REPLACE.match(lines[end]):
            stop = len(lines) if end is None else end
            problems.append(problem(lines, "block without >>>>>>> REPLACE", start + 1, stop))
            i = stop
            continue
        op = SearchReplace(_joined(lines[start + 1 : divider]), _joined(lines[divider + 1 : end]))
        edits.append(FileEdit(path, Action.UPDATE, (op,), start_line=start, end_line=end + 1))
        previous = path
        i = end + 1
    return script(EditFormat.SEARCH_REPLACE, lines, edits, problems)


def _scan(lines: list[str], start: int, wanted: re.Pattern[str]) -> int | None:
    """Index of the first `wanted` line from `start`, or of a SEARCH line that comes first."""
    for index in range(start, len(lines)):
        if wanted.match(lines[index]) or _SEARCH.match(lines[index]):
            return index
    return None


def _joined(block: list[str]) -> str:
    return "".join(line if line.endswith("\n") else line + "\n" for line in block)


def _block_path(lines: list[str], start: int) -> str:
    """The path named for the block starting at `start`, or "" when none is."""
    if start == 0:
        return ""
    before = lines[start - 1]
    fence = fence_open(before)
    if fence is None:
        return path_from_line(before) or ""
    named = info_path(fence.info)
    if named:
        return named
    index = start - 2
    while index >= 0 and not lines[index].strip() and index > start - 4:
        index -= 1
    if index >= 0:
        return path_from_line(lines[index]) or ""
    return ""
