"""Model text to `EditScript`: every edit format, detected by content.

Layer (docs/architecture.md): owns the input formats and their detection; may import
`engine` and `errors` only.
"""

from __future__ import annotations

import re
from dataclasses import replace

from patchsmith.engine.diffparse import split_lines
from patchsmith.formats import codex, lazy_snippet
from patchsmith.formats._assemble import covering_problem, merge_updates
from patchsmith.formats.registry import FORMATS, format_named, parser_for
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    LazySnippet,
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
    "LazySnippet",
    "ParseProblem",
    "SearchReplace",
    "WholeContent",
    "detect_format",
    "parse_edits",
]


def detect_format(text: str) -> EditFormat:
    """The first format (in registry order) whose markers `text` holds; `AUTO` if none."""
    if codex.unwrap(text) is not None:
        return EditFormat.APPLY_PATCH
    return next((entry.format for entry in FORMATS if entry.detect(text)), EditFormat.AUTO)


def parse_edits(text: str, format: EditFormat | str = "auto") -> EditScript:
    """Parse model text into an `EditScript`; never raises.

    With `auto`, every format whose markers are present is parsed, one after the
    other, each on the text left once the earlier ones' regions are blanked out:
    SEARCH/REPLACE blocks whose markers start a line first (a diff can only hold
    them indented), then apply_patch envelopes and unified diffs, then str_replace
    tool calls, then whole files (a path line and a fence) in what is left. So a reply that
    mixes formats loses nothing, and a diff whose context happens to contain
    another format's markers is read as the diff it is. An envelope in one of the Codex
    CLI's call shapes (`{"command": ["apply_patch", ...]}`, an `apply_patch <<'EOF'`
    heredoc) is read as the bare envelope. With nothing detected,
    the script is empty with a problem covering the text; an unknown format name
    gives an empty script with a problem saying so.
    """
    fmt = format if isinstance(format, EditFormat) else format_named(str(format))
    if fmt is None:
        names = ", ".join(f.value for f in EditFormat)
        problem = ParseProblem(
            f"unknown edit format {str(format)[:40]!r}; use one of {names}", 1, 1
        )
        return EditScript(format=EditFormat.AUTO, problems=(problem,))
    if fmt in (EditFormat.AUTO, EditFormat.APPLY_PATCH):
        text = codex.unwrap(text) or text
    entry = parser_for(fmt)
    if entry is None:
        return _parse_auto(text)
    parsed = entry.parse(text)
    if fmt is EditFormat.WHOLE_FILE:
        return _explicit(parsed)
    return parsed


def _explicit(parsed: EditScript) -> EditScript:
    """Whole files the caller asked for by name replace their file, with no region reading."""
    edits = tuple(
        replace(
            edit,
            ops=tuple(
                replace(op, explicit=True) if isinstance(op, WholeContent) else op
                for op in edit.ops
            ),
        )
        for edit in parsed.edits
    )
    return replace(parsed, edits=edits)


# Formats recognised by markers ordinary prose can contain.
_WEAK = (EditFormat.STR_REPLACE, EditFormat.LAZY_SNIPPET, EditFormat.WHOLE_FILE)
_LEADING_SEARCH = re.compile(r"^<{5,9} ?SEARCH\b", re.MULTILINE)
_FENCE = re.compile(r"^\s*(```|~~~)")


def _auto_order(text: str) -> list[EditFormat]:
    containers = [EditFormat.APPLY_PATCH, EditFormat.UDIFF]
    if _LEADING_SEARCH.search(text):
        return [EditFormat.SEARCH_REPLACE, *containers, EditFormat.STR_REPLACE]
    return [*containers, EditFormat.SEARCH_REPLACE, EditFormat.STR_REPLACE]


def _parse_auto(text: str) -> EditScript:
    lines = split_lines(text)
    masked = list(lines)
    taken = [False] * len(lines)
    edits: list[FileEdit] = []
    problems: list[ParseProblem] = []
    regions: list[tuple[int, int]] = []
    found: list[EditFormat] = []
    order = _auto_order(text)
    for fmt in [*order, EditFormat.LAZY_SNIPPET, EditFormat.WHOLE_FILE]:
        entry = parser_for(fmt)
        remaining = "".join(masked)
        if entry is None or not entry.detect(remaining):
            continue
        # Auto-detection leaves a fence with neither placeholders nor a prose-only path
        # to the whole-file format (which may create a file).
        parse = lazy_snippet.parse_marked if fmt is EditFormat.LAZY_SNIPPET else entry.parse
        result = parse(remaining)
        if not result.edits and (not result.problems or (fmt in _WEAK and bool(edits))):
            continue  # JSON-looking prose next to real edits is prose, not a broken call
        found.append(fmt)
        edits.extend(result.edits)
        problems.extend(result.problems)
        for start, end in result.regions:
            start, end = _with_fences(masked, start, end, taken)
            regions.append((start, end))
            for i in range(start, end):
                masked[i] = "\n"
                taken[i] = True
    if not found:
        missing = covering_problem(lines, "no edit found: no diff, envelope, block or tool call")
        return EditScript(format=EditFormat.AUTO, problems=(missing,))
    if not edits:
        # Nothing parsed into an edit: report what the first detected format could not read.
        first = parser_for(found[0])
        assert first is not None
        return first.parse(text)
    edits.sort(key=lambda e: e.start_line)
    problems.sort(key=lambda p: p.start_line)
    return EditScript(
        format=found[0] if len(found) == 1 else EditFormat.AUTO,
        edits=merge_updates(edits),
        problems=tuple(problems),
        regions=tuple(sorted(regions)),
    )


def _with_fences(lines: list[str], start: int, end: int, taken: list[bool]) -> tuple[int, int]:
    """A region grown over the fence lines (and the path line) wrapping it, so that what
    is left does not look like a fenced file of its own.

    The walks stop at lines an earlier region took (blanked, so they would look
    empty): each gap between regions is walked once, keeping this linear.
    """
    start, end = max(start, 0), min(end, len(lines))
    while (
        end < len(lines) and not taken[end] and (not lines[end].strip() or _FENCE.match(lines[end]))
    ):
        if _FENCE.match(lines[end]):
            end += 1
            break
        end += 1
    top = start
    while top > 0 and not taken[top - 1] and not lines[top - 1].strip():
        top -= 1
    if top > 0 and not taken[top - 1] and _FENCE.match(lines[top - 1]):
        start = top - 1
        if start > 0 and _looks_like_path(lines[start - 1]):
            start -= 1
    return start, end


def _looks_like_path(line: str) -> bool:
    bare = line.strip().strip("`*").rstrip(":").strip()
    return bool(bare) and " " not in bare and ("." in bare or "/" in bare)
