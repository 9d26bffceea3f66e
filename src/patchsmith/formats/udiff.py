"""Unified diffs as models write them (git-style, plain, headerless, fenced, sloppy).

`/dev/null` on the old side is a CREATE with the new text, on the new side a DELETE with the
removed text (when hunks are given); a git rename is a MOVE whose ops are the hunks; mode lines
set `new_mode`; headerless hunks give an UPDATE with path "" (the caller picks the file).
"""

from __future__ import annotations

import re

from patchsmith.engine.diffparse import parse_diff, split_lines
from patchsmith.formats._assemble import script
from patchsmith.formats._diffmap import edits_from_diffs
from patchsmith.formats.script import EditFormat, EditScript

__all__ = ["detect", "parse"]

_SIGNS = re.compile(r"^(?:@@|diff --git |--- .*\n\+\+\+ )", re.MULTILINE)


def detect(text: str) -> bool:
    """True when `text` holds a `diff --git` line, a `---`/`+++` pair or an `@@` line."""
    return _SIGNS.search(text.replace("\r\n", "\n")) is not None


def parse(text: str) -> EditScript:
    """Every file section of every diff in `text`, as edits; never raises."""
    lines = split_lines(text)
    edits, problems = edits_from_diffs(parse_diff(text), lines)
    return script(EditFormat.UDIFF, lines, edits, problems)
