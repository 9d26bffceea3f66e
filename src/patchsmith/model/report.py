"""`ApplyReport`: what `patchsmith.apply` did, in exactly the CLI's `--json` shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.model.feedback import DEFAULT_FEEDBACK_CHARS, render_feedback, settle_hint
from patchsmith.model.origin import TEXT_REPLY, CallOrigin

if TYPE_CHECKING:  # reports are built long after import time
    from patchsmith.model.condition import ConditionResult
    from patchsmith.model.evidence import Evidence
    from patchsmith.model.verdicts import GuardDecision

__all__ = [
    "ApplyReport",
    "ApplyStatus",
    "ApplyWarning",
    "FileReport",
    "HunkPlacement",
    "WarningCode",
]


class ApplyStatus(StrEnum):
    """`applied`: every edit located (and, unless checking, was written). `refused`:
    nothing was written. `partial`: only what located was written (`partial=True`).
    `already_applied`: the same proposal's result is already in the workspace."""

    APPLIED = "applied"
    REFUSED = "refused"
    PARTIAL = "partial"
    ALREADY_APPLIED = "already_applied"


class WarningCode(StrEnum):
    """Something the apply did that a careful caller may want to double-check."""

    ANCHOR_ELSEWHERE = "ANCHOR_ELSEWHERE"
    """The hunk's `@@` anchor or section header names a line that is not the nearest
    such line above the place the hunk landed."""
    TOLERANCE_USED = "TOLERANCE_USED"
    """The hunk only located once something beyond whitespace was tolerated."""


@dataclass(frozen=True)
class ApplyWarning:
    """A note about an edit that applied: where and why to look again."""

    code: WarningCode
    message: str
    file: str | None = None
    hunk: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code.value,
            "message": self.message,
            "file": self.file,
            "hunk": self.hunk,
        }


@dataclass(frozen=True)
class HunkPlacement:
    """Where one edit of a file landed and which tolerance located it.

    `line` is the 1-based first line of the matched region in the file as it was
    when the edit applied (after the file's earlier edits); `tolerance` is the
    engine's strategy name (`direct`, `whitespace_tolerant`, `punctuation_folded`,
    `indent_tolerant`, `partial_context`, `stale_context`, ...); `detail` says more
    when the tolerance had a size (how many context lines differed).
    """

    hunk: int
    line: int
    tolerance: str
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "hunk": self.hunk,
            "line": self.line,
            "tolerance": self.tolerance,
        }
        if self.detail:
            data["detail"] = self.detail
        return data


@dataclass(frozen=True)
class FileReport:
    """One file's outcome: how many of its edits located, and how many were written.

    `hunks_located` counts the edits (hunks, blocks, tool calls) that found their
    place; `hunks_applied` counts those in the change that was written (with
    `check`, that would be) and is 0 whenever the report is refused, because a
    refusal writes nothing. `written` says whether this file's change is on disk.
    `placements` says, per located edit, where it landed and by which tolerance.

    `mode` is the git mode an edit's mode line gave the file (`100755` or `100644`);
    `None` when the edit left the mode alone.

    `generated_by` names the command profile that produced the file;
    `nondeterministic` is true when that profile ran twice and the two runs left
    different content (the artifact cannot be reproduced byte for byte).
    """

    path: str
    action: Action
    hunks_located: int
    hunks_total: int
    new_path: str | None = None
    mode: str | None = None
    hunks_applied: int = 0
    written: bool = False
    placements: tuple[HunkPlacement, ...] = ()
    generated_by: str | None = None
    nondeterministic: bool = False

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "path": self.path,
            "action": self.action.value,
            "hunks_applied": self.hunks_applied,
            "hunks_total": self.hunks_total,
            "hunks_located": self.hunks_located,
            "written": self.written,
        }
        if self.new_path is not None:
            data["new_path"] = self.new_path
        if self.mode is not None:
            data["mode"] = self.mode
        if self.placements:
            data["placements"] = [p.to_json() for p in self.placements]
        if self.generated_by is not None:
            data["generated_by"] = self.generated_by
            data["nondeterministic"] = self.nondeterministic
        return data


@dataclass(frozen=True)
class ApplyReport:
    """The outcome of one apply: status, per-file counts, failures, and the diff.

    `diff` is the git-format diff that was written (or, with `check`, would be).
    `decisions` holds every guard's verdict (empty when staging failed before the
    guards ran); `preconditions`/`postconditions` are a proposal's checks, one by one;
    `notes` says what was ignored (a proposal's attempt to loosen the policy) or why
    nothing was done (an earlier attempt already applied it). `attempt_id` names the
    audit record, `None` when recording was off. `warnings` are notes about edits that
    did apply (an anchor that names another place, a tolerance beyond whitespace).
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
    warnings: tuple[ApplyWarning, ...] = ()
    origin: CallOrigin = TEXT_REPLY
    """The kind of call the change came in (a text reply, a tool call, a proposal): the
    hints and the feedback name the right next call for it."""

    @property
    def ok(self) -> bool:
        return self.status in (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED)

    def raise_for_status(self) -> ApplyReport:
        """Return self when everything applied; raise `PatchRefused` otherwise."""
        if not self.ok:
            raise PatchRefused(self.errors)
        return self

    @property
    def written(self) -> bool:
        """True when this apply changed files on disk (applied or partial, not a check)."""
        return self.status in (ApplyStatus.APPLIED, ApplyStatus.PARTIAL) and not self.check

    def settled(self) -> ApplyReport:
        """This report with its counts and hints made true to what was finally written.

        `hunks_applied` and `written` follow the final status (a refusal writes
        nothing), and each failed edit's hint says what a retry must resend: the
        whole reply after an all-or-nothing refusal, only the failed edits (against
        the files as they now are) after a partial write. Idempotent.
        """
        counted = self.status in (ApplyStatus.APPLIED, ApplyStatus.PARTIAL)
        files = tuple(
            replace(
                f,
                hunks_applied=f.hunks_located if counted else 0,
                written=counted and not self.check and f.hunks_located > 0,
            )
            for f in self.files
        )
        errors = tuple(
            settle_hint(e, self.status.value, self.check, files, self.errors, self.origin)
            for e in self.errors
        )
        return replace(self, files=files, errors=errors)

    def feedback(self, max_chars: int = DEFAULT_FEEDBACK_CHARS) -> str:
        """The bounded repair message for a model: what was written, what failed, what to resend.

        Leads with one sentence on what happened to the workspace, then each failure
        (code, file, edit, message, hint, the file's current sha256 and an excerpt of
        it), then the warnings. Never longer than `max_chars` (at least 200): excerpts
        shrink first, then the last failures are summarised by count.
        """
        return render_feedback(self, max_chars)

    def to_json(self) -> dict[str, object]:
        """`{"status", "files", "errors", "diff", "check", "decisions", "attempt_id", "warnings"}`.

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
            "warnings": [w.to_json() for w in self.warnings],
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
