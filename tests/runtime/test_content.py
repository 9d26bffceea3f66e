"""`EncodedText`: bytes kept as the text that encodes to them, read a chunk at a time."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.formats.script import Action
from patchsmith.runtime import content as content_module
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import (
    EncodedText,
    content_bytes,
    content_head,
    content_size,
    holds_chunks,
    same_content,
    sha256_of,
)
from patchsmith.runtime.gitdiff import render_git_diff, render_git_diff_bytes

CODECS = ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "latin-1")
BOMS = {
    "utf-8": b"\xef\xbb\xbf",
    "utf-16-le": b"\xff\xfe",
    "utf-16-be": b"\xfe\xff",
    "utf-32-le": b"\xff\xfe\x00\x00",
    "utf-32-be": b"\x00\x00\xfe\xff",
    "latin-1": b"",
}
# Texts every codec can encode (Latin-1 is the narrowest), with line breaks of both kinds.
_TEXT = st.text(
    alphabet=st.sampled_from(list("ab \t\r\n\x1c\xe9\xff")) | st.characters(max_codepoint=0xFF),
    max_size=200,
)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 characters: every test text spans many chunks."""
    monkeypatch.setattr(content_module, "CHUNK_CHARS", 3)


@pytest.mark.usefixtures("small_chunks")
class TestEncodedText:
    @given(text=_TEXT, codec=st.sampled_from(CODECS), with_bom=st.booleans())
    def test_chunks_are_the_whole_encoding(self, text: str, codec: str, with_bom: bool) -> None:
        """The chunks, the size, the head and the hash are those of `bom + text.encode()`."""
        assert content_module.CHUNK_CHARS == 3
        bom = BOMS[codec] if with_bom else b""
        whole = bom + text.encode(codec)
        kept = EncodedText(text, codec, bom)
        assert b"".join(kept) == whole == kept.encode() == content_bytes(kept)
        assert b"".join(kept) == whole  # a second pass gives the same chunks
        assert content_size(kept) == len(whole)
        assert content_head(kept, 7) == whole[:7]
        assert sha256_of(kept) == hashlib.sha256(whole).hexdigest()
        assert all(chunk for chunk in kept)

    def test_a_codec_with_state_is_refused(self) -> None:
        """A codec that writes its own BOM would write it once per chunk."""
        with pytest.raises(ValueError, match="stateless"):
            EncodedText("x", "utf-16")

    @given(a=_TEXT, b=_TEXT, codec_a=st.sampled_from(CODECS), codec_b=st.sampled_from(CODECS))
    def test_same_content_is_byte_equality(
        self, a: str, b: str, codec_a: str, codec_b: str
    ) -> None:
        """Kept texts compare by their bytes, against bytes or texts in another codec."""
        left, right = EncodedText(a, codec_a), EncodedText(b, codec_b)
        expected = a.encode(codec_a) == b.encode(codec_b)
        assert same_content(left, right) is expected
        assert same_content(left, b.encode(codec_b)) is expected
        assert same_content(a.encode(codec_a), right) is expected
        assert same_content(left, None) is False
        assert same_content(None, None) is True

    @given(data=st.binary(max_size=40), cut=st.integers(0, 40))
    def test_holds_chunks(self, data: bytes, cut: int) -> None:
        """Chunks are held when they join to the data exactly, never a prefix or more."""
        assert holds_chunks(data, [data[:cut], data[cut:]])
        assert not holds_chunks(data, [data[:cut]]) or cut >= len(data)
        assert not holds_chunks(data, [data, b"x"])


