"""Split model text into per-file diff sections: unified diffs and apply_patch envelopes.

Tolerant of what models write: prose and markdown fences around and between diffs, CRLF
text, git extended headers, `a/`/`b/`/`./` prefixes, timestamps after paths, headerless and
numberless `@@` hunks, blank context lines that lost their leading space, wrong hunk counts,
and the `*** Begin Patch` envelope (with or without its end marker, in a heredoc or a fence).

Decisions:

- A file named twice gives two `FileDiff` values, in text order (never merged here).
- `---`/`+++` headers naming two different files are refused (PATH_MISMATCH): reading
  either one could patch a file the model did not mean (`--- a/src/x` / `+++ b/secrets/x`).
  Exceptions: one side is /dev/null (a create or a delete); the two differ only by a
  backup suffix (`x.py.orig` / `x.py`: the file without the suffix is patched); or, in a
  plain (non-git) diff, they are two versions of one file as `diff -u old new` names them,
  in the same directory with the same extension (`t/1-original.txt` / `t/1-modified.txt`:
  the old one is patched). Only git's
  `rename from`/`rename to` lines and the envelope's `*** Move to:` make a rename
  (`old_path != new_path`); differing `diff --git` paths without them are a mismatch too.
- Hunk counts never cut a hunk short or break parsing; they only decide the ambiguous cases:
  whether blank lines after a hunk belong to it, and whether `--- x` + `+++ y` inside a hunk
  is a new file header or a removed `-- x` line followed by an added `++ y` line.
- Text whose line ends are all CRLF is read as LF (the engine restores a file's own endings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from patchsmith.engine.blocks import is_elision
from patchsmith.engine.model import FileDiff, Hunk
from patchsmith.errors import FailureCode

__all__ = ["DiffParse", "DiffProblem", "find_diffs", "parse_diff", "split_lines"]


@dataclass(frozen=True)
class DiffProblem:
    """A region that looks like a broken diff (lines are 1-based, inclusive)."""

    message: str
    start_line: int
    end_line: int
    code: FailureCode = FailureCode.MALFORMED_PATCH
    """MALFORMED_PATCH, or PATH_MISMATCH for headers that name two different files."""


@dataclass(frozen=True)
class DiffParse:
    """Every file section found, in text order, and the regions that could not be parsed."""

    files: tuple[FileDiff, ...] = ()
    problems: tuple[DiffProblem, ...] = ()


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only, keeping each line's ending; all-CRLF text is read as LF."""
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        text = text.replace("\r\n", "\n")
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def parse_diff(text: str) -> DiffParse:
    """Parse every unified diff and apply_patch envelope in `text`; never raises."""
    return _Parser(split_lines(text)).run()


def find_diffs(text: str) -> list[FileDiff]:
    """The file sections of `parse_diff(text)`."""
    return list(parse_diff(text).files)


_HUNK_NUMBERS = re.compile(r"@@+\s*-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?\s*(?:@@+)?(.*)$")
# Patterns for what a plain unified diff never holds (a header without numbers, envelope
# markers) stay strings, compiled by `re` on first use: a process that reads plain diffs
# starts faster without them (docs/decisions/0047).
_HUNK_BARE = r"@@+(.*?)@@+(.*)$"
_ENVELOPE_OP = r"(?i)\*\*\*\s*(Add|Delete|Update)\s+File\s*:\s*(.*?)\s*$"
_MOVE_TO = r"(?i)\*\*\*\s*Move\s+to\s*:\s*(.*?)\s*$"
_BEGIN = r"(?i)\*\*\*\s*Begin\s+Patch\s*$"
_END = r"(?i)\*\*\*\s*End\s+Patch\s*$"
_END_OF_FILE = r"(?i)\*\*\*\s*End\s+of\s+File\s*$"
_TIMESTAMP = re.compile(
    r"\s+(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\s*[+-]\d{4}|Z)?"
    r"|\((?:revision \d+|working copy|nonexistent)\))\s*$"
)
_MAX_SCANNED = 4096  # header lines are read this far; keeps the regexes linear
_BULLET = r"[-+*] [A-Za-z`*\[(]"
_HEREDOC_END = r"['\"]?[A-Z_]{2,}['\"]?$"
_GIT_KEYS = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "index ",
    "Binary files ",
    "GIT binary patch",
)
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def _ending(line: str) -> str:
    return line[len(_bare(line)) :]


