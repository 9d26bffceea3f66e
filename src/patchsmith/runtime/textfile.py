"""`TextFile`: a file's bytes decoded exactly, so that writing it back changes nothing else.

Line endings stay in the text as they were (the engine deals with CRLF), the BOM is
kept apart, and the encoding is one of a few whose decode→encode round trip is exact.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from enum import StrEnum
from typing import NamedTuple

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.content import CHUNK_CHARS, Content, EncodedText, sha256_of

__all__ = [
    "BINARY_SNIFF_BYTES",
    "TextEncoding",
    "TextFile",
    "decode_file",
    "encode_text",
    "encoded_lazily",
    "encodes_back",
]

BINARY_SNIFF_BYTES = 8000
"""A NUL byte within this many leading bytes marks a file as binary (git's rule)."""


class TextEncoding(StrEnum):
    """How a file's bytes were decoded; each value is a Python codec name."""

    UTF_8 = "utf-8"
    UTF_16_LE = "utf-16-le"
    UTF_16_BE = "utf-16-be"
    UTF_32_LE = "utf-32-le"
    UTF_32_BE = "utf-32-be"
    LATIN_1 = "latin-1"
    """Fallback for bytes that are not UTF-8: every byte maps to one character."""


# UTF-32 first: its little-endian BOM starts with the UTF-16 one.
_BOMS: tuple[tuple[bytes, TextEncoding], ...] = (
    (b"\x00\x00\xfe\xff", TextEncoding.UTF_32_BE),
    (b"\xff\xfe\x00\x00", TextEncoding.UTF_32_LE),
    (b"\xef\xbb\xbf", TextEncoding.UTF_8),
    (b"\xfe\xff", TextEncoding.UTF_16_BE),
    (b"\xff\xfe", TextEncoding.UTF_16_LE),
)


class TextFile(NamedTuple):
    """A decoded text file: `bom + text.encode(encoding) == raw` always holds."""

    path: str
    text: str
    encoding: TextEncoding
    bom: bytes
    mode: int
    """Permission bits (e.g. 0o644)."""
    sha256: str
    """Hex SHA-256 of `raw`."""
    raw: bytes
    utf8_errors: int | None = None
    """For a Latin-1 file that is mostly UTF-8 (it holds valid multi-byte UTF-8 sequences):
    how many bytes are not UTF-8. None for every other file."""


def _binary(path: str, where: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.BINARY_FILE,
        message=f"{path} looks binary ({where}); patchsmith edits text files only",
        file=path,
        hint="binary files can be deleted or moved, not edited",
    )


def _decode_with_bom(raw: bytes) -> tuple[str, TextEncoding, bytes] | None:
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom) :].decode(encoding.value), encoding, bom
            except UnicodeDecodeError:
                continue
    return None


def decode_file(path: str, raw: bytes, mode: int) -> TextFile | PatchFailure:
    """Decode `raw` exactly, or BINARY_FILE when it holds a NUL in its first 8000 bytes.

    A BOM selects UTF-8, UTF-16 or UTF-32; otherwise UTF-8, else Latin-1.
    """
    digest = hashlib.sha256(raw).hexdigest()
    decoded = _decode_with_bom(raw)
    if decoded is not None:
        text, encoding, bom = decoded
        if "\x00" in text[:BINARY_SNIFF_BYTES]:
            return _binary(path, f"a NUL character after its {encoding.value} BOM")
    elif b"\x00" in raw[:BINARY_SNIFF_BYTES]:
        offset = raw.index(b"\x00")
        return _binary(path, f"a NUL byte at offset {offset}")
    else:
        try:
            text, encoding = raw.decode("utf-8"), TextEncoding.UTF_8
        except UnicodeDecodeError:
            text, encoding = raw.decode("latin-1"), TextEncoding.LATIN_1
        bom = b""
    utf8_errors = _utf8_errors(raw) if encoding is TextEncoding.LATIN_1 else None
    return TextFile(
        path=path,
        text=text,
        encoding=encoding,
        bom=bom,
        mode=mode,
        sha256=digest,
        raw=raw,
        utf8_errors=utf8_errors,
    )


