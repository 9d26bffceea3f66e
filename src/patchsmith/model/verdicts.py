"""The verdicts a report carries: one guard's decision, one condition's result.

They are values the report holds and the store records; the guards and the conditions
that reach them live above (`patchsmith.guards`, `patchsmith.attempt.conditions`, which
re-export them).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:  # the proposal's module loads pydantic; the guards must not
    from patchsmith.model.proposal import PostconditionType, PreconditionType

__all__ = ["ConditionResult", "ConditionStatus", "DecisionStatus", "GuardDecision"]


class DecisionStatus(StrEnum):
    """What one guard decided."""

    PASSED = "passed"
    FAILED = "failed"
    DISABLED = "disabled"


@dataclass(frozen=True)
class GuardDecision:
    """One guard's verdict on the whole change."""

    name: str
    code: FailureCode
    status: DecisionStatus
    failures: tuple[PatchFailure, ...] = ()
    notes: tuple[str, ...] = ()
    """What the guard let through but reports (an allowed dependency, a flagged owner)."""

    def to_json(self) -> dict[str, object]:
        """The JSON object the store and `--json` reports use."""
        data: dict[str, object] = {
            "name": self.name,
            "code": self.code.value,
            "status": self.status.value,
            "failures": [failure.to_json() for failure in self.failures],
        }
        if self.notes:
            data["notes"] = list(self.notes)
        return data


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
