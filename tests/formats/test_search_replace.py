"""Tests for `patchsmith.formats.search_replace`."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.formats import search_replace
from patchsmith.formats.script import Action, EditFormat, EditScript, SearchReplace


def block(search: str = "a\n", replace: str = "b\n", marks: int = 7) -> str:
    return f"{'<' * marks} SEARCH\n{search}{'=' * marks}\n{replace}{'>' * marks} REPLACE\n"


class TestDetect:
    def test_marker(self) -> None:
        """A SEARCH marker line is detected; a git conflict is not."""
        assert search_replace.detect("x\n<<<<<<< SEARCH\n")
        assert not search_replace.detect("<<<<<<< HEAD\n")


class TestParse:
    def test_path_before_fence(self) -> None:
        """The path on the line before the fence names the block."""
        script = search_replace.parse("Fix it:\n\nsrc/x.py\n```python\n" + block() + "```\n")

        assert EditFormat.SEARCH_REPLACE == script.format
        assert ("src/x.py", Action.UPDATE, (SearchReplace("a\n", "b\n"),)) == (
            script.edits[0].path,
            script.edits[0].action,
            script.edits[0].ops,
        )

    def test_path_inside_fence_and_decorations(self) -> None:
        """A decorated path line right before the block is used."""
        for line in ("`src/x.py`", "**src/x.py**", "src/x.py:", "### src/x.py", "File: src/x.py"):
            script = search_replace.parse(f"```\n{line}\n" + block() + "```\n")

            assert "src/x.py" == script.edits[0].path

    def test_path_in_fence_info(self) -> None:
        """A path in the fence's info string is used."""
        assert "a/b.ts" == search_replace.parse("```ts a/b.ts\n" + block() + "```\n").edits[0].path

    def test_blocks_reuse_previous_path(self) -> None:
        """A block without a path reuses the previous one; blocks of one file merge."""
        script = search_replace.parse("x.py\n```\n" + block() + block("c\n", "d\n") + "```\n")

        assert 1 == len(script.edits)
        assert (SearchReplace("a\n", "b\n"), SearchReplace("c\n", "d\n")) == script.edits[0].ops

    def test_marker_lengths(self) -> None:
        """Markers of 5 to 9 characters are accepted."""
        for marks in (5, 9):
            assert 1 == len(search_replace.parse("x.py\n" + block(marks=marks)).edits)

    def test_empty_search_and_elision(self) -> None:
        """An empty SEARCH and `...` lines are kept verbatim."""
        script = search_replace.parse("n.py\n" + block("", "new\n") + block("a\n...\nz\n", "b\n"))

        assert (SearchReplace("", "new\n"), SearchReplace("a\n...\nz\n", "b\n")) == (
            script.edits[0].ops
        )

    def test_nested_fences_inside_blocks(self) -> None:
        """Fence lines inside SEARCH or REPLACE are content."""
        script = search_replace.parse("R.md\n```md\n" + block("```sh\nx\n```\n", "y\n") + "```\n")

        assert "```sh\nx\n```\n" == script.edits[0].ops[0].search  # type: ignore[union-attr]

    def test_no_path(self) -> None:
        """A block with no path at all gets path ""."""
        assert "" == search_replace.parse(block()).edits[0].path

    def test_prose_is_not_a_path(self) -> None:
        """A sentence before the block is not a path."""
        assert "" == search_replace.parse("Change this to that:\n" + block()).edits[0].path

    def test_unterminated_blocks(self) -> None:
        """A block without divider or REPLACE is a problem with its lines."""
        missing_divider = search_replace.parse("x\n<<<<<<< SEARCH\na\n")
        missing_end = search_replace.parse("x.py\n<<<<<<< SEARCH\na\n=======\nb\n" + block())

        assert (2, 3) == (
            missing_divider.problems[0].start_line,
            missing_divider.problems[0].end_line,
        )
        assert 1 == len(missing_end.problems)
        assert 1 == len(missing_end.edits)

    def test_crlf(self) -> None:
        """A CRLF block gives LF text."""
        script = search_replace.parse(("x.py\n" + block()).replace("\n", "\r\n"))

        assert SearchReplace("a\n", "b\n") == script.edits[0].ops[0]

    def test_ten_thousand_blocks(self) -> None:
        """10k blocks for one file parse into one edit."""
        assert 10_000 == len(search_replace.parse("x.py\n" + block() * 10_000).edits[0].ops)

    @given(st.text())
    def test_never_raises(self, text: str) -> None:
        """Arbitrary text never raises."""
        assert isinstance(search_replace.parse(text), EditScript)
