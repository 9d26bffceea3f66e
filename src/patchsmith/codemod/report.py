"""`RecipeReport`: what a recipe run saw, changed, skipped and refused, as data, text and JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from patchsmith.errors import PatchFailure
from patchsmith.model.evidence import Evidence

if TYPE_CHECKING:
    from patchsmith.codemod.checks import RecipeCheck
    from patchsmith.codemod.matches import SeenMatch, SyntaxFallback

__all__ = ["RecipeFile", "RecipeReport", "RecipeStatus", "SkippedFile"]


class RecipeStatus(StrEnum):
    """`dry_run`: the changes were computed and checked, nothing written. `applied`: written.
    `no_change`: nothing in scope needed changing. `refused`: nothing written; `errors` say why."""

    DRY_RUN = "dry_run"
    APPLIED = "applied"
    NO_CHANGE = "no_change"
    REFUSED = "refused"


@dataclass(frozen=True)
class SkippedFile:
    """A file in scope the recipe did not change, and why."""

    path: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class RecipeFile:
    """One changed file: how many matches changed it, and its diff."""

    path: str
    matches: int
    diff: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "matches": self.matches, "diff": self.diff}


@dataclass(frozen=True)
class RecipeReport:
    """The outcome of one recipe run.

    `files_scanned` counts the files in scope, `files_matched` those where an
    operation matched, `files_changed` those whose text changed (written unless
    `dry_run`). `unchanged_matches` are matches the recipe saw and left alone, with
    the reason (a receiver of another type, a rule without `fix`...).
    """

    recipe_id: str
    status: RecipeStatus
    dry_run: bool
    files_scanned: int = 0
    files_matched: int = 0
    files: tuple[RecipeFile, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    unchanged_matches: tuple[SeenMatch, ...] = ()
    checks: tuple[RecipeCheck, ...] = ()
    errors: tuple[PatchFailure, ...] = ()
    seconds: float = 0.0
    attempt_id: str | None = None
    idempotent: bool | None = None
    """Whether re-running the recipe on its own output changed nothing (`None`: not checked)."""
    evidence: tuple[Evidence, ...] = ()
    """Verification profiles run for `compiles` / `tests_pass` (also in the audit record)."""
    matched_by_syntax: tuple[SyntaxFallback, ...] = ()
    """Files a type-aware operation matched by syntax, because their types could not be
    resolved (no JDK, a missing dependency), each with the reason."""

    @property
    def files_changed(self) -> int:
        return len(self.files)

    @property
    def ok(self) -> bool:
        return self.status is not RecipeStatus.REFUSED

    @property
    def diff(self) -> str:
        """Every changed file's diff, in path order."""
        return "".join(f.diff for f in self.files)

    def to_json(self) -> dict[str, object]:
        """The `--json` object of `patchsmith recipe run`."""
        return {
            "recipe_id": self.recipe_id,
            "status": self.status.value,
            "dry_run": self.dry_run,
            "files_scanned": self.files_scanned,
            "files_matched": self.files_matched,
            "files_changed": self.files_changed,
            "files": [f.to_json() for f in self.files],
            "skipped": [s.to_json() for s in self.skipped],
            "unchanged_matches": [m.to_json() for m in self.unchanged_matches],
            "matched_by_syntax": [f.to_json() for f in self.matched_by_syntax],
            "checks": [c.to_json() for c in self.checks],
            "idempotent": self.idempotent,
            "verification": [e.to_json(output=False) for e in self.evidence],
            "errors": [e.to_json() for e in self.errors],
            "seconds": round(self.seconds, 3),
            "attempt_id": self.attempt_id,
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=True)

    def to_text(self, *, diffs: bool = True) -> str:
        """The report for people: counts, then skips, matches left alone, checks, errors, diffs."""
        verb = {
            RecipeStatus.DRY_RUN: "would change",
            RecipeStatus.APPLIED: "changed",
            RecipeStatus.NO_CHANGE: "changed",
            RecipeStatus.REFUSED: "refused; would have changed",
        }[self.status]
        lines = [
            f"recipe {self.recipe_id}: {self.status.value} — scanned {self.files_scanned} "
            f"file(s), matched {self.files_matched}, {verb} {self.files_changed} "
            f"in {self.seconds:.2f}s"
        ]
        if self.attempt_id:
            lines.append(f"  recorded as {self.attempt_id}")
        if self.idempotent is not None:
            lines.append(f"  idempotent: {'yes' if self.idempotent else 'NO'}")
        for changed in self.files:
            lines.append(f"  changed  {changed.path} ({changed.matches} match(es))")
        for skipped in self.skipped:
            lines.append(f"  skipped  {skipped.path}: {skipped.reason}")
        for seen in self.unchanged_matches:
            lines.append(f"  left     {seen.path}:{seen.line}: {seen.text!r}: {seen.reason}")
        for fallback in self.matched_by_syntax:
            lines.append(
                f"  syntax   {fallback.path}: matched by syntax, not types: {fallback.reason}"
            )
        for check in self.checks:
            lines.append(f"  check    {check.condition}: {check.label} ({check.evidence})")
        for error in self.errors:
            where = f"{error.file}: " if error.file else ""
            lines.append(f"  error    {error.code.value}: {where}{error.message}")
            if error.hint:
                lines.append(f"           hint: {error.hint}")
        text = "\n".join(lines) + "\n"
        if diffs and self.diff:
            text += "\n" + self.diff
        return text
