"""`undo_edit`: the server's memory of its own edits, and the guarded restore of one.

Each edit made through the server pushes, per file, what the file was before (its
text, or absent) and the sha256 it had after. `undo_edit` restores the latest one
only while the file still has that after-hash: anything else changed it since, and
restoring would destroy that change, so the undo is refused (STALE_FILE) instead.
The restore is one more attempt: staged, guarded, committed and recorded like any
write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.model.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.policy import Policy
from patchsmith.runtime.workspace import Workspace

if TYPE_CHECKING:
    from patchsmith.runtime.change import FileChange

__all__ = ["EditHistory", "Snapshot", "restore"]

MAX_UNDO_PER_FILE = 32
"""Older edits of a file are forgotten: undo goes back at most this many steps."""


@dataclass(frozen=True)
class Snapshot:
    """A file before one edit (`text` None: it did not exist) and its hash after it."""

    path: str
    """The workspace-relative path the edit named."""
    text: str | None
    before_sha256: str | None
    after_sha256: str
    attempt_id: str | None = None


@dataclass
class EditHistory:
    """Per file (by its canonical path), the snapshots of the edits made to it, oldest first."""

    stacks: dict[str, list[Snapshot]] = field(default_factory=dict)

    def push(self, key: str, snapshot: Snapshot) -> None:
        stack = self.stacks.setdefault(key, [])
        stack.append(snapshot)
        del stack[:-MAX_UNDO_PER_FILE]

    def last(self, key: str) -> Snapshot | None:
        stack = self.stacks.get(key)
        return stack[-1] if stack else None

    def pop(self, key: str) -> None:
        stack = self.stacks.get(key)
        if stack:
            stack.pop()

    def forget(self, key: str) -> None:
        """Drop every snapshot of the file: its history can no longer be trusted."""
        self.stacks.pop(key, None)


def current_sha256(workspace: Workspace, relative: str) -> str | PatchFailure | None:
    """The file's sha256, `None` when it does not exist, or why it cannot be read."""
    if not workspace.lexists(relative):
        return None
    raw = workspace.read_raw(relative)
    if isinstance(raw, PatchFailure):
        return raw
    return hashlib.sha256(raw.raw).hexdigest()


def restore(
    workspace: Workspace,
    snapshot: Snapshot,
    *,
    policy: Policy,
    record: bool | None,
) -> ApplyReport:
    """Put the file back as `snapshot` says it was, if it still has the snapshot's after-hash.

    Refused with nothing written (STALE_FILE) when the file changed since; a
    restore whose bytes would differ from the snapshot's (the file's encoding
    changed) is refused too. Guarded, committed and recorded as a `write` attempt.
    """
    from patchsmith.attempt._attempt import Attempt, not_ready, review_and_commit, should_record
    from patchsmith.attempt.direct import stage_write
    from patchsmith.guards import GuardContext
    from patchsmith.runtime.transaction import Transaction
    from patchsmith.store import AttemptKind

    relative = snapshot.path
    action = Action.DELETE if snapshot.text is None else Action.UPDATE
    attempt = Attempt(
        state_root=workspace.real_root,
        kind=AttemptKind.WRITE,
        record=should_record(record, policy),
        proposal_id=f"undo:{relative}",
        input_text=f"undo_edit {relative}"
        + (f" (attempt {snapshot.attempt_id})" if snapshot.attempt_id else ""),
    )
    blocked = not_ready(workspace, policy)
    if blocked:
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=blocked))
    with Transaction(workspace) as transaction:
        staged = stage_write(
            workspace,
            transaction,
            relative,
            snapshot.text,
            snapshot.after_sha256,
            reason="undo_edit",
            allow_delete=True,
        )
        if staged.failure is not None:
            failure = _stale_undo(staged.failure, snapshot)
            return attempt.finish(
                ApplyReport(ApplyStatus.REFUSED, (staged.file,), (failure,)),
                transaction.changes,
            )
        inexact = _inexact(transaction.changes, snapshot)
        if inexact is not None:
            return attempt.finish(ApplyReport(ApplyStatus.REFUSED, (staged.file,), (inexact,)))
        return review_and_commit(
            attempt,
            transaction,
            # The restored text was in the file before: not a rewrite that drops code.
            GuardContext(policy, root=workspace.root, full_rewrite=True),
            ApplyReport(ApplyStatus.APPLIED, (FileReport(relative, action, 1, 1),)),
            check=False,
            expected_sha256=dict([staged.expected]) if staged.expected else None,
        )


def _stale_undo(failure: PatchFailure, snapshot: Snapshot) -> PatchFailure:
    if failure.code is not FailureCode.STALE_FILE:
        return failure
    return replace(
        failure,
        message=f"{snapshot.path} changed since the edit being undone: expected sha256 "
        f"{snapshot.after_sha256}, actual {failure.current_sha256 or 'none (no file)'}",
        hint="undo_edit restores only a file still as the last edit left it; read the file "
        "(read_file) and edit it instead",
    )


def _inexact(changes: Sequence[FileChange], snapshot: Snapshot) -> PatchFailure | None:
    """Why the staged restore would not give back the snapshot's exact bytes, if it would not."""
    restored = [
        None if c.new_bytes is None else hashlib.sha256(c.new_bytes).hexdigest() for c in changes
    ]
    if restored == [snapshot.before_sha256]:
        return None
    return PatchFailure(
        FailureCode.NOT_SUPPORTED_YET,
        f"{snapshot.path} cannot be restored byte for byte (its encoding, byte-order mark or "
        "line endings changed since the edit)",
        file=snapshot.path,
        hint="read the file (read_file) and edit it back instead",
    )