def _utf8_errors(raw: bytes) -> int | None:
    """Bytes of `raw` that are not UTF-8, if the rest holds multi-byte UTF-8; else None.

    Such a file is UTF-8 with a few damaged bytes, not Latin-1: Latin-1 text added to
    it would be a second encoding in one file.
    """
    decoded = raw.decode("utf-8", "surrogateescape")
    bad = len(re.findall(_ESCAPED, decoded))
    multibyte = len(decoded) - bad - sum(1 for _ in re.finditer(_ASCII, decoded))
    return bad if multibyte > 0 else None


def _damaged_lines(raw: bytes) -> Counter[bytes]:
    """The lines of `raw` that are not valid UTF-8; an edit may keep them, never add one."""
    damaged: Counter[bytes] = Counter()
    for line in raw.split(b"\n"):
        if not line.isascii():
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                damaged[line] += 1
    return damaged


# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_ESCAPED = "[\udc80-\udcff]"
_ASCII = "[\x00-\x7f]"


def _line_and_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def encode_text(tf: TextFile, new_text: str) -> bytes | PatchFailure:
    """`new_text` as bytes in `tf`'s encoding and BOM, or ENCODING_ERROR naming the character.

    A mostly-UTF-8 file read as Latin-1 (see `TextFile.utf8_errors`) takes no new
    non-ASCII text: neither encoding would write it consistently with the rest.
    """
    try:
        encoded = tf.bom + new_text.encode(tf.encoding.value)
    except UnicodeEncodeError as exc:
        char = new_text[exc.start]
        line, column = _line_and_column(new_text, exc.start)
        return PatchFailure(
            code=FailureCode.ENCODING_ERROR,
            message=(
                f"character U+{ord(char):04X} {char!r} at line {line}, column {column} "
                f"cannot be encoded in {tf.path}'s encoding ({tf.encoding.value})"
            ),
            file=tf.path,
            hint=f"use only characters {tf.encoding.value} can represent, or an ASCII escape",
        )
    if (
        tf.utf8_errors is not None
        and not new_text.isascii()
        and _damaged_lines(encoded) - _damaged_lines(tf.raw)
    ):
        return PatchFailure(
            code=FailureCode.ENCODING_ERROR,
            message=(
                f"{tf.path} is UTF-8 except for {tf.utf8_errors} invalid byte(s), so it was "
                "read as Latin-1; the edit adds non-ASCII text, which would be written "
                "in an encoding the rest of the file does not use"
            ),
            file=tf.path,
            hint="add only ASCII text to this file (use escapes), or fix its invalid "
            "bytes so that it is valid UTF-8",
        )
    return encoded


def encoded_lazily(tf: TextFile, new_text: str) -> Content | PatchFailure:
    """What `encode_text` gives, as an `EncodedText` of `new_text` (no second copy of
    the file) whenever that is exactly the same bytes; else `encode_text`'s result.

    The text is checked to encode a chunk at a time; any failure, and the mostly-UTF-8
    Latin-1 file whose check needs the whole bytes, take `encode_text`'s own path.
    """
    if tf.utf8_errors is not None and not new_text.isascii():
        return encode_text(tf, new_text)
    encoding = tf.encoding.value
    if not new_text.isascii():  # ASCII encodes in every one of these codecs
        try:
            for start in range(0, len(new_text), CHUNK_CHARS):
                new_text[start : start + CHUNK_CHARS].encode(encoding)
        except UnicodeEncodeError:
            return encode_text(tf, new_text)
    return EncodedText(new_text, encoding, tf.bom)


def encodes_back(tf: TextFile) -> EncodedText | None:
    """`tf`'s bytes as an `EncodedText` of its text, when that encoding hashes to
    `tf.sha256` (checked a chunk at a time); else `None`."""
    content = EncodedText(tf.text, tf.encoding.value, tf.bom)
    return content if sha256_of(content) == tf.sha256 else None
