"""Indentation: how a block's indentation maps onto a file's, and the file's own style."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from math import gcd
from typing import NamedTuple

from patchsmith.engine.model import Hunk

__all__ = [
    "IndentMode",
    "IndentShift",
    "IndentStyle",
    "indent_shift",
    "indent_style",
    "indent_unit",
    "indent_width",
    "leading_ws",
    "style_may_matter",
]


def indent_width(ws: str, tab: int) -> int:
    """Columns taken by leading whitespace, tabs advancing to the next multiple of `tab`."""
    col = 0
    for ch in ws:
        col = (col // tab + 1) * tab if ch == "\t" else col + 1
    return col


def leading_ws(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


class IndentMode(StrEnum):
    PREFIX = "prefix"
    COLUMNS = "columns"


class IndentShift(NamedTuple):
    """How the block's indentation maps onto the file's.

    PREFIX: file indentation = `add` + block indentation without `remove`.
    COLUMNS: file indentation = block indentation + `columns`, tabs `tab` wide,
    written with tabs when `use_tabs`.
    """

    mode: IndentMode
    remove: str = ""
    add: str = ""
    columns: int = 0
    tab: int = 4
    use_tabs: bool = False

    def rewrite(self, line: str) -> str:
        """Re-indent an added line the way the file is indented."""
        if not line.strip():
            return line
        body = line.lstrip(" \t")
        ws = line[: len(line) - len(body)]
        if self.mode is IndentMode.PREFIX:
            kept = ws[len(self.remove) :] if ws.startswith(self.remove) else ws.lstrip(self.remove)
            return self.add + kept + body
        width = max(indent_width(ws, self.tab) + self.columns, 0)
        if self.use_tabs:
            return "\t" * (width // self.tab) + " " * (width % self.tab) + body
        return " " * width + body


def indent_shift(
    block_lines: Sequence[str], file_lines: Sequence[str], mode: IndentMode
) -> IndentShift | None:
    """The one consistent indentation change from block to file, or None."""
    pairs = [
        (leading_ws(b), leading_ws(f))
        for b, f in zip(block_lines, file_lines, strict=True)
        if b.strip() and f.strip()
    ]
    if not pairs:
        return None
    if mode is IndentMode.PREFIX:
        h0, f0 = pairs[0]
        common = 0
        while common < min(len(h0), len(f0)) and h0[-1 - common] == f0[-1 - common]:
            common += 1
        remove, add = h0[: len(h0) - common], f0[: len(f0) - common]
        for h, f in pairs:
            if not h.startswith(remove) or f != add + h[len(remove) :]:
                return None
        if not remove and not add:
            return None
        if len(set(remove + add)) > 1:
            return None  # a tab/space swap is a change of columns, not of prefix
        return IndentShift(IndentMode.PREFIX, remove=remove, add=add)
    use_tabs = any("\t" in f for _, f in pairs)
    best: IndentShift | None = None
    for tab in (4, 8, 2):
        deltas = {indent_width(f, tab) - indent_width(h, tab) for h, f in pairs}
        if len(deltas) == 1:
            delta = deltas.pop()
            if best is None or abs(delta) < abs(best.columns):
                best = IndentShift(IndentMode.COLUMNS, columns=delta, tab=tab, use_tabs=use_tabs)
    if best is not None and best.columns == 0 and all(h == f for h, f in pairs):
        return None
    return best


class IndentStyle(NamedTuple):
    """How a file indents: only tabs, only spaces (`unit` wide), or mixed/unknown."""

    tabs: bool
    spaces: bool
    unit: int = 4

    def applies_to(self, old_lines: Sequence[str]) -> bool:
        """Whether a block's added lines should be made to follow this style.

        Only when the file uses one style and the block's own old lines either
        show the other style (the model re-indented everything) or show none;
        a block whose old lines match the file's style may change it on purpose.
        """
        if self.tabs == self.spaces:
            return False
        shown = [leading_ws(x) for x in old_lines if x.strip() and leading_ws(x)]
        if not shown:
            return True
        if self.spaces:
            return any("\t" in ws for ws in shown)
        return any("\t" not in ws for ws in shown)

    def conform(self, line: str, block_unit: int) -> str:
        """Re-indent an added line written in the other style (tabs for spaces or back)."""
        ws = leading_ws(line)
        if not ws or not line.strip() or ("\t" in ws and " " in ws):
            return line  # a mixed indentation is the model's own choice: keep it
        body = line[len(ws) :]
        if self.spaces and not self.tabs and "\t" in ws:
            return " " * indent_width(ws, self.unit) + body
        if self.tabs and not self.spaces and " " in ws:
            width = indent_width(ws, block_unit)
            return "\t" * (width // block_unit) + " " * (width % block_unit) + body
        return line


def indent_unit(lines: Sequence[str]) -> int:
    """The file's indentation step in spaces: the gcd of its indentations, else the most
    common step between consecutive lines (2..8), default 4."""
    widths: set[int] = set()
    steps: Counter[int] = Counter()
    previous = 0
    for line in lines:
        if not line.strip():
            continue
        ws = leading_ws(line)
        if "\t" in ws:
            continue
        if ws:
            widths.add(len(ws))
        step = len(ws) - previous
        if 2 <= step <= 8:
            steps[step] += 1
        previous = len(ws)
    unit = gcd(*widths) if widths else 0
    if 2 <= unit <= 8:
        return unit
    return steps.most_common(1)[0][0] if steps else 4


def indent_style(lines: Sequence[str]) -> IndentStyle:
    """The file's indentation style; only an unmixed, well-attested style is ever imposed.

    A line indented with a space before a tab makes the style mixed, and so
    does a file with fewer than `_MIN_STYLE_LINES` indented lines.
    """
    # Counting the distinct indentations (found by one regex pass) keeps this
    # linear in C rather than a Python loop over every line.
    counts = Counter(re.findall(_INDENT, "\n".join(lines)))
    tabs = spaces = 0
    for ws, count in counts.items():
        if "\t" in ws and " " in ws.rstrip(" "):
            return IndentStyle(tabs=True, spaces=True)
        if ws[0] == "\t":
            tabs += count
        else:
            spaces += count
    if tabs + spaces < _MIN_STYLE_LINES:
        return IndentStyle(tabs=False, spaces=False)
    unit = 4
    if spaces:
        # The gcd of the common indentations; rare ones (alignment) must not drag it to 1.
        common = {len(ws) for ws, n in counts.items() if "\t" not in ws and n * 20 >= spaces}
        found = gcd(*common) if common else 0
        unit = found if 2 <= found <= 8 else 4
    return IndentStyle(tabs=tabs > 0, spaces=spaces > 0, unit=unit)


# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_INDENT = r"(?m)^([ \t]+)(?=[^ \t\n])"
_MIN_STYLE_LINES = 3


def style_may_matter(source: str, hunks: Sequence[Hunk]) -> bool:
    """Whether the file's indentation style could change an added line (skips the scan).

    A file without tabs is at most spaces-only, which only re-indents added lines
    that are indented with tabs.
    """
    if "\t" in source:
        return True
    if not any("\t" in "".join(hunk.lines) for hunk in hunks):  # one C-level join per hunk
        return False
    return any(
        line[:1] == "+" and "\t" in line[1 : len(line) - len(line[1:].lstrip(" \t"))]
        for hunk in hunks
        for line in hunk.lines
    )
