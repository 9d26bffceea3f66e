"""Merging lazy edit snippets by their anchors (`patchsmith.engine.lazy`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.lazy import (
    MergeKind,
    SnippetMerge,
    SnippetRefusal,
    SnippetRefused,
    merge_snippet,
)
from patchsmith.engine.placeholder import is_placeholder_shape, placeholders_absent_from

FILE = "".join(f"line {i}\n" for i in range(1, 31))


def lines(*numbers: int) -> str:
    return "".join(f"line {i}\n" for i in numbers)


def merged(result: SnippetMerge | SnippetRefused) -> SnippetMerge:
    assert isinstance(result, SnippetMerge), result
    return result


def refused(result: SnippetMerge | SnippetRefused) -> SnippetRefused:
    assert isinstance(result, SnippetRefused), result
    return result


class TestLazyMerge:
    def test_whole_file_with_elided_stretches(self) -> None:
        """The top and the end of the file are given; the placeholder keeps what lay between."""
        snippet = lines(1, 2) + "NEW\n" + lines(3) + "# ... existing code ...\n" + lines(29, 30)

        result = merged(merge_snippet(FILE, snippet, "x.py"))

        assert MergeKind.LAZY is result.kind
        assert lines(1, 2) + "NEW\n" + "".join(lines(i) for i in range(3, 31)) == result.text

    def test_region_between_placeholders(self) -> None:
        """A chunk between placeholders replaces exactly the stretch its anchors enclose."""
        snippet = "# ...\n" + lines(10) + "CHANGED\n" + lines(12) + "# ... rest unchanged\n"

        result = merged(merge_snippet(FILE, snippet, "x.py"))

        expected = FILE.replace("line 11\n", "CHANGED\n")
        assert expected == result.text

    def test_multi_region(self) -> None:
        """Two chunks, each anchored, change two places; everything else is kept."""
        snippet = (
            "// ...\n"
            + lines(4)
            + "A\n"
            + lines(5)
            + "// ...\n"
            + lines(20)
            + "B\n"
            + lines(21)
            + "// ...\n"
        )

        result = merged(merge_snippet(FILE, snippet, "x.js"))

        expected = FILE.replace("line 5\n", "A\nline 5\n").replace("line 21\n", "B\nline 21\n")
        assert expected == result.text

    def test_ambiguous_anchor_refused_with_candidates(self) -> None:
        """Lines next to a placeholder that occur twice, with nothing to choose, refuse."""
        text = "a\nx\ny\nb\nx\ny\nc\n"
        snippet = "# ...\nx\nNEW\ny\n# ...\n"

        result = refused(merge_snippet(text, snippet, "x.py"))

        assert SnippetRefusal.AMBIGUOUS is result.reason
        assert (1, 4) == result.candidates

    def test_absent_anchor_refused(self) -> None:
        """A region written for another file has no anchor here."""
        result = refused(merge_snippet(FILE, "# ...\nother\nNEW\n# ...\n", "x.py"))

        assert SnippetRefusal.NO_ANCHOR is result.reason

    def test_valid_region_then_absent_one_refuses_everything(self) -> None:
        """Never half-apply: one bad chunk refuses the whole snippet."""
        snippet = "# ...\n" + lines(3) + "NEW\n" + lines(4) + "# ...\nnowhere\n# ...\n"

        assert isinstance(merge_snippet(FILE, snippet, "x.py"), SnippetRefused)

    def test_chunks_out_of_order_refused(self) -> None:
        """A chunk anchored before the chunk above it is not guessed into place."""
        snippet = "# ...\n" + lines(20, 21) + "# ...\n" + lines(5, 6) + "# ...\n"

        result = refused(merge_snippet(FILE, snippet, "x.py"))

        assert SnippetRefusal.OUT_OF_ORDER is result.reason

    def test_placeholder_line_already_in_file_is_code(self) -> None:
        """`# ...` that the file holds is an ordinary line, not an elision."""
        text = "a\n# ...\nb\n"

        result = merged(merge_snippet(text, "a\n# ...\nb\nc\n", "x.py", region=False))

        assert MergeKind.WHOLE is result.kind
        assert "a\n# ...\nb\nc\n" == result.text

    def test_crlf_file_keeps_its_endings(self) -> None:
        """Chunk lines are written with the file's line endings."""
        text = FILE.replace("\n", "\r\n")
        snippet = "# ...\n" + lines(10) + "NEW\n" + lines(11) + "# ...\n"

        result = merged(merge_snippet(text, snippet, "x.py"))

        assert text.replace("line 10\r\n", "line 10\r\nNEW\r\n") == result.text

    def test_trailing_whitespace_does_not_break_an_anchor(self) -> None:
        """Anchors compare lines without trailing whitespace."""
        snippet = "# ...\nline 10   \nNEW\nline 11\n# ...\n"

        result = merged(merge_snippet(FILE, snippet, "x.py"))

        assert FILE.replace("line 10\n", "line 10   \nNEW\n") == result.text

    def test_empty_file_takes_the_text(self) -> None:
        """Nothing to merge into: the text is the file."""
        assert SnippetMerge("a\n", MergeKind.WHOLE) == merge_snippet("", "a\n", "x.py")


