"""What every guard shares: the context it runs in and the small class it is."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.policy import Policy
from patchsmith.runtime.change import FileChange

if TYPE_CHECKING:
    from patchsmith.model.proposal import PatchProposal, TargetRegion

__all__ = ["Guard", "GuardContext", "touched_paths"]


@dataclass(frozen=True)
class GuardContext:
    """What a guard may consult besides the changes: the policy and the proposal's boundaries.

    `root` is the workspace root, `None` when guards run on changes held only in
    memory; only the ownership guard reads from it (the CODEOWNERS file).
    """

    policy: Policy
    expected_files: tuple[str, ...] = ()
    forbidden_files: tuple[str, ...] = ()
    root: Path | None = None
    full_rewrite: bool = False
    """The caller said whole-file writes are full rewrites: the omission guards that
    look for cut-off or mostly-removed files let them through."""
    target_regions: tuple[TargetRegion, ...] = ()
    """Where the proposal says its change lands (the review guard)."""
    allowed_dependencies: tuple[str, ...] = ()
    """Dependency names the proposal may change (the dependency guard)."""
    from_proposal: bool = False
    """True when the change comes with a proposal, which can declare its intent."""

    @classmethod
    def for_proposal(
        cls, policy: Policy, proposal: PatchProposal, root: Path | None = None
    ) -> GuardContext:
        """The context for `proposal`: the policy narrowed by it, and its file patterns."""
        return cls(
            policy=policy.tightened_by(proposal),
            expected_files=proposal.expected_files,
            forbidden_files=proposal.forbidden_files,
            root=root,
            full_rewrite=proposal.full_rewrite,
            target_regions=proposal.target_regions,
            allowed_dependencies=proposal.allowed_dependency_changes,
            from_proposal=True,
        )


class Guard(ABC):
    """One rule checked on the staged changes before anything is written.

    Subclasses set `NAME` (the rule, also the `[policy.guards]` switch), `CODE`
    and a one-line `MESSAGE`, and implement `check`, which never raises for any
    input and returns one failure per violation (empty when the rule holds). What a
    rule lets through but wants reported goes into `flagged`.
    """

    NAME: ClassVar[str]
    CODE: ClassVar[FailureCode]
    MESSAGE: ClassVar[str]

    def __init__(self) -> None:
        self.flagged: list[str] = []
        """What `check` noticed and let through (reported, not refused)."""

    @abstractmethod
    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """The violations of this rule in `changes`."""

    def failure(self, file: str | None, detail: str, *, hint: str | None = None) -> PatchFailure:
        """A failure for this rule: `MESSAGE`, then what was found."""
        return PatchFailure(
            code=self.CODE,
            message=f"{self.MESSAGE}: {detail}",
            file=file,
            hint=hint,
            rule=self.NAME,
        )


def touched_paths(change: FileChange) -> tuple[str, ...]:
    """Every path a change touches: its path, and for a move also the old one."""
    if change.old_path is not None and change.old_path != change.path:
        return (change.old_path, change.path)
    return (change.path,)
