"""Tasks, milestones and the small parts of the loop: loading, planning, replies as proposals."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.pipeline.conftest import CALC
from tests.pipeline.test_loop import SCALE_TASK, STALE
from tests.workspace_snapshot import make_tree, snapshot_tree

from patchsmith.errors import FailureCode
from patchsmith.model.proposal import DiffMaxFiles, DiffMaxLines, Risk
from patchsmith.pipeline.budget import Budget, diff_budget
from patchsmith.pipeline.loop import RunStatus, run_task
from patchsmith.pipeline.source import CommandSource, ScriptedSource
from patchsmith.pipeline.task import Milestone, Task, facts_of, load_task


class TestLoadTask:
    def test_from_a_file_json_or_yaml(self, tmp_path: Path) -> None:
        (tmp_path / "t.json").write_text(json.dumps(SCALE_TASK))
        (tmp_path / "t.yaml").write_text("objective: tidy\nfiles: [a.py]\n")

        assert "round scaled values to 2 places" == getattr(
            load_task(tmp_path / "t.json"), "objective", None
        )
        assert ("a.py",) == getattr(load_task(str(tmp_path / "t.yaml")), "files", None)

    def test_from_text_and_models(self) -> None:
        task = Task(objective="x")

        assert task is load_task(task)
        assert "y" == getattr(load_task('{"objective": "y"}'), "objective", None)

    @pytest.mark.parametrize(
        ("source", "needle"),
        [
            ("/nonexistent/task.json", "cannot read task file"),
            ("[1, 2]\n", "must be an object"),
            ("objective: [unclosed\n", "JSON or YAML"),
            ({"objective": "x", "risk": "EXTREME"}, "risk"),
        ],
    )
    def test_invalid(self, source: object, needle: str) -> None:
        failure = load_task(source)  # type: ignore[arg-type]

        assert FailureCode.INVALID_TASK == getattr(failure, "code", None)
        assert needle in getattr(failure, "message", "")


class TestPlan:
    def test_one_milestone_without_any(self) -> None:
        (only,) = Task(objective="do it", files=("a.py",), changed_lines=3).plan()

        assert ("m1", "do it", ("a.py",), 3) == (
            only.id,
            only.objective,
            only.files,
            only.changed_lines,
        )

    def test_milestones_inherit_what_they_do_not_set(self) -> None:
        task = Task(
            objective="all",
            files=("a.py",),
            changed_lines=10,
            recipe="r",
            verify=("tests",),
            milestones=(
                Milestone(objective="first"),
                Milestone(id="docs", objective="second", files=("README.md",), verify=()),
            ),
        )

        first, second = task.plan()

        assert ("m1", ("a.py",), ("tests",), "r") == (
            first.id,
            first.files,
            first.verify,
            first.recipe,
        )
        assert ("docs", ("README.md",), ()) == (second.id, second.files, second.verify)
        assert ("README.md",) == facts_of(second).files


class TestDiffBudget:
    def test_by_risk(self) -> None:
        assert () == diff_budget(Risk.LOW, ("a.py",), 10)
        assert (DiffMaxFiles(value=1), DiffMaxLines(value=20)) == diff_budget(
            Risk.MEDIUM, ("a.py",), 10
        )
        assert (DiffMaxLines(value=15),) == diff_budget(Risk.HIGH, ("src/*.py",), 10)
        assert (DiffMaxLines(value=10),) == diff_budget(Risk.HIGH, (), 2)
        assert (DiffMaxFiles(value=2),) == diff_budget(Risk.HIGH, ("a", "b"), None)


class TestReplies:
    def test_a_proposal_dict_in_camel_case_keeps_its_own_id(self, calc: Path) -> None:
        reply = {"proposalId": "mine", "operations": [{"type": "patch", "text": STALE}]}

        result = run_task(SCALE_TASK, ScriptedSource([reply]), Budget(max_attempts=1), root=calc)

        assert FailureCode.PATCH_CONTEXT_MISMATCH == result.errors[0].code
        assert "UNIFIED_DIFF" == result.turns[0].strategy

    def test_a_command_printing_a_proposal(self, calc: Path, tmp_path: Path) -> None:
        proposal = {"operations": [{"type": "patch", "text": STALE}], "strategy": "HYBRID"}
        script = tmp_path / "p.py"
        script.write_text(
            f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(proposal))})"
        )
        import sys

        result = run_task(
            SCALE_TASK,
            CommandSource([sys.executable, str(script)]),
            Budget(max_attempts=1),
            root=calc,
        )

        assert "HYBRID" == result.turns[0].strategy

    @pytest.mark.parametrize("text", ["{not json", '{"no": "operations"}'])
    def test_a_command_printing_other_braces_is_text(
        self, calc: Path, tmp_path: Path, text: str
    ) -> None:
        import sys

        script = tmp_path / "p.py"
        script.write_text(f"import sys; sys.stdin.read(); print({text!r})")

        result = run_task(
            SCALE_TASK,
            CommandSource([sys.executable, str(script)]),
            Budget(max_attempts=1),
            root=calc,
        )

        assert "UNIFIED_DIFF" == result.turns[0].strategy  # read as model text


_COUNT = itertools.count()
_replies = st.lists(
    st.one_of(
        st.text(max_size=200),
        st.sampled_from(
            [STALE, STALE.replace("k)", "k )"), "calc.py\n```python\n# ... existing code ...\n```"]
        ),
        st.dictionaries(
            st.sampled_from(["operations", "strategy", "objective"]), st.text(max_size=5)
        ),
    ),
    min_size=1,
    max_size=5,
)


class TestOpenEndedReplies:
    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(replies=_replies, attempts=st.integers(1, 4))
    def test_garbage_never_raises_or_writes(
        self, tmp_path: Path, replies: list[object], attempts: int
    ) -> None:
        """Whatever a model sends, the run ends with a status, within its budget, and a
        workspace no reply could edit correctly is left byte for byte as it was."""
        root = make_tree(tmp_path / f"ws{next(_COUNT)}", {"calc.py": CALC})
        before = snapshot_tree(root)

        result = run_task(
            SCALE_TASK,
            ScriptedSource(replies),
            Budget(max_attempts=attempts),
            root=root,
            record=False,  # type: ignore[arg-type]
        )

        assert result.status in (RunStatus.EXHAUSTED, RunStatus.SOURCE_FAILED)
        assert result.attempts <= attempts
        assert len(result.turns) == result.attempts
        assert before == snapshot_tree(root)