class TestBareRegion:
    def test_short_block_replaces_its_stretch(self) -> None:
        """A block much shorter than the file, anchored at both ends, is a region."""
        block = lines(12) + "NEW\n" + lines(13)

        result = merged(merge_snippet(FILE, block, "x.py"))

        assert MergeKind.REGION is result.kind
        assert FILE.replace("line 13\n", "NEW\nline 13\n") == result.text

    def test_quoted_block_changes_nothing(self) -> None:
        """A verbatim excerpt merges to the file as it is (the caller reports NO_CHANGE)."""
        assert FILE == merged(merge_snippet(FILE, lines(5, 6, 7), "x.py")).text

    def test_unplaceable_block_refused(self) -> None:
        """A short block whose ends are nowhere in the file is refused, not written whole."""
        assert isinstance(merge_snippet(FILE, "def other():\n    pass\n", "x.py"), SnippetRefused)

    def test_long_block_is_the_whole_file(self) -> None:
        """A block with more than a third of the file's lines is plausibly the whole file."""
        block = "".join(f"line {i}\n" for i in range(1, 20))

        assert MergeKind.WHOLE is merged(merge_snippet(FILE, block, "x.py")).kind

    def test_block_under_half_inside_the_file_is_a_region(self) -> None:
        """Between a third and half of the file, a block placed below its first line is a
        region (functions of short files are that long)."""
        block = "".join(f"line {i}\n" for i in range(5, 12)) + "NEW\n" + lines(*range(12, 18))

        result = merged(merge_snippet(FILE, block, "x.py"))

        assert MergeKind.REGION is result.kind
        assert FILE.replace("line 12\n", "NEW\nline 12\n") == result.text

    def test_block_under_half_from_the_top_is_the_whole_file(self) -> None:
        """The same length starting at the file's first line reads as a whole file cut off by
        a length limit (the omission guards then refuse it), never as a region."""
        block = "".join(f"line {i}\n" for i in range(1, 8)) + "NEW\n" + lines(*range(8, 14))

        assert SnippetMerge(block, MergeKind.WHOLE) == merge_snippet(FILE, block, "x.py")

    def test_block_under_half_without_its_place_is_the_whole_file(self) -> None:
        """Between a third and half, a block whose ends are not in the file stays a whole file
        (below a third it is refused as a region)."""
        block = "".join(f"other {i}\n" for i in range(14))

        assert SnippetMerge(block, MergeKind.WHOLE) == merge_snippet(FILE, block, "x.py")

    def test_block_of_half_the_file_is_the_whole_file(self) -> None:
        block = "".join(f"line {i}\n" for i in range(5, 19)) + "NEW\n"

        assert MergeKind.WHOLE is merged(merge_snippet(FILE, block, "x.py")).kind

    VERSIONED = (
        "".join(f"from .m{i} import f{i}\n" for i in range(30)) + '\n__version__ = "8.1.7"\n'
    )

    def test_region_changing_the_last_line_reaches_the_end(self) -> None:
        """The file's last line in a close variant: the region runs to the end of the file."""
        block = 'from .m28 import f28\nfrom .m29 import f29\n\n__version__ = "8.1.8"\n'

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        assert self.VERSIONED.replace("8.1.7", "8.1.8") == result.text

    def test_region_appending_at_the_end(self) -> None:
        block = '\n__version__ = "8.1.7"\n__all__ = []\n'

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        assert self.VERSIONED + "__all__ = []\n" == result.text

    def test_region_with_a_new_last_line_unlike_the_files_is_refused(self) -> None:
        """`del f29` may replace the version line or follow the line above it: refused."""
        block = "from .m28 import f28\nfrom .m29 import f29\n\ndel f29\n"

        assert (
            SnippetRefusal.NO_ANCHOR is refused(merge_snippet(self.VERSIONED, block, "x.py")).reason
        )

    def test_region_ending_before_the_file_does_is_refused(self) -> None:
        """Two file lines after the region's matching lines: it may end before them."""
        block = "from .m27 import f27\nfrom .m28 import f28\nfrom .m29 import f29, g\n"

        assert isinstance(merge_snippet(self.VERSIONED, block, "x.py"), SnippetRefused)

    def test_region_holding_the_last_lines_and_appending_reaches_the_end(self) -> None:
        """It changes a line above and appends one: it holds the file's last two lines, the
        last unique, so it runs to the end whatever it changed before them."""
        block = "from .m28 import f28\nfrom .m29 import f29, g29\n"
        block += '\n__version__ = "8.1.7"\n__all__ = []\n'

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        expected = self.VERSIONED.replace("import f29\n", "import f29, g29\n") + "__all__ = []\n"
        assert expected == result.text

    def test_region_holding_a_repeated_last_line_is_refused(self) -> None:
        """The file's last line occurs twice in the file: holding it proves nothing."""
        text = self.VERSIONED + "pass\npass\n"
        block = "from .m29 import f29, g29\n\npass\npass\nnew = 1\n"

        assert isinstance(merge_snippet(text, block, "x.py"), SnippetRefused)

    def test_region_changing_the_first_line_reaches_the_start(self) -> None:
        block = "from .m0 import f0, g0\nfrom .m1 import f1\nfrom .m2 import f2\n"

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        assert self.VERSIONED.replace("import f0\n", "import f0, g0\n") == result.text

    def test_region_holding_the_first_lines_reaches_the_start(self) -> None:
        block = "import os\nfrom .m0 import f0\nfrom .m1 import f1\nfrom .m2 import f2, g2\n"
        block += "from .m3 import f3\n"

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        expected = "import os\n" + self.VERSIONED.replace("import f2\n", "import f2, g2\n")
        assert expected == result.text

    def test_region_prepending_at_the_start(self) -> None:
        block = "import os\nfrom .m0 import f0\nfrom .m1 import f1\n"

        result = merged(merge_snippet(self.VERSIONED, block, "x.py"))

        assert "import os\n" + self.VERSIONED == result.text

    def test_small_files_take_short_blocks_whole(self) -> None:
        """Under 20 lines a short block is the file's new text, not a region."""
        small = lines(1, 2, 3, 4, 5, 6)

        assert SnippetMerge("other\n", MergeKind.WHOLE) == merge_snippet(small, "other\n", "x.py")

    def test_region_reading_can_be_switched_off(self) -> None:
        """`region=False` (an explicit whole file) never reads a block as a region."""
        result = merged(merge_snippet(FILE, lines(5, 6), "x.py", region=False))

        assert SnippetMerge(lines(5, 6), MergeKind.WHOLE) == result


