"""A recipe's Python import changes, made as small text edits in the files its edits touched.

A file is looked at only when its edits brought the name in (for an import to add) or
took a use of it out (for one to remove); the others are not parsed at all. The new
text is parsed once with the standard library's `ast` (positions come with the tree, and
it is an order of magnitude faster than a concrete tree), its free names are resolved
through the scopes, and the import is then written into the file as it is laid out: a
name into an existing `from m import ...` at its sorted place, or a new line at its
sorted place within its section of the import block. Nothing else in the file moves.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["ImportSpec", "Usage", "fix_source", "parse_spec", "usage"]

_NAME = re.compile(r"(?<![\w.])[^\W\d]\w*")
_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass(frozen=True)
class ImportSpec:
    """One import of a recipe: `from module import name`, or `import module` (`name` None)."""

    module: str
    name: str | None = None

    @property
    def bound(self) -> str:
        """The name the import binds in the file."""
        return self.name or self.module.split(".")[0]

    @property
    def statement(self) -> str:
        if self.name is None:
            return f"import {self.module}"
        return f"from {self.module} import {self.name}"


def parse_spec(spec: str) -> ImportSpec | None:
    """`from pkg.mod import name`, `import pkg.mod` or `pkg.mod`; `None` for anything else."""
    words = spec.split()
    if len(words) == 4 and words[0] == "from" and words[2] == "import":
        module, name = words[1], words[3]
    elif len(words) == 2 and words[0] == "import":
        module, name = words[1], None
    elif len(words) == 1:
        module, name = words[0], None
    else:
        return None
    dotted = all(part.isidentifier() for part in module.split("."))
    if not dotted or (name is not None and not name.isidentifier()):
        return None
    return ImportSpec(module, name)


# -- which names the file uses -------------------------------------------------------------


@dataclass
class _Scope:
    kind: str  # "module", "class", "function" or "comprehension"
    parent: _Scope | None
    bound: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    loads: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Usage:
    """The names a module reads from its global scope, and those it binds there."""

    free: frozenset[str]
    module_bound: frozenset[str]


class _Collector(ast.NodeVisitor):
    """Bindings and loads per scope, as Python resolves them (class bodies hide from nested
    functions; a comprehension is its own scope; `global`/`nonlocal` redirect bindings)."""

    def __init__(self) -> None:
        self.module = _Scope("module", None)
        self.scope = self.module
        self.scopes = [self.module]

    def _bind_in(self, scope: _Scope, name: str) -> None:
        if name in scope.declared_global:
            self.module.bound.add(name)
        else:
            scope.bound.add(name)

    def _enter(self, kind: str) -> _Scope:
        scope = _Scope(kind, self.scope)
        self.scopes.append(scope)
        self.scope = scope
        return scope

    def _leave(self, scope: _Scope) -> None:
        assert scope.parent is not None
        self.scope = scope.parent

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.scope.loads.append(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._bind_in(self.scope, node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent  # `:=` in a comprehension binds in the scope around it
        assert isinstance(node.target, ast.Name)
        self._bind_in(scope, node.target.id)

    def _arguments(self, args: ast.arguments) -> list[str]:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        return [a.arg for a in every]

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            self._bind_in(self.scope, node.name)
            for decorator in node.decorator_list:
                self.visit(decorator)
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            for arg in every:
                if arg is not None and arg.annotation is not None:
                    self.visit(arg.annotation)
            if node.returns is not None:
                self.visit(node.returns)
        scope = self._enter("function")
        scope.bound.update(self._arguments(args))
        body: Sequence[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else node.body
        for statement in body:
            self.visit(statement)
        self._leave(scope)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(part)
        self._bind_in(self.scope, node.name)
        scope = self._enter("class")
        for statement in node.body:
            self.visit(statement)
        self._leave(scope)

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        scope = self._enter("comprehension")
        for number, generator in enumerate(node.generators):
            self.visit(generator.target)
            if number:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self._leave(scope)

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_GeneratorExp = _comprehension
    visit_DictComp = _comprehension

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                self._bind_in(self.scope, alias.asname or alias.name.split(".")[0])

    visit_Import = _import
    visit_ImportFrom = _import

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.declared_global.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(node.names)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._bind_in(self.scope, node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self._bind_in(self.scope, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind_in(self.scope, node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self._bind_in(self.scope, node.rest)
        self.generic_visit(node)


def _reaches_module(scope: _Scope, name: str) -> bool:
    """Whether `name` read in `scope` is the module's global of that name."""
    if name in scope.declared_global:
        return True
    current: _Scope | None = scope
    first = True
    while current is not None and current.kind != "module":
        # a class body's names are not visible from the functions nested in it
        visible = first or current.kind != "class"
        if visible and (name in current.declared_nonlocal or name in current.bound):
            return False
        first = False
        current = current.parent
    return True


