"""Guards: rules checked on the staged changes before anything is written.

`GUARDS` is the registry, in the order guards run; `run_guards` runs every
enabled guard and records each decision, so the store can keep them all.

Layer (docs/architecture.md): owns the checks a change passes before it is written; may
import `policy`, `runtime`, `model`, `formats`, `engine` and `errors`, never `store` or a
workflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from patchsmith.errors import PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.guards.binary import BinaryContentGuard
from patchsmith.guards.budgets import (
    HunksOutsideExpectedGuard,
    MaxChangedLinesGuard,
    MaxFilesGuard,
)
from patchsmith.guards.content import EmptyWriteGuard, FileSizeGuard
from patchsmith.guards.dependencies import DependencyGuard
from patchsmith.guards.generated import GeneratedFileGuard
from patchsmith.guards.licence import LicenceHeaderGuard
from patchsmith.guards.lockfiles import LockfileGuard
from patchsmith.guards.metadata import HardLinkGuard, ReadOnlyGuard
from patchsmith.guards.omission import (
    PlaceholderGuard,
    TruncatedWriteGuard,
    WholeFileRemovalGuard,
)
from patchsmith.guards.ownership import OwnershipGuard
from patchsmith.guards.policyfiles import PolicyFileGuard
from patchsmith.guards.review import ReviewGuard
from patchsmith.guards.scope import ForbiddenPathGuard, WriteScopeGuard
from patchsmith.guards.secrets import SecretGuard
from patchsmith.guards.syntax import SyntaxGuard
from patchsmith.model.verdicts import DecisionStatus, GuardDecision
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import content_size

__all__ = [
    "GUARDS",
    "RECORD_DIR",
    "DecisionStatus",
    "Guard",
    "GuardContext",
    "GuardDecision",
    "GuardReport",
    "guard_named",
    "run_guards",
]

GUARDS: tuple[type[Guard], ...] = (
    WriteScopeGuard,
    ForbiddenPathGuard,
    PolicyFileGuard,
    GeneratedFileGuard,
    LockfileGuard,
    ReadOnlyGuard,
    HardLinkGuard,
    BinaryContentGuard,
    EmptyWriteGuard,
    PlaceholderGuard,
    TruncatedWriteGuard,
    WholeFileRemovalGuard,
    FileSizeGuard,
    MaxFilesGuard,
    MaxChangedLinesGuard,
    HunksOutsideExpectedGuard,
    SecretGuard,
    SyntaxGuard,
    DependencyGuard,
    LicenceHeaderGuard,
    OwnershipGuard,
    ReviewGuard,
)
"""Every guard, cheapest first; the policy's `[policy.guards]` table switches them by NAME."""

RECORD_DIR = ".patchsmith/"
"""patchsmith's own records; never a change under review, so no guard sees them."""


@dataclass(frozen=True)
class GuardReport:
    """Every guard's decision, in registry order."""

    decisions: tuple[GuardDecision, ...]

    @property
    def passed(self) -> bool:
        """True when no guard failed."""
        return all(d.status is not DecisionStatus.FAILED for d in self.decisions)

    @property
    def failures(self) -> tuple[PatchFailure, ...]:
        """The failures of every failed guard, in registry order."""
        return tuple(f for d in self.decisions for f in d.failures)

    @property
    def notes(self) -> tuple[str, ...]:
        """What guards let through but report, in registry order."""
        return tuple(n for d in self.decisions for n in d.notes)


def guard_named(name: str) -> type[Guard] | None:
    """The registered guard class whose NAME is `name`."""
    return next((guard for guard in GUARDS if guard.NAME == name), None)


def run_guards(changes: Sequence[FileChange], ctx: GuardContext) -> GuardReport:
    """Run every guard the policy enables on `changes`; a guard switched off is recorded as such.

    Changes under `.patchsmith/` are left out: they are patchsmith's records.
    """
    reviewed = [c for c in changes if not _is_record(c)]
    decisions = []
    failures: tuple[PatchFailure, ...]
    for guard_type in GUARDS:
        notes: tuple[str, ...] = ()
        if not ctx.policy.guard_enabled(guard_type.NAME):
            status, failures = DecisionStatus.DISABLED, ()
        else:
            guard = guard_type()
            failures = tuple(guard.check(reviewed, ctx))
            notes = tuple(guard.flagged)
            status = DecisionStatus.FAILED if failures else DecisionStatus.PASSED
            if guard_type is FileSizeGuard and failures:
                # Later guards diff, scan and parse; a file already refused for its size
                # is not given to them, so their cost stays bounded by the size limit.
                reviewed = [c for c in reviewed if not _too_large(c, ctx)]
        decisions.append(GuardDecision(guard_type.NAME, guard_type.CODE, status, failures, notes))
    return GuardReport(tuple(decisions))


def _too_large(change: FileChange, ctx: GuardContext) -> bool:
    new = change.new_content
    return new is not None and content_size(new) > ctx.policy.max_file_bytes


def _is_record(change: FileChange) -> bool:
    return any(
        path is not None and (path + "/").startswith(RECORD_DIR)
        for path in (change.path, change.old_path)
    )
