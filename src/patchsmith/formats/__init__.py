"""Model text to `EditScript`: every edit format, detected by content."""

from __future__ import annotations

from patchsmith.engine.diffparse import split_lines
from patchsmith.formats._assemble import covering_problem
from patchsmith.formats.registry import FORMATS, format_named, parser_for
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    ParseProblem,
    SearchReplace,
    WholeContent,
)

__all__ = [
    "Action",
    "EditFormat",
    "EditOp",
    "EditScript",
    "FileEdit",
    "InsertText",
    "ParseProblem",
    "SearchReplace",
    "WholeContent",
    "detect_format",
    "parse_edits",
]


def detect_format(text: str) -> EditFormat:
    """The first format (in registry order) whose markers `text` holds; `AUTO` if none."""
    return next((entry.format for entry in FORMATS if entry.detect(text)), EditFormat.AUTO)


def parse_edits(text: str, format: EditFormat | str = "auto") -> EditScript:
    """Parse model text into an `EditScript`; never raises.

    With `auto`, formats are tried in registry order and the first whose markers are present
    and that yields an edit wins; otherwise the first detected format's result (its problems)
    is returned, or, when none is detected, an empty script with a problem covering the text.
    An unknown format name gives an empty script with a problem saying so.
    """
    fmt = format if isinstance(format, EditFormat) else format_named(format)
    if fmt is None:
        names = ", ".join(f.value for f in EditFormat)
        problem = ParseProblem(
            f"unknown edit format {str(format)[:40]!r}; use one of {names}", 1, 1
        )
        return EditScript(format=EditFormat.AUTO, problems=(problem,))
    entry = parser_for(fmt)
    if entry is not None:
        return entry.parse(text)
    fallback: EditScript | None = None
    for candidate in FORMATS:
        if not candidate.detect(text):
            continue
        result = candidate.parse(text)
        if result.edits:
            return result
        fallback = fallback or result
    if fallback is not None:
        return fallback
    lines = split_lines(text)
    missing = covering_problem(lines, "no edit found: no diff, envelope, block or tool call")
    return EditScript(format=EditFormat.AUTO, problems=(missing,))