def usage(tree: ast.Module) -> Usage:
    """Which names `tree` reads as globals (a `Name`, never an attribute) and binds there."""
    collector = _Collector()
    collector.visit(tree)
    free = {
        name for scope in collector.scopes for name in scope.loads if _reaches_module(scope, name)
    }
    return Usage(frozenset(free), frozenset(collector.module.bound))


# -- where the file's imports are ----------------------------------------------------------


class _Text:
    """The file's text with ast positions (1-based lines, UTF-8 byte columns) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
        newline = _NEWLINE.search(text)
        self.newline = newline.group() if newline else "\n"

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its line break."""
        start = self.starts[number - 1]
        end = self.starts[number] if number < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, line: int, column: int) -> int:
        text = self.line(line)
        if not text.isascii():
            column = len(text.encode("utf-8")[:column].decode("utf-8", "replace"))
        return self.starts[line - 1] + column

    def line_start(self, line: int) -> int:
        return self.starts[line - 1] if line <= len(self.starts) else len(self.text)

    def after_line(self, line: int) -> int:
        """The offset where the line after `line` starts (the end of the text after the last)."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def is_blank(self, line: int) -> bool:
        return line > len(self.starts) or not self.line(line).strip()

    def alone(self, node: ast.stmt) -> bool:
        """Whether the statement is alone on its lines (a trailing comment allowed)."""
        assert node.end_lineno is not None and node.end_col_offset is not None
        before = self.line(node.lineno).encode("utf-8")[: node.col_offset]
        after = self.line(node.end_lineno).encode("utf-8")[node.end_col_offset :]
        rest = after.decode("utf-8").strip()
        return not before.strip() and (not rest or rest.startswith("#"))


_Import = ast.Import | ast.ImportFrom


def _module_imports(tree: ast.Module) -> list[tuple[_Import, list[ast.stmt]]]:
    """Every import statement run at module level (inside `if`/`try`/`with` too), in order,
    each with the block of statements it belongs to."""
    found: list[tuple[_Import, list[ast.stmt]]] = []
    pending: list[list[ast.stmt]] = [tree.body]
    while pending:
        block = pending.pop(0)
        for statement in block:
            if isinstance(statement, _Import):
                found.append((statement, block))
            elif isinstance(statement, ast.If | ast.Try | ast.With):
                pending.extend(_blocks(statement))
    return found


def _blocks(node: ast.If | ast.Try | ast.With) -> list[list[ast.stmt]]:
    blocks = [node.body]
    if isinstance(node, ast.If | ast.Try):
        blocks.append(node.orelse)
    if isinstance(node, ast.Try):
        blocks += [handler.body for handler in node.handlers]
        blocks.append(node.finalbody)
    return [block for block in blocks if block]


def _leading_block(tree: ast.Module, text: _Text) -> list[list[_Import]]:
    """The first run of top-level import statements, in groups split by blank lines."""
    groups: list[list[_Import]] = []
    started = False
    for statement in tree.body:
        if not isinstance(statement, _Import) or not text.alone(statement):
            if started:
                break
            continue
        if not started or _blank_between(text, groups[-1][-1], statement):
            groups.append([])
        started = True
        groups[-1].append(statement)
    return groups


def _blank_between(text: _Text, first: ast.stmt, second: ast.stmt) -> bool:
    assert first.end_lineno is not None
    return any(text.is_blank(n) for n in range(first.end_lineno + 1, second.lineno))


_SECTION_FUTURE, _SECTION_STDLIB, _SECTION_OTHER, _SECTION_LOCAL = range(4)


def _section(module: str, level: int = 0) -> int:
    if level:
        return _SECTION_LOCAL
    if module == "__future__":
        return _SECTION_FUTURE
    top = module.split(".")[0]
    return _SECTION_STDLIB if top in sys.stdlib_module_names else _SECTION_OTHER


def _statement_section(node: _Import) -> int:
    if isinstance(node, ast.Import):
        return _section(node.names[0].name)
    return _section(node.module or "", node.level)


# -- sorting as the file does -------------------------------------------------------------


def _by_type(name: str) -> tuple[int, str]:
    """isort's and ruff's default order: CONSTANTS, then Classes, then functions."""
    if name.isupper() and len(name) > 1:
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _as_written(name: str) -> tuple[int, str]:
    return (0, name)


def _ignoring_case(name: str) -> tuple[int, str]:
    return (0, name.lower())


_NAME_ORDERS: tuple[Callable[[str], tuple[int, str]], ...] = (_by_type, _as_written, _ignoring_case)


def _key_of(names: Sequence[str]) -> Callable[[str], tuple[int, str]] | None:
    """The first order (of the usual ones) the names are already in; `None` if none."""
    for key in _NAME_ORDERS:
        keys = [key(n) for n in names]
        if all(a <= b for a, b in itertools.pairwise(keys)):
            return key
    return None


def _line_key_forced(node: _Import) -> tuple[str, str, str]:
    """`force_sort_within_sections`: by module only, `import m` before `from m import`."""
    if isinstance(node, ast.Import):
        return (node.names[0].name.lower(), "0", "")
    return ("." * node.level + (node.module or "")).lower(), "1", node.names[0].name


def _line_key_plain(node: _Import) -> tuple[str, str, str]:
    """isort's default: every `import m` first, then the `from m import` lines, by module."""
    module, kind, name = _line_key_forced(node)
    return kind, module, name


