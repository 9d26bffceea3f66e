"""Recorded diffs read back exactly: the git-format sections `runtime.gitdiff` wrote.

The store keeps each applied attempt's diff, not the files' bytes. A diff written by
patchsmith itself holds every changed line whole, so it can be played backwards (to
undo the attempt) or forwards, at exactly the lines its hunk headers name: no search,
no tolerance. A region that is not exactly as the diff says is `None`, never a guess,
and callers check the result against the sha256 the store recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from patchsmith.runtime.gitdiff import diff_header

__all__ = ["RecordedHunk", "RecordedSection", "apply_exact", "parse_sections", "split_lines"]

_HUNK_HEADER = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = b"\\ No newline at end of file"
_EXECUTABLE = "100755"


@dataclass(frozen=True)
class RecordedHunk:
    """One hunk: where its lines start on each side (0-based) and the lines themselves."""

    old_start: int
    old_lines: tuple[bytes, ...]
    new_start: int
    new_lines: tuple[bytes, ...]


@dataclass(frozen=True)
class RecordedSection:
    """One file's section of a recorded diff.

    `old_mode`/`new_mode` are git modes from the mode lines (`None` when the
    section has none); `binary` marks a `Binary files ... differ` section, whose
    content cannot be replayed.
    """

    hunks: tuple[RecordedHunk, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False

    def old_executable(self) -> bool | None:
        """Whether the file was executable before, as far as the mode lines say."""
        return None if self.old_mode is None else self.old_mode == _EXECUTABLE

    def new_executable(self) -> bool | None:
        """Whether the file is executable after, as far as the mode lines say."""
        return None if self.new_mode is None else self.new_mode == _EXECUTABLE


def split_lines(data: bytes) -> list[bytes]:
    """`data` cut after each `\\n` (as git does: a lone `\\r` ends no line)."""
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def parse_sections(diff: bytes, names: list[tuple[str, str]]) -> dict[int, RecordedSection] | None:
    """The section of each `(old_name, new_name)` pair in `diff`, by the pair's index.

    A pair with no section (nothing changed, or only metadata git does not show) is
    absent. `None` when the diff holds anything else: a section for no given pair,
    or one that does not parse.
    """
    headers = {diff_header(old, new): index for index, (old, new) in enumerate(names)}
    lines = split_lines(diff)
    starts = [i for i, line in enumerate(lines) if line.startswith(b"diff --git ")]
    if lines and (not starts or starts[0] != 0):
        return None
    found: dict[int, RecordedSection] = {}
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        index = headers.get(lines[start])
        if index is None or index in found:
            return None
        section = _section(lines[start + 1 : end])
        if section is None:
            return None
        found[index] = section
    return found


def _section(lines: list[bytes]) -> RecordedSection | None:
    old_mode = new_mode = None
    position = 0
    while position < len(lines) and not lines[position].startswith((b"--- ", b"Binary files ")):
        line = lines[position].rstrip(b"\n")
        for prefix in (b"old mode ", b"deleted file mode "):
            if line.startswith(prefix):
                old_mode = line[len(prefix) :].decode("ascii", "replace")
        for prefix in (b"new mode ", b"new file mode "):
            if line.startswith(prefix):
                new_mode = line[len(prefix) :].decode("ascii", "replace")
        position += 1
    if position == len(lines):
        return RecordedSection(old_mode=old_mode, new_mode=new_mode)
    if lines[position].startswith(b"Binary files "):
        return RecordedSection(old_mode=old_mode, new_mode=new_mode, binary=True)
    if position + 1 >= len(lines) or not lines[position + 1].startswith(b"+++ "):
        return None
    hunks = _hunks(lines[position + 2 :])
    if hunks is None:
        return None
    return RecordedSection(hunks, old_mode, new_mode)


def _hunks(lines: list[bytes]) -> tuple[RecordedHunk, ...] | None:
    hunks: list[RecordedHunk] = []
    position = 0
    while position < len(lines):
        header = _HUNK_HEADER.match(lines[position])
        if header is None:
            return None
        old_count = 1 if header.group(2) is None else int(header.group(2))
        new_count = 1 if header.group(4) is None else int(header.group(4))
        old: list[bytes] = []
        new: list[bytes] = []
        position += 1
        while len(old) < old_count or len(new) < new_count:
            if position >= len(lines):
                return None
            line = lines[position]
            marker, content = line[:1], line[1:]
            if marker == b" ":
                old.append(content)
                new.append(content)
            elif marker == b"-":
                old.append(content)
            elif marker == b"+":
                new.append(content)
            else:
                return None
            position += 1
            if position < len(lines) and lines[position].rstrip(b"\n") == _NO_NEWLINE:
                # The line just read has no newline of its own: drop the one the diff added.
                if marker in (b" ", b"-"):
                    old[-1] = old[-1].removesuffix(b"\n")
                if marker in (b" ", b"+"):
                    new[-1] = new[-1].removesuffix(b"\n")
                position += 1
        if len(old) != old_count or len(new) != new_count:
            return None
        hunks.append(
            RecordedHunk(
                old_start=_start(int(header.group(1)), old_count),
                old_lines=tuple(old),
                new_start=_start(int(header.group(3)), new_count),
                new_lines=tuple(new),
            )
        )
    return tuple(hunks)


def _start(number: int, count: int) -> int:
    # An empty range names the line before it; a non-empty one its first line (1-based).
    return number if count == 0 else number - 1


def apply_exact(
    data: bytes, hunks: tuple[RecordedHunk, ...], *, reverse: bool = False
) -> bytes | None:
    """`data` with `hunks` applied (or, with `reverse`, undone) at exactly their lines.

    `None` when any hunk's expected lines are not exactly where its header puts them.
    """
    lines = split_lines(data)
    out: list[bytes] = []
    position = 0
    for hunk in hunks:
        if reverse:
            start, expected, result, result_start = (
                hunk.new_start,
                hunk.new_lines,
                hunk.old_lines,
                hunk.old_start,
            )
        else:
            start, expected, result, result_start = (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_lines,
                hunk.new_start,
            )
        end = start + len(expected)
        if start < position or tuple(lines[start:end]) != expected:
            return None
        out.extend(lines[position:start])
        if len(out) != result_start:
            return None
        out.extend(result)
        position = end
    out.extend(lines[position:])
    return b"".join(out)
