"""Placeholder lines: the comments models write where they left code out.

`# ... existing code ...`, `// ...`, `/* ... */`, `<!-- ... -->`, `.. ...` (reST),
`-- ...`, `; ...` and, in languages where it cannot be code (JSON, JavaScript,
TypeScript, CSS, the C family, Go, Rust...), a bare `...`; each with or without words
after the dots. Whether a line with this shape *is* a placeholder depends on the
file: a line the file already holds is code (a Python `...` body, a comment that
really says `# ...`), never a stand-in for other code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["has_line", "is_placeholder_shape", "placeholders_absent_from"]

_DOTS = r"(?:\.{3,}|\u2026)"
_COMMENTED = re.compile(
    r"^(?:"
    rf"(?:#+|//+|--|;+|%+)\s*{_DOTS}.*"  # line comments
    rf"|/\*+\s*{_DOTS}.*\*/"  # /* ... */
    rf"|\{{/\*+\s*{_DOTS}.*\*/\}}"  # {/* ... */} in JSX
    rf"|<!--\s*{_DOTS}.*-->"  # <!-- ... -->
    rf"|\.\.\s+{_DOTS}.*"  # .. ... (a reST comment)
    r")$"
)
# Compiled by `re` on first use (a plain diff never needs it; docs/decisions/0047).
_BARE = rf"^{_DOTS}(?:\s+[A-Za-z][^\"'`;,{{}}()=]*)?$"
_BARE_SUFFIXES = (
    ".json",
    ".jsonc",
    ".json5",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".ts",
    ".mts",
    ".cts",
    ".tsx",
    ".css",
    ".scss",
    ".less",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".cs",
    ".java",
    ".kt",
    ".go",
    ".rs",
    ".swift",
    ".php",
)
"""Languages where a line holding only `...` cannot be code. Elsewhere it can be: Python's
Ellipsis, YAML's document end, an ellipsis in prose or in a `.txt` copy of source code."""


def is_placeholder_shape(line: str, path: str = "") -> bool:
    """True when `line` looks like an elision comment in the file `path`.

    A bare `...` (with or without words after it) counts only in languages where such a
    line cannot be code (JSON, JavaScript/TypeScript, CSS, the C family, Go, Rust...).
    """
    text = line.strip()
    if not text or ("." not in text and "\u2026" not in text):
        return False
    if _COMMENTED.match(text):
        return True
    if not path.lower().endswith(_BARE_SUFFIXES):
        return False
    return re.match(_BARE, text) is not None


def placeholders_absent_from(
    lines: Iterable[str], existing: Iterable[str], path: str = ""
) -> list[int]:
    """Indexes of the `lines` shaped like placeholders that `existing` does not hold.

    Lines are compared without surrounding whitespace.
    """
    known = {line.strip() for line in existing}
    return [
        index
        for index, line in enumerate(lines)
        if is_placeholder_shape(line, path) and line.strip() not in known
    ]


_LOOKED_PAST = 64
"""Occurrences `has_line` checks one by one before it splits the text into lines."""


def has_line(text: str, wanted: str) -> bool:
    """Whether some line of `text` (`str.splitlines`) is `wanted` once stripped.

    `wanted` is stripped and not empty. Only the places where it occurs are looked at,
    unless it occurs very often: then the text's lines are compared.
    """
    at = text.find(wanted)
    for _ in range(_LOOKED_PAST):
        if at < 0:
            return False
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at + len(wanted))
        segment = text[start : len(text) if end < 0 else end]
        if any(line.strip() == wanted for line in segment.splitlines()):
            return True
        at = text.find(wanted, at + 1)
    return at >= 0 and wanted in {line.strip() for line in text.splitlines()}