def _spec_nodes(spec: ImportSpec) -> ast.stmt:
    return ast.parse(spec.statement).body[0]


# -- the edits -----------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class _Edit:
    start: int
    end: int
    text: str


def _insert(at: int, text: str) -> _Edit:
    return _Edit(at, at, text)


def _apply(text: str, edits: Iterable[_Edit]) -> str:
    # from the end backwards, so earlier offsets stay right; a removal before an insertion
    # at its start, so an inserted line lands where the removed one was
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def _one_per_line(node: ast.ImportFrom, text: _Text) -> bool:
    """`from m import (` with each name on a line of its own below it, and the closing
    parenthesis on a line of its own too (so a name can be added as a line)."""
    lines = [alias.lineno for alias in node.names]
    if len(set(lines)) != len(lines) or node.lineno in lines:
        return False
    opening = text.line(node.lineno).split("#")[0].rstrip()
    last = node.names[-1]
    assert last.end_lineno is not None and last.end_col_offset is not None
    after = text.line(last.end_lineno).encode("utf-8")[last.end_col_offset :].decode("utf-8")
    after = after.split("#")[0].strip()
    return opening.endswith("(") and after in ("", ",")


def _name_into(spec: ImportSpec, node: ast.ImportFrom, text: _Text) -> list[_Edit]:
    """Edits that add `spec.name` to the `from` statement `node`, in its layout."""
    assert spec.name is not None
    names = [alias.name for alias in node.names]
    key = _key_of(names)
    at = len(names) if key is None else bisect.bisect([key(n) for n in names], key(spec.name))
    aliases = node.names
    if _one_per_line(node, text):
        if at < len(aliases):
            line = text.line(aliases[at].lineno)
            indent = line[: len(line) - len(line.lstrip())]
            start = text.line_start(aliases[at].lineno)
            return [_Edit(start, start, f"{indent}{spec.name},{text.newline}")]
        last = aliases[-1]
        assert last.end_lineno is not None and last.end_col_offset is not None
        line = text.line(last.lineno)
        indent = line[: len(line) - len(line.lstrip())]
        end = text.offset(last.end_lineno, last.end_col_offset)
        trailing = text.text[end:].lstrip(" \t").startswith(",")
        edits = [] if trailing else [_Edit(end, end, ",")]
        start = text.after_line(last.end_lineno)
        comma = "," if trailing else ""
        edits.append(_Edit(start, start, f"{indent}{spec.name}{comma}{text.newline}"))
        return edits
    if at < len(aliases):
        start = text.offset(aliases[at].lineno, aliases[at].col_offset)
        return [_Edit(start, start, f"{spec.name}, ")]
    last = aliases[-1]
    assert last.end_lineno is not None and last.end_col_offset is not None
    end = text.offset(last.end_lineno, last.end_col_offset)
    return [_Edit(end, end, f", {spec.name}")]


