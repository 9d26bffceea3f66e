"""Tests for `patchsmith.formats.lazy_snippet`: finding the blocks and their paths."""

from __future__ import annotations

import pytest

from patchsmith.errors import FailureCode
from patchsmith.formats import detect_format, lazy_snippet, parse_edits
from patchsmith.formats.registry import format_named
from patchsmith.formats.script import EditFormat, LazySnippet, WholeContent

BODY = "```python\n# ... existing code ...\ndef f():\n    return 2\n# ... existing code ...\n```\n"


class TestPaths:
    @pytest.mark.parametrize(
        "header",
        ["src/x.py\n", "`src/x.py`\n", "**src/x.py**\n", "`src/x.py`:\n", "File: src/x.py\n"],
    )
    def test_path_line_above_the_fence(self, header: str) -> None:
        """A path on its own line above the fence, however decorated, names the file."""
        script = parse_edits(header + BODY)

        assert EditFormat.LAZY_SNIPPET == script.format
        assert ["src/x.py"] == [e.path for e in script.edits]
        assert isinstance(script.edits[0].ops[0], LazySnippet)

    def test_path_in_the_info_string(self) -> None:
        """```` ```python:src/x.py ```` names the file."""
        text = "Apply this:\n\n" + BODY.replace("```python", "```python:src/x.py", 1)

        assert ["src/x.py"] == [e.path for e in parse_edits(text).edits]

    def test_path_only_in_the_prose(self) -> None:
        """With no path line, the one file the prose names is the target."""
        text = "In `src/x.py`, make these changes:\n\n" + BODY

        assert ["src/x.py"] == [e.path for e in parse_edits(text).edits]

    def test_most_specific_prose_path(self) -> None:
        """`x.py` and **src/x.py** in one sentence are one file, the longer name."""
        text = "Here is how `x.py` does it, in **src/x.py**:\n" + BODY

        assert "src/x.py" == lazy_snippet.prose_path(text.splitlines(keepends=True), 1)

    def test_two_files_in_the_prose_name_none(self) -> None:
        """Prose naming two different files does not choose between them."""
        lines = ["Compare `a.py` with `b.py`:\n", "```\n"]

        assert lazy_snippet.prose_path(lines, 1) is None

    def test_prose_path_block_without_placeholders_is_a_snippet(self) -> None:
        """A bare block named only in prose is a snippet (it may be a region, never a new file)."""
        text = "The relevant part of `src/x.py`:\n```python\ndef f():\n    return 1\n```\n"

        script = parse_edits(text)

        assert EditFormat.LAZY_SNIPPET == script.format
        assert isinstance(script.edits[0].ops[0], LazySnippet)


class TestDetect:
    def test_placeholders_make_a_lazy_snippet(self) -> None:
        """A path-named fence with a placeholder line is detected as a lazy snippet."""
        assert EditFormat.LAZY_SNIPPET == detect_format("src/x.py\n" + BODY)

    def test_plain_fenced_file_stays_whole_file(self) -> None:
        """Without placeholders, a path line and a fence remain the whole-file format."""
        text = "src/x.py\n```python\ndef f():\n    return 2\n```\n"

        assert EditFormat.WHOLE_FILE == detect_format(text)
        assert not lazy_snippet.detect(text)

    def test_diff_fence_is_not_a_snippet(self) -> None:
        """A fenced diff with `...` in it is a diff."""
        text = "x.py\n```diff\n--- a/x.py\n+++ b/x.py\n@@\n-a\n+b\n ...\n```\n"

        assert not lazy_snippet.detect(text)

    @pytest.mark.parametrize("name", ["lazy", "lazy_snippet", "lazy-snippet", "snippet"])
    def test_format_names(self, name: str) -> None:
        """`--format lazy` and its spellings name the format."""
        assert EditFormat.LAZY_SNIPPET is format_named(name)


class TestParse:
    def test_forced_format_takes_blocks_without_placeholders(self) -> None:
        """With the format named, every path-named block is a snippet."""
        text = "src/x.py\n```python\ndef f():\n    return 2\n```\n"

        script = parse_edits(text, "lazy")

        assert (LazySnippet("def f():\n    return 2\n"),) == script.edits[0].ops

    def test_unclosed_fence_is_truncated_output(self) -> None:
        """A reply that stops inside the fence is TRUNCATED_OUTPUT, not an edit."""
        script = parse_edits("src/x.py\n```python\n# ...\ndef f():\n    ret")

        assert () == script.edits
        assert FailureCode.TRUNCATED_OUTPUT is script.problems[0].code

    def test_whole_file_named_explicitly_is_explicit(self) -> None:
        """`--format whole_file` marks the content as the whole file, with no region reading."""
        text = "src/x.py\n```python\ndef f():\n    return 2\n```\n"

        assert (WholeContent("def f():\n    return 2\n", explicit=True),) == parse_edits(
            text, "whole_file"
        ).edits[0].ops
        assert (WholeContent("def f():\n    return 2\n"),) == parse_edits(text).edits[0].ops

    def test_nothing_found(self) -> None:
        """Text without a named fence is a covering problem."""
        script = lazy_snippet.parse("no code here\n")

        assert () == script.edits
        assert script.problems
