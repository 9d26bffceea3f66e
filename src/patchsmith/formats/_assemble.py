"""Assembling parse results: merging edits of one file, and problems that quote the text."""

from __future__ import annotations

from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action, EditFormat, EditScript, FileEdit, ParseProblem

__all__ = ["covering_problem", "merge_updates", "problem", "script"]

_EXCERPT_LINES = 20


def problem(
    lines: list[str],
    message: str,
    start: int,
    end: int,
    code: FailureCode = FailureCode.MALFORMED_PATCH,
) -> ParseProblem:
    """A problem over 1-based inclusive lines `start..end`, quoting at most 20 of them."""
    start = max(1, start)
    end = max(start, end)
    text = "".join(lines[start - 1 : min(end, start - 1 + _EXCERPT_LINES)])
    return ParseProblem(message=message, start_line=start, end_line=end, text=text, code=code)


def covering_problem(lines: list[str], message: str) -> ParseProblem:
    """A problem that covers the whole text."""
    return problem(lines, message, 1, max(1, len(lines)))


def merge_updates(edits: list[FileEdit]) -> tuple[FileEdit, ...]:
    """Join every UPDATE of the same path into its first one, keeping the order of the ops.

    Runtimes then see one edit per file; creates, deletes and moves are never merged.
    """
    merged: list[FileEdit] = []
    first_update: dict[str, int] = {}
    for edit in edits:
        index = first_update.get(edit.path) if edit.action is Action.UPDATE else None
        if index is None:
            if edit.action is Action.UPDATE:
                first_update[edit.path] = len(merged)
            merged.append(edit)
            continue
        earlier = merged[index]
        merged[index] = FileEdit(
            path=earlier.path,
            action=Action.UPDATE,
            ops=earlier.ops + edit.ops,
            new_mode=edit.new_mode or earlier.new_mode,
            start_line=earlier.start_line,
            end_line=max(earlier.end_line, edit.end_line),
        )
    return tuple(merged)


def script(
    fmt: EditFormat,
    lines: list[str],
    edits: list[FileEdit],
    problems: list[ParseProblem],
    *,
    recognised: bool = False,
) -> EditScript:
    """The `EditScript`; with no edit, no problem and nothing `recognised`, one covering problem."""
    if not edits and not problems and not recognised:
        problems = [covering_problem(lines, f"no {fmt.value} edit found")]
    regions = tuple((e.start_line, e.end_line) for e in edits)
    return EditScript(
        format=fmt, edits=merge_updates(edits), problems=tuple(problems), regions=regions
    )
