"""`VerifyReport`: per profile, what the change broke, fixed and left as it was."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from patchsmith.engine.excerpt import numbered_excerpt
from patchsmith.errors import PatchFailure
from patchsmith.model.evidence import Evidence, RunSide, ToolFailure, Verdict
from patchsmith.verify.profiles import EvidenceLevel, ProfileKind

__all__ = ["DEFAULT_TOP", "ProfileOutcome", "VerifyReport", "with_excerpts"]

DEFAULT_TOP = 10
"""How many introduced failures the model-facing summary shows, per profile."""

MAX_MESSAGE_CHARS = 600
"""A failure's message is cut to this in the model-facing summary."""


@dataclass(frozen=True)
class ProfileOutcome:
    """One profile's verdict: its runs and the failures sorted against the base.

    `verdict` is `passed` only when a tool ran to a result on every side and the change
    broke nothing; `error` when some run established nothing (then `fixed` is empty: a
    failure that vanished from a run that did not finish was not fixed). `reason` says
    why. Recipe checks and other callers read `verdict` (or `passed`).
    """

    profile: str
    kind: ProfileKind
    runs: tuple[Evidence, ...]
    introduced: tuple[ToolFailure, ...]
    fixed: tuple[ToolFailure, ...]
    preexisting: tuple[ToolFailure, ...]
    base_available: bool
    verdict: Verdict
    """What the profile established (a bool from older callers reads as passed/failed)."""
    targeted_only: bool = False
    """Only the targeted tests ran (the full profile was not asked for)."""
    reason: str = ""
    """Why the verdict (for `error`: which run established nothing, and why)."""

    def __post_init__(self) -> None:
        verdict: object = self.verdict
        if isinstance(verdict, bool):
            verdict = Verdict.PASSED if verdict else Verdict.FAILED
        object.__setattr__(self, "verdict", Verdict(str(verdict)))

    @property
    def passed(self) -> bool:
        """True only when the verdict is `passed`."""
        return self.verdict is Verdict.PASSED

    @property
    def level(self) -> EvidenceLevel | None:
        """The pyramid level this outcome proves when it passed (`None`: no level)."""
        if not self.passed:
            return None
        if self.kind in (ProfileKind.BUILD, ProfileKind.TYPECHECK):
            return EvidenceLevel.COMPILE
        if self.kind is ProfileKind.TEST:
            return EvidenceLevel.TARGETED_TESTS if self.targeted_only else EvidenceLevel.FULL_TESTS
        return EvidenceLevel.SYNTAX

    def to_json(self, *, top: int = DEFAULT_TOP, output: bool = False) -> dict[str, object]:
        """A bounded JSON object: the first `top` introduced failures, counts of the rest."""
        shown = self.introduced[:top]
        return {
            "profile": self.profile,
            "kind": self.kind.value,
            "passed": self.passed,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "base_available": self.base_available,
            "targeted_only": self.targeted_only,
            "introduced": [_bounded(f).to_json() for f in shown],
            "introduced_total": len(self.introduced),
            "fixed_total": len(self.fixed),
            "preexisting_total": len(self.preexisting),
            "runs": [r.to_json(output=output) | _counts_only(r, output) for r in self.runs],
        }


def _counts_only(run: Evidence, output: bool) -> dict[str, object]:
    if output:
        return {}
    return {
        "failures": len(run.failures),
        "introduced": len(run.introduced),
        "fixed": len(run.fixed),
    }


def _bounded(failure: ToolFailure) -> ToolFailure:
    if len(failure.message) <= MAX_MESSAGE_CHARS:
        return failure
    return replace(failure, message=failure.message[:MAX_MESSAGE_CHARS] + " [...]")


