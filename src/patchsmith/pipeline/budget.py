"""`Budget`: how much a repair loop run may spend, and how a task's risk tightens it.

Three things are spent: attempts (every reply the source sends, a duplicate
included), feedback (characters of repair messages sent back), and wall time. The
run stops before the turn that would overspend any of them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from patchsmith.model.feedback import DEFAULT_FEEDBACK_CHARS, MIN_FEEDBACK_CHARS
from patchsmith.model.proposal import DiffMaxFiles, DiffMaxLines, Postcondition, Risk

__all__ = ["Budget", "diff_budget"]


@dataclass(frozen=True)
class Budget:
    """The most a run may spend; `None` means no limit on that count."""

    max_attempts: int = 5
    """Replies asked of the source over the whole run (every milestone)."""
    max_seconds: float | None = 600.0
    """Wall time from the run's start; checked before each turn."""
    feedback_chars: int = DEFAULT_FEEDBACK_CHARS
    """The longest single repair message (`ApplyReport.feedback(max_chars=...)`)."""
    max_feedback_chars: int | None = 20_000
    """All repair messages of the run together."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError("max_seconds must be positive")
        if self.feedback_chars < MIN_FEEDBACK_CHARS:
            raise ValueError(f"feedback_chars must be at least {MIN_FEEDBACK_CHARS}")
        if self.max_feedback_chars is not None and self.max_feedback_chars < MIN_FEEDBACK_CHARS:
            raise ValueError(f"max_feedback_chars must be at least {MIN_FEEDBACK_CHARS}")

    def for_risk(self, risk: Risk) -> Budget:
        """This budget as a task of `risk` may spend it: HIGH halves attempts and wall time
        (rounded up, at least one attempt); LOW and MEDIUM leave it as it is."""
        if risk is not Risk.HIGH:
            return self
        seconds = None if self.max_seconds is None else self.max_seconds / 2
        return replace(self, max_attempts=math.ceil(self.max_attempts / 2), max_seconds=seconds)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


_LINE_SLACK = {Risk.MEDIUM: 2.0, Risk.HIGH: 1.5}
"""How far past its estimated size a MEDIUM or HIGH risk change may grow."""
_MIN_LINES = 10


def diff_budget(
    risk: Risk, files: tuple[str, ...], changed_lines: int | None
) -> tuple[Postcondition, ...]:
    """The diff postconditions a run adds to each proposal of a milestone, by risk.

    LOW adds none. MEDIUM and HIGH add DIFF_MAX_FILES (the number of files named, when
    every one is a plain path rather than a pattern) and DIFF_MAX_LINES (the estimate
    times 2 for MEDIUM, 1.5 for HIGH, rounded up, at least 10) when an estimate is given.
    The policy's own budgets still apply; a proposal can only be tightened.
    """
    slack = _LINE_SLACK.get(risk)
    if slack is None:
        return ()
    added: list[Postcondition] = []
    if files and not any(ch in path for path in files for ch in "*?[]!"):
        added.append(DiffMaxFiles(value=len(files)))
    if changed_lines is not None:
        added.append(DiffMaxLines(value=max(_MIN_LINES, math.ceil(changed_lines * slack))))
    return tuple(added)
