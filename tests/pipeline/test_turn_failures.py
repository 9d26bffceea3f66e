"""`Turn.failures`: the last refusal's failures as values, beside its rendered feedback."""

from __future__ import annotations

from pathlib import Path

from patchsmith.errors import FailureCode
from patchsmith.pipeline.loop import RunStatus, run_task
from patchsmith.pipeline.source import ScriptedSource, Turn

TASK = {"objective": "return one in every branch", "files": ["calc.py"], "changed_lines": 2}
STALE = "--- a/calc.py\n+++ b/calc.py\n@@\n def add(x, y):\n-    return x + y\n+    return y + x\n"


def test_failures_follow_the_feedback(calc: Path) -> None:
    """First turn: none; after a refusal: that refusal's failures, their lines as values."""
    seen: list[Turn] = []

    def model(turn: Turn) -> str:
        seen.append(turn)
        return (
            STALE
            if len(seen) == 1
            else STALE.replace("x, y", "a, b").replace("x + y", "a + b").replace("y + x", "b + a")
        )

    result = run_task(TASK, ScriptedSource([model, model]), root=calc)

    assert RunStatus.SUCCEEDED == result.status
    assert () == seen[0].failures
    (failure,) = seen[1].failures
    assert FailureCode.PATCH_CONTEXT_MISMATCH is failure.code
    assert "calc.py" == failure.file
    assert failure.excerpt is not None and "def add(a, b):" in failure.excerpt
    assert failure.code.value in seen[1].feedback[-1]
    assert [failure.to_json()] == seen[1].to_json()["failures"]
    assert [] == seen[0].to_json()["failures"]


def test_a_repeated_reply_keeps_the_first_failures(calc: Path) -> None:
    """A reply sent twice is not applied again; the turn after it still carries its failures."""
    seen: list[Turn] = []

    def model(turn: Turn) -> str:
        seen.append(turn)
        return STALE

    run_task(TASK, ScriptedSource([model, model, model]), root=calc)

    assert 3 == len(seen)
    assert seen[1].failures == seen[2].failures
    assert seen[2].failures and FailureCode.PATCH_CONTEXT_MISMATCH is seen[2].failures[0].code
