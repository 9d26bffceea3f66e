"""Git-format diffs of staged `FileChange`s, exact enough that `git apply` replays them.

The diff is computed over bytes, split on `\\n` only, as git does, so CRLF lines and
non-UTF-8 text survive. `render_git_diff` returns text; bytes that are not UTF-8 are
carried as surrogate escapes, so encode it with `"utf-8", "surrogateescape"` (or call
`render_git_diff_bytes`) to get exactly what git would apply. A side with a NUL in its
first 8000 bytes is binary and shown as `Binary files ... differ`, which `git apply`
cannot replay.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import AnyStr, Literal

from patchsmith.engine.linediff import line_opcodes
from patchsmith.formats.script import Action
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import (
    Content,
    EncodedText,
    content_bytes,
    content_head,
    content_size,
    feed,
    same_content,
)
from patchsmith.runtime.diffstat import LineDiff, change_opcodes, line_diff
from patchsmith.runtime.textfile import BINARY_SNIFF_BYTES

__all__ = ["CONTEXT_LINES", "diff_header", "render_git_diff", "render_git_diff_bytes"]

CONTEXT_LINES = 3
_NULL_OID = "0" * 7
_NO_NEWLINE = b"\\ No newline at end of file\n"
_ESCAPES = {
    0x07: b"\\a",
    0x08: b"\\b",
    0x09: b"\\t",
    0x0A: b"\\n",
    0x0B: b"\\v",
    0x0C: b"\\f",
    0x0D: b"\\r",
    0x22: b'\\"',
    0x5C: b"\\\\",
}


_NEEDS_QUOTING = re.compile(rb'[\x00-\x1f\x7f-\xff"\\]')


def _quote(name: str) -> bytes:
    """`name` as git prints it: C-quoted when it holds control, quote or non-ASCII bytes."""
    data = name.encode("utf-8", "surrogateescape")
    if not _NEEDS_QUOTING.search(data):
        return data
    out = bytearray(b'"')
    for byte in data:
        if byte in _ESCAPES:
            out += _ESCAPES[byte]
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


def _prefixed(prefix: str, name: str) -> bytes:
    return _quote(prefix + name)


def _git_mode(mode: int | None) -> bytes:
    return b"100755" if mode is not None and mode & 0o111 else b"100644"


def _blob_id(data: Content | None) -> str:
    if data is None:
        return _NULL_OID
    digest = hashlib.sha1(b"blob %d\x00" % content_size(data), usedforsecurity=False)
    feed(digest, data)  # not `header + data`: that would copy the file
    return digest.hexdigest()[:7]


def _is_binary(data: Content | None) -> bool:
    return data is not None and b"\x00" in content_head(data, BINARY_SNIFF_BYTES)


def _lines(data: bytes | None) -> list[bytes]:
    # Not bytes.splitlines: it also splits on a lone "\r", and git ends lines at "\n" only.
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _range(start: int, count: int) -> bytes:
    # Unified-diff convention: an empty range names the line before it; ",1" is implied.
    if count == 0:
        return b"%d,0" % start
    if count == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1, count)


def _emit_line(out: bytearray, marker: bytes, line: bytes) -> None:
    out += marker + line
    if not line.endswith(b"\n"):
        out += b"\n" + _NO_NEWLINE


_Tag = Literal["replace", "delete", "insert", "equal"]
_Opcode = tuple[_Tag, int, int, int, int]


class _Grouper(difflib.SequenceMatcher[bytes]):
    """difflib's grouping into hunks with context, over opcodes computed elsewhere
    (`runtime.diffstat.line_diff`: from the engine's spans, or a bounded-cost alignment)."""

    def __init__(self, codes: tuple[_Opcode, ...]) -> None:
        super().__init__(None, [], [], False)
        self._codes = codes

    def get_opcodes(self) -> list[_Opcode]:
        return list(self._codes)


def _hunks(diff: LineDiff[AnyStr], encoding: str = "ascii") -> bytes:
    """The hunks of `diff`; the lines of a diff of texts are written in `encoding`
    (`_text_sides`)."""
    out = bytearray()
    for group in _Grouper(diff.opcodes).get_grouped_opcodes(CONTEXT_LINES):
        first, last = group[0], group[-1]
        old_start, old_end = first[1], last[2]
        new_start, new_end = first[3], last[4]
        out += b"@@ -%s +%s @@\n" % (
            _range(old_start, old_end - old_start),
            _range(new_start, new_end - new_start),
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in diff.old.lines(i1, i2, keepends=True):
                    _emit_line(out, b" ", _encoded(line, encoding))
                continue
            for line in diff.old.lines(i1, i2, keepends=True):
                _emit_line(out, b"-", _encoded(line, encoding))
            for line in diff.new.lines(j1, j2, keepends=True):
                _emit_line(out, b"+", _encoded(line, encoding))
    return bytes(out)


def _similarity(old: bytes, new: bytes) -> int:
    """Percent of the larger side's bytes in unchanged lines (git's idea, not its numbers)."""
    if old == new:
        return 100
    old_lines = _lines(old)
    same = sum(
        len(line)
        for tag, i1, i2, _j1, _j2 in line_opcodes(old_lines, _lines(new))
        if tag == "equal"
        for line in old_lines[i1:i2]
    )
    return same * 100 // max(len(old), len(new))


def _encoded(line: str | bytes, encoding: str) -> bytes:
    return line.encode(encoding) if isinstance(line, str) else line


def _text_sides(old: Content | None, new: Content | None) -> tuple[str, str, str] | None:
    """Both sides' texts and their codec, when both are kept as text in the same UTF-8 or
    Latin-1 codec without a BOM: diffing the texts is then diffing the bytes, without
    encoding either whole. A newline is the byte 0x0A and no other character's bytes hold
    it, so the lines are the same lines; each encodes alone to its bytes, and two lines
    are equal exactly when their bytes are (the codec is one-to-one)."""
    if not (isinstance(old, EncodedText) and isinstance(new, EncodedText)):
        return None
    if old.bom or new.bom or old.encoding != new.encoding:
        return None
    if old.encoding not in ("utf-8", "latin-1"):
        return None
    return old.text, new.text, old.encoding


def _content(change: FileChange, old_name: str, new_name: str) -> bytes:
    """The `---`/`+++` lines and hunks (or the binary notice) for one change's content."""
    old_content, new_content = change.old_content, change.new_content
    if same_content(old_content, new_content) or (
        not (old_content and content_size(old_content))
        and not (new_content and content_size(new_content))
    ):
        return b""
    if _is_binary(old_content) or _is_binary(new_content):
        old_label = _prefixed("a/", old_name) if old_content is not None else b"/dev/null"
        new_label = _prefixed("b/", new_name) if new_content is not None else b"/dev/null"
        return b"Binary files %s and %s differ\n" % (old_label, new_label)
    texts = _text_sides(old_content, new_content)
    if texts is not None:
        old_text, new_text, encoding = texts
        diff_text = _text_diff(change, old_text, new_text)
        return _header(old_name, new_name, present=(True, True)) + _hunks(diff_text, encoding)
    old, new = content_bytes(old_content), content_bytes(new_content)
    header = _header(old_name, new_name, present=(old is not None, new is not None))
    if _ascii_texts(change, old, new):
        return header + _hunks(change_opcodes(change))
    spans = change.line_spans if old is not None else None
    diff = change.derived(
        "git_line_diff", lambda: line_diff(old or b"", new or b"", spans, keepends=True)
    )
    return header + _hunks(diff)


def _text_diff(change: FileChange, old_text: str, new_text: str) -> LineDiff[str]:
    """The line diff of the change's texts, with each line compared with its newline as git
    does; the guards' line diff (`change_opcodes`, lines without it) when the texts are the
    change's own and both end in a newline: every line then has one on both sides, so the
    same lines are equal either way and the opcodes are the same."""
    if (
        change.old_text is old_text
        and change.new_text is new_text
        and old_text.endswith("\n")
        and new_text.endswith("\n")
    ):
        return change_opcodes(change)
    return change.derived(
        "git_text_diff", lambda: line_diff(old_text, new_text, change.line_spans, keepends=True)
    )


def _ascii_texts(change: FileChange, old: bytes | None, new: bytes | None) -> bool:
    """Whether both sides are ASCII text ending in a newline, their texts the change's own
    (a character per byte): the guards' line diff (`change_opcodes`) is then this one."""
    old_text, new_text = change.old_text, change.new_text
    return (
        old is not None
        and new is not None
        and old_text is not None
        and new_text is not None
        and len(old_text) == len(old)
        and len(new_text) == len(new)
        and old.endswith(b"\n")
        and new.endswith(b"\n")
        and old.isascii()
        and new.isascii()
    )


def _header(old_name: str, new_name: str, *, present: tuple[bool, bool]) -> bytes:
    """The `---`/`+++` lines; a side not `present` is `/dev/null`."""
    old_label = _prefixed("a/", old_name) if present[0] else b"/dev/null"
    new_label = _prefixed("b/", new_name) if present[1] else b"/dev/null"
    # git marks names containing a space with a trailing tab so they can be parsed.
    old_tab = b"\t" if present[0] and " " in old_name else b""
    new_tab = b"\t" if present[1] and " " in new_name else b""
    return b"--- %s%s\n+++ %s%s\n" % (old_label, old_tab, new_label, new_tab)


def _index_line(change: FileChange, mode_suffix: bool) -> bytes:
    if same_content(change.old_content, change.new_content):
        return b""
    line = f"index {_blob_id(change.old_content)}..{_blob_id(change.new_content)}".encode()
    if mode_suffix:
        line += b" " + _git_mode(change.new_mode)
    return line + b"\n"


def diff_header(old_name: str, new_name: str) -> bytes:
    """The `diff --git` line that opens the section of a change from `old_name` to `new_name`."""
    return b"diff --git %s %s\n" % (_prefixed("a/", old_name), _prefixed("b/", new_name))


def _file_diff(change: FileChange) -> bytes:
    new_name = change.path
    old_name = change.old_path if change.old_path is not None else change.path
    header = diff_header(old_name, new_name)
    meta = bytearray()
    if change.action is Action.CREATE:
        meta += b"new file mode %s\n" % _git_mode(change.new_mode)
        meta += _index_line(change, mode_suffix=False)
    elif change.action is Action.DELETE:
        meta += b"deleted file mode %s\n" % _git_mode(change.old_mode)
        meta += _index_line(change, mode_suffix=False)
    else:
        modes_differ = _git_mode(change.old_mode) != _git_mode(change.new_mode)
        if modes_differ:
            meta += b"old mode %s\nnew mode %s\n" % (
                _git_mode(change.old_mode),
                _git_mode(change.new_mode),
            )
        if change.action is Action.MOVE:
            similarity = _similarity(change.old_bytes or b"", change.new_bytes or b"")
            meta += b"similarity index %d%%\n" % similarity
            meta += b"rename from %s\nrename to %s\n" % (_quote(old_name), _quote(new_name))
        meta += _index_line(change, mode_suffix=not modes_differ)
    body = _content(change, old_name, new_name)
    if not meta and not body:
        return b""
    return header + bytes(meta) + body


def render_git_diff_bytes(changes: Iterable[FileChange]) -> bytes:
    """The git-format diff of `changes` as the exact bytes `git apply` expects."""
    return b"".join(_file_diff(change) for change in changes)


def render_git_diff(changes: Iterable[FileChange]) -> str:
    """The git-format diff of `changes` as text, for people, models and JSON.

    A file whose bytes are not UTF-8 (Latin-1, UTF-16) is shown by its decoded
    text, so the diff is always valid Unicode and patchsmith can replay it by
    content; `render_git_diff_bytes` gives the byte-exact form for `git apply`.
    """
    parts = []
    for change in changes:
        section = _file_diff(change)
        try:
            parts.append(section.decode("utf-8"))
        except UnicodeDecodeError:
            parts.append(_file_diff(_as_utf8(change)).decode("utf-8", "surrogateescape"))
    return "".join(parts)


def _as_utf8(change: FileChange) -> FileChange:
    """The same change with its texts encoded as UTF-8 (binary sides stay as they are)."""
    return replace(
        change,
        old_bytes=_utf8_side(change.old_content, change.old_text),
        new_bytes=_utf8_side(change.new_content, change.new_text),
    )


def _utf8_side(content: Content | None, text: str | None) -> Content | None:
    if text is None:
        return content
    if isinstance(content, EncodedText) and content.text is text:
        # A kept text encodes strictly in its codec, so it holds no lone surrogate and
        # its UTF-8 is its surrogateescape UTF-8: kept as text again, not encoded whole.
        return EncodedText(text, "utf-8")
    return text.encode("utf-8", "surrogateescape")
