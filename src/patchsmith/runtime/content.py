"""A file's content held as bytes, or as the text that encodes to them (`EncodedText`).

A staged change of a big file would otherwise hold its bytes next to its text, each a
full copy of the file. `EncodedText` keeps only the text and the codec, and gives the
bytes a chunk at a time (writing, hashing, comparing) or whole when a caller asks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "CHUNK_CHARS",
    "Content",
    "EncodedText",
    "chunks_of",
    "content_bytes",
    "content_head",
    "content_size",
    "feed",
    "holds_chunks",
    "same_content",
    "sha256_of",
]

CHUNK_CHARS = 1 << 20
"""Characters encoded at a time: a few MB at most, whatever the file's size."""

STATELESS_CODECS = frozenset(
    {"utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "latin-1"}
)
"""Codecs that write no BOM or state of their own, so that encoding a text in pieces
gives exactly the bytes of encoding it whole (strict errors, no surrogates pairing)."""


class _Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...


@dataclass(frozen=True, eq=False)
class EncodedText:
    """The bytes `bom + text.encode(encoding)`, kept as the text and encoded when read.

    Only a stateless codec (`STATELESS_CODECS`) is accepted, and the text must encode
    in it (the stager checks that before it makes one): then each chunk encodes alone
    and the chunks join to the whole.
    """

    text: str
    encoding: str
    bom: bytes = b""
    _size: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.encoding not in STATELESS_CODECS:
            raise ValueError(f"{self.encoding} is not a stateless codec")

    def __iter__(self) -> Iterator[bytes]:
        """The bytes a chunk at a time (the BOM first); a new pass each call."""
        if self.bom:
            yield self.bom
        yield from self._chunks_without_bom()

    def encode(self) -> bytes:
        """The whole bytes (a full copy: for callers that need one object)."""
        return self.bom + self.text.encode(self.encoding)

    @property
    def size(self) -> int:
        """How many bytes the text encodes to (counted once, a chunk at a time)."""
        if not self._size:
            if self.text.isascii() and self.encoding in ("utf-8", "latin-1"):
                count = len(self.text)
            else:
                count = sum(len(chunk) for chunk in self._chunks_without_bom())
            self._size.append(len(self.bom) + count)
        return self._size[0]

    def head(self, count: int) -> bytes:
        """The first `count` bytes (at most)."""
        # A character is at most 4 bytes in any of these codecs.
        return (self.bom + self.text[:count].encode(self.encoding))[:count]

    def _chunks_without_bom(self) -> Iterator[bytes]:
        text, encoding = self.text, self.encoding
        for start in range(0, len(text), CHUNK_CHARS):
            yield text[start : start + CHUNK_CHARS].encode(encoding)


Content = bytes | EncodedText
"""A file's bytes, whole or as the text that encodes to them."""


def content_bytes(content: Content | None) -> bytes | None:
    """The whole bytes of `content` (encoded now when it is a text)."""
    return content.encode() if isinstance(content, EncodedText) else content


def content_size(content: Content) -> int:
    """The number of bytes of `content`, without encoding it whole."""
    return content.size if isinstance(content, EncodedText) else len(content)


def content_head(content: Content, count: int) -> bytes:
    """The first `count` bytes of `content`."""
    return content.head(count) if isinstance(content, EncodedText) else content[:count]


def chunks_of(content: Content) -> Iterable[bytes]:
    """`content` as a sequence of byte chunks (bytes are one chunk)."""
    return content if isinstance(content, EncodedText) else (content,)


def feed(hasher: _Hasher, content: Content) -> None:
    """`hasher.update` with every byte of `content`, a chunk at a time."""
    for chunk in chunks_of(content):
        hasher.update(chunk)


def sha256_of(content: Content | None) -> str | None:
    """The hex SHA-256 of `content`'s bytes, `None` when absent."""
    if content is None:
        return None
    digest = hashlib.sha256()
    feed(digest, content)
    return digest.hexdigest()


def same_content(a: Content | None, b: Content | None) -> bool:
    """Whether `a` and `b` are the same bytes (both absent counts as the same)."""
    if a is None or b is None:
        return a is b
    if isinstance(a, bytes) and isinstance(b, bytes):
        return a == b
    if (
        isinstance(a, EncodedText)
        and isinstance(b, EncodedText)
        and (a.encoding, a.bom) == (b.encoding, b.bom)
    ):
        # the same codec is injective: the bytes are equal exactly when the texts are
        return a.text == b.text
    if content_size(a) != content_size(b):
        return False
    whole, pieces = (a, b) if isinstance(a, bytes) else (b, a)
    if not isinstance(whole, bytes):  # two texts in different codecs: rare and small
        whole = whole.encode()
    return holds_chunks(whole, chunks_of(pieces))


def holds_chunks(data: bytes, chunks: Iterable[bytes]) -> bool:
    """Whether `chunks`, joined, are exactly `data` (compared in place, never joined)."""
    at = 0
    for chunk in chunks:
        if not data.startswith(chunk, at):
            return False
        at += len(chunk)
    return at == len(data)
