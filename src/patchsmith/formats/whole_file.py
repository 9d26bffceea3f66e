"""Whole files: a path line, then a fenced block holding the file's complete new text.

Each becomes an UPDATE with `WholeContent` (the runtime treats a missing file as a create).
The fenced text always ends with "\\n": a fence cannot express a missing final newline.
Fences without a path, and fences holding a diff or edit blocks, are not whole files; an
unclosed fence is a problem (the file may be cut short).
"""

from __future__ import annotations

import re

from patchsmith.engine.diffparse import split_lines
from patchsmith.errors import FailureCode
from patchsmith.formats._assemble import problem, script
from patchsmith.formats._markdown import Fence, fence_close, fence_open, info_path, path_from_line
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditScript,
    FileEdit,
    ParseProblem,
    WholeContent,
)

__all__ = ["detect", "fence_path", "holds_file", "parse", "truncated_problem"]

_DIFF_INFO = frozenset({"diff", "patch", "udiff"})
_SHELL_INFO = frozenset({"bash", "sh", "shell", "console", "terminal", "zsh", "powershell", "cmd"})
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd")
# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_OTHER_FORMAT = (
    r"(?i)^(?:@@|--- |\+\+\+ |diff --git |\s*\*\*\*\s*(?:Begin Patch|(?:Add|Update|Delete) File:)"
    r"|\s*<{5,9} ?SEARCH\b)"
)


def detect(text: str) -> bool:
    """True when `text` holds a fenced block named by a path."""
    edits, problems = _blocks(split_lines(text))
    return bool(edits or problems)


def parse(text: str) -> EditScript:
    """Every path-named fenced block in `text`, as whole-file UPDATEs; never raises."""
    lines = split_lines(text)
    edits, problems = _blocks(lines)
    return script(EditFormat.WHOLE_FILE, lines, edits, problems)


def _blocks(lines: list[str]) -> tuple[list[FileEdit], list[ParseProblem]]:
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
        if path is None and len(body) > 1:
            path = path_from_line(body[0])
            if path is not None:
                body = body[1:]
        if path is not None and holds_file(fence, path, body):
            if close == len(lines):
                problems.append(truncated_problem(lines, path, i + 1))
            else:
                text = "".join(line if line.endswith("\n") else line + "\n" for line in body)
                op = (WholeContent(text),)
                edits.append(FileEdit(path, Action.UPDATE, op, start_line=i, end_line=close + 1))
        i = close + 1
    return edits, problems


def truncated_problem(lines: list[str], path: str, start: int) -> ParseProblem:
    """The reply stops inside the fence of `path`: the model was cut off (TRUNCATED_OUTPUT)."""
    message = f"the fence for {path} is never closed: the reply was cut off"
    return problem(lines, message, start, len(lines), FailureCode.TRUNCATED_OUTPUT)


def fence_path(lines: list[str], start: int, fence: Fence) -> str | None:
    """The path a fence names in its info string or on the line above it."""
    named = info_path(fence.info)
    if named:
        return named
    index = start - 1
    while index >= 0 and not lines[index].strip() and index > start - 3:
        index -= 1
    return path_from_line(lines[index]) if index >= 0 else None


def holds_file(fence: Fence, path: str, body: list[str]) -> bool:
    """False for fences that hold another format (a diff, edit blocks) or shell commands."""
    language = fence.info.split()[0].lower() if fence.info.split() else ""
    if language in _DIFF_INFO:
        return False
    if language in _SHELL_INFO and not path.endswith(_SHELL_SUFFIXES):
        return False  # `x.py` then a ```bash block: a command to run, not the file
    other = re.compile(_OTHER_FORMAT)
    return not any(other.match(line) for line in body)
