"""The apply_patch envelope (`*** Begin Patch` ... `*** End Patch`).

One reader serves both diff shapes (`engine.diffparse`): Add File is a CREATE with the added
text, Delete File a DELETE, Update File an UPDATE (a MOVE with `*** Move to:`) with its hunks.
"""

from __future__ import annotations

import re

from patchsmith.engine.diffparse import parse_diff, split_lines
from patchsmith.formats._assemble import script
from patchsmith.formats._diffmap import edits_from_diffs
from patchsmith.formats.script import EditFormat, EditScript

__all__ = ["detect", "parse"]

_MARKER = re.compile(
    r"^[ \t]*\*\*\*[ \t]*(?:Begin[ \t]+Patch|(?:Add|Delete|Update)[ \t]+File[ \t]*:)",
    re.IGNORECASE | re.MULTILINE,
)


def detect(text: str) -> bool:
    """True when `text` holds a `*** Begin Patch` or `*** Add/Delete/Update File:` line."""
    return _MARKER.search(text) is not None


def parse(text: str) -> EditScript:
    """Every envelope operation in `text` (and any plain diff beside it), as edits."""
    lines = split_lines(text)
    edits, problems = edits_from_diffs(parse_diff(text), lines)
    return script(EditFormat.APPLY_PATCH, lines, edits, problems)
