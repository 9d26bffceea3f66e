"""Lockfile guard: lockfiles change only through the package manager."""

from __future__ import annotations

from collections.abc import Sequence
from posixpath import basename

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext, touched_paths
from patchsmith.runtime.change import FileChange

__all__ = ["LOCKFILE_NAMES", "LockfileGuard", "is_lockfile"]

LOCKFILE_NAMES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lockb",
        "bun.lock",
        "deno.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "go.sum",
        "go.work.sum",
        "Gemfile.lock",
        "composer.lock",
        "flake.lock",
        "mix.lock",
        "pubspec.lock",
        "Package.resolved",
        "packages.lock.json",
        "gradle.lockfile",
        "conda-lock.yml",
    }
)
"""File names package managers write and verify; their content is a checksum ledger."""


def is_lockfile(path: str) -> bool:
    """True when the file name of `path` is a known lockfile."""
    return basename(path) in LOCKFILE_NAMES


class LockfileGuard(Guard):
    """Refuse a lockfile change that no command produced.

    What: `package-lock.json`, `yarn.lock`, `poetry.lock`, `uv.lock`,
    `Cargo.lock`, `go.sum` and the other names in `LOCKFILE_NAMES` may change
    only when the change comes from a command profile
    (`FileChange.generated_by_command`).
    Why: lockfiles hold resolved versions and checksums; a hand-typed entry
    is unverifiable and the package manager may reject or silently rewrite it.
    Example: a diff adding a line to `go.sum` is LOCKFILE_CHANGED; the same
    line written by `go mod tidy` through a command profile is not.
    """

    NAME = "lockfile"
    CODE = FailureCode.LOCKFILE_CHANGED
    MESSAGE = "lockfile changed by hand"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per hand-made change touching a lockfile."""
        return [
            self.failure(
                path,
                path,
                hint="change the manifest and let the package manager update the lockfile",
            )
            for change in changes
            if not change.generated_by_command
            for path in touched_paths(change)
            if is_lockfile(path)
        ]
