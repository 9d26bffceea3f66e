"""Licence-header guard: a file with a licence header keeps it; new files get one if required."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.policy import matches
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import head_lines, text_of

__all__ = ["LicenceHeaderGuard", "has_licence_header"]


def has_licence_header(text: str, marker: str, header_lines: int) -> bool:
    """True when `marker` occurs in the first `header_lines` lines of `text`."""
    if not text:
        return False
    # Only the head is split: a big file is not cut into lines for its first few.
    head = head_lines(text, header_lines)
    return any(marker in line for line in head)


class LicenceHeaderGuard(Guard):
    """Refuse dropping a licence header, and a new file without one where the policy requires it.

    What: a header is `[policy.licence] marker` (default `SPDX-License-Identifier`)
    within the first `header_lines` lines (default 20). An update or move of a
    file whose old text has one must keep it; a created file matching
    `require_on_new_files` must have one. Deletions and binary files pass.
    Why: licence headers are legal notices; a model rewriting a file from the
    middle often drops its first lines, and new files in a project that
    requires headers need one before review.
    Example: an update of `src/app.py` whose old first line is
    `# SPDX-License-Identifier: MIT` and whose new text starts at the imports is
    LICENCE_HEADER_MISSING.
    """

    NAME = "licence_header"
    CODE = FailureCode.LICENCE_HEADER_MISSING
    MESSAGE = "licence header missing"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per file that lost its header or was created without a required one."""
        rules = ctx.policy.licence
        failures: list[PatchFailure] = []
        for change in changes:
            if change.action is Action.DELETE:
                continue
            new = text_of(change.new_content, change.new_text)
            if new is None or has_licence_header(new, rules.marker, rules.header_lines):
                continue
            old = text_of(change.old_content, change.old_text) if change.old_path else None
            if old is not None and has_licence_header(old, rules.marker, rules.header_lines):
                failures.append(
                    self.failure(
                        change.path,
                        f"{change.path} had a header ({rules.marker!r} in its first "
                        f"{rules.header_lines} lines) and the change removes it",
                        hint="keep the file's first lines, licence header included, as they are",
                    )
                )
            elif change.action is Action.CREATE and matches(
                rules.require_on_new_files, change.path
            ):
                failures.append(
                    self.failure(
                        change.path,
                        f"new file {change.path} needs {rules.marker!r} in its first "
                        f"{rules.header_lines} lines",
                        hint="start the new file with the project's licence header",
                    )
                )
        return failures
