"""Omission guards: no reply may delete code it did not show.

Three rules, on for every format and entry point (`apply`, `propose`, `write_file`):

- `placeholders`: a line shaped like an elision comment (`# ... existing code ...`)
  that the file does not already hold is never written;
- `truncated_write`: a whole-file write that drops the file's ending and puts
  (almost) nothing in its place is a reply cut off mid-file;
- `whole_file_removal`: a whole-file write that removes most of a large file is a
  quoted excerpt or a lost body, not a rewrite.

The last two look only at whole-file writes (a fenced file, a direct write), never
at edits that show each removed line, and the caller lifts them by saying the write
is a full rewrite (`full_rewrite=True`, `--full-rewrite`, a proposal's
`full_rewrite`). Thresholds were measured on the shared corpora: no whole file of the
public corpora trips them, every truncated or quoted file of the omission corpus does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

from patchsmith.engine.placeholder import has_line, is_placeholder_shape, placeholders_absent_from
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import change_opcodes, text_of

__all__ = [
    "LARGE_FILE_LINES",
    "MAX_REMOVED_SHARE",
    "MIN_DROPPED_TAIL",
    "MIN_KEPT_SHARE",
    "PlaceholderGuard",
    "TruncatedWriteGuard",
    "WholeFileRemovalGuard",
]

LARGE_FILE_LINES = 40
"""A file this long (in lines) or longer is large: a whole write that drops most of it, or
its ending, is refused. Real whole-file rewrites of shorter files do both (the public
corpus has a 26- and a 37-line one); the truncated replies measured start at 106 lines."""
MAX_REMOVED_SHARE = 0.5
"""The share of a large file's lines a whole write may drop without saying it is a rewrite."""
MIN_DROPPED_TAIL = 0.1
"""A whole write that ends early and drops at least this share of the file's last lines
(and at least 5) is a truncated reply."""
MIN_KEPT_SHARE = 0.25
"""A cut-off reply still carries the file up to the cut: at least this share of its lines."""
_MIN_TAIL_LINES = 5

# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_SAYS_ELIDED = (
    r"(?i)\b(?:existing|unchanged|rest|same|omitted|elided|remaining|previous|other|before|"
    r"as is|as-is|skipped|truncated|more code|code here|etc)\b"
)
_RETRY = "resend the rest of the file, or send the change as a diff"


class _Shape(NamedTuple):
    old_lines: int
    kept: int
    dropped_tail: int
    """Old lines after the last line both texts share."""
    added_tail: int
    """New lines after that same last shared line."""


def _shape(old: str, new: str) -> _Shape:
    before = [line.rstrip() for line in old.splitlines()]
    after = [line.rstrip() for line in new.splitlines()]
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    kept = sum(b.size for b in blocks)
    if not blocks:
        return _Shape(len(before), 0, len(before), len(after))
    last = blocks[-1]
    return _Shape(
        len(before),
        kept,
        len(before) - (last.a + last.size),
        len(after) - (last.b + last.size),
    )


def _truncated(shape: _Shape) -> bool:
    """The new text follows the file, then stops: the ending is dropped, (almost) nothing
    stands in its place."""
    if shape.old_lines < LARGE_FILE_LINES or shape.kept < MIN_KEPT_SHARE * shape.old_lines:
        return False  # a text that shares little with the file is no cut-off copy of it
    dropped = shape.dropped_tail
    if dropped < max(_MIN_TAIL_LINES, MIN_DROPPED_TAIL * shape.old_lines):
        return False
    return shape.added_tail * 3 <= dropped


def _whole_writes(
    changes: Sequence[FileChange], ctx: GuardContext
) -> list[tuple[FileChange, str, str]]:
    if ctx.full_rewrite:
        return []
    found = []
    for change in changes:
        if not change.whole_content:
            continue
        old = text_of(change.old_content, change.old_text)
        new = text_of(change.new_content, change.new_text)
        if old is not None and new is not None:
            found.append((change, old, new))
    return found