def _is_blank(line: str) -> bool:
    # a line that is only whitespace but does not start with a space (" \n" is explicit context)
    return not line.startswith(" ") and not line.strip()


def _is_fence(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith("```") or stripped.startswith("~~~")


def _unquote(value: str) -> str:
    """Decode a git C-quoted path (octal escapes are UTF-8 bytes)."""
    out = bytearray()
    i = 1
    while i < len(value) and value[i] != '"':
        char = value[i]
        if char == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            octal = value[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            out.append(_C_ESCAPES.get(nxt, ord(nxt) if ord(nxt) < 128 else 63))
            i += 2
            continue
        out.extend(char.encode("utf-8"))
        i += 1
    return out.decode("utf-8", errors="replace")


def _header_path(value: str) -> str | None:
    """The path of a `---`/`+++` line's value; `None` for /dev/null."""
    value = value.strip()
    if value.startswith('"'):
        path = _unquote(value)
    else:
        path = value.split("\t", 1)[0]
        if len(path) < _MAX_SCANNED:
            path = _TIMESTAMP.sub("", path)
        path = path.strip()
    if path in ("/dev/null", "dev/null"):
        return None
    return path


_MODE_KEYS = ("old mode", "new mode", "new file mode", "deleted file mode")


def _strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    """Drop git's `a/` and `b/` (only when used consistently) and one leading `./`."""

    def dot(path: str) -> str:
        return path[2:] if path.startswith("./") else path

    if old is not None and new is not None:
        if old.startswith("a/") and new.startswith("b/"):
            old, new = old[2:], new[2:]
        elif new.startswith("b/") and new[2:] == dot(old):
            new = new[2:]
        elif old.startswith("a/") and old[2:] == dot(new):
            old = old[2:]
    elif old is not None and old.startswith("a/"):
        old = old[2:]
    elif new is not None and new.startswith("b/"):
        new = new[2:]
    return (None if old is None else dot(old)), (None if new is None else dot(new))


_BACKUP_SUFFIXES = (".orig", ".old", ".bak", ".new", "~")


def _backup_pair(old: str, new: str) -> str | None:
    """The real file when two header paths differ only by a backup suffix, else None."""
    for suffix in _BACKUP_SUFFIXES:
        if old == new + suffix:
            return new
        if new == old + suffix:
            return old
    return None


def _version_pair(old: str, new: str) -> str | None:
    """`old` when the two paths look like two versions of one file (`diff -u old new`)."""
    old_dir, _, old_name = old.rpartition("/")
    new_dir, _, new_name = new.rpartition("/")
    old_ext = old_name.rpartition(".")[2] if "." in old_name else ""
    new_ext = new_name.rpartition(".")[2] if "." in new_name else ""
    return old if old_dir == new_dir and old_ext == new_ext else None


def _git_line_paths(rest: str) -> tuple[str | None, str | None]:
    """The two paths of `diff --git <a> <b>`, split where both halves name the same file."""
    rest = rest.strip()
    if rest.startswith('"'):
        end = _closing_quote(rest)
        first = _unquote(rest[: end + 1])
        second = rest[end + 1 :].strip()
        return first, (_unquote(second) if second.startswith('"') else second or None)
    if rest.endswith('"') and ' "' in rest:
        cut = rest.index(' "')
        return rest[:cut], _unquote(rest[cut + 1 :])
    spaces = [i for i, c in enumerate(rest) if c == " "]
    for cut in spaces:
        left, right = rest[:cut], rest[cut + 1 :]
        if left[2:] == right[2:] or left == right:
            return left, right
    if " b/" in rest:
        cut = rest.index(" b/")
        return rest[:cut], rest[cut + 1 :]
    if spaces:
        return rest[: spaces[-1]], rest[spaces[-1] + 1 :]
    return (rest or None), None


def _closing_quote(value: str) -> int:
    i = 1
    while i < len(value):
        if value[i] == "\\":
            i += 2
            continue
        if value[i] == '"':
            return i
        i += 1
    return len(value) - 1


class _HunkHeader(NamedTuple):
    """What an `@@` line says (a named tuple: one is made per hunk, and cheaply)."""

    old_start: int | None = None
    old_count: int | None = None
    new_start: int | None = None
    new_count: int | None = None
    section: str = ""


def _hunk_header(bare: str) -> _HunkHeader:
    bare = bare[:_MAX_SCANNED]
    match = _HUNK_NUMBERS.match(bare)
    if match:
        old_start, old_count, new_start, new_count, section = match.groups()
        return _HunkHeader(
            int(old_start),
            1 if old_count is None else int(old_count),
            int(new_start),
            1 if new_count is None else int(new_count),
            section.strip(),
        )
    match = re.match(_HUNK_BARE, bare)
    if match:
        return _HunkHeader(section=match.group(2).strip())
    return _HunkHeader(section=bare.lstrip("@").strip())


class _Parser:
    """One pass over the lines; every method returns the index of the first line it did not use."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.n = len(lines)
        self.files: list[FileDiff] = []
        self.problems: list[DiffProblem] = []
        self.last_envelope_marker = -1
        if "***" in "".join(lines):  # one C-level search spares a scan of most diffs
            for index, line in enumerate(lines):
                if line.lstrip().startswith("***"):
                    self.last_envelope_marker = index

    def run(self) -> DiffParse:
        i = 0
        while i < self.n:
            bare = _bare(self.lines[i])
            stripped = bare.strip()
            # Both envelope patterns start with `***`: most lines are spared the regexes.
            if stripped[:3] == "***" and (
                re.match(_BEGIN, stripped) or re.match(_ENVELOPE_OP, stripped)
            ):
                i = self._envelope(i)
            elif bare.startswith("diff --git "):
                i = self._git_file(i)
            elif self._header_pair(i):
                i = self._plain_file(i)
            elif bare.startswith("@@"):
                i = self._headerless(i)
            else:
                i += 1
        return DiffParse(tuple(self.files), tuple(self.problems))

    def _problem(
        self, message: str, start: int, end: int, code: FailureCode = FailureCode.MALFORMED_PATCH
    ) -> None:
        self.problems.append(DiffProblem(message, start + 1, max(start, end) + 1, code))

    def _mismatch(self, old: str, new: str, start: int, end: int) -> None:
        self._problem(
            f"the old side names {old} but the new side names {new}, and no "
            "'rename from'/'rename to' lines say it is a rename",
            start,
            end,
            FailureCode.PATH_MISMATCH,
        )

    def _header_pair(self, i: int) -> bool:
        return (
            i + 1 < self.n
            and self.lines[i].startswith("--- ")
            and self.lines[i + 1].startswith("+++ ")
        )

    # unified diffs

    def _plain_file(self, i: int) -> int:
        start = i
        old, new = _strip_prefixes(
            _header_path(_bare(self.lines[i])[4:]), _header_path(_bare(self.lines[i + 1])[4:])
        )
        mismatch = False
        if old is not None and new is not None and old != new:
            same = _backup_pair(old, new) or _version_pair(old, new)
            mismatch = same is None
            old = new = same or old
        hunks, i = self._hunks(i + 2)
        if mismatch and old is not None and new is not None:
            self._mismatch(
                _header_path(_bare(self.lines[start])[4:]) or old,
                _header_path(_bare(self.lines[start + 1])[4:]) or new,
                start,
                i - 1,
            )
            return i
        if (not hunks and old is not None and new is not None) or old is new is None:
            self._problem("file header without hunks", start, i - 1)
            return i
        self.files.append(FileDiff(old, new, tuple(hunks), start_line=start, end_line=i))
        return i

    def _git_file(self, i: int) -> int:
        start = i
        git_old, git_new = _git_line_paths(_bare(self.lines[i])[len("diff --git ") :])
        i += 1
        facts: dict[str, str] = {}
        binary = False
        while i < self.n:
            bare = _bare(self.lines[i])
            key = next((k for k in _GIT_KEYS if bare.startswith(k)), None)
            if key is None:
                break
            facts[key.strip()] = bare[len(key) :].strip()
            i += 1
            if key in ("Binary files ", "GIT binary patch"):
                binary = True
            if key == "GIT binary patch":
                while i < self.n and _bare(self.lines[i]) and not self._is_header(i):
                    i += 1
        old, new = _strip_prefixes(git_old, git_new)
        renamed = "rename from" in facts or "rename to" in facts
        if renamed:
            old = facts.get("rename from", old)
            new = facts.get("rename to", new)
        if self._header_pair(i):
            header_old, header_new = _strip_prefixes(
                _header_path(_bare(self.lines[i])[4:]),
                _header_path(_bare(self.lines[i + 1])[4:]),
            )
            named = {old, new}
            if (
                any(key in facts for key in _MODE_KEYS)
                and not {
                    header_old,
                    header_new,
                }
                - {None}
                <= named
            ):
                # A mode line must not go to a file the `diff --git` line does not name
                # (a mode-only section followed by a header-less one is written this way).
                _, end = self._hunks(i + 2)
                self._problem(
                    "the 'diff --git' line and the '---'/'+++' lines name different files, "
                    "so the mode line's file is unclear",
                    start,
                    end - 1,
                )
                return end
            old, new = header_old, header_new
            i += 2
        if "new file mode" in facts:
            old = None
        if "deleted file mode" in facts:
            new = None
        hunks, i = self._hunks(i)
        if "copy from" in facts or "copy to" in facts:
            self._problem("git copies are not supported", start, i - 1)
            return i
        if old is not None and new is not None and old != new and not renamed:
            same = _backup_pair(old, new)
            if same is None:
                self._mismatch(old, new, start, i - 1)
                return i
            old = new = same
        new_mode = facts.get("new mode") or facts.get("new file mode")
        old_mode = facts.get("old mode") or facts.get("deleted file mode")
        changed = old != new or old is None or new_mode is not None or binary
        if (not hunks and not changed) or old is new is None:
            self._problem("file header without hunks", start, i - 1)
            return i
        self.files.append(
            FileDiff(
                old,
                new,
                tuple(hunks),
                old_mode=old_mode,
                new_mode=new_mode,
                binary=binary,
                start_line=start,
                end_line=i,
            )
        )
        return i

    def _headerless(self, i: int) -> int:
        start = i
        hunks, i = self._hunks(i)
        if hunks:
            self.files.append(
                FileDiff(None, None, tuple(hunks), has_header=False, start_line=start, end_line=i)
            )
        return i

    def _is_header(self, i: int) -> bool:
        return _bare(self.lines[i]).startswith("diff --git ") or self._header_pair(i)

    def _hunks(self, i: int) -> tuple[list[Hunk], int]:
        """Read the hunks of one file section: `@@` blocks, or body lines right after a header."""
        hunks: list[Hunk] = []
        first = True
        while i < self.n:
            line = self.lines[i]
            if line.startswith("@@"):
                hunk, i = self._hunk(i)
                if hunk is not None:
                    hunks.append(hunk)
            elif first and line[:1] in (" ", "-", "+") and not self._is_header(i):
                hunk, i = self._hunk(i, numbered=False)
                if hunk is not None:
                    hunks.append(hunk)
            elif _is_blank(line):
                j = i
                while j < self.n and _is_blank(self.lines[j]):
                    j += 1
                if j < self.n and self.lines[j].startswith("@@"):
                    i = j
                    continue
                break
            else:
                break
            first = False
        return hunks, i

    def _hunk(self, i: int, *, numbered: bool = True) -> tuple[Hunk | None, int]:
        """Read one hunk; `numbered` is false for body lines that follow a header without `@@`."""
        start = i
        header = _HunkHeader()
        if numbered:
            header = _hunk_header(_bare(self.lines[i]))
            i += 1
        known = header.old_count is not None and header.new_count is not None
        old_need = header.old_count or 0
        new_need = header.new_count or 0
        old_seen = new_seen = 0
        body: list[str] = []
        while i < self.n:
            line = self.lines[i]
            op = line[:1]
            if op == "+" or op == " ":
                # The common case first: such a line is neither blank nor a file header.
                old_seen += op == " "
                new_seen += 1
                body.append(line)
                i += 1
                continue
            if op == "-" and not line.startswith("--- "):
                # A removed line (never blank) that cannot start a file header.
                old_seen += 1
                body.append(line)
                i += 1
                continue
            if _is_blank(line):
                taken, i, ends = self._blank_run(i, known, old_need - old_seen, new_need - new_seen)
                body.extend(" " + _ending(self.lines[k]) for k in range(i - taken, i))
                old_seen += taken
                new_seen += taken
                if ends:
                    break
                continue
            if op == "-" and self._header_pair(i):
                complete = old_seen >= old_need and new_seen >= new_need
                follows = i + 2 < self.n and self.lines[i + 2].startswith("@@")
                if not known or complete or follows:
                    break
            if op == " ":
                old_seen += 1
                new_seen += 1
            elif op == "-":
                old_seen += 1
            elif op == "+":
                new_seen += 1
            elif op != "\\":
                if not (body and self._elision_inside(i)):
                    break
                # An unprefixed `...` between body lines stands for omitted context.
                line = " " + line
            body.append(line)
            i += 1
        if not body:
            self._problem("hunk header without body lines", start, start)
            return None, i
        hunk = Hunk(
            lines=tuple(body),
            old_start=header.old_start,
            old_count=header.old_count,
            new_start=header.new_start,
            new_count=header.new_count,
            section=header.section,
        )
        return hunk, i

    def _elision_inside(self, i: int) -> bool:
        """An elision marker (`...`, `# ... existing code ...`) followed by more body lines."""
        if not is_elision(_bare(self.lines[i])):
            return False
        j = i + 1
        return j < self.n and self.lines[j][:1] in (" ", "-", "+") and not self._is_header(j)

    def _blank_run(
        self, i: int, known: bool, old_missing: int, new_missing: int
    ) -> tuple[int, int, bool]:
        """Decide how many blank lines from `i` are context; returns (taken, next index, ends)."""
        j = i
        while j < self.n and _is_blank(self.lines[j]):
            j += 1
        run = j - i
        complete = known and old_missing <= 0 and new_missing <= 0
        if j < self.n:
            nxt = self.lines[j]
            body_follows = nxt[:1] in (" ", "-", "+", "\\") and not self._is_header(j)
            if body_follows and not (complete and re.match(_BULLET, nxt)):
                return run, j, False
        missing = min(old_missing, new_missing) if known else 0
        taken = max(0, min(run, missing))
        return taken, i + taken, True

    # apply_patch envelopes

    def _envelope(self, i: int) -> int:
        envelope_op, end, move_to, end_of_file = (
            re.compile(pattern) for pattern in (_ENVELOPE_OP, _END, _MOVE_TO, _END_OF_FILE)
        )
        if re.match(_BEGIN, _bare(self.lines[i]).strip()):
            begin = i
            i += 1
        else:
            begin = -1
        found = len(self.files)
        builder: _EnvelopeFile | None = None
        while i < self.n:
            line = self.lines[i]
            stripped = line.strip()
            op = envelope_op.match(stripped)
            if end.match(stripped):
                i += 1
                break
            if op:
                self._finish(builder, i)
                builder = _EnvelopeFile(op.group(1).lower(), op.group(2), i)
            elif (move := move_to.match(stripped)) and builder and builder.kind == "update":
                builder.move_to = move.group(1)
            elif end_of_file.match(stripped) and builder is not None and builder.kind == "update":
                builder.end_hunk(at_eof=True)
            elif builder is not None and builder.takes(line):
                builder.add(line, i)
            elif builder is not None and builder.kind == "update" and self._elision_inside(i):
                builder.add(" " + line, i)
            elif builder is not None and _is_blank(line):
                builder.add_blank(line)
            elif not stripped:
                pass
            elif self._ends_envelope(i, stripped):
                break
            else:
                self._problem(f"unexpected line in apply_patch envelope: {stripped[:60]}", i, i)
            i += 1
        self._finish(builder, i)
        if begin >= 0 and len(self.files) == found:
            self._problem("apply_patch envelope without any file operation", begin, i - 1)
        return i

    def _ends_envelope(self, i: int, stripped: str) -> bool:
        """A line that ends an envelope whose `*** End Patch` is missing."""
        if i > self.last_envelope_marker and i > 0 and _is_blank(self.lines[i - 1]):
            return True  # a paragraph of prose after the last marker
        return (
            _is_fence(stripped)
            or bool(re.match(_HEREDOC_END, stripped))
            or bool(re.match(_BEGIN, stripped))
            or stripped.startswith("diff --git ")
        )

    def _finish(self, builder: _EnvelopeFile | None, end: int) -> None:
        if builder is None:
            return
        builder.end_hunk(at_eof=False)
        for start, stop in builder.empty_hunks:
            self._problem("apply_patch hunk without body lines", start, stop)
        path = builder.path
        if not path:
            self._problem(f"apply_patch {builder.kind} without a path", builder.start, end - 1)
            return
        start = builder.start
        if builder.kind == "add":
            added = (Hunk(lines=tuple(builder.body)),) if builder.body else ()
            self.files.append(FileDiff(None, path, added, start_line=start, end_line=end))
        elif builder.kind == "delete":
            self.files.append(FileDiff(path, None, (), start_line=start, end_line=end))
        elif builder.hunks or builder.move_to:
            new = builder.move_to or path
            hunks = tuple(builder.hunks)
            self.files.append(FileDiff(path, new, hunks, start_line=start, end_line=end))
        else:
            self._problem(f"apply_patch update of {path} without hunks", builder.start, end - 1)


class _EnvelopeFile:
    """One envelope file operation being read."""

    def __init__(self, kind: str, path: str, start: int) -> None:
        self.kind = kind
        self.path = path
        self.start = start
        self.move_to: str | None = None
        self.hunks: list[Hunk] = []
        self.body: list[str] = []
        self.blanks = 0  # trailing lines in `body` that were empty in the text
        self.anchors: list[str] = []
        self.numbers = _HunkHeader()
        self.hunk_start = start
        self.opened = False  # an `@@` line was seen for the hunk being read
        self.empty_hunks: list[tuple[int, int]] = []

    def takes(self, line: str) -> bool:
        if self.kind == "add":
            return line.startswith("+")
        if self.kind == "update":
            return line[:1] in (" ", "-", "+") or line.startswith("@@")
        return line.startswith("-")  # a delete may list the lines it removes

    def add(self, line: str, index: int) -> None:
        if line.startswith("@@"):
            if self.body:
                self.end_hunk(at_eof=False)
            if not self.opened:
                self.hunk_start = index
            header = _hunk_header(_bare(line))
            if header.old_start is not None:
                self.numbers = header
            elif header.section:
                self.anchors.append(header.section)
            self.opened = True
            return
        self.body.append(line)
        self.blanks = 0

    def add_blank(self, line: str) -> None:
        # models drop the prefix of blank lines: context in an update, an empty line in an add
        self.body.append(("+" if self.kind == "add" else " ") + _ending(line))
        self.blanks += 1

    def end_hunk(self, *, at_eof: bool) -> None:
        if self.blanks:
            del self.body[-self.blanks :]
            self.blanks = 0
        if self.kind != "update":
            return
        if self.body:
            h = self.numbers
            # apply_patch semantics: a chunk that only adds lines and names no anchor
            # (or line numbers) appends them to the end of the file.
            if (
                not self.anchors
                and h.old_start is None
                and all(line.startswith("+") for line in self.body)
            ):
                at_eof = True
            self.hunks.append(
                Hunk(
                    lines=tuple(self.body),
                    old_start=h.old_start,
                    old_count=h.old_count,
                    new_start=h.new_start,
                    new_count=h.new_count,
                    anchors=tuple(self.anchors),
                    at_eof=at_eof,
                )
            )
        elif self.opened or at_eof:
            self.empty_hunks.append((self.hunk_start, self.hunk_start))
        self.body = []
        self.anchors = []
        self.numbers = _HunkHeader()
        self.opened = False
