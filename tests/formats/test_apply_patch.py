"""Tests for `patchsmith.formats.apply_patch`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.model import Hunk
from patchsmith.formats import apply_patch
from patchsmith.formats.script import Action, EditFormat, EditScript, WholeContent


class TestDetect:
    def test_markers(self) -> None:
        """Begin Patch and file operation lines are detected, padded or not."""
        assert apply_patch.detect("x\n  *** Begin Patch\n")
        assert apply_patch.detect("*** update file: a\n")

    def test_other_text(self) -> None:
        """Bold markdown is not an envelope."""
        assert not apply_patch.detect("*** note ***\n")


class TestParse:
    def test_operations(self) -> None:
        """Add, Delete and Update+Move map to CREATE, DELETE and MOVE."""
        script = apply_patch.parse(
            "*** Begin Patch\n*** Add File: n.md\n+# T\n+\n+x\n*** Delete File: d.txt\n"
            "*** Update File: o.py\n*** Move to: p.py\n@@ def f\n-a\n+b\n*** End Patch\n"
        )

        assert EditFormat.APPLY_PATCH == script.format
        assert [
            ("n.md", Action.CREATE, None),
            ("d.txt", Action.DELETE, None),
            ("o.py", Action.MOVE, "p.py"),
        ] == [(e.path, e.action, e.new_path) for e in script.edits]
        assert (WholeContent("# T\n\nx\n"),) == script.edits[0].ops
        assert (Hunk(("-a\n", "+b\n"), anchors=("def f",)),) == script.edits[2].ops

    def test_update(self) -> None:
        """Update File alone is an UPDATE with its hunks."""
        script = apply_patch.parse(
            "*** Begin Patch\n*** Update File: m\n@@\n-1\n+2\n@@\n-3\n+4\n*** End Patch\n"
        )

        assert (Action.UPDATE, 2) == (script.edits[0].action, len(script.edits[0].ops))

    def test_empty_add(self) -> None:
        """Adding an empty file gives empty content."""
        script = apply_patch.parse("*** Begin Patch\n*** Add File: e\n*** End Patch\n")

        assert (WholeContent(""),) == script.edits[0].ops

    def test_rejections_are_problems(self) -> None:
        """An empty envelope gives no edit and a problem."""
        script = apply_patch.parse("*** Begin Patch\n*** End Patch\n")

        assert ((), 1) == (script.edits, len(script.problems))

    def test_bad_line_in_hunk(self) -> None:
        """A line that is no hunk line, before more markers, is a problem."""
        script = apply_patch.parse(
            "*** Update File: a\n@@\n-x\nstray words\n+y\n*** Update File: b\n@@\n-1\n+2\n"
        )

        assert (4, 4) == (script.problems[0].start_line, script.problems[0].end_line)

    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(apply_patch.parse("*** Begin Patch\n" + text), EditScript)
