"""Ownership guard: a change may touch only paths its configured owner owns (CODEOWNERS)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext, touched_paths
from patchsmith.policy import OwnershipMode, matches
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import text_of

__all__ = ["CodeOwners", "OwnershipGuard", "parse_codeowners"]


class CodeOwners(NamedTuple):
    """The rules of one CODEOWNERS file, in file order (the last matching rule wins)."""

    rules: tuple[tuple[str, tuple[str, ...]], ...]

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of `path`: those of the last matching rule, `()` when none matches."""
        for pattern, owners in reversed(self.rules):
            if matches((pattern,), path):
                return owners
        return ()


def parse_codeowners(text: str) -> CodeOwners:
    """The rules of a CODEOWNERS file; comments, blank lines and `[Section]` headers are skipped."""
    rules: list[tuple[str, tuple[str, ...]]] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "[", "^[")):
            continue
        pattern, *owners = line.split()
        if pattern.startswith("\\#"):
            pattern = pattern[1:]
        try:
            matches((pattern,), "x")
        except ValueError:
            continue  # a pattern pathspec cannot compile would match nothing on GitHub either
        rules.append((pattern, tuple(owners)))
    return CodeOwners(tuple(rules))


class OwnershipGuard(Guard):
    """Refuse (or flag) a change to paths CODEOWNERS gives to owners other than the configured one.

    What: off until `[policy.ownership] owner` is set. The first of
    `CODEOWNERS`, `.github/CODEOWNERS`, `docs/CODEOWNERS` found (as the change
    finds it, before any edit to it) gives each path its owners: those of the last
    matching rule. A touched path with owners, none of whom is in `owner`, is
    refused with `mode = "refuse"` (default), or reported in the notes with
    `mode = "flag"`. Paths without owners pass.
    Why: code owned by another team needs that team's review; an automated
    change must not cross that line silently.
    Example: with `owner = ["@web"]` and the rule `/billing/ @payments`, a change
    to `billing/invoice.py` is OWNERSHIP_VIOLATION.
    """

    NAME = "ownership"
    CODE = FailureCode.OWNERSHIP_VIOLATION
    MESSAGE = "path owned by others"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure (or note, in flag mode) per touched path owned by others."""
        rules = ctx.policy.ownership
        if not rules.owner:
            return []
        owners = _codeowners(changes, ctx)
        if owners is None:
            return []
        mine = {owner.lower() for owner in rules.owner}
        failures: list[PatchFailure] = []
        for change in changes:
            for path in touched_paths(change):
                owned_by = owners.owners_of(path)
                if not owned_by or mine & {owner.lower() for owner in owned_by}:
                    continue
                detail = f"{path} is owned by {' '.join(owned_by)}"
                if rules.mode is OwnershipMode.FLAG:
                    self.flagged.append(f"{detail}; ask them to review")
                else:
                    failures.append(
                        self.failure(
                            path,
                            detail,
                            hint=f"this workspace acts for {' '.join(rules.owner)}; leave "
                            "paths owned by others out of the change",
                        )
                    )
        return failures


def _codeowners(changes: Sequence[FileChange], ctx: GuardContext) -> CodeOwners | None:
    staged = {change.path: change for change in changes if change.old_path == change.path}
    for candidate in ctx.policy.ownership.codeowners:
        change = staged.get(candidate)
        if change is not None:
            # the rules in force are those before this change, not the ones it writes
            text = text_of(change.old_content, change.old_text)
            if text is not None:
                return parse_codeowners(text)
        if ctx.root is None:
            continue
        path = Path(ctx.root) / candidate
        try:
            if path.is_file():
                return parse_codeowners(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return None
