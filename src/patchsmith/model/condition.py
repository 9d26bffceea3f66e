"""One condition's verdict: what a precondition or postcondition check found.

`model.verdicts` re-exports both names; the conditions that reach these verdicts live
above (`patchsmith.attempt.conditions`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the proposal's module loads pydantic; the guards must not
    from patchsmith.model.proposal import PostconditionType, PreconditionType

__all__ = ["ConditionResult", "ConditionStatus"]


class ConditionStatus(StrEnum):
    """The verdict on one condition."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_CHECKED = "not_checked"
    ERROR = "error"
    """A profile that decides it ran but established nothing (never a pass)."""


@dataclass(frozen=True)
class ConditionResult:
    """One condition's verdict and the evidence for it (hashes, counts, paths)."""

    type: PreconditionType | PostconditionType
    status: ConditionStatus
    evidence: str
    path: str | None = None

    def to_json(self) -> dict[str, object]:
        """The JSON object used in reports and the store."""
        return {
            "type": self.type.value,
            "status": self.status.value,
            "evidence": self.evidence,
            "path": self.path,
        }
