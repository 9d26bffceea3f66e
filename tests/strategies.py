"""Hypothesis strategies for source texts, real edits of them, and the diffs models write for them.

`texts()` draws files the way they come (CJK, astral emoji, tabs, CRLF, blank and repeated
lines, trailing whitespace, no final newline); `edits()` draws a real change of one;
`model_diffs()` renders that change as a difflib unified diff, then damages it the way models do.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from enum import StrEnum

from hypothesis import strategies as st

__all__ = [
    "Damage",
    "DiffCase",
    "Edit",
    "edits",
    "line_contents",
    "model_diffs",
    "render_unified",
    "texts",
]

# Tokens rather than raw characters so that lines repeat and resemble code; the odd ones are here
# because they differ between UTF-16 (JavaScript) and code-point (Python) string lengths.
_TOKENS = (
    "def",
    "return",
    "x",
    "y = 1",
    "foo()",
    "{",
    "}",
    "//",
    "#",
    "if (a) {",
    "中文",
    "关于我们",
    "😀",
    "🎉x",
    "🙂",
    "é",
    "\t",
    "  ",
    "$&",
    "'q'",
    '"s"',
    "-",
    "+",
    "@",
)
_POOL = (
    "",
    "  ",
    "\t",
    "}",
    "return x",
    "    pass",
    "// 中文",
    "😀",
    "end  ",
    "😀😀😀😀😀",
    "🙂 ok",
)

_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


class Damage(StrEnum):
    """A mistake models make when writing a unified diff."""

    WRONG_LINE_NUMBERS = "wrong_line_numbers"
    BARE_HEADER = "bare_header"
    NO_HUNK_HEADERS = "no_hunk_headers"
    MISSING_CONTEXT = "missing_context"
    BLANK_LINE_PREFIX_DROPPED = "blank_line_prefix_dropped"
    CONTEXT_PREFIX_DROPPED = "context_prefix_dropped"
    TRAILING_WHITESPACE_STRIPPED = "trailing_whitespace_stripped"
    NO_FILE_HEADERS = "no_file_headers"
    GIT_HEADERS = "git_headers"
    PROSE_AND_FENCE = "prose_and_fence"
    CRLF_DIFF = "crlf_diff"
    SECOND_FILE = "second_file"


@dataclass(frozen=True)
class Edit:
    """A real change: `source` becomes `target`."""

    source: str
    target: str


@dataclass(frozen=True)
class DiffCase:
    """A model-style diff for an edit, and the mistakes it carries (none: a clean diff)."""

    source: str
    target: str
    diff: str
    damage: tuple[Damage, ...]


def line_contents() -> st.SearchStrategy[str]:
    """One line without its ending: code-like tokens, a repeated line, or odd characters."""
    worded = st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=5).map(" ".join)
    odd = st.text(
        alphabet=st.sampled_from("ab \t中😀é{}()-+@\\$"),
        min_size=1,
        max_size=8,
    )
    trailing = st.tuples(worded, st.sampled_from([" ", "\t", "  "])).map("".join)
    return st.one_of(worded, st.sampled_from(_POOL), odd, trailing)


def _join(contents: list[str], newline: str, final_newline: bool) -> str:
    if not contents:
        return ""
    return newline.join(contents) + (newline if final_newline else "")


@st.composite
def texts(draw: st.DrawFn, min_lines: int = 1, max_lines: int = 25) -> str:
    """A source file: LF or CRLF, with or without a final newline."""
    contents = draw(st.lists(line_contents(), min_size=min_lines, max_size=max_lines))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    final_newline = draw(st.booleans()) if contents else True
    return _join(contents, newline, final_newline)


def _newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


@st.composite
def edits(draw: st.DrawFn, max_changes: int = 3) -> Edit:
    """A source and a real change of it: some lines replaced, inserted or deleted."""
    source = draw(texts(min_lines=1))
    newline = _newline_of(source)
    final_newline = source.endswith("\n")
    contents = source.split(newline)
    if final_newline:
        contents.pop()
    changed = list(contents)
    for _ in range(draw(st.integers(1, max_changes))):
        start = draw(st.integers(0, len(changed)))
        removed = draw(st.integers(0, min(3, len(changed) - start)))
        added = draw(st.lists(line_contents(), min_size=0 if removed else 1, max_size=3))
        changed[start : start + removed] = added
    target = _join(changed, newline, final_newline or not changed)
    if target == source:
        # Also when the lists differ but join alike: [""] and [] are both the empty text.
        changed.insert(draw(st.integers(0, len(changed))), "added line")
        target = _join(changed, newline, final_newline or not changed)
    return Edit(source=source, target=target)


def render_unified(source: str, target: str, context: int = 3, path: str = "f.txt") -> str:
    """A clean unified diff of `source` to `target`, as difflib writes it.

    A last line without a newline gets one plus git's `\\ No newline at end of file` marker.
    """
    lines = difflib.unified_diff(
        source.splitlines(keepends=True),
        target.splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
        n=context,
    )
    rendered: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            rendered.append(line)
        else:
            rendered.extend([line + "\n", "\\ No newline at end of file\n"])
    return "".join(rendered)


def _is_body(line: str) -> bool:
    return not line.startswith(("--- ", "+++ ", "@@", "\\"))


@st.composite
def _damaged(draw: st.DrawFn, clean: str, chosen: frozenset[Damage]) -> str:
    lines = clean.splitlines(keepends=True)
    if Damage.MISSING_CONTEXT in chosen:
        context = [i for i, line in enumerate(lines) if line.startswith(" ")]
        if context:
            del lines[draw(st.sampled_from(context))]
    if Damage.WRONG_LINE_NUMBERS in chosen:
        lines = [
            _HEADER.sub(
                f"@@ -{draw(st.integers(1, 999))},{draw(st.integers(0, 9))} "
                f"+{draw(st.integers(1, 999))},{draw(st.integers(0, 9))} @@",
                line,
            )
            for line in lines
        ]
    if Damage.BARE_HEADER in chosen:
        bare = draw(st.sampled_from(["@@", "@@ @@", "@@ ... @@", "@@ -1 +1 @@"]))
        lines = [_HEADER.sub(bare, line) if line.startswith("@@") else line for line in lines]
    if Damage.NO_HUNK_HEADERS in chosen:
        lines = [line for line in lines if not line.startswith("@@")]
    if Damage.BLANK_LINE_PREFIX_DROPPED in chosen:
        lines = [line[1:] if line in (" \n", " \r\n") else line for line in lines]
    if Damage.CONTEXT_PREFIX_DROPPED in chosen:
        context = [i for i, line in enumerate(lines) if line.startswith(" ") and line.strip()]
        if context:
            at = draw(st.sampled_from(context))
            lines[at] = lines[at][1:]
    if Damage.TRAILING_WHITESPACE_STRIPPED in chosen:
        lines = [
            line.rstrip(" \t\r\n") + "\n" if _is_body(line) and line.strip() else line
            for line in lines
        ]
    if Damage.NO_FILE_HEADERS in chosen:
        lines = [line for line in lines if not line.startswith(("--- ", "+++ "))]
    elif Damage.GIT_HEADERS in chosen:
        lines = ["diff --git a/f.txt b/f.txt\n", "index 1a2b3c4..5d6e7f8 100644\n", *lines]
    text = "".join(lines)
    if Damage.SECOND_FILE in chosen:
        # Another file's section after this one (its hunks still target the same source in a
        # single-file apply), sometimes after a blank line.
        other = draw(edits())
        gap = draw(st.sampled_from(["", "\n"]))
        text += gap + render_unified(other.source, other.target, path="g.txt")
    if Damage.PROSE_AND_FENCE in chosen:
        opening = draw(st.sampled_from(["Here is the change:\n\n", "Sure!\n", ""]))
        closing = draw(st.sampled_from(["\nThis fixes it.\n", "", "\n"]))
        text = f"{opening}```diff\n{text}```\n{closing}"
    if Damage.CRLF_DIFF in chosen:
        # A naive converter turns a CRLF file's "\r\n" into "\r\r\n"; a careful one does not.
        if draw(st.booleans()):
            text = text.replace("\r\n", "\n")
        text = text.replace("\n", "\r\n")
    return text


@st.composite
def model_diffs(draw: st.DrawFn, damage: bool = True) -> DiffCase:
    """A real edit rendered as a unified diff, then (when `damage`) carrying some model mistakes."""
    edit = draw(edits())
    context = draw(st.sampled_from([0, 1, 2, 3, 3, 5]))
    clean = render_unified(edit.source, edit.target, context=context)
    chosen: frozenset[Damage] = (
        draw(st.frozensets(st.sampled_from(Damage), max_size=4)) if damage else frozenset()
    )
    diff = draw(_damaged(clean, chosen))
    ordered = tuple(kind for kind in Damage if kind in chosen)
    return DiffCase(source=edit.source, target=edit.target, diff=diff, damage=ordered)
