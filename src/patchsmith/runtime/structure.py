"""What tree-sitter knows about a file, in the shape the lazy-snippet merge asks for.

`patchsmith.engine.lazy` stays pure: it is handed a `BlockStructure` and never parses.
This module makes one from a file's text with the grammars the syntax guard loads (see
docs/decisions/0003). The text is parsed on first use, and a text that does not parse
cleanly has no blocks: the structure of a broken file is not evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

# The grammars are the syntax guard's (`runtime.syntax`), imported where they are used, so that
# `import patchsmith` loads neither it nor what it loads (the policy model, pydantic).

__all__ = ["TreeStructure", "structure_for"]


def structure_for(path: str, text: str) -> TreeStructure | None:
    """The block structure of `text` as the file `path`; None without a grammar for it."""
    from patchsmith.runtime.syntax import language_for

    if language_for(path) is None:
        return None
    return TreeStructure(path, text)


class TreeStructure:
    """The blocks of one file and the parse check of a merged text (a `BlockStructure`)."""

    def __init__(self, path: str, text: str) -> None:
        self._path = path
        self._text = text

    @cached_property
    def _root(self) -> Node | None:
        """The syntax tree's root, or None when the text does not parse cleanly."""
        from patchsmith.runtime.syntax import parse_tree, python_error

        root = parse_tree(self._path, self._text)
        if root is None or root.has_error:
            return None
        if _is_python(self._path) and python_error(self._text) is not None:
            return None
        return root

    @cached_property
    def _lines(self) -> list[str]:
        return self._text.splitlines()

    @property
    def parses(self) -> bool:
        """True when the file's own text parses without a problem."""
        return self._root is not None

    def block_ends(self, line: int) -> Sequence[int]:
        """Where the rest of each block holding 0-based `line` ends (exclusive), innermost first.

        A block holds a line when it starts on an earlier line and ends on it or later; the
        file itself is not a block. The rest of a block stops before its closing line (a
        line that starts with the block's last token, such as `}`), else after its last line.
        """
        ends: list[int] = []
        node = self._root
        while node is not None:
            inner = next(
                (c for c in node.children if c.start_point[0] < line <= _last_row(c)), None
            )
            if inner is None:
                break
            ends.append(self._rest_end(inner))
            node = inner
        innermost_first: list[int] = []
        for end in reversed(ends):
            if end not in innermost_first:
                innermost_first.append(end)
        return innermost_first

    def _rest_end(self, node: Node) -> int:
        last = _last_row(node)
        closer = node.children[-1] if node.children else None
        if (
            closer is not None
            and not closer.is_named
            and closer.text
            and closer.start_point[0] == last > node.start_point[0]
            and last < len(self._lines)
            and self._lines[last].lstrip().startswith(closer.text.decode("utf-8", "replace"))
        ):
            return last
        return last + 1

    def breaks(self, merged: str) -> int | None:
        """The 1-based line of the first problem of `merged`, when the file's own text parsed
        cleanly and `merged` does not; None otherwise."""
        from patchsmith.runtime.syntax import parse_problems, python_error

        if self._root is None:
            return None
        if _is_python(self._path):
            error = python_error(merged)
            if error is None:
                return None
            number = error.split(":", 1)[0].removeprefix("line ")
            return int(number) if number.isdigit() else 1
        problems = parse_problems(self._path, merged)
        if problems is None or problems.count == 0:
            return None
        return problems.first_line or 1


def _is_python(path: str) -> bool:
    return path.lower().endswith((".py", ".pyi"))


def _last_row(node: Node) -> int:
    """The last row `node` covers (a node that ends at column 0 ends on the row before)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row