PLACEHOLDERS = [
    ("x.py", "# ... existing code ..."),
    ("x.py", "# ..."),
    ("x.py", "    # … rest of the method unchanged"),
    ("x.js", "// ..."),
    ("x.js", "// ... existing code ..."),
    ("x.ts", "/* ... */"),
    ("x.css", "/* ... other rules ... */"),
    ("x.html", "<!-- ... -->"),
    ("x.md", "<!-- ... rest of the document ... -->"),
    ("x.rst", ".. ... rest of the section unchanged ..."),
    ("x.json", "..."),
    ("x.ts", "  ... rest of the interface"),
    ("x.sql", "-- ..."),
    ("x.ini", "; ... unchanged ..."),
    ("x.jsx", "{/* ... */}"),
]


class TestPlaceholderSyntax:
    @pytest.mark.parametrize(("path", "placeholder"), PLACEHOLDERS)
    def test_each_comment_syntax_is_merged(self, path: str, placeholder: str) -> None:
        """Every placeholder syntax stands for the lines between its anchors."""
        snippet = f"{placeholder}\n" + lines(10) + "NEW\n" + lines(11) + f"{placeholder}\n"

        assert is_placeholder_shape(placeholder, path)
        result = merged(merge_snippet(FILE, snippet, path))

        assert FILE.replace("line 11\n", "NEW\nline 11\n") == result.text

    @pytest.mark.parametrize(
        "line",
        ["x = 1", "...", "# comment", "print('...')", "a = [1, ...]", "# TODO: ... later?", ""],
    )
    def test_python_code_is_not_a_placeholder(self, line: str) -> None:
        """Python's `...` is code; other lines with dots inside are code too."""
        assert not is_placeholder_shape(line, "x.py")

    def test_bare_dots_count_outside_python(self) -> None:
        """A bare `...` elides in JSON and JS, not in Python."""
        assert is_placeholder_shape("...", "data.json")
        assert not is_placeholder_shape("...", "stub.pyi")

    def test_only_lines_absent_from_the_file_are_placeholders(self) -> None:
        """A placeholder-shaped line the file holds is code."""
        assert [1] == placeholders_absent_from(["a", "# ... new", "# ..."], ["# ..."], "x.py")


