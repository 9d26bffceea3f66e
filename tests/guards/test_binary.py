"""Tests for the binary-content guard."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.binary import BinaryContentGuard


class TestBinaryContentGuard:
    def test_nul_in_new_content_is_refused(self) -> None:
        """A NUL byte in the new content is BINARY_CONTENT, with its offset."""
        failures = BinaryContentGuard().check(
            [create("data.bin", b"PK\x03\x04\x00rest")], context()
        )

        assert [FailureCode.BINARY_CONTENT] == [f.code for f in failures]
        assert "byte 4" in failures[0].message
        assert "binary_content" == failures[0].rule

    def test_nul_after_probe_window_passes(self) -> None:
        """A NUL beyond the first 8000 bytes is not looked at (as git does)."""
        content = b"a" * 8000 + b"\x00"

        assert [] == BinaryContentGuard().check([create("x.txt", content)], context())

    def test_nul_at_last_probed_byte_is_refused(self) -> None:
        """A NUL at byte 7999 is still inside the window."""
        content = b"a" * 7999 + b"\x00"

        assert 1 == len(BinaryContentGuard().check([create("x.txt", content)], context()))

    def test_deleting_a_binary_file_passes(self) -> None:
        """Deleting binary content writes nothing, so it passes."""
        assert [] == BinaryContentGuard().check([delete("x.bin", b"\x00\x01")], context())

    def test_replacing_binary_with_text_passes(self) -> None:
        """Only the new side is judged."""
        assert [] == BinaryContentGuard().check([update("x", b"\x00", "text\n")], context())

    @given(st.binary(max_size=200).filter(lambda b: b"\x00" not in b))
    def test_bytes_without_nul_always_pass(self, data: bytes) -> None:
        """Any content without a NUL passes."""
        assert [] == BinaryContentGuard().check([create("f", data)], context())
