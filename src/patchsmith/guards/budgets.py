"""Budget guards: how many files, lines and unexpected hunks one change may have."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext, touched_paths
from patchsmith.policy import matches
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import diff_stat

__all__ = ["HunksOutsideExpectedGuard", "MaxChangedLinesGuard", "MaxFilesGuard", "changed_lines"]


def changed_lines(changes: Sequence[FileChange]) -> int:
    """Added plus removed lines over all `changes`."""
    return sum(diff_stat(change).changed_lines for change in changes)


class MaxFilesGuard(Guard):
    """Refuse a change touching more files than `max_files`.

    What: counts the changed files (a move counts once) against the policy's
    `max_files`, lowered by a proposal's DIFF_MAX_FILES; no limit by default.
    Why: a change much wider than asked for is a model wandering off the task.
    Example: with `max_files = 2`, a patch touching three files is
    DIFF_BUDGET_EXCEEDED.
    """

    NAME = "max_files"
    CODE = FailureCode.DIFF_BUDGET_EXCEEDED
    MESSAGE = "too many files changed"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure when the file count is above the limit."""
        limit = ctx.policy.max_files
        if limit is None or len(changes) <= limit:
            return []
        return [self.failure(None, f"{len(changes)} files (limit {limit})")]


class MaxChangedLinesGuard(Guard):
    """Refuse a change with more added plus removed lines than `max_changed_lines`.

    What: sums the line diff of every file against the policy's
    `max_changed_lines`, lowered by a proposal's DIFF_MAX_LINES; no limit by default.
    Why: review effort grows with the diff; a budget keeps automated changes
    small enough to check.
    Example: with `max_changed_lines = 10`, replacing 6 lines (6 removed,
    6 added) is DIFF_BUDGET_EXCEEDED.
    """

    NAME = "max_changed_lines"
    CODE = FailureCode.DIFF_BUDGET_EXCEEDED
    MESSAGE = "too many lines changed"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure when the changed-line count is above the limit."""
        limit = ctx.policy.max_changed_lines
        if limit is None:
            return []
        total = changed_lines(changes)
        if total <= limit:
            return []
        return [self.failure(None, f"{total} lines added or removed (limit {limit})")]


class HunksOutsideExpectedGuard(Guard):
    """Refuse changes outside the proposal's `expected_files` (on by default).

    What: counts the hunks (changes more than six lines apart, as in a unified
    diff with three lines of context) in files matching none of
    `expected_files`, against `max_hunks_outside_expected` (0 when the policy
    leaves it unset). Passes when the proposal declares no expected files.
    The policy relaxes it with a higher `max_hunks_outside_expected`, or turns it
    off with `guards.hunks_outside_expected = false`.
    Why: a proposal says which files it means to change; edits elsewhere are
    the side effects reviewers miss.
    Example: with `expected_files = ["src/users.py"]`, creating
    `docs/unrelated.md` is DIFF_BUDGET_EXCEEDED.
    """

    NAME = "hunks_outside_expected"
    CODE = FailureCode.DIFF_BUDGET_EXCEEDED
    MESSAGE = "too many hunks outside the expected files"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure listing the unexpected files when their hunks exceed the limit."""
        limit = ctx.policy.max_hunks_outside_expected
        if limit is None:
            limit = 0  # declared intent is a boundary unless the policy says otherwise
        if not ctx.expected_files:
            return []
        outside = {
            change.path: diff_stat(change).hunks
            for change in changes
            if not any(matches(ctx.expected_files, path) for path in touched_paths(change))
        }
        total = sum(outside.values())
        if total <= limit:
            return []
        return [
            self.failure(
                None,
                f"{', '.join(sorted(outside))}: not among the proposal's expected_files "
                f"({total} hunk(s) there; the policy allows {limit})",
                hint="change only the expected files ("
                + ", ".join(ctx.expected_files)
                + "), or list the other files in expected_files",
            )
        ]
