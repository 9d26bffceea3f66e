"""Which grammar reads a file, and what its parse says: the parsing the syntax guard runs.

Below the guards, so the lazy-snippet merge (`runtime.structure`) and the codemod checks
parse without importing a guard (`patchsmith.guards.syntax` holds the guard itself).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from posixpath import splitext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "LANGUAGES",
    "ParseProblems",
    "forget_verdicts",
    "language_for",
    "parse_problems",
    "parse_tree",
    "parser_for",
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


Span = tuple[int, int, int, int]
"""A problem's 0-based start row and column, end row and column (columns in bytes)."""


@dataclass(frozen=True)
class ParseProblems:
    """The tree-sitter ERROR and MISSING nodes in one text."""

    errors: int = 0
    missing: int = 0
    first_line: int | None = None
    """1-based line of the first problem, when there is one."""
    lines: tuple[int, ...] = ()
    """1-based lines where problems start, sorted, each once."""
    spans: tuple[Span, ...] = ()
    """Where each problem that holds no other problem starts and ends, sorted (see `Span`)."""

    @property
    def count(self) -> int:
        return self.errors + self.missing


def language_for(path: str) -> tuple[str, str] | None:
    """The grammar for `path` by its suffix, `None` for languages the guard does not know."""
    return LANGUAGES.get(splitext(path)[1].lower())


class _Verdicts:
    """Verdicts of the parsers by the sha256 of the text parsed, the most recent kept.

    A parse is a pure function of the text; a caller that applies edit after edit to a
    file, or sends a reply again, has the new text of one apply as the old text of the
    next, so its verdict is known without parsing the file again.
    """

    SIZE = 256

    def __init__(self) -> None:
        self._known: OrderedDict[tuple[str, bytes], object] = OrderedDict()

    def get(self, key: tuple[str, bytes]) -> object:
        found = self._known.get(key, _UNKNOWN)
        if found is not _UNKNOWN:
            self._known.move_to_end(key)
        return found

    def put(self, key: tuple[str, bytes], verdict: object) -> None:
        self._known[key] = verdict
        self._known.move_to_end(key)
        while len(self._known) > self.SIZE:
            self._known.popitem(last=False)


_UNKNOWN = object()
_VERDICTS = _Verdicts()


def forget_verdicts() -> None:
    """Drop every cached parse verdict (benchmarks timing a cold parse; memory)."""
    global _VERDICTS
    _VERDICTS = _Verdicts()


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def parser_for(path: str) -> Parser | None:
    """A tree-sitter parser for `path` by its suffix, `None` without an installed grammar."""
    grammar = language_for(path)
    return _parser(grammar) if grammar is not None else None


def parse_problems(path: str, text: str) -> ParseProblems | None:
    """The tree-sitter problems of `text` as the file `path`, `None` without a grammar."""
    grammar = language_for(path)
    parser = _parser(grammar) if grammar is not None else None
    if parser is None or grammar is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    key = (grammar[0] + "." + grammar[1], _digest(data))
    known = _VERDICTS.get(key)
    if isinstance(known, ParseProblems):
        return known
    return _parsed(parser, data, key)[1]


def parse_tree(path: str, text: str) -> Node | None:
    """The syntax tree's root of `text` as the file `path` (`None` without a grammar); its
    verdict is kept, so `parse_problems` of the same text does not parse it again."""
    grammar = language_for(path)
    parser = _parser(grammar) if grammar is not None else None
    if parser is None or grammar is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    return _parsed(parser, data, (grammar[0] + "." + grammar[1], _digest(data)))[0]


def _parsed(parser: Parser, data: bytes, key: tuple[str, bytes]) -> tuple[Node, ParseProblems]:
    tree = parser.parse(data)
    problems = ParseProblems()
    if tree.root_node.has_error:
        errors, missing, lines, spans = _count(tree.root_node)
        problems = ParseProblems(errors, missing, lines[0] if lines else None, lines, spans)
    _VERDICTS.put(key, problems)
    return tree.root_node, problems


def python_error(text: str) -> str | None:
    """Why `text` is not valid Python for this interpreter (`ast`), or `None` when it is."""
    key = ("python", _digest(text.encode("utf-8", "surrogatepass")))
    known = _VERDICTS.get(key)
    if known is None or isinstance(known, str):
        return known
    error = _python_error(text)
    _VERDICTS.put(key, error)
    return error


def _python_error(text: str) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are not our business
        try:
            ast.parse(text)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return str(exc) or type(exc).__name__
    return None


def _count(root: Node) -> tuple[int, int, tuple[int, ...], tuple[Span, ...]]:
    errors = missing = 0
    lines: set[int] = set()
    spans: list[Span] = []
    stack = [root]
    while stack:
        node = stack.pop()
        # only subtrees that contain a problem are worth walking
        inner = [child for child in node.children if child.has_error or child.is_missing]
        if node.is_error or node.is_missing:
            if node.is_error:
                errors += 1
            else:
                missing += 1
            lines.add(node.start_point[0] + 1)
            if not inner:
                # Only the innermost problems locate anything: an ERROR around them may
                # span the whole file once the parser gives up on its structure.
                (row, column), (end_row, end_column) = node.start_point, node.end_point
                spans.append((row, column, end_row, end_column))
        stack.extend(inner)
    return errors, missing, tuple(sorted(lines)), tuple(sorted(spans))


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