def _new_line(spec: ImportSpec, tree: ast.Module, text: _Text) -> _Edit:
    """An edit that adds `spec` as a line of its own, at its place in the import block."""
    line = spec.statement + text.newline
    new = _spec_nodes(spec)
    assert isinstance(new, _Import)
    section = _statement_section(new)
    groups = _leading_block(tree, text)
    same = [g for g in groups if _statement_section(g[0]) == section]
    if same:
        group = same[0]
        for key in (_line_key_plain, _line_key_forced):
            keys = [key(node) for node in group]
            if all(a <= b for a, b in itertools.pairwise(keys)):
                at = bisect.bisect(keys, key(new))
                break
        else:
            at = len(group)
        if at < len(group):
            return _insert(text.line_start(group[at].lineno), line)
        end_line = group[-1].end_lineno
        assert end_line is not None
        return _insert(text.after_line(end_line), line)
    later = [g for g in groups if _statement_section(g[0]) > section]
    if later:
        first = later[0][0].lineno
        while first > 1 and text.line(first - 1).lstrip().startswith("#"):
            first -= 1  # the group's heading comment stays with it
        return _insert(text.line_start(first), line + text.newline)
    if groups:
        end_line = groups[-1][-1].end_lineno
        assert end_line is not None
        return _insert(text.after_line(end_line), text.newline + line)
    return _first_import(line, tree, text)


