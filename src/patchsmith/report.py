"""`ApplyReport`: what `patchsmith.apply` did, in exactly the CLI's `--json` shape."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import PatchFailure, PatchRefused
from patchsmith.evidence import Evidence
from patchsmith.formats.script import Action

if TYPE_CHECKING:  # the guards pull in pydantic; reports are built long after import time
    from patchsmith.conditions import ConditionResult
    from patchsmith.guards import GuardDecision

__all__ = ["ApplyReport", "ApplyStatus", "FileReport"]


class ApplyStatus(StrEnum):
    """`applied`: every edit located (and, unless checking, was written). `refused`:
    nothing was written. `partial`: only what located was written (`partial=True`).
    `already_applied`: the same proposal's result is already in the workspace."""

    APPLIED = "applied"
    REFUSED = "refused"
    PARTIAL = "partial"
    ALREADY_APPLIED = "already_applied"


@dataclass(frozen=True)
class FileReport:
    """One file's outcome: how many of its hunks (or blocks) applied.

    `mode` is the git mode an edit's mode line gave the file (`100755` or `100644`);
    `None` when the edit left the mode alone.
    """

    path: str
    action: Action
    hunks_applied: int
    hunks_total: int
    new_path: str | None = None
    mode: str | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "path": self.path,
            "action": self.action.value,
            "hunks_applied": self.hunks_applied,
            "hunks_total": self.hunks_total,
        }
        if self.new_path is not None:
            data["new_path"] = self.new_path
        if self.mode is not None:
            data["mode"] = self.mode
        return data


@dataclass(frozen=True)
class ApplyReport:
    """The outcome of one apply: status, per-file counts, failures, and the diff.

    `diff` is the git-format diff that was written (or, with `check`, would be).
    `decisions` holds every guard's verdict (empty when staging failed before the
    guards ran); `preconditions`/`postconditions` are a proposal's checks, one by one;
    `notes` says what was ignored (a proposal's attempt to loosen the policy) or why
    nothing was done (an earlier attempt already applied it). `attempt_id` names the
    audit record, `None` when recording was off.
    """

    status: ApplyStatus
    files: tuple[FileReport, ...] = ()
    errors: tuple[PatchFailure, ...] = ()
    diff: str = ""
    check: bool = False
    attempt_id: str | None = None
    decisions: tuple[GuardDecision, ...] = ()
    preconditions: tuple[ConditionResult, ...] = ()
    postconditions: tuple[ConditionResult, ...] = ()
    notes: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    """A proposal's verification runs (its `verification_plan`), base and changed."""

    @property
    def ok(self) -> bool:
        return self.status in (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED)

    def raise_for_status(self) -> ApplyReport:
        """Return self when everything applied; raise `PatchRefused` otherwise."""
        if not self.ok:
            raise PatchRefused(self.errors)
        return self

    def to_json(self) -> dict[str, object]:
        """`{"status", "files", "errors", "diff", "check", "decisions", "attempt_id"}`.

        A proposal's `preconditions`, `postconditions`, `notes` and `verification`
        (its evidence, without the tools' output) follow when non-empty.
        """
        data: dict[str, object] = {
            "status": self.status.value,
            "files": [f.to_json() for f in self.files],
            "errors": [e.to_json() for e in self.errors],
            "diff": self.diff,
            "check": self.check,
            "decisions": [d.to_json() for d in self.decisions],
            "attempt_id": self.attempt_id,
        }
        if self.preconditions:
            data["preconditions"] = [c.to_json() for c in self.preconditions]
        if self.postconditions:
            data["postconditions"] = [c.to_json() for c in self.postconditions]
        if self.notes:
            data["notes"] = list(self.notes)
        if self.evidence:
            data["verification"] = [e.to_json(output=False) for e in self.evidence]
        return data

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)
