"""The verdicts a report carries: one guard's decision, one condition's result.

They are values the report holds and the store records; the guards and the conditions
that reach them live above (`patchsmith.guards`, `patchsmith.attempt.conditions`, which
re-export them). A condition's result is `model.condition`, imported on first use: a
change without conditions never makes one, and a check starts faster without it
(docs/decisions/0047).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure

if TYPE_CHECKING:
    from patchsmith.model.condition import ConditionResult, ConditionStatus

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


def __getattr__(name: str) -> object:
    """`ConditionResult` and `ConditionStatus`, from `model.condition` on first use."""
    if name in ("ConditionResult", "ConditionStatus"):
        from patchsmith.model import condition

        return getattr(condition, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
