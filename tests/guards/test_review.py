"""Tests for the review guard (full-file rewrite drift)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.guards.changes import context, create, update

from patchsmith.errors import FailureCode
from patchsmith.guards import GuardContext
from patchsmith.guards.review import ReviewGuard, measure_drift
from patchsmith.model.proposal import TargetRegion
from patchsmith.policy import Policy, ReviewPolicy

BODY = [f"def f{i}(x):\n    return x + {i}\n\n" for i in range(30)]
ORIGINAL = (
    "# SPDX-License-Identifier: MIT\n"
    "import os\nimport sys\nfrom pathlib import Path\n\n"
    "# the helpers below are public API\n" + "".join(BODY)
)


def _strict(**extra: object) -> Policy:
    review = ReviewPolicy(
        min_changed_lines=1,
        max_formatting_hunks=0,
        max_lost_comments=0,
        allow_import_reorder=False,
        **extra,  # type: ignore[arg-type]
    )
    return Policy(review=review)


class TestMeasureDrift:
    def test_reordered_imports_are_seen(self) -> None:
        """Imports kept but in another order count as reordered."""
        new = ORIGINAL.replace("import os\nimport sys\n", "import sys\nimport os\n")

        assert measure_drift("a.py", ORIGINAL, new).imports_reordered

    def test_added_import_is_not_a_reorder(self) -> None:
        """Adding an import keeps the others' order: no reorder."""
        new = ORIGINAL.replace("import sys\n", "import sys\nimport re\n")

        assert not measure_drift("a.py", ORIGINAL, new).imports_reordered

    def test_lost_comment_is_named_by_line(self) -> None:
        """A comment line whose text is gone is reported with its old line number."""
        new = ORIGINAL.replace("# the helpers below are public API\n", "")

        assert (6,) == measure_drift("a.py", ORIGINAL, new).lost_comments

    def test_comment_moved_to_end_of_line_is_not_lost(self) -> None:
        """A comment kept as a trailing comment is not lost."""
        new = ORIGINAL.replace(
            "# the helpers below are public API\ndef f0(x):",
            "def f0(x):  # the helpers below are public API",
        )

        assert () == measure_drift("a.py", ORIGINAL, new).lost_comments

    def test_reindent_is_formatting_only(self) -> None:
        """A hunk that only re-indents is formatting-only; a real edit is not."""
        new = ORIGINAL.replace("    return x + 3\n", "        return x + 3\n")
        real = ORIGINAL.replace("    return x + 3\n", "    return x - 3\n")

        assert 1 == len(measure_drift("a.py", ORIGINAL, new).formatting_hunks)
        assert () == measure_drift("a.py", ORIGINAL, real).formatting_hunks

    def test_hunks_outside_regions(self) -> None:
        """Only hunks away from every declared region (plus margin) are unrelated."""
        new = ORIGINAL.replace("x + 2\n", "x * 2\n").replace("x + 25\n", "x * 25\n")
        line = ORIGINAL.splitlines().index("    return x + 2") + 1
        region = TargetRegion(path="a.py", start_line=line - 1, end_line=line)

        drift = measure_drift("a.py", ORIGINAL, new, [region])

        assert 1 == len(drift.unrelated_hunks)

    @settings(max_examples=40)
    @given(st.lists(st.sampled_from(["a", "# c", "import x", "  b", ""]), max_size=20))
    def test_identity_has_no_drift(self, lines: list[str]) -> None:
        """A text compared with itself never drifts."""
        text = "\n".join(lines)

        drift = measure_drift("p.py", text, text)

        assert (0, (), (), False, ()) == (
            drift.changed_lines,
            drift.formatting_hunks,
            drift.unrelated_hunks,
            drift.imports_reordered,
            drift.lost_comments,
        )


class TestReviewGuard:
    def test_drifting_rewrite_is_refused_listing_the_drift(self) -> None:
        """A rewrite that reorders imports, drops a comment and re-indents lists all three."""
        new = (
            ORIGINAL.replace("import os\nimport sys\n", "import sys\nimport os\n")
            .replace("# the helpers below are public API\n", "")
            .replace("    return x + 20\n", "      return x + 20\n")
        )

        failures = ReviewGuard().check([update("a.py", ORIGINAL, new)], context(_strict()))

        assert [FailureCode.REVIEW_DRIFT] == [f.code for f in failures]
        message = failures[0].message
        assert "imports reordered" in message
        assert "comment lines lost: 1 (line 6; limit 0)" in message
        assert "formatting-only hunks: 1 (line" in message
        assert "review" == failures[0].rule

    def test_focused_rewrite_passes_strict_policy(self) -> None:
        """A whole-file write that changes only the target function passes."""
        new = ORIGINAL.replace("    return x + 7\n", "    return x + 7 if x else 0\n")

        assert [] == ReviewGuard().check([update("a.py", ORIGINAL, new)], context(_strict()))

    def test_small_diff_is_not_reviewed(self) -> None:
        """Below min_changed_lines, and without regions, a file is not reviewed."""
        new = ORIGINAL.replace("import os\nimport sys\n", "import sys\nimport os\n")
        policy = Policy(review=ReviewPolicy(allow_import_reorder=False))

        assert [] == ReviewGuard().check([update("a.py", ORIGINAL, new)], context(policy))

    def test_defaults_let_a_large_real_change_through(self) -> None:
        """With the default thresholds a large change without regions passes."""
        new = "import sys\nimport os\n" + "".join(reversed(BODY))

        assert [] == ReviewGuard().check([update("a.py", ORIGINAL, new)], context())

    def test_hunk_outside_declared_region_is_refused(self) -> None:
        """With declared regions, a hunk elsewhere is refused even in a small change."""
        new = ORIGINAL.replace("x + 2\n", "x * 2\n").replace("x + 25\n", "x * 25\n")
        line = ORIGINAL.splitlines().index("    return x + 2") + 1
        ctx = GuardContext(
            policy=Policy(),
            target_regions=(TargetRegion(path="a.py", start_line=line, end_line=line),),
        )

        failures = ReviewGuard().check([update("a.py", ORIGINAL, new)], ctx)

        assert "hunks outside the declared regions: 1 (line" in failures[0].message

    def test_command_generated_and_created_files_are_not_reviewed(self) -> None:
        """A formatter's churn and new files are not drift."""
        new = ORIGINAL.replace("import os\nimport sys\n", "import sys\nimport os\n")
        changes = [
            update("a.py", ORIGINAL, new, generated_by_command=True),
            create("b.py", new),
        ]

        assert [] == ReviewGuard().check(changes, context(_strict()))


class TestWholeContent:
    def test_whole_file_write_is_reviewed_however_small(self) -> None:
        """A small change sent as a whole file is reviewed; the same change as a diff is not."""
        new = ORIGINAL.replace("import os\nimport sys\n", "import sys\nimport os\n")
        policy = Policy(review=ReviewPolicy(allow_import_reorder=False))

        whole = ReviewGuard().check(
            [update("a.py", ORIGINAL, new, whole_content=True)], context(policy)
        )
        diff = ReviewGuard().check([update("a.py", ORIGINAL, new)], context(policy))

        assert ["imports reordered"] == [f.message.rsplit(": ", 1)[1] for f in whole]
        assert [] == diff
