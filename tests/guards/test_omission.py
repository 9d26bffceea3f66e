"""Tests for the omission guards: placeholders, truncated writes, large removals."""

from __future__ import annotations

from dataclasses import replace

from tests.guards.changes import context, create, update

from patchsmith.errors import FailureCode
from patchsmith.guards.omission import (
    PlaceholderGuard,
    TruncatedWriteGuard,
    WholeFileRemovalGuard,
)
from patchsmith.runtime.change import FileChange

BIG = "".join(f"value_{i} = {i}\n" for i in range(100))


def whole(old: str, new: str, path: str = "conf.py") -> FileChange:
    return update(path, old, new, whole_content=True)


class TestPlaceholderGuard:
    def test_new_placeholder_line_refused(self) -> None:
        """A placeholder the old text does not hold is PLACEHOLDER_WRITTEN, with its line."""
        change = update("a.py", "x = 1\n", "x = 1\n# ... existing code ...\n")

        failures = PlaceholderGuard().check([change], context())

        assert [FailureCode.PLACEHOLDER_WRITTEN] == [f.code for f in failures]
        assert "line(s) 2" in failures[0].message

    def test_placeholder_already_in_file_passes(self) -> None:
        """A line the file already holds is code, even with a placeholder's shape."""
        change = update("a.py", "# ...\nx = 1\n", "# ...\nx = 2\n")

        assert [] == PlaceholderGuard().check([change], context())

    def test_python_ellipsis_passes(self) -> None:
        """A bare `...` is Python code (a stub body)."""
        change = update("a.py", "def f():\n    pass\n", "def f():\n    ...\n")

        assert [] == PlaceholderGuard().check([change], context())

    def test_bare_dots_in_json_refused(self) -> None:
        """In JSON a bare `...` elides."""
        change = update("a.json", '{\n  "a": 1\n}\n', '{\n  "a": 2,\n  ...\n}\n')

        assert 1 == len(PlaceholderGuard().check([change], context()))

    def test_new_file_bare_comment_passes_but_elision_words_refused(self) -> None:
        """A new file loses nothing to `# ...`; "rest of the file" still stands for lost code."""
        guard = PlaceholderGuard()

        assert [] == guard.check([create("n.py", "x = 1\n# ...\n")], context())
        refused = guard.check([create("n.py", "x = 1\n# ... rest of the file ...\n")], context())
        assert 1 == len(refused)


class TestTruncatedWriteGuard:
    def test_whole_write_that_stops_early_refused(self) -> None:
        """The first 60 lines of a 100-line file, written whole, is TRUNCATED_OUTPUT."""
        cut = "".join(BIG.splitlines(keepends=True)[:60])

        failures = TruncatedWriteGuard().check([whole(BIG, cut)], context())

        assert [FailureCode.TRUNCATED_OUTPUT] == [f.code for f in failures]
        assert "full_rewrite" in (failures[0].hint or "")

    def test_full_rewrite_lifts_it(self) -> None:
        """The caller saying it is a full rewrite lets the write through."""
        cut = "".join(BIG.splitlines(keepends=True)[:60])

        ctx = replace(context(), full_rewrite=True)

        assert [] == TruncatedWriteGuard().check([whole(BIG, cut)], ctx)

    def test_diff_edits_are_not_whole_writes(self) -> None:
        """The same change made by edits that show each removed line passes."""
        cut = "".join(BIG.splitlines(keepends=True)[:60])

        assert [] == TruncatedWriteGuard().check([update("conf.py", BIG, cut)], context())

    def test_changed_ending_passes(self) -> None:
        """A rewrite of the file's ending (new lines in place of the old) is not truncation."""
        lines = BIG.splitlines(keepends=True)
        new = "".join(lines[:70]) + "".join(f"other_{i} = {i}\n" for i in range(30))

        assert [] == TruncatedWriteGuard().check([whole(BIG, new)], context())

    def test_small_files_pass(self) -> None:
        """Short files (under 40 lines) are rewritten whole for real; they are not judged."""
        small = "".join(f"v{i} = {i}\n" for i in range(30))

        assert [] == TruncatedWriteGuard().check([whole(small, "v0 = 0\n")], context())


class TestWholeFileRemovalGuard:
    def test_most_of_a_large_file_removed_refused(self) -> None:
        """A whole write keeping 20 of 100 lines is LARGE_REMOVAL."""
        excerpt = "".join(BIG.splitlines(keepends=True)[40:60])

        failures = WholeFileRemovalGuard().check([whole(BIG, excerpt)], context())

        assert [FailureCode.LARGE_REMOVAL] == [f.code for f in failures]

    def test_full_rewrite_and_small_removals_pass(self) -> None:
        """`full_rewrite` lifts it; removing a third of the file passes anyway."""
        excerpt = "".join(BIG.splitlines(keepends=True)[40:60])
        two_thirds = "".join(BIG.splitlines(keepends=True)[:66])
        guard = WholeFileRemovalGuard()

        assert [] == guard.check([whole(BIG, excerpt)], replace(context(), full_rewrite=True))
        assert [] == guard.check([whole(BIG, two_thirds)], context())

    def test_truncation_reported_once(self) -> None:
        """A cut-off write is TRUNCATED_OUTPUT's, not also a large removal."""
        cut = "".join(BIG.splitlines(keepends=True)[:45])

        assert [] == WholeFileRemovalGuard().check([whole(BIG, cut)], context())
        assert 1 == len(TruncatedWriteGuard().check([whole(BIG, cut)], context()))
