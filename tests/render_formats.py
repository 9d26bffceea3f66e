"""Clean renderings of one file's change `a -> b` in every edit format patchsmith reads.

Each renderer returns the model text, or `None` when the format cannot express that change
exactly (a whole-file fence always ends with a newline, an envelope has no "no newline at end
of file" marker, a str_replace needs some text to anchor on...). Renderers write what a careful
model would: enough context to be unique, nothing damaged.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable

from tests.strategies import render_unified

__all__ = [
    "RENDERERS",
    "render_apply_patch",
    "render_search_replace",
    "render_str_replace",
    "render_udiff",
    "render_whole_file",
]

# Lines that the whole-file parser rightly reads as another format, or that close the fence.
_NOT_WHOLE_FILE = re.compile(
    r"^(?:@@|--- |\+\+\+ |diff --git "
    r"|\s*\*\*\*|\s*<{5,9} ?SEARCH|\s*={5,}|\s*>{5,}|\s*`{3,}|\s*~{3,})",
    re.IGNORECASE,
)
# Lines the SEARCH/REPLACE parser treats as markers.
_BLOCK_MARKER = re.compile(r"^\s*(?:<{5,9}|={5,9}|>{5,9})")
# Lines the envelope parser treats as structure even behind a one-character prefix.
_ENVELOPE_MARKER = re.compile(r"^\s*\*\*\*")


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _lines(text: str) -> list[str]:
    """Line contents split on the file's own newline only (no final empty item)."""
    if not text:
        return []
    parts = text.split(_newline(text))
    if parts[-1] == "":
        parts.pop()
    return parts


def _same_form(a: str, b: str) -> bool:
    """Both texts use one newline style and agree on the final newline."""
    if not a or not b:
        return False
    return _newline(a) == _newline(b) and a.endswith("\n") == b.endswith("\n")


def _unique_lines(haystack: list[str], needle: list[str]) -> bool:
    count = 0
    for i in range(len(haystack) - len(needle) + 1):
        if haystack[i : i + len(needle)] == needle:
            count += 1
            if count > 1:
                return False
    return count == 1


def render_udiff(a: str, b: str, path: str = "f.txt") -> str | None:
    """A git-style diff with exact line numbers (every change can be expressed)."""
    if a == b:
        return None
    header = f"diff --git a/{path} b/{path}\n"
    return header + render_unified(a, b, context=3, path=path)


def _groups(a: list[str], b: list[str]) -> list[list[tuple[str, int, int, int, int]]]:
    return list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3))


def render_apply_patch(a: str, b: str, path: str = "f.txt") -> str | None:
    """An `*** Update File:` envelope; `None` when a hunk's old lines are not unique."""
    if not _same_form(a, b) or not a.endswith("\n"):
        return None
    old, new = _lines(a), _lines(b)
    if any(_ENVELOPE_MARKER.match(line) for line in old + new):
        return None
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    current = list(old)
    shift = 0
    for group in _groups(old, new):
        body: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body.extend(" " + line for line in old[i1:i2])
                continue
            body.extend("-" + line for line in old[i1:i2])
            body.extend("+" + line for line in new[j1:j2])
        before = [line[1:] for line in body if line[0] in " -"]
        after = [line[1:] for line in body if line[0] in " +"]
        first, last = group[0][1], group[-1][2]
        at_eof = last == len(old)
        if not before or not (at_eof or _unique_lines(current, before)):
            return None
        start = first + shift
        current[start : start + len(before)] = after
        shift += len(after) - len(before)
        out.append("@@")
        out.extend(body)
        if at_eof:
            out.append("*** End of File")
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def render_search_replace(a: str, b: str, path: str = "f.txt") -> str | None:
    """One SEARCH/REPLACE block around every change, widened until SEARCH is unique."""
    if not _same_form(a, b):
        return None
    old, new = _lines(a), _lines(b)
    if any(_BLOCK_MARKER.match(line) for line in old + new):
        return None
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    lo, hi = prefix, len(old) - suffix
    while not (hi > lo and _unique_lines(old, old[lo:hi])):
        if lo == 0 and hi == len(old):
            return None
        lo, hi = max(lo - 1, 0), min(hi + 1, len(old))
    if hi == len(old) and not a.endswith("\n") and suffix == 0:
        return None
    search = old[lo:hi]
    replace = new[lo : len(new) - (len(old) - hi)]
    return (
        f"{path}\n```\n<<<<<<< SEARCH\n"
        + "".join(line + "\n" for line in search)
        + "=======\n"
        + "".join(line + "\n" for line in replace)
        + ">>>>>>> REPLACE\n```\n"
    )


def render_whole_file(a: str, b: str, path: str = "f.txt") -> str | None:
    """The path and the complete new text in a fence (which always ends with a newline)."""
    if not _same_form(a, b) or not b.endswith("\n"):
        return None
    new = _lines(b)
    if any(_NOT_WHOLE_FILE.match(line) for line in new):
        return None
    return f"{path}\n```\n" + "".join(line + "\n" for line in new) + "```\n"


def render_str_replace(a: str, b: str, path: str = "f.txt") -> str | None:
    """A str_replace call whose old_str is the smallest unique span covering the change."""
    if a == b or not a:
        return None
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    lo, hi = prefix, len(a) - suffix
    while not (hi > lo and _occurs_once(a, a[lo:hi])):
        lo, hi = max(lo - 1, 0), min(hi + 1, len(a))
    call = {
        "command": "str_replace",
        "path": path,
        "old_str": a[lo:hi],
        "new_str": b[lo : len(b) - (len(a) - hi)],
    }
    return json.dumps(call, ensure_ascii=False) + "\n"


def _occurs_once(text: str, needle: str) -> bool:
    first = text.find(needle)
    return first >= 0 and text.find(needle, first + 1) < 0


RENDERERS: dict[str, Callable[[str, str], str | None]] = {
    "udiff": render_udiff,
    "apply_patch": render_apply_patch,
    "search_replace": render_search_replace,
    "whole_file": render_whole_file,
    "str_replace": render_str_replace,
}
"""Every format by name (as `--format` spells it)."""