# -- the property: exactly the edit, or a refusal, and never a placeholder -------------------------

_WORDS = ("a", "b", "c", "", "x = 1", "return y", "}")


@st.composite
def lazy_renderings(draw: st.DrawFn) -> tuple[str, str, str]:
    """A file, an edit of it, and a lazy rendering of the edit (unchanged runs elided)."""
    old = draw(st.lists(st.sampled_from(_WORDS + tuple(f"u{i}" for i in range(8))), max_size=30))
    # The edit: segments of the old file kept or replaced (perhaps by nothing), in order.
    groups: list[tuple[list[str], bool]] = []  # (lines, unchanged)
    index = 0
    while index < len(old):
        step = draw(st.integers(1, 4))
        if draw(st.booleans()) or index == 0:
            kept = old[index : index + step]
            if groups and groups[-1][1]:
                groups[-1][0].extend(kept)
            else:
                groups.append((list(kept), True))
        else:
            replacement = draw(st.lists(st.sampled_from((*_WORDS, "n1", "n2")), max_size=3))
            if groups and not groups[-1][1]:
                groups[-1][0].extend(replacement)
            else:
                groups.append((replacement, False))
        index += step
    new = [(line, unchanged) for run, unchanged in groups for line in run]
    # The rendering: the inner part of some unchanged runs becomes one placeholder line; the
    # lines next to a change stay shown, as context (a lazy snippet shows its changes).
    changed_at = [not unchanged for _, unchanged in groups]
    rendered: list[str] = []
    for number, (run, unchanged) in enumerate(groups):
        if not unchanged:
            rendered.extend(run)
            continue
        head = 1 if number > 0 and changed_at[number - 1] else 0
        tail = 1 if number + 1 < len(groups) and changed_at[number + 1] else 0
        if len(run) > head + tail and draw(st.booleans()):
            rendered += [*run[:head], "# ... existing code ...", *run[len(run) - tail :]]
        else:
            rendered.extend(run)
    text = "".join(line + "\n" for line in old)
    return text, "".join(line + "\n" for line, _ in new), "".join(f"{r}\n" for r in rendered)


class TestProperty:
    @settings(max_examples=200, deadline=None)
    @given(lazy_renderings())
    def test_never_a_placeholder_and_never_a_lost_stretch(self, case: tuple[str, str, str]) -> None:
        """Any lazy rendering merges to a text with no placeholder, holding every chunk line in
        order; or it is refused."""
        old, _, snippet = case
        result = merge_snippet(old, snippet, "x.py", region=False)
        if isinstance(result, SnippetRefused):
            return
        out = result.text.splitlines()
        assert not placeholders_absent_from(out, old.splitlines(), "x.py")
        shown = [s for s in snippet.splitlines() if s != "# ... existing code ..."]
        position = 0
        for line in shown:  # every shown line is in the result, in order
            position = out.index(line, position) + 1

    @settings(max_examples=200, deadline=None)
    @given(lazy_renderings())
    def test_exact_or_refused_when_anchors_are_unique_context(
        self, case: tuple[str, str, str]
    ) -> None:
        """When each placeholder's neighbours are unchanged lines that occur once in the file
        (the lazy format's contract), the merge is exactly the edit, or a refusal."""
        old, new, snippet = case
        old_lines = old.splitlines()
        rendered = snippet.splitlines()
        marks = [i for i, line in enumerate(rendered) if line == "# ... existing code ..."]
        # The generator keeps unchanged lines next to each placeholder; the contract also
        # wants them to occur once in the file (else the first property covers the case).
        neighbours = [j for i in marks for j in (i - 1, i + 1) if 0 <= j < len(rendered)]
        if any(j not in marks and old_lines.count(rendered[j]) != 1 for j in neighbours):
            return
        new_lines = new.splitlines()
        if not marks or new_lines == old_lines:
            return
        result = merge_snippet(old, snippet, "x.py", region=False)
        if isinstance(result, SnippetMerge):
            assert new == result.text
