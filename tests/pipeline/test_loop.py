"""`run_task`: a scripted model makes the typical mistakes and repairs them from the feedback."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from tests.pipeline.conftest import CALC, excerpt_lines
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.errors import FailureCode
from patchsmith.pipeline.budget import Budget
from patchsmith.pipeline.loop import RunStatus, run_task
from patchsmith.pipeline.source import ScriptedSource, Turn
from patchsmith.store import Store, kept

SCALE_TASK = {
    "objective": "round scaled values to 2 places",
    "files": ["calc.py"],
    "changed_lines": 2,
}


def _latest(turn: Turn) -> str:
    assert turn.feedback, "the model answers from the feedback"
    return turn.feedback[-1]


# -- the scripted model's repairs: each reads the repair message it was sent ------------------


def stale_context_repair(turn: Turn) -> str:
    """Rebuild the hunk from the lines the feedback names ("lines A-B of FILE") and shows,
    making the intended change (round the appended value) on the real line."""
    feedback = _latest(turn)
    where = re.search(r"lines (\d+)-(\d+) of (\S+) \(", feedback)
    assert where is not None
    first, last, path = int(where.group(1)), int(where.group(2)), where.group(3)
    shown = excerpt_lines(feedback)
    body = []
    for number in range(first, last + 1):
        line = shown[number]
        changed = re.sub(r"\.append\((.*)\)$", r".append(round(\1, 2))", line)
        if changed == line:
            body.append(" " + line)
        else:
            body += ["-" + line, "+" + changed]
    return f"--- a/{path}\n+++ b/{path}\n@@\n" + "\n".join(body) + "\n"


def indentation_repair(turn: Turn) -> str:
    """Re-indent the replacement like the line above the one the syntax error names."""
    feedback = _latest(turn)
    error = re.search(r"line (\d+): ", feedback)
    assert error is not None and "SYNTAX_ERROR" in feedback
    shown = excerpt_lines(feedback)
    above = shown[int(error.group(1)) - 1]
    indent = above[: len(above) - len(above.lstrip())]
    lines = ["total = a + b", "return total"]
    replacement = "\n".join(indent + line for line in lines)
    return f"calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n{replacement}\n>>>>>>> REPLACE\n"


def ambiguous_anchor_repair(turn: Turn) -> str:
    """Pick, among the candidate lines the feedback lists, the one inside `total`, and
    resend the snippet anchored on that function's own first lines."""
    feedback = _latest(turn)
    listed = re.search(r"occur at lines ([\d, ]+)", feedback)
    assert listed is not None and "AMBIGUOUS_MATCH" in feedback
    candidates = [int(n) for n in listed.group(1).split(",")]
    lines = turn.files["calc.py"].splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("def total("))
    mine = next(n for n in candidates if n > start)
    anchor = "\n".join(lines[start - 1 : mine])
    after = lines[mine]  # the unchanged line below the new one closes the chunk
    return (
        "calc.py\n```python\n# ... existing code ...\n"
        f"{anchor}\n        print(value)\n{after}\n# ... existing code ...\n```\n"
    )


def broken_test_repair(turn: Turn) -> str:
    """Read which test broke and why; keep the empty-list guard the first reply dropped."""
    feedback = _latest(turn)
    assert "VERIFICATION_FAILED" in feedback and "test_mean_of_nothing" in feedback
    assert "ZeroDivisionError" in feedback
    return (
        "stats.py\n```python\ndef mean(values):\n    if not values:\n        return 0\n"
        "    return round(sum(values) / len(values), 2)\n```\n"
    )


STALE = """--- a/calc.py
+++ b/calc.py
@@
 def scale(items, k):
     out = []
     for item in items:
-        out.append(item * k)
+        out.append(round(item * k, 2))
     return out
"""

BAD_INDENT = """calc.py
<<<<<<< SEARCH
    return a + b
=======
    total = a + b
   return total
>>>>>>> REPLACE
"""

AMBIGUOUS = """calc.py
```python
# ... existing code ...
    for value in values:
        print(value)
# ... existing code ...
```
"""

BREAKS_A_TEST = (
    "stats.py\n```python\ndef mean(values):\n    return round(sum(values) / len(values), 2)\n```\n"
)


