"""Tests for `patchsmith.formats.whole_file`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.formats import whole_file
from patchsmith.formats.script import Action, EditFormat, EditScript, WholeContent


class TestDetect:
    def test_named_fence(self) -> None:
        """A fence named by a path is detected; an anonymous one is not."""
        assert whole_file.detect("x.py\n```\na\n```\n")
        assert not whole_file.detect("Example:\n```\na\n```\n")


class TestParse:
    def test_whole_file(self) -> None:
        """The fenced text is the file, ending with a newline."""
        script = whole_file.parse("Here it is.\n\nsrc/x.py\n```python\na\n\nb\n```\nBye.\n")

        assert EditFormat.WHOLE_FILE == script.format
        assert ("src/x.py", Action.UPDATE, (WholeContent("a\n\nb\n"),)) == (
            script.edits[0].path,
            script.edits[0].action,
            script.edits[0].ops,
        )

    def test_nested_fences(self) -> None:
        """Fenced examples inside a fenced file stay in the file."""
        text = "README.md\n```markdown\n# T\n```sh\nrun\n```\nend\n```\n"

        assert WholeContent("# T\n```sh\nrun\n```\nend\n") == whole_file.parse(text).edits[0].ops[0]

    def test_longer_fence(self) -> None:
        """A four-backtick fence holds bare three-backtick lines."""
        text = "doc.md\n````\n```\ncode\n```\n````\n"

        assert WholeContent("```\ncode\n```\n") == whole_file.parse(text).edits[0].ops[0]

    def test_path_inside_fence(self) -> None:
        """A path as the first fenced line names the file and is not content."""
        script = whole_file.parse("```\nsrc/a.js\nlet a = 1;\n```\n")

        assert ("src/a.js", WholeContent("let a = 1;\n")) == (
            script.edits[0].path,
            script.edits[0].ops[0],
        )

    def test_diff_fence_is_not_a_file(self) -> None:
        """A fence holding a diff is never a whole file."""
        assert () == whole_file.parse("x.py\n```diff\n-a\n+b\n```\n").edits
        assert () == whole_file.parse("x.py\n```\n--- a/x\n+++ b/x\n```\n").edits

    def test_shell_block_is_not_a_file(self) -> None:
        """A shell block after a path is a command, unless the path is a script."""
        assert () == whole_file.parse("tests.py\n```bash\npytest\n```\n").edits
        assert 1 == len(whole_file.parse("run.sh\n```bash\necho hi\n```\n").edits)

    def test_unclosed_fence_is_a_problem(self) -> None:
        """A fence that never closes may be cut short: a problem, not an edit."""
        script = whole_file.parse("x.py\n```\na\n")

        assert ((), 1) == (script.edits, len(script.problems))

    def test_several_files(self) -> None:
        """Several named fences give several edits."""
        script = whole_file.parse("a.py\n```\n1\n```\n\nb.py\n```\n2\n```\n")

        assert ["a.py", "b.py"] == [e.path for e in script.edits]

    def test_nothing(self) -> None:
        """Text without a named fence gives a covering problem."""
        assert 1 == len(whole_file.parse("hello\n").problems)

    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(whole_file.parse(text), EditScript)
