"""What the store records of one attempt: its kind and status, files, guard decisions, and
the whole `AttemptRecord` as written and read back. Plain values; no SQL here."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import sha256_of

if TYPE_CHECKING:
    from patchsmith.model.evidence import Evidence

__all__ = [
    "AttemptKind",
    "AttemptRecord",
    "AttemptStatus",
    "FileRecord",
    "GuardDecision",
    "utc_now",
]


class AttemptKind(StrEnum):
    """What produced an attempt."""

    APPLY = "apply"
    PROPOSE = "propose"
    WRITE = "write"
    RECIPE = "recipe"
    REVERT = "revert"


class AttemptStatus(StrEnum):
    """How an attempt ended. `CHECKED` is a dry run: everything but the write."""

    APPLIED = "applied"
    REFUSED = "refused"
    PARTIAL = "partial"
    ALREADY_APPLIED = "already_applied"
    CHECKED = "checked"


@dataclass(frozen=True)
class FileRecord:
    """One touched file: its action and its sha256 before and after (`None` when absent)."""

    path: str
    action: Action
    before_sha256: str | None
    after_sha256: str | None
    old_path: str | None = None
    """The source path of a MOVE; `None` otherwise."""

    @classmethod
    def from_change(cls, change: FileChange) -> FileRecord:
        """The record of a staged change, hashing its old and new bytes."""
        return cls(
            path=change.path,
            action=change.action,
            before_sha256=sha256_of(change.old_content),
            after_sha256=sha256_of(change.new_content),
            old_path=change.old_path if change.action is Action.MOVE else None,
        )

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output."""
        return {
            "path": self.path,
            "action": self.action.value,
            "old_path": self.old_path,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
        }


@dataclass(frozen=True)
class GuardDecision:
    """One guard's verdict on a staged change; `code` is what it refuses with."""

    name: str
    code: FailureCode
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output."""
        return {
            "name": self.name,
            "code": self.code.value,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True, kw_only=True)
class AttemptRecord:
    """Everything known about one attempt to change a workspace.

    Timestamps are UTC ISO 8601 strings. Diffs are git-format text (empty when
    there is none), replayable with `git apply`. An empty `id` asks
    `Store.record_attempt` to assign one.
    """

    id: str = ""
    run_id: str
    proposal_id: str
    attempt_no: int
    kind: AttemptKind
    status: AttemptStatus
    created_at: str
    finished_at: str
    base_commit: str | None = None
    input_text: str = ""
    staged_diff: str = ""
    applied_diff: str = ""
    files: tuple[FileRecord, ...] = field(default_factory=tuple)
    failures: tuple[PatchFailure, ...] = field(default_factory=tuple)
    decisions: tuple[GuardDecision, ...] = field(default_factory=tuple)
    proposal_json: str | None = None
    evidence: tuple[Evidence, ...] = field(default_factory=tuple)
    """Verification runs (profile, argv, exit code, duration, failures, output digest)."""
    dry_run: bool = False
    """A check (`--check`, a recipe's dry run): nothing was to be written, whatever its status.
    A run's checks are kept, but never judged as its attempts."""

    @property
    def is_check(self) -> bool:
        """A dry run: status `checked`, or a dry run that was refused."""
        return self.dry_run or self.status is AttemptStatus.CHECKED

    def summary_json(self) -> dict[str, object]:
        """The JSON object `log --json` prints: everything but the texts and decisions."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "proposal_id": self.proposal_id,
            "attempt_no": self.attempt_no,
            "kind": self.kind.value,
            "status": self.status.value,
            "dry_run": self.is_check,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "base_commit": self.base_commit,
            "files": [f.to_json() for f in self.files],
            "failures": [f.to_json() for f in self.failures],
        }

    def to_json(self) -> dict[str, object]:
        """The JSON object `show --json` prints: every field."""
        return {
            **self.summary_json(),
            "decisions": [d.to_json() for d in self.decisions],
            "evidence": [e.to_json() for e in self.evidence],
            "input_text": self.input_text,
            "staged_diff": self.staged_diff,
            "applied_diff": self.applied_diff,
            "proposal_json": self.proposal_json,
        }


def utc_now() -> str:
    """Now as records write it: UTC, ISO 8601, to the millisecond."""
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds")