class TestRecoversFromTheFeedback:
    def test_stale_context(self, calc: Path) -> None:
        source = ScriptedSource([STALE, stale_context_repair])

        result = run_task(SCALE_TASK, source, root=calc)

        assert RunStatus.SUCCEEDED == result.status
        assert ["refused", "applied"] == [t.outcome for t in result.turns]
        assert "        result.append(round(value * factor, 2))\n" in (calc / "calc.py").read_text()
        assert "PATCH_CONTEXT_MISMATCH" in source.turns[1].feedback[0]

    def test_wrong_indentation(self, calc: Path) -> None:
        task = {"objective": "name the sum in add", "files": ["calc.py"], "changed_lines": 3}

        result = run_task(task, ScriptedSource([BAD_INDENT, indentation_repair]), root=calc)

        assert RunStatus.SUCCEEDED == result.status
        assert (
            (calc / "calc.py")
            .read_text()
            .startswith("def add(a, b):\n    total = a + b\n    return total\n")
        )

    def test_lazy_snippet_with_an_ambiguous_anchor(self, calc: Path) -> None:
        task = {
            "objective": "print each value total() adds",
            "files": ["calc.py"],
            "changed_lines": 1,
            "format": "lazy_snippet",
        }

        result = run_task(task, ScriptedSource([AMBIGUOUS, ambiguous_anchor_repair]), root=calc)

        assert RunStatus.SUCCEEDED == result.status
        expected = CALC.decode().replace(
            "        result += value\n", "        print(value)\n        result += value\n"
        )
        assert expected == (calc / "calc.py").read_text()

    def test_a_broken_test_fails_verification_then_is_fixed(self, stats: Path) -> None:
        task = {
            "objective": "round the mean to 2 places",
            "files": ["stats.py"],
            "changed_lines": 2,
        }

        result = run_task(task, ScriptedSource([BREAKS_A_TEST, broken_test_repair]), root=stats)

        assert RunStatus.SUCCEEDED == result.status
        assert "if not values" in (stats / "stats.py").read_text()
        refused, applied = result.reports
        assert [FailureCode.VERIFICATION_FAILED] == [e.code for e in refused.errors]
        assert applied.evidence and all(e.passed for e in applied.evidence if e.side == "changed")

    def test_every_mistake_in_one_run_within_the_default_budget(self, calc: Path) -> None:
        """Three milestones, three mistakes, each repaired once: six of the budget's attempts
        are not needed, so a budget of six suffices exactly."""
        task = {
            "objective": "three small changes",
            "files": ["calc.py"],
            "changed_lines": 3,
            "milestones": [
                {"id": "scale", "objective": "round scaled values"},
                {"id": "add", "objective": "name the sum in add"},
                {"id": "total", "objective": "print each value", "changed_lines": 1},
            ],
        }
        replies = [STALE, stale_context_repair, BAD_INDENT, indentation_repair]
        replies += [AMBIGUOUS, ambiguous_anchor_repair]

        result = run_task(task, ScriptedSource(replies), Budget(max_attempts=6), root=calc)

        assert RunStatus.SUCCEEDED == result.status
        assert [True, True, True] == [m.done for m in result.milestones]
        assert 6 == result.attempts