@dataclass(frozen=True)
class VerifyReport:
    """The result of verifying one tree with some profiles."""

    outcomes: tuple[ProfileOutcome, ...] = ()
    errors: tuple[PatchFailure, ...] = ()
    """Why verification could not run as asked (an unknown profile, a bad config)."""

    @property
    def status(self) -> Verdict:
        """`error` when verification could not run as asked, nothing ran or a profile
        established nothing, else `failed` when a profile found something broken, else `passed`."""
        if not self.outcomes or self.errors:
            return Verdict.ERROR  # nothing ran, or not what was asked
        if any(o.verdict is Verdict.ERROR for o in self.outcomes):
            return Verdict.ERROR
        if any(o.verdict is Verdict.FAILED for o in self.outcomes):
            return Verdict.FAILED
        return Verdict.PASSED

    @property
    def passed(self) -> bool:
        """True only when every profile ran to a result and none found something broken."""
        return self.status is Verdict.PASSED

    @property
    def level(self) -> EvidenceLevel:
        """The highest pyramid level the passed profiles prove (SYNTAX at least)."""
        levels = [o.level for o in self.outcomes if o.level is not None]
        return max([EvidenceLevel.SYNTAX, *levels])

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Every run of every profile, in order: what the store keeps."""
        return tuple(run for outcome in self.outcomes for run in outcome.runs)

    def to_json(self, *, top: int = DEFAULT_TOP, output: bool = False) -> dict[str, object]:
        """`{"status", "level", "profiles": [...], "errors": [...]}`, bounded by `top`."""
        return {
            "status": self.status.value,
            "level": self.level.label,
            "profiles": [o.to_json(top=top, output=output) for o in self.outcomes],
            "errors": [e.to_json() for e in self.errors],
        }

    def summary(self, *, top: int = DEFAULT_TOP) -> str:
        """Plain text for a person or a model: per profile, its verdict and what it broke."""
        lines: list[str] = []
        for outcome in self.outcomes:
            verdict = _SHOWN[outcome.verdict]
            changed = next((r for r in reversed(outcome.runs) if r.side is not RunSide.BASE), None)
            took = f" in {changed.duration_s:.2f} s" if changed is not None else ""
            head = f"{outcome.profile} ({outcome.kind.value}): {verdict}{took} — "
            if outcome.verdict is Verdict.ERROR:
                # counts from a run that established nothing would only mislead
                lines.append(head + f"could not establish: {outcome.reason}")
                continue
            lines.append(
                head + f"{len(outcome.introduced)} introduced, {len(outcome.fixed)} fixed, "
                f"{len(outcome.preexisting)} pre-existing"
                + ("" if outcome.base_available else " (no base run: every failure counts)")
            )
            for failure in outcome.introduced[:top]:
                lines.extend("  " + line for line in _describe(_bounded(failure)).splitlines())
            hidden = len(outcome.introduced) - top
            if hidden > 0:
                lines.append(f"  ... and {hidden} more introduced failures")
        for error in self.errors:
            lines.append(f"error {error.code.value}: {error.message}")
        return "\n".join(lines)


_SHOWN = {Verdict.PASSED: "passed", Verdict.FAILED: "FAILED", Verdict.ERROR: "ERROR"}


def _describe(failure: ToolFailure) -> str:
    where = failure.file or ""
    if where and failure.line is not None:
        where += f":{failure.line}" + (f":{failure.col}" if failure.col is not None else "")
    label = " ".join(p for p in (failure.code, failure.test_id) if p)
    head = " ".join(p for p in (where, f"[{label}]" if label else "", failure.message) if p)
    if failure.excerpt:
        return head + "\n" + failure.excerpt
    return head


def with_excerpts(
    failures: tuple[ToolFailure, ...], tree: Path, *, top: int
) -> tuple[ToolFailure, ...]:
    """The first `top` failures with the source lines around them (read from `tree`)."""
    out: list[ToolFailure] = []
    for index, failure in enumerate(failures):
        if index < top and failure.file and failure.line is not None and failure.excerpt is None:
            excerpt = _excerpt(tree, failure.file, failure.line)
            if excerpt is not None:
                failure = replace(failure, excerpt=excerpt)
        out.append(failure)
    return tuple(out)


def _excerpt(tree: Path, file: str, line: int) -> str | None:
    path = (tree / file).resolve()
    try:
        if not path.is_relative_to(tree.resolve()) or path.stat().st_size > 5_000_000:
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if not lines:
        return None
    index = min(max(line - 1, 0), len(lines) - 1)
    text, _, _ = numbered_excerpt(lines, index, index + 1, margin=3)
    return text
