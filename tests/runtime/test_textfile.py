"""Decoding files exactly: encodings, BOMs, line endings, binary detection, encode errors."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.textfile import TextEncoding, TextFile, decode_file, encode_text


def _decoded(raw: bytes) -> TextFile:
    result = decode_file("f.txt", raw, 0o644)
    assert isinstance(result, TextFile), result
    return result


class TestDecodeFile:
    def test_utf8_plain(self) -> None:
        """UTF-8 without BOM decodes as UTF-8 with an empty BOM."""
        tf = _decoded("héllo\n".encode())

        assert ("héllo\n", TextEncoding.UTF_8, b"") == (tf.text, tf.encoding, tf.bom)

    def test_crlf_is_kept(self) -> None:
        """CRLF and lone CR line endings stay in the text exactly."""
        tf = _decoded(b"a\r\nb\rc\n")

        assert "a\r\nb\rc\n" == tf.text

    def test_utf8_bom(self) -> None:
        """A UTF-8 BOM is kept apart from the text."""
        tf = _decoded(b"\xef\xbb\xbfx = 1\r\n")

        assert ("x = 1\r\n", TextEncoding.UTF_8, b"\xef\xbb\xbf") == (tf.text, tf.encoding, tf.bom)

    @pytest.mark.parametrize(
        ("bom", "encoding"),
        [
            (b"\xff\xfe", TextEncoding.UTF_16_LE),
            (b"\xfe\xff", TextEncoding.UTF_16_BE),
            (b"\xff\xfe\x00\x00", TextEncoding.UTF_32_LE),
            (b"\x00\x00\xfe\xff", TextEncoding.UTF_32_BE),
        ],
    )
    def test_utf16_and_utf32_with_bom(self, bom: bytes, encoding: TextEncoding) -> None:
        """UTF-16 and UTF-32 files with a BOM are text despite their NUL bytes."""
        raw = bom + "hi ✓\r\n".encode(encoding.value)
        tf = _decoded(raw)

        assert ("hi ✓\r\n", encoding, bom) == (tf.text, tf.encoding, tf.bom)

    def test_utf16_le_bom_that_is_not_utf32(self) -> None:
        """`FF FE 00 00` that is not UTF-32 is UTF-16 starting with NUL, so binary."""
        raw = b"\xff\xfe" + "\x00ab".encode("utf-16-le")
        result = decode_file("f.txt", raw, 0o644)

        assert isinstance(result, PatchFailure)
        assert FailureCode.BINARY_FILE == result.code

    def test_latin1_fallback(self) -> None:
        """Bytes that are not UTF-8 decode as Latin-1, recorded as such."""
        tf = _decoded(b"caf\xe9\n")

        assert ("café\n", TextEncoding.LATIN_1) == (tf.text, tf.encoding)

    def test_bad_utf8_after_bom_is_latin1(self) -> None:
        """A UTF-8 BOM followed by invalid UTF-8 falls back to Latin-1 of the whole file."""
        raw = b"\xef\xbb\xbfcaf\xe9"
        tf = _decoded(raw)

        assert (TextEncoding.LATIN_1, b"") == (tf.encoding, tf.bom)
        assert raw == encode_text(tf, tf.text)

    def test_binary_nul(self) -> None:
        """A NUL byte in the first 8000 bytes means BINARY_FILE, with its offset."""
        result = decode_file("img.png", b"\x89PNG\r\n\x1a\n\x00\x00", 0o644)

        assert isinstance(result, PatchFailure)
        assert FailureCode.BINARY_FILE == result.code
        assert "offset 8" in result.message
        assert "img.png" == result.file

    def test_nul_after_8000_bytes_is_text(self) -> None:
        """A NUL beyond the first 8000 bytes does not make the file binary (git's rule)."""
        tf = _decoded(b"a" * 8000 + b"\x00")

        assert TextEncoding.UTF_8 == tf.encoding

    def test_nul_in_utf16_text_is_binary(self) -> None:
        """A NUL character inside BOM-decoded text is binary."""
        result = decode_file("f", b"\xff\xfe" + "a\x00".encode("utf-16-le"), 0o644)

        assert isinstance(result, PatchFailure)
        assert FailureCode.BINARY_FILE == result.code

    def test_sha256_and_mode(self) -> None:
        """`sha256` is over the raw bytes and the mode is recorded."""
        raw = b"\xef\xbb\xbfx\r\n"
        result = decode_file("f", raw, 0o755)

        assert isinstance(result, TextFile)
        assert hashlib.sha256(raw).hexdigest() == result.sha256
        assert (0o755, raw) == (result.mode, result.raw)

    def test_empty_file(self) -> None:
        """An empty file is empty UTF-8 text."""
        tf = _decoded(b"")

        assert ("", TextEncoding.UTF_8, b"") == (tf.text, tf.encoding, tf.bom)

    @given(st.binary(max_size=300))
    def test_round_trip_is_identity(self, raw: bytes) -> None:
        """Decoding then encoding the same text gives back the exact bytes."""
        result = decode_file("f", raw, 0o644)

        if isinstance(result, TextFile):
            assert raw == encode_text(result, result.text)
        else:
            assert FailureCode.BINARY_FILE == result.code

    @given(st.text(max_size=100), st.sampled_from(list(TextEncoding)), st.booleans())
    def test_round_trip_of_encoded_text(
        self, text: str, encoding: TextEncoding, with_bom: bool
    ) -> None:
        """Text written in any supported encoding decodes back to the same bytes."""
        boms = {
            TextEncoding.UTF_8: b"\xef\xbb\xbf",
            TextEncoding.UTF_16_LE: b"\xff\xfe",
            TextEncoding.UTF_16_BE: b"\xfe\xff",
            TextEncoding.UTF_32_LE: b"\xff\xfe\x00\x00",
            TextEncoding.UTF_32_BE: b"\x00\x00\xfe\xff",
        }
        try:
            raw = (boms.get(encoding, b"") if with_bom else b"") + text.encode(encoding.value)
        except UnicodeEncodeError:
            return
        result = decode_file("f", raw, 0o644)

        if isinstance(result, TextFile):
            assert raw == encode_text(result, result.text)


class TestEncodeText:
    def test_keeps_bom_and_encoding(self) -> None:
        """New text is written with the original BOM and encoding."""
        tf = _decoded(b"\xff\xfe" + "a\r\n".encode("utf-16-le"))

        assert b"\xff\xfe" + "b\r\n".encode("utf-16-le") == encode_text(tf, "b\r\n")

    def test_latin1_stays_latin1(self) -> None:
        """A Latin-1 file gets Latin-1 bytes back."""
        tf = _decoded(b"caf\xe9\n")

        assert b"th\xe9\n" == encode_text(tf, "thé\n")

    def test_unencodable_character(self) -> None:
        """A character the encoding lacks is ENCODING_ERROR naming it and its position."""
        tf = _decoded(b"caf\xe9\n")
        result = encode_text(tf, "ok\nan — dash\n")

        assert isinstance(result, PatchFailure)
        assert FailureCode.ENCODING_ERROR == result.code
        assert "U+2014" in result.message
        assert "line 2, column 4" in result.message
        assert "latin-1" in result.message

    def test_lone_surrogate_in_utf8(self) -> None:
        """A lone surrogate cannot be written to a UTF-8 file."""
        tf = _decoded(b"x\n")
        result = encode_text(tf, "\ud800")

        assert isinstance(result, PatchFailure)
        assert FailureCode.ENCODING_ERROR == result.code
        assert "line 1, column 1" in result.message