def _first_import(line: str, tree: ast.Module, text: _Text) -> _Edit:
    """The file has no import block: after its docstring and leading comments."""
    at = 1
    body = tree.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
        and body[0].end_lineno is not None
    ):
        at = body[0].end_lineno + 1
    else:
        while at <= len(text.starts) and text.line(at).lstrip().startswith("#"):
            at += 1
    before = text.newline if at > 1 and not text.is_blank(at - 1) else ""
    following = next((s for s in body if s.lineno >= at), None)
    after = ""
    if following is not None:
        # isort's and ruff's spacing: two blank lines before a `def` or `class`, else one
        wanted = (
            2 if isinstance(following, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else 1
        )
        blank = 0
        while at + blank < following.lineno and text.is_blank(at + blank):
            blank += 1
        after = text.newline * max(0, wanted - blank)
    start = text.line_start(at)
    if start == len(text.text) and text.text and not text.text.endswith(("\n", "\r")):
        before = text.newline + before
    return _Edit(start, start, before + line + after)


def _removal(spec: ImportSpec, tree: ast.Module, text: _Text) -> list[_Edit]:
    """Edits that take the unaliased import `spec` out of the module-level imports."""
    edits: list[_Edit] = []
    for node, block in _module_imports(tree):
        if isinstance(node, ast.Import) != (spec.name is None):
            continue
        if isinstance(node, ast.ImportFrom) and (node.level or node.module != spec.module):
            continue
        wanted = spec.module if spec.name is None else spec.name
        index = next(
            (i for i, a in enumerate(node.names) if a.name == wanted and a.asname is None), None
        )
        if index is None:
            continue
        if len(node.names) == 1:
            if not text.alone(node) or (block is not tree.body and len(block) == 1):
                continue  # `a; import os`, or the lone body of a `try`: left as it is
            edits.append(_whole_lines(node, text))
            continue
        aliases = node.names
        if index + 1 < len(aliases):
            start = text.offset(aliases[index].lineno, aliases[index].col_offset)
            end = text.offset(aliases[index + 1].lineno, aliases[index + 1].col_offset)
        else:
            before, gone = aliases[index - 1], aliases[index]
            assert before.end_lineno is not None and before.end_col_offset is not None
            assert gone.end_lineno is not None and gone.end_col_offset is not None
            start = text.offset(before.end_lineno, before.end_col_offset)
            end = text.offset(gone.end_lineno, gone.end_col_offset)
        edits.append(_Edit(start, end, ""))
    return edits


def _whole_lines(node: ast.stmt, text: _Text) -> _Edit:
    """The statement's lines; and a blank line after it when it was its group's only line."""
    assert node.end_lineno is not None
    start = text.line_start(node.lineno)
    end = text.after_line(node.end_lineno)
    above_blank = node.lineno == 1 or text.is_blank(node.lineno - 1)
    below = node.end_lineno + 1
    if above_blank and below <= len(text.starts) and not text.line(below):
        end = text.after_line(below)
    return _Edit(start, end, "")


# -- the step ------------------------------------------------------------------------------


def _changed_words(old: str, new: str) -> tuple[set[str], set[str]]:
    """The names (words not after a `.`: not attributes) on the lines the edits took out,
    and on the lines they put in. Lines are compared as multisets, in linear time: a line
    that is in one text more often than in the other is a changed one."""
    old_lines, new_lines = Counter(old.splitlines()), Counter(new.splitlines())
    removed = _NAME.findall("\n".join((old_lines - new_lines).keys()))
    added = _NAME.findall("\n".join((new_lines - old_lines).keys()))
    return set(removed), set(added)


def _mentioned_elsewhere(name: str, text: str, tree: ast.Module) -> bool:
    """Whether `name` appears outside import statements: in a string annotation, `__all__`
    or a comment it may still be needed, so the import stays."""
    lines = text.splitlines()
    skip = {
        n
        for node, _ in _module_imports(tree)
        for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}\b")
    return any(pattern.search(line) for n, line in enumerate(lines, 1) if n not in skip)


def fix_source(
    old: str, new: str, adds: Sequence[ImportSpec], removes: Sequence[ImportSpec]
) -> str:
    """`new` (the edits' output for a file that read `old`) with its imports brought in line.

    An import in `adds` is written only when the edits brought its name in and the file
    reads it as a free name that nothing in the module binds; one in `removes` is taken
    out only when the edits took a use of it out and nothing reads it any more. Raises
    `SyntaxError` when `new` must be looked at and `ast` cannot parse it.
    """
    removed_words, added_words = _changed_words(old, new)
    wanted = [s for s in adds if s.bound in added_words]
    unwanted = [s for s in removes if s.bound in removed_words]
    if not wanted and not unwanted:
        return new
    tree = ast.parse(new)
    used = usage(tree)
    result = new
    bound = set(used.module_bound)
    for spec in dict.fromkeys(wanted):
        if spec.bound not in used.free or spec.bound in bound:
            continue
        if result is not new:
            tree = ast.parse(result)  # a second import goes in after the first, in order
        result = _apply(result, _addition(spec, tree, _Text(result)))
        bound.add(spec.bound)
    if not unwanted:
        return result
    if result is not new:
        tree = ast.parse(result)
    text = _Text(result)
    removals = [
        edit
        for spec in dict.fromkeys(unwanted)
        if spec.bound not in used.free and not _mentioned_elsewhere(spec.bound, result, tree)
        for edit in _removal(spec, tree, text)
    ]
    return _apply(result, removals)


def _addition(spec: ImportSpec, tree: ast.Module, text: _Text) -> list[_Edit]:
    if spec.name is not None:
        froms = [
            node
            for node in tree.body
            if isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module == spec.module
            and node.names[0].name != "*"
        ]
        if froms and not _single_name_style(froms, tree):
            return _name_into(spec, max(froms, key=lambda node: len(node.names)), text)
    return [_new_line(spec, tree, text)]


def _single_name_style(froms: Sequence[ast.ImportFrom], tree: ast.Module) -> bool:
    """Whether the file writes one `from m import name` per name (isort's force_single_line)
    for this module: it has two such lines already; or, with one, the whole file does (some
    module is imported from twice, and no `from` line names two)."""
    if any(len(node.names) > 1 for node in froms):
        return False
    if len(froms) > 1:
        return True
    modules: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if len(node.names) > 1:
                return False
            modules.append("." * node.level + (node.module or ""))
    return len(set(modules)) < len(modules)