class TestBudget:
    def test_attempts_run_out(self, calc: Path) -> None:
        """A model that never gets it right: the run stops at the budget, nothing written."""
        before = snapshot_tree(calc)
        wrong = [STALE.replace("k)", f"k + {n})") for n in range(10)]

        result = run_task(SCALE_TASK, ScriptedSource(wrong), Budget(max_attempts=3), root=calc)

        assert RunStatus.EXHAUSTED == result.status
        assert (3, "attempts: 3 of 3 used") == (result.attempts, result.stop_reason)
        assert [FailureCode.PATCH_CONTEXT_MISMATCH] == [e.code for e in result.errors]
        assert before == snapshot_tree(calc)

    def test_wall_time_runs_out(self, calc: Path) -> None:
        ticks = iter([0.0, 0.0, 5.0, 11.0, 11.0])
        wrong = [STALE.replace("k)", f"k + {n})") for n in range(10)]

        result = run_task(
            SCALE_TASK,
            ScriptedSource(wrong),
            Budget(max_seconds=10),
            root=calc,
            clock=lambda: next(ticks),
        )

        assert RunStatus.EXHAUSTED == result.status
        assert 2 == result.attempts
        assert result.stop_reason.startswith("wall time: 11.0s of 10s")

    def test_feedback_runs_out(self, calc: Path) -> None:
        wrong = [STALE.replace("k)", f"k + {n})") for n in range(10)]
        budget = Budget(feedback_chars=300, max_feedback_chars=450)

        result = run_task(SCALE_TASK, ScriptedSource(wrong), budget, root=calc)

        assert RunStatus.EXHAUSTED == result.status
        assert result.stop_reason.startswith("feedback: ")
        assert result.feedback_chars <= 450
        assert all(len(t.feedback) <= 300 for t in result.turns)

    def test_high_risk_halves_attempts_and_time(self) -> None:
        from patchsmith.model.proposal import Risk

        assert Budget(max_attempts=3, max_seconds=60.0) == Budget(
            max_attempts=5, max_seconds=120.0
        ).for_risk(Risk.HIGH)
        assert Budget() == Budget().for_risk(Risk.MEDIUM)

    @pytest.mark.parametrize(
        "fields",
        [
            {"max_attempts": 0},
            {"max_seconds": 0},
            {"feedback_chars": 10},
            {"max_feedback_chars": 10},
        ],
    )
    def test_bad_budget(self, fields: dict[str, float]) -> None:
        with pytest.raises(ValueError):
            Budget(**fields)  # type: ignore[arg-type]


class TestRemembersFailures:
    def test_the_same_wrong_reply_is_not_applied_again(self, calc: Path) -> None:
        source = ScriptedSource([STALE, STALE, stale_context_repair])

        result = run_task(SCALE_TASK, source, root=calc)

        assert RunStatus.SUCCEEDED == result.status
        assert ["refused", "duplicate", "applied"] == [t.outcome for t in result.turns]
        assert 3 == result.attempts
        assert 2 == len(result.reports)
        assert result.turns[1].attempt_id == result.turns[0].attempt_id
        assert source.turns[2].feedback[-1].startswith("This reply is the same as attempt 1")
        with Store.open(calc / ".patchsmith") as store:
            proposals = [a for a in store.list_attempts() if a.run_id == result.run_id]
        assert 2 == len(proposals)

    def test_a_duplicate_proposal_object_too(self, calc: Path) -> None:
        """Ids and attempt numbers differ; the operations are the same: a duplicate."""
        wrong = {
            "strategy": "UNIFIED_DIFF",
            "objective": "round",
            "operations": [{"type": "patch", "text": STALE}],
        }
        again = {**wrong, "proposal_id": "another", "rationale": "really"}

        result = run_task(
            SCALE_TASK, ScriptedSource([wrong, again]), Budget(max_attempts=2), root=calc
        )

        assert ["refused", "duplicate"] == [t.outcome for t in result.turns]