class TestFileChange:
    def test_a_kept_side_reads_as_bytes(self) -> None:
        """`old_bytes`/`new_bytes` are bytes whichever way they are kept; `*_content`
        shows how they are kept."""
        kept = EncodedText("caf\xe9\n", "latin-1")
        change = FileChange("f.txt", Action.UPDATE, "f.txt", b"cafe\n", kept, "cafe\n")
        assert change.new_bytes == b"caf\xe9\n"
        assert change.new_content is kept
        assert change.old_content == b"cafe\n"

    def test_equality_replace_and_pickle_see_the_bytes(self) -> None:
        """A change kept as text equals the same change kept as bytes; `replace` and
        pickling keep the bytes."""
        old, new = EncodedText("a\n", "utf-8"), EncodedText("b\n", "utf-8")
        kept = FileChange("f.txt", Action.UPDATE, "f.txt", old, new)
        whole = FileChange("f.txt", Action.UPDATE, "f.txt", b"a\n", b"b\n")
        assert kept == whole
        assert hash(kept) == hash(whole)
        moved = dataclasses.replace(kept, reason="why")
        assert moved.new_bytes == b"b\n"
        assert moved.reason == "why"
        assert dataclasses.replace(kept, new_bytes=b"c\n").new_bytes == b"c\n"
        assert pickle.loads(pickle.dumps(kept)) == whole
        assert kept != dataclasses.replace(whole, new_bytes=b"c\n")

    def test_the_bytes_are_required(self) -> None:
        """Both bytes fields stay required arguments, as before."""
        with pytest.raises(TypeError):
            FileChange("f.txt", Action.UPDATE, "f.txt")  # type: ignore[call-arg]


_LINE = st.text(alphabet="abc \t\r\xe9\xff\u0100", max_size=6).map(lambda line: line + "\n")
_LINES = st.lists(_LINE, max_size=12).map("".join) | st.text(alphabet="ab\xe9\n", max_size=20)


@given(old=_LINES, new=_LINES, codec=st.sampled_from(("utf-8", "latin-1")))
def test_git_diff_of_kept_texts_is_the_diff_of_the_bytes(old: str, new: str, codec: str) -> None:
    """The git diff of a change kept as texts in UTF-8 or Latin-1 (diffed as texts) is
    byte for byte the diff of the same change kept as bytes."""
    if codec == "latin-1":
        old, new = old.replace("\u0100", "A"), new.replace("\u0100", "A")
    as_bytes = FileChange(
        "f.txt", Action.UPDATE, "f.txt", old.encode(codec), new.encode(codec), old, new
    )
    as_text = FileChange(
        "f.txt",
        Action.UPDATE,
        "f.txt",
        EncodedText(old, codec),
        EncodedText(new, codec),
        old,
        new,
    )
    assert render_git_diff_bytes([as_text]) == render_git_diff_bytes([as_bytes])
    assert render_git_diff([as_text]) == render_git_diff([as_bytes])


@pytest.mark.parametrize(
    ("old", "new", "codec", "bom"),
    [
        ("caf\xe9\nb\n", "caf\xe9\nc\n", "utf-8", b""),
        ("a\nb\n", "a\nc\n", "utf-8", b"\xef\xbb\xbf"),
        ("a\nb\n", "a\nc\n", "utf-16-le", b"\xff\xfe"),
        ("caf\xe9\nb\n", "caf\xe9\nc\n", "latin-1", b""),
        ("a\nb", "a\nb\n", "utf-8", b""),
    ],
)
def test_git_diff_of_other_kept_texts(old: str, new: str, codec: str, bom: bytes) -> None:
    """Non-ASCII, BOM and wide texts give the diff of their bytes too."""
    old_bytes, new_bytes = bom + old.encode(codec), bom + new.encode(codec)
    as_bytes = FileChange("f.txt", Action.UPDATE, "f.txt", old_bytes, new_bytes, old, new)
    as_text = FileChange(
        "f.txt",
        Action.UPDATE,
        "f.txt",
        EncodedText(old, codec, bom),
        EncodedText(new, codec, bom),
        old,
        new,
    )
    assert render_git_diff_bytes([as_text]) == render_git_diff_bytes([as_bytes])
    assert render_git_diff([as_text]) == render_git_diff([as_bytes])
