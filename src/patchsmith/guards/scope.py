"""Scope guards: writes stay inside the write scope and away from forbidden paths."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext, touched_paths
from patchsmith.policy import matches
from patchsmith.runtime.change import FileChange

__all__ = ["ForbiddenPathGuard", "WriteScopeGuard"]


class WriteScopeGuard(Guard):
    """Refuse a change to a path outside the policy's write scope.

    What: every touched path (both ends of a move) must match `include` (when
    set) and must not match `exclude`; patterns are gitignore-style.
    Why: the workspace owner decides where an automated edit may write; the
    model's own idea of relevance does not widen that.
    Example: with `include = ["src/**"]`, a change to `setup.cfg` is OUT_OF_SCOPE.
    """

    NAME = "write_scope"
    CODE = FailureCode.OUT_OF_SCOPE
    MESSAGE = "path is outside the write scope"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per touched path outside include/exclude."""
        policy = ctx.policy
        return [
            self.failure(path, path, hint=_scope_hint(policy.include, policy.exclude))
            for change in changes
            for path in touched_paths(change)
            if not policy.in_scope(path)
        ]


def _scope_hint(include: tuple[str, ...], exclude: tuple[str, ...]) -> str:
    parts = []
    if include:
        parts.append("include " + ", ".join(include))
    if exclude:
        parts.append("exclude " + ", ".join(exclude))
    return "the write scope is: " + "; ".join(parts)


class ForbiddenPathGuard(Guard):
    """Refuse a change to a forbidden path.

    What: no touched path may match the policy's `forbidden` patterns or the
    proposal's `forbidden_files`; this holds whatever the write scope says.
    Why: some files (credentials, CI config, vendored code) must never be
    changed by an automated edit, and a proposal can add to that list.
    Example: with `forbidden_files = ["secrets/**"]`, creating
    `secrets/prod.env` is FORBIDDEN_PATH.
    """

    NAME = "forbidden_paths"
    CODE = FailureCode.FORBIDDEN_PATH
    MESSAGE = "path is forbidden"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per touched path matching a forbidden pattern."""
        patterns = (*ctx.policy.forbidden, *ctx.forbidden_files)
        if not patterns:
            return []
        return [
            self.failure(path, path, hint="forbidden: " + ", ".join(patterns))
            for change in changes
            for path in touched_paths(change)
            if matches(patterns, path)
        ]