class TestRecords:
    def test_every_attempt_under_the_run_id_with_the_selection(self, calc: Path) -> None:
        result = run_task(
            SCALE_TASK, ScriptedSource([STALE, STALE, stale_context_repair]), root=calc
        )

        with Store.open(calc / ".patchsmith") as store:
            run = store.get_run(result.run_id)
            attempts = [store.get(t.attempt_id or "") for t in result.turns]
        assert run is not None
        assert "succeeded" == run.status
        assert ["refused", "duplicate", "applied"] == [t.outcome for t in run.turns]
        selection = json.loads(run.turns[0].selection_json)
        assert ("UNIFIED_DIFF", "small-change") == (selection["strategy"], selection["rule"])
        assert ["calc.py"] == selection["facts"]["files"]
        assert {result.run_id} == {a.run_id for a in attempts if a is not None}
        assert json.loads(run.task_json)["objective"] == SCALE_TASK["objective"]
        assert json.loads(run.result_json or "{}")["status"] == "succeeded"

    def test_no_record_leaves_no_state(self, calc: Path) -> None:
        result = run_task(
            SCALE_TASK, ScriptedSource([STALE, stale_context_repair]), root=calc, record=False
        )

        assert RunStatus.SUCCEEDED == result.status
        assert not (calc / ".patchsmith").exists()
        assert [None, None] == [t.attempt_id for t in result.turns]

    def test_unknown_run_is_none(self, calc: Path) -> None:
        with Store.open(calc / ".patchsmith") as store:
            assert store.get_run("r-none") is None

    def test_a_recorded_run_id_cannot_be_recorded_twice(self, calc: Path) -> None:
        with Store.open(calc / ".patchsmith") as store:
            store.record_run_task("r-1", "t", "{}", "{}")
            with pytest.raises(ValueError, match="already recorded"):
                store.record_run_task("r-1", "t", "{}", "{}")

    def test_an_unusable_store_is_reported_not_raised(self, calc: Path) -> None:
        """A state directory that is a file: attempts are refused (STATE_DIR_UNSAFE) and
        the run says it was not recorded; nothing raises, nothing is written."""
        (calc / ".patchsmith").write_text("not a directory")
        before = snapshot_tree(calc)

        result = run_task(SCALE_TASK, ScriptedSource([STALE]), Budget(max_attempts=1), root=calc)

        assert RunStatus.EXHAUSTED == result.status
        assert any("the run was not recorded" in e.message for e in result.errors)
        assert FailureCode.STATE_DIR_UNSAFE in [e.code for e in result.reports[0].errors]
        assert before == snapshot_tree(calc)


class TestProposalsAndMistakesOfTheSource:
    def test_a_declared_strategy_the_table_refuses_is_repaired(self, tmp_path: Path) -> None:
        """Four files declared UNIFIED_DIFF under `strategy_check = "refuse"`: the model
        reads the strategy to declare from the feedback and resends with it."""
        files = {f"m{i}.py": f"X = {i}\n".encode() for i in range(4)}
        # no profile here can verify the HYBRID resend: the workspace opts out of refusing
        files["patchsmith.toml"] = (
            b'[policy]\nstrategy_check = "refuse"\n[verify]\nunverified = "note"\n'
        )
        root = make_tree(tmp_path / "four", files)
        diff = "".join(
            f"--- a/m{i}.py\n+++ b/m{i}.py\n@@\n-X = {i}\n+X = {i + 10}\n" for i in range(4)
        )

        def model(turn: Turn) -> dict[str, object]:
            strategy = "UNIFIED_DIFF"
            if turn.feedback:
                declare = re.search(r"fix: declare (\w+)", turn.feedback[-1])
                assert declare is not None
                strategy = declare.group(1)
            return {
                "strategy": strategy,
                "objective": "double X",
                "operations": [{"type": "patch", "text": diff}],
            }

        task = {"objective": "double X", "files": sorted(files)[:4], "changed_lines": 8}
        result = run_task(task, ScriptedSource([model, model]), root=root)

        assert RunStatus.SUCCEEDED == result.status
        assert [FailureCode.STRATEGY_MISMATCH] == [e.code for e in result.reports[0].errors]
        assert ["UNIFIED_DIFF", "HYBRID"] == [t.strategy for t in result.turns]
        assert "X = 13\n" == (root / "m3.py").read_text()

    def test_invalid_replies_are_refused_and_recorded(self, calc: Path) -> None:
        replies: list[object] = ["   ", {"operations": []}, 42, STALE]
        result = run_task(SCALE_TASK, ScriptedSource(replies), Budget(max_attempts=4), root=calc)  # type: ignore[arg-type]

        codes = [r.errors[0].code for r in result.reports]
        assert [
            FailureCode.MALFORMED_PATCH,
            FailureCode.INVALID_PROPOSAL,
            FailureCode.INVALID_PROPOSAL,
            FailureCode.PATCH_CONTEXT_MISMATCH,
        ] == codes
        with Store.open(calc / ".patchsmith") as store:
            runs = {a.run_id for a in store.list_attempts()}
        assert {result.run_id} == runs

    def test_source_runs_out(self, calc: Path) -> None:
        result = run_task(SCALE_TASK, ScriptedSource([STALE]), root=calc)

        assert RunStatus.SOURCE_FAILED == result.status
        assert [FailureCode.SOURCE_FAILED] == [e.code for e in result.errors]

    def test_invalid_task(self, calc: Path) -> None:
        result = run_task({"objective": ""}, ScriptedSource([]), root=calc)

        assert RunStatus.REFUSED == result.status
        assert [FailureCode.INVALID_TASK] == [e.code for e in result.errors]

    def test_missing_root(self, tmp_path: Path) -> None:
        result = run_task(SCALE_TASK, ScriptedSource([]), root=tmp_path / "nope")

        assert [FailureCode.FILE_NOT_FOUND] == [e.code for e in result.errors]

    def test_invalid_policy(self, calc: Path) -> None:
        (calc / "patchsmith.toml").write_text("[policy]\nnonsense = 1\n")

        result = run_task(SCALE_TASK, ScriptedSource([]), root=calc)

        assert [FailureCode.INVALID_POLICY] == [e.code for e in result.errors]

    def test_high_risk_needs_a_verification_profile(self, calc: Path) -> None:
        result = run_task({**SCALE_TASK, "risk": "HIGH"}, ScriptedSource([STALE]), root=calc)

        assert RunStatus.REFUSED == result.status
        assert [FailureCode.INSUFFICIENT_EVIDENCE] == [e.code for e in result.errors]

    def test_unknown_profile_refuses_before_asking(self, calc: Path) -> None:
        source = ScriptedSource([STALE])

        result = run_task({**SCALE_TASK, "verify": ["nope"]}, source, root=calc)

        assert RunStatus.REFUSED == result.status
        assert [] == source.turns

    def test_medium_risk_caps_the_diff(self, calc: Path) -> None:
        """Estimated at 2 lines, MEDIUM allows 10: a 12-line rewrite is refused."""
        task = {**SCALE_TASK, "risk": "MEDIUM"}
        big = (
            "calc.py\n```python\n"
            + CALC.decode()
            .replace("a + b", "a + b + 0")
            .replace("value * factor", "round(value * factor, 2)")
            .replace("    return result\n", "    return list(result)\n")
            + "```\n"
        )
        rewrite = big.replace("result", "acc")

        result = run_task(task, ScriptedSource([rewrite]), Budget(max_attempts=1), root=calc)

        assert RunStatus.EXHAUSTED == result.status
        assert FailureCode.POSTCONDITION_FAILED in [e.code for e in result.errors]


