"""Tests for `patchsmith.formats.udiff`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.engine.model import Hunk
from patchsmith.formats import udiff
from patchsmith.formats.script import Action, EditFormat, EditScript, FileEdit, WholeContent


class TestDetect:
    def test_markers(self) -> None:
        """`@@`, `diff --git` and a `---`/`+++` pair are detected."""
        assert udiff.detect("@@ -1 +1 @@\n-a\n")
        assert udiff.detect("diff --git a/x b/x\n")
        assert udiff.detect("text\r\n--- a/x\r\n+++ b/x\r\n")

    def test_prose(self) -> None:
        """Prose with dashes is not a diff."""
        assert not udiff.detect("--- a rule\nno plus line\n")


class TestParse:
    def test_update(self) -> None:
        """A plain diff is an UPDATE whose ops are the hunks."""
        script = udiff.parse("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")

        assert EditFormat.UDIFF == script.format
        assert (
            FileEdit(
                "x.py",
                Action.UPDATE,
                (Hunk(("-a\n", "+b\n"), 1, 1, 1, 1),),
                start_line=0,
                end_line=5,
            ),
        ) == script.edits

    def test_create_honours_no_newline(self) -> None:
        """A /dev/null create is a CREATE whose text honours the no-newline marker."""
        script = udiff.parse(
            "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
        )

        assert (Action.CREATE, (WholeContent("a\nb"),)) == (
            script.edits[0].action,
            script.edits[0].ops,
        )

    def test_create_adds_final_newline(self) -> None:
        """A create whose last line has no newline (end of text) still ends with one."""
        assert WholeContent("a\n") == udiff.parse("--- /dev/null\n+++ b/n\n@@\n+a").edits[0].ops[0]

    def test_delete_keeps_removed_text(self) -> None:
        """A delete to /dev/null carries the removed text."""
        script = udiff.parse("--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n")

        assert ("d.txt", Action.DELETE, (WholeContent("a\nb\n"),)) == (
            script.edits[0].path,
            script.edits[0].action,
            script.edits[0].ops,
        )

    def test_delete_without_hunks(self) -> None:
        """A git delete without hunks has no ops."""
        script = udiff.parse("diff --git a/d b/d\ndeleted file mode 100644\n")

        assert ((), Action.DELETE) == (script.edits[0].ops, script.edits[0].action)

    def test_rename_is_move(self) -> None:
        """A git rename with a hunk is a MOVE with the hunk as op."""
        script = udiff.parse(
            "diff --git a/o.py b/n.py\nrename from o.py\nrename to n.py\n"
            "--- a/o.py\n+++ b/n.py\n@@\n-a\n+b\n"
        )

        edit = script.edits[0]
        assert ("o.py", "n.py", Action.MOVE, 1) == (
            edit.path,
            edit.new_path,
            edit.action,
            len(edit.ops),
        )

    def test_mode_change(self) -> None:
        """A mode line sets `new_mode`."""
        script = udiff.parse("diff --git a/r.sh b/r.sh\nold mode 100644\nnew mode 100755\n")

        assert ("100755", ()) == (script.edits[0].new_mode, script.edits[0].ops)

    def test_headerless_has_empty_path(self) -> None:
        """Headerless hunks give an UPDATE with path ""."""
        script = udiff.parse("@@ -1 +1 @@\n-a\n+b\n")

        assert ("", Action.UPDATE) == (script.edits[0].path, script.edits[0].action)

    def test_binary_is_a_problem(self) -> None:
        """Binary sections are reported, not edited."""
        script = udiff.parse("diff --git a/i b/i\nBinary files a/i and b/i differ\n")

        assert () == script.edits
        assert "binary" in script.problems[0].message

    def test_both_dev_null_is_a_problem(self) -> None:
        """`/dev/null` on both sides is reported."""
        assert () == udiff.parse("--- /dev/null\n+++ /dev/null\n@@\n+a\n").edits

    def test_same_file_merged(self) -> None:
        """Two sections for one file become one UPDATE with every hunk, in order."""
        script = udiff.parse("--- a/x\n+++ b/x\n@@\n-a\n+b\n--- a/x\n+++ b/x\n@@\n-c\n+d\n")

        assert 1 == len(script.edits)
        assert [("-a\n", "+b\n"), ("-c\n", "+d\n")] == [
            op.lines for op in script.edits[0].ops if isinstance(op, Hunk)
        ]

    def test_problems_quote_the_text(self) -> None:
        """A problem carries the offending lines."""
        script = udiff.parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n")

        assert ["--- a/x\n+++ b/x\n@@ -1 +1 @@\n", "@@ -1 +1 @@\n"] == [
            p.text for p in script.problems
        ]

    def test_nothing_is_a_problem(self) -> None:
        """Text without a diff gives a problem covering it."""
        script = udiff.parse("just words\nmore\n")

        assert (1, 2) == (script.problems[0].start_line, script.problems[0].end_line)

    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(udiff.parse(text), EditScript)
