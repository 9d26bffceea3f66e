"""Which grammar reads a file, and what its parse says: the parsing the syntax guard runs.

Below the guards, so the lazy-snippet merge (`runtime.structure`) and the codemod checks
parse without importing a guard (`patchsmith.guards.syntax` holds the guard itself).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from posixpath import splitext
from typing import TYPE_CHECKING, Generic, TypeVar

from patchsmith.engine.textedits import text_edits

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

    from patchsmith.runtime.pyregion import Outline

__all__ = [
    "LANGUAGES",
    "ParseProblems",
    "changed_problems",
    "changed_python_error",
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

_T = TypeVar("_T")


class _Kept(Generic[_T]):
    """The most recently used values, as many as fit `count` and a total `weight`
    (safe to share between threads: a server may judge changes concurrently)."""

    def __init__(self, count: int, weight: int) -> None:
        self.count, self.weight = count, weight
        self._known: OrderedDict[tuple[str, bytes], tuple[_T, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, bytes]) -> _T | None:
        with self._lock:
            found = self._known.get(key)
            if found is None:
                return None
            self._known.move_to_end(key)
            return found[0]

    def put(self, key: tuple[str, bytes], value: _T, weight: int) -> None:
        if weight > self.weight:
            return  # never kept: it would push out everything else
        with self._lock:
            old = self._known.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._known[key] = (value, weight)
            self._total += weight
            while len(self._known) > self.count or self._total > self.weight:
                self._total -= self._known.popitem(last=False)[1][1]


TREE_BYTES = 4 << 20
"""Source bytes whose tree-sitter trees are kept for incremental parsing (a tree takes
about 16 bytes of memory per byte of source: 4 MiB of source, some 64 MiB)."""
OUTLINE_CUTS = 1 << 21
"""Cuts of Python outlines kept (`runtime.pyregion`, class bodies' included): a few
lines of source each."""

_TREES: _Kept[Tree] = _Kept(16, TREE_BYTES)
_OUTLINES: _Kept[Outline] = _Kept(64, OUTLINE_CUTS)


def forget_verdicts() -> None:
    """Drop every cached parse verdict, tree and outline (benchmarks timing a cold parse;
    memory)."""
    global _VERDICTS, _TREES, _OUTLINES
    _VERDICTS = _Verdicts()
    _TREES = _Kept(16, TREE_BYTES)
    _OUTLINES = _Kept(64, OUTLINE_CUTS)


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
    _TREES.put(key, tree, len(data))
    return tree.root_node, problems


def changed_problems(path: str, old: str | None, new: str) -> ParseProblems | None:
    """`parse_problems(path, new)`, with the old text's tree reused when it is kept.

    When this process parsed `old` (as the new text of an earlier change, say), its tree
    is edited where `new` differs and `new` is parsed incrementally. An incremental parse
    with no ERROR or MISSING node is the verdict (no problem); one with problems is set
    aside and `new` parsed afresh, so that every problem reported is a fresh parse's.
    """
    grammar = language_for(path)
    parser = _parser(grammar) if grammar is not None else None
    if parser is None or grammar is None:
        return None
    name = grammar[0] + "." + grammar[1]
    data = new.encode("utf-8", "surrogatepass")
    key = (name, _digest(data))
    known = _VERDICTS.get(key)
    if isinstance(known, ParseProblems):
        return known
    if old is not None:
        old_data = old.encode("utf-8", "surrogatepass")
        before = _TREES.get((name, _digest(old_data)))
        if before is not None:
            tree = parser.parse(data, _edited(before, old_data, data))
            if not tree.root_node.has_error:
                problems = ParseProblems()
                _VERDICTS.put(key, problems)
                _TREES.put(key, tree, len(data))
                return problems
    return _parsed(parser, data, key)[1]


def _edited(tree: Tree, old: bytes, new: bytes) -> Tree:
    """A copy of `tree` (of `old`) told where `new` differs, for an incremental parse."""
    edits: list[tuple[int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]] = []
    row, at = 0, 0  # the row of byte `at` of `old`
    for edit in text_edits(old, new):
        row += old.count(b"\n", at, edit.old_start)
        at = edit.old_start
        start = (row, edit.old_start - old.rfind(b"\n", 0, edit.old_start) - 1)
        end_row = row + old.count(b"\n", edit.old_start, edit.old_end)
        end = (end_row, edit.old_end - old.rfind(b"\n", 0, edit.old_end) - 1)
        written = new[edit.new_start : edit.new_end]
        breaks = written.count(b"\n")
        if breaks:
            new_end = (row + breaks, len(written) - written.rfind(b"\n") - 1)
        else:
            new_end = (row, start[1] + len(written))
        edits.append(
            (edit.old_start, edit.old_end, edit.old_start + len(written), start, end, new_end)
        )
    copy = tree.copy()
    for edit_args in reversed(edits):  # the last first: earlier positions stay as they were
        copy.edit(*edit_args)
    return copy


def python_error(text: str) -> str | None:
    """Why `text` is not valid Python for this interpreter (`ast`), or `None` when it is."""
    key = ("python", _digest(text.encode("utf-8", "surrogatepass")))
    known = _VERDICTS.get(key)
    if known is None or isinstance(known, str):
        return known
    error = _python_error(text)
    _VERDICTS.put(key, error)
    return error


REGION_SHARE = 2
"""The region check re-parses at most 1/REGION_SHARE of a file; a bigger change is parsed whole."""


FIRST_SIGHT = 4096
"""Characters from which a new text whose old text was never parsed is judged by the
cuts a scan finds around the edits (`runtime.pycuts`) before it is parsed whole."""


def changed_python_error(old: str | None, new: str) -> str | None:
    """`python_error(new)`, re-parsing only the statements the change touched when it
    can; `None` also when `new` has no syntax error that `old` did not have.

    When this process parsed `old` and it was valid Python, its outline (where its
    top-level statements, and those of its top-level classes' bodies, end) is kept: the
    new text is valid when the rows between the cuts around each edit parse on their own
    (`runtime.pyregion`; docs/decisions/0043). Otherwise the cuts around the edits are
    found by scanning `old` (`runtime.pycuts`): when the rows between them parse on
    their own in both texts, `new` parses exactly when `old` does (docs/decisions/0049),
    and `None` is returned without a verdict kept for `new` (it may fail, where `old`
    fails too). Anything else, a failing region included, is decided by parsing all of
    `new`, so an error's message is always the whole file's.
    """
    # Imported here, not above: only Python files need outlines, and a process that checks
    # other files starts faster without them (docs/decisions/0047).
    from patchsmith.runtime.pyregion import outline_of, region_outline

    data = new.encode("utf-8", "surrogatepass")
    key = ("python", _digest(data))
    known = _VERDICTS.get(key)
    if known is None or isinstance(known, str):
        return known
    if old is not None:
        outline = _OUTLINES.get(("python", _digest(old.encode("utf-8", "surrogatepass"))))
        if outline is not None:
            edits = text_edits(old, new)
            found = region_outline(outline, old, new, edits, len(new) // REGION_SHARE)
            if found is not None:
                _VERDICTS.put(key, None)
                _OUTLINES.put(key, found, found.size)
                return None
        elif len(new) >= FIRST_SIGHT and _same_errors(old, new):
            return None
    parsed = _ast_module(new)
    if isinstance(parsed, str):
        _VERDICTS.put(key, parsed)
        return parsed
    _VERDICTS.put(key, None)
    outline = outline_of(parsed, new)
    if outline is not None:
        _OUTLINES.put(key, outline, outline.size)
    return None


def _same_errors(old: str, new: str) -> bool:
    """True when `new` parses exactly when `old` does, told from the rows around the
    edits alone (`runtime.pycuts`; docs/decisions/0049)."""
    if not (old.isascii() or _encodes(old)) or not (new.isascii() or _encodes(new)):
        return False
    # Imported here for the reason `changed_python_error` gives.
    from patchsmith.runtime.pycuts import first_sight_outline
    from patchsmith.runtime.pyregion import regions_parse

    edits = text_edits(old, new)
    cuts = first_sight_outline(old, edits)
    if cuts is None:
        return False
    budget = len(new) // REGION_SHARE
    return regions_parse(cuts, old, new, edits, budget)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _python_error(text: str) -> str | None:
    parsed = _ast_module(text)
    return parsed if isinstance(parsed, str) else None


def _ast_module(text: str) -> ast.Module | str:
    """`text`'s module, or why `ast` cannot read it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes and the like are not our business
        try:
            return ast.parse(text)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return str(exc) or type(exc).__name__


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