def test_turn_prompt_and_json(calc: Path) -> None:
    source = ScriptedSource([STALE, stale_context_repair])
    run_task({**SCALE_TASK, "context": "Keep it short.", "format": "udiff"}, source, root=calc)

    first, second = source.turns
    prompt = second.prompt()
    assert "Task: round scaled values to 2 places" in prompt
    assert "Strategy: UNIFIED_DIFF" in prompt and "Edit format: udiff" in prompt
    assert "Keep it short." in prompt and "--- calc.py (current content) ---" in prompt
    assert "Feedback:\nRefused: nothing was written" in prompt
    assert "Feedback" not in first.prompt()
    data = second.to_json()
    assert data["attempt_no"] == 2 and data["feedback"] == list(second.feedback)
    json.dumps(data)


def test_store_schema_has_the_run_tables(calc: Path) -> None:
    with Store.open(calc / ".patchsmith"):
        pass
    conn = sqlite3.connect(calc / ".patchsmith" / "patchsmith.db")
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()

    assert {"run_tasks", "run_turns", "run_results"} <= names


def test_a_run_opens_its_store_once(calc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn, attempt and the result go through one connection, opened once."""
    opened: list[Path] = []
    connect = kept.connect

    def counted(db_file: Path) -> sqlite3.Connection:
        opened.append(db_file)
        return connect(db_file)

    monkeypatch.setattr(kept, "connect", counted)  # Store.shared
    monkeypatch.setattr("patchsmith.store.store.connect", counted)  # Store.open
    Store.close_shared()
    source = ScriptedSource([STALE, stale_context_repair])

    result = run_task(SCALE_TASK, source, root=calc)

    assert ["refused", "applied"] == [t.outcome for t in result.turns]
    assert [calc / ".patchsmith" / "patchsmith.db"] == opened
    with Store.open(calc / ".patchsmith") as store:
        run = store.get_run(result.run_id)
    assert run is not None and 2 == len(run.turns) and run.status is not None