class PlaceholderGuard(Guard):
    """Refuse writing a placeholder line the file does not already hold.

    What: any line of the new text shaped like an elision comment (`# ...`,
    `// ... existing code ...`, `/* ... */`, `<!-- ... -->`, `.. ...`, and in JSON,
    JS/TS and like languages a bare `...`, with or without words after the dots)
    that is not a line of the old text is refused, whatever format or entry point wrote it. In a new
    file only such lines that say code was left out ("existing code", "rest of
    the file", "unchanged") count: a bare `# ...` there loses nothing.
    Why: such a line stands for code the model left out; written to disk it
    replaces that code with a comment.
    Example: a whole file holding `    # ... rest of the class unchanged ...` is
    PLACEHOLDER_WRITTEN; the same line already in the file passes.
    """

    NAME = "placeholders"
    CODE = FailureCode.PLACEHOLDER_WRITTEN
    MESSAGE = "write would put a placeholder where code was left out"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per file whose new text gains placeholder lines."""
        failures: list[PatchFailure] = []
        for change in changes:
            new = text_of(change.new_content, change.new_text)
            if new is None:
                continue
            old = text_of(change.old_content, change.old_text)
            if old is not None and change.line_spans is not None and _plain_breaks(new):
                found = _added_placeholders(change, old)
            else:
                lines = new.splitlines()
                absent = placeholders_absent_from(lines, (old or "").splitlines(), change.path)
                found = [(i, lines[i]) for i in absent]
            if old is None:
                # A new file loses nothing to a bare `# ...`; one that says code was left
                # out ("existing code", "rest of the file") still stands for missing text.
                found = [(i, line) for i, line in found if re.search(_SAYS_ELIDED, line)]
            if not found:
                continue
            where = ", ".join(str(i + 1) for i, _ in found[:5])
            failures.append(
                self.failure(
                    change.path,
                    f"{change.path} line(s) {where}: {found[0][1].strip()[:80]!r}",
                    hint="Send it as a lazy snippet of the existing file (the placeholders "
                    "are then merged by the unchanged lines around them), or write the code "
                    "out in full.",
                )
            )
        return failures


_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
"""Characters `str.splitlines` ends a line at besides "\n" and "\r"."""


def _plain_breaks(text: str) -> bool:
    """Whether `str.splitlines` numbers `text`'s lines as a split on "\n" does."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    return not any(char in text for char in _OTHER_BREAKS)


def _added_placeholders(change: FileChange, old: str) -> list[tuple[int, str]]:
    """The placeholder-shaped lines the change adds that `old` does not hold (0-based
    new line numbers): unchanged lines are the old file's own, never looked at."""
    diff = change_opcodes(change)
    found = []
    for tag, _, _, j1, j2 in diff.opcodes:
        if tag == "equal":
            continue
        for number, line in enumerate(diff.new.lines(j1, j2), start=j1):
            if is_placeholder_shape(line, change.path) and not has_line(old, line.strip()):
                found.append((number, line))
    return found


class TruncatedWriteGuard(Guard):
    """Refuse a whole-file write that stops before the file's end.

    What: a whole-file write (not a diff) of a file of 40+ lines whose text
    keeps at least a quarter of the old lines, matching the file up to some
    line, then drops the rest (at least 10% of
    the file and 5 lines) with at most a third as many lines in its place.
    Lifted by `full_rewrite`.
    Why: a reply cut off by a length limit still closes cleanly often enough;
    written, it deletes everything after the cut.
    Example: the first 120 lines of a 300-line file, sent as "the complete
    file", is TRUNCATED_OUTPUT.
    """

    NAME = "truncated_write"
    CODE = FailureCode.TRUNCATED_OUTPUT
    MESSAGE = "whole-file write stops before the end of the file"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per whole write that drops the file's ending."""
        failures: list[PatchFailure] = []
        for change, old, new in _whole_writes(changes, ctx):
            shape = _shape(old, new)
            if not _truncated(shape):
                continue
            dropped = shape.dropped_tail
            failures.append(
                self.failure(
                    change.path,
                    f"the last {dropped} of {shape.old_lines} lines of {change.path} are "
                    "missing from the new text",
                    hint=f"The reply looks cut off: {_RETRY}. If the file really ends "
                    "there, say it is a full rewrite (full_rewrite / --full-rewrite).",
                )
            )
        return failures


class WholeFileRemovalGuard(Guard):
    """Refuse a whole-file write that removes most of a large file.

    What: a whole-file write (not a diff) to a file of 40+ lines that keeps
    fewer than half of its lines (one that stops early is `truncated_write`'s).
    Lifted by `full_rewrite`.
    Why: a quoted excerpt or a bare function under the file's path, taken as
    the whole file, silently deletes everything it did not show.
    Example: 20 lines sent for a 400-line file, with no placeholder and no
    unique place to go, is LARGE_REMOVAL.
    """

    NAME = "whole_file_removal"
    CODE = FailureCode.LARGE_REMOVAL
    MESSAGE = "whole-file write removes most of the file"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per whole write that drops most of a large file."""
        failures: list[PatchFailure] = []
        for change, old, new in _whole_writes(changes, ctx):
            shape = _shape(old, new)
            if shape.old_lines < LARGE_FILE_LINES or _truncated(shape):
                continue  # a cut-off reply is reported as TRUNCATED_OUTPUT
            removed = shape.old_lines - shape.kept
            if removed <= MAX_REMOVED_SHARE * shape.old_lines:
                continue
            failures.append(
                self.failure(
                    change.path,
                    f"{removed} of {shape.old_lines} lines of {change.path} would go",
                    hint="Send only the changed part (a diff, or a snippet with "
                    "'... existing code ...' placeholders); if the file is really being "
                    "rewritten, say so (full_rewrite / --full-rewrite).",
                )
            )
        return failures
