"""What one repository of a fleet run came to: a status, the diff, the report, the evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

from patchsmith.errors import FailureCode, PatchFailure

__all__ = ["FleetStatus", "RepoResult", "failure_from_json"]


class FleetStatus(StrEnum):
    """`changed`: the change applied cleanly in the checkout (its diff is the result).
    `no_op`: nothing needed changing. `refused`: a guard, precondition or postcondition
    refused it, nothing written. `verification_failed`: verification found failures the
    change introduced. `verification_error`: verification ran but established nothing
    (the tool is missing, pytest exit 4/5, a timeout, a crash): the change is not
    counted as changed. `skipped`: verification was skipped because the repository
    defines no profile the run asked for (`--verify X`, a recipe's `compiles: X`); the
    reason is in `errors`, and the change is not counted as changed (nothing proved it).
    `error`: the repository could not be checked out, timed out, or its worker failed."""

    CHANGED = "changed"
    NO_OP = "no_op"
    REFUSED = "refused"
    VERIFICATION_FAILED = "verification_failed"
    VERIFICATION_ERROR = "verification_error"
    SKIPPED = "skipped"
    ERROR = "error"


def failure_from_json(data: dict[str, object]) -> PatchFailure:
    """The inverse of `PatchFailure.to_json()` (unknown keys ignored)."""
    candidates = data.get("candidates") or ()
    similarity = data.get("similarity")
    hunk = data.get("hunk")

    def text(key: str) -> str | None:
        value = data.get(key)
        return None if value is None else str(value)

    return PatchFailure(
        FailureCode(str(data["code"])),
        str(data.get("message", "")),
        file=text("file"),
        hunk=int(hunk) if isinstance(hunk, int) else None,
        hint=text("hint"),
        excerpt=text("excerpt"),
        current_sha256=text("current_sha256"),
        rule=text("rule"),
        similarity=float(similarity) if isinstance(similarity, int | float) else None,
        candidates=tuple(int(c) for c in candidates if isinstance(c, int))
        if isinstance(candidates, list | tuple)
        else (),
    )


@dataclass(frozen=True)
class RepoResult:
    """One repository's outcome.

    `commit` is the commit the change ran on (`None` when the checkout failed); `diff`
    the git diff the change made; `files` the changed paths; `report` the recipe's or
    proposal's own JSON report, and `verification` the verification report when
    profiles ran; `seconds` the wall time of the whole unit, checkout included.
    """

    key: str
    status: FleetStatus
    commit: str | None = None
    diff: str = ""
    files: tuple[str, ...] = ()
    errors: tuple[PatchFailure, ...] = ()
    report: dict[str, object] = field(default_factory=dict)
    verification: dict[str, object] | None = None
    seconds: float = 0.0

    def outcome(self) -> dict[str, object]:
        """What the change did, without timings: equal on every executor for the same unit."""
        return {
            "key": self.key,
            "status": self.status.value,
            "commit": self.commit,
            "diff": self.diff,
            "files": list(self.files),
            "errors": [[e.code.value, e.file, e.message] for e in self.errors],
        }

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "status": self.status.value,
            "commit": self.commit,
            "diff": self.diff,
            "files": list(self.files),
            "errors": [e.to_json() for e in self.errors],
            "report": self.report,
            "verification": self.verification,
            "seconds": round(self.seconds, 3),
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=True)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> RepoResult:
        files = data.get("files") or []
        errors = data.get("errors") or []
        report = data.get("report") or {}
        verification = data.get("verification")
        seconds = data.get("seconds", 0.0)
        commit = data.get("commit")
        assert isinstance(files, list) and isinstance(errors, list) and isinstance(report, dict)
        return cls(
            key=str(data["key"]),
            status=FleetStatus(str(data["status"])),
            commit=str(commit) if commit is not None else None,
            diff=str(data.get("diff") or ""),
            files=tuple(str(f) for f in files),
            errors=tuple(failure_from_json(e) for e in errors if isinstance(e, dict)),
            report=report,
            verification=verification if isinstance(verification, dict) else None,
            seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
        )

    @classmethod
    def failed(
        cls, key: str, failure: PatchFailure, *, commit: str | None = None, seconds: float = 0.0
    ) -> RepoResult:
        """An `error` result carrying one failure."""
        return cls(key, FleetStatus.ERROR, commit=commit, errors=(failure,), seconds=seconds)
