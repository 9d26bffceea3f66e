"""Tests for the empty-write and file-size guards."""

from __future__ import annotations

from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.content import EmptyWriteGuard, FileSizeGuard
from patchsmith.policy import DEFAULT_MAX_FILE_BYTES, Policy


class TestEmptyWriteGuard:
    def test_emptying_a_file_is_refused(self) -> None:
        """Updating a non-empty file to empty content is EMPTY_WRITE."""
        failures = EmptyWriteGuard().check([update("app.py", "print(1)\n", "")], context())

        assert [FailureCode.EMPTY_WRITE] == [f.code for f in failures]
        assert "allow_delete" in (failures[0].hint or "")

    def test_whitespace_only_counts_as_empty(self) -> None:
        """Leaving only blank lines is refused too."""
        assert 1 == len(EmptyWriteGuard().check([update("a.py", "x = 1\n", "\n\n")], context()))

    def test_explicit_delete_passes(self) -> None:
        """A DELETE is the explicit way to remove a file."""
        assert [] == EmptyWriteGuard().check([delete("a.py", "x = 1\n")], context())

    def test_creating_an_empty_file_passes(self) -> None:
        """An empty new `__init__.py` is an ordinary edit."""
        assert [] == EmptyWriteGuard().check([create("pkg/__init__.py", "")], context())

    def test_empty_file_staying_empty_passes(self) -> None:
        """A file that was already blank may stay blank."""
        assert [] == EmptyWriteGuard().check([update("a.txt", "\n", "")], context())

    def test_one_character_left_passes(self) -> None:
        """Near miss: any non-blank content is a real write."""
        assert [] == EmptyWriteGuard().check([update("a.txt", "abc\n", "a")], context())


class TestFileSizeGuard:
    def test_default_limit_allows_large_source(self) -> None:
        """A 1 MiB file is well within the default limit."""
        big = "x" * (1024 * 1024)

        assert DEFAULT_MAX_FILE_BYTES > len(big)
        assert [] == FileSizeGuard().check([create("big.txt", big)], context())

    def test_over_limit_is_refused(self) -> None:
        """One byte over `max_file_bytes` is FILE_TOO_LARGE, with both sizes."""
        failures = FileSizeGuard().check(
            [create("a.txt", "x" * 1001)], context(Policy(max_file_bytes=1000))
        )

        assert [FailureCode.FILE_TOO_LARGE] == [f.code for f in failures]
        assert "1001 bytes (limit 1000)" in failures[0].message

    def test_at_limit_passes(self) -> None:
        """Exactly `max_file_bytes` passes."""
        assert [] == FileSizeGuard().check(
            [create("a.txt", "x" * 1000)], context(Policy(max_file_bytes=1000))
        )

    def test_delete_has_no_size(self) -> None:
        """A deletion writes nothing."""
        assert [] == FileSizeGuard().check(
            [delete("a.txt", "x" * 5000)], context(Policy(max_file_bytes=10))
        )
