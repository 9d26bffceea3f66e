"""Syntax guard: a change must not break the parse of a file."""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from posixpath import splitext
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards._diff import text_of
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.excerpts import masked_excerpt

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "LANGUAGES",
    "ParseProblems",
    "SyntaxGuard",
    "language_for",
    "parse_problems",
    "python_error",
]

LANGUAGES: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"),
    ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".cts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".json": ("tree_sitter_json", "language"),
    ".java": ("tree_sitter_java", "language"),
    ".c": ("tree_sitter_c", "language"),
    ".h": ("tree_sitter_c", "language"),
    ".sh": ("tree_sitter_bash", "language"),
    ".bash": ("tree_sitter_bash", "language"),
    ".yaml": ("tree_sitter_yaml", "language"),
    ".yml": ("tree_sitter_yaml", "language"),
    ".toml": ("tree_sitter_toml", "language"),
}
"""File suffix to (grammar module, function returning its language); see docs/decisions/0003."""


@dataclass(frozen=True)
class ParseProblems:
    """The tree-sitter ERROR and MISSING nodes in one text."""

    errors: int = 0
    missing: int = 0
    first_line: int | None = None
    """1-based line of the first problem, when there is one."""
    lines: tuple[int, ...] = ()
    """1-based lines where problems start, sorted, each once."""

    @property
    def count(self) -> int:
        return self.errors + self.missing


def language_for(path: str) -> tuple[str, str] | None:
    """The grammar for `path` by its suffix, `None` for languages the guard does not know."""
    return LANGUAGES.get(splitext(path)[1].lower())


def parse_problems(path: str, text: str) -> ParseProblems | None:
    """The tree-sitter problems of `text` as the file `path`, `None` without a grammar."""
    grammar = language_for(path)
    parser = _parser(grammar) if grammar is not None else None
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    if not tree.root_node.has_error:
        return ParseProblems()
    errors, missing, lines = _count(tree.root_node)
    return ParseProblems(errors, missing, lines[0] if lines else None, lines)


def python_error(text: str) -> str | None:
    """Why `text` is not valid Python for this interpreter (`ast`), or `None` when it is."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are not our business
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return str(exc) or type(exc).__name__
    return None


def _count(root: Node) -> tuple[int, int, tuple[int, ...]]:
    errors = missing = 0
    lines: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            if node.is_error:
                errors += 1
            else:
                missing += 1
            lines.add(node.start_point[0] + 1)
        # only subtrees that contain a problem are worth walking
        stack.extend(child for child in node.children if child.has_error or child.is_missing)
    return errors, missing, tuple(sorted(lines))


@cache
def _parser(grammar: tuple[str, str]) -> Parser | None:
    # grammars are loaded on first use so that `import patchsmith` never pays for tree-sitter
    try:
        import tree_sitter

        module = importlib.import_module(grammar[0])
        language_fn: Callable[[], object] = getattr(module, grammar[1])
        return tree_sitter.Parser(tree_sitter.Language(language_fn()))
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


class SyntaxGuard(Guard):
    """Refuse a change that breaks the parse of a file that parsed before.

    What: Python is parsed with `ast`: refused when the new text fails and the
    old text (if any) did not. Other files with a tree-sitter grammar
    (JavaScript, TypeScript/TSX, Go, Rust, JSON, Java, C, Bash, YAML, TOML), and
    Python whose old text fails `ast` too, are refused when the new text has
    more ERROR or MISSING nodes than the old. Other languages, deletions and
    binary content pass.
    Why: a hunk applied in the wrong place, or a truncated whole-file edit,
    usually leaves unbalanced brackets: caught here, before anything is written.
    Example: turning `def f():\\n    return 1\\n` into `def f(:\\n    return 1\\n`
    is SYNTAX_ERROR; a file that was already broken may stay as broken.
    """

    NAME = "syntax"
    CODE = FailureCode.SYNTAX_ERROR
    MESSAGE = "change breaks the syntax of the file"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per file whose new text parses worse than its old text."""
        failures: list[PatchFailure] = []
        for change in changes:
            failure = self._check_one(change)
            if failure is not None:
                failures.append(failure)
        return failures

    def _check_one(self, change: FileChange) -> PatchFailure | None:
        new = text_of(change.new_bytes, change.new_text)
        if new is None:
            return None
        old = text_of(change.old_bytes, change.old_text)
        if change.path.lower().endswith((".py", ".pyi")):
            # the interpreter's own parser decides; tree-sitter only arbitrates when the
            # old text fails too (e.g. syntax newer than this Python)
            new_error = python_error(new)
            if new_error is None:
                return None
            if old is None or python_error(old) is None:
                line = _line_of(new_error)
                return self._with_new_text(
                    self.failure(change.path, f"{change.path}: {new_error}"), change.path, new, line
                )
        after = parse_problems(change.path, new)
        if after is None or after.count == 0:
            return None
        before = parse_problems(change.path, old) if old is not None else ParseProblems()
        assert before is not None  # the same grammar parsed `new`
        if after.count <= before.count:
            return None
        where = f" (first at line {after.first_line})" if after.first_line else ""
        failure = self.failure(
            change.path,
            f"{change.path}: {after.count - before.count} new syntax error(s){where}",
            hint="check brackets, quotes and indentation around the edit",
        )
        line = after.first_line
        if before.count and after.lines and old is not None:
            # The file was broken before: its first problem is old news; the one nearest
            # the edit is the one to show.
            line = _nearest(after.lines, _changed_span(old, new))
        return self._with_new_text(failure, change.path, new, line)

    @staticmethod
    def _with_new_text(
        failure: PatchFailure, path: str, new: str, line: int | None
    ) -> PatchFailure:
        """The failure with the new text around the error (numbered, secrets masked)."""
        if line is None:
            return failure
        contents = new.splitlines()
        if not contents:
            return failure
        at = min(max(line - 1, 0), len(contents) - 1)
        excerpt = masked_excerpt(path, contents, (at, at + 1), margin=5)
        hint = (failure.hint + "; " if failure.hint else "") + (
            "the excerpt is the new text the edit would have written, around the error"
        )
        return replace(failure, excerpt=excerpt, hint=hint)


_LINE = re.compile(r"\bline (\d+)")


def _changed_span(old: str, new: str) -> tuple[int, int]:
    """1-based first and last line of `new` that differ from `old` (by common ends)."""
    a, b = old.splitlines(), new.splitlines()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + 1, max(len(b) - tail, head + 1)


def _nearest(lines: Sequence[int], span: tuple[int, int]) -> int:
    """The line of `lines` nearest the span (one inside it first)."""
    low, high = span
    return min(lines, key=lambda n: (max(low - n, n - high, 0), n))


def _line_of(message: str) -> int | None:
    found = _LINE.search(message)
    return int(found.group(1)) if found else None
