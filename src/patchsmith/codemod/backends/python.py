"""Python through libcst: renames that follow scopes and imports; import changes (`pyimports`).

libcst keeps every byte it does not change (comments, blank lines, quotes), and its
scope and qualified-name analysis tells a reference to the renamed function from a
local of the same name, an attribute of another object or a word inside a string.
Files are transformed in a process pool when there are many of them.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_absolute_module_from_package_for_import
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from patchsmith.codemod.backend_table import fixes_imports, runs
from patchsmith.codemod.backends import pyimports
from patchsmith.codemod.matches import SeenMatch
from patchsmith.codemod.recipe import Imports, Language, RenameSymbol
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "PARALLEL_FROM_FILES",
    "fix_imports",
    "module_names",
    "rename_in_source",
    "rename_symbol",
]

PARALLEL_FROM_FILES = 64
"""Below this many files a process pool costs more than it saves."""


def module_names(paths: Sequence[str], module: str) -> dict[str, str]:
    """Each Python path's `module:package` names, rooted where `module`'s own file is found.

    `src/pkg/mod.py` is `pkg.mod` when `module` is `pkg.mod` (the source root is
    `src/`); without the module's file in `paths`, names are rooted at the workspace.
    """
    parts = module.split(".")
    root: tuple[str, ...] = ()
    for path in paths:
        pieces = _module_parts(path)
        if tuple(pieces[-len(parts) :]) == tuple(parts):
            root = tuple(pieces[: -len(parts)])
            break
    names: dict[str, str] = {}
    for path in paths:
        pieces = _module_parts(path)
        if tuple(pieces[: len(root)]) == root:
            module = ".".join(pieces[len(root) :])
            is_package = path.endswith(("/__init__.py", "/__init__.pyi"))
            names[path] = f"{module}:{module if is_package else module.rpartition('.')[0]}"
    return names


def _module_parts(path: str) -> list[str]:
    pieces = path.removesuffix(".pyi").removesuffix(".py").split("/")
    if pieces[-1] == "__init__":
        pieces = pieces[:-1]
    return pieces


@dataclass(frozen=True)
class _Renamed:
    source: str
    count: int
    error: str | None = None


class _Renamer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, target: str, new: str, package: str, defining: bool) -> None:
        super().__init__()
        # `target` is `mod.name`, or `mod.name,pkg.name` when packages re-export it
        self.targets = frozenset(target.split(","))
        self.modules = frozenset(t.rpartition(".")[0] for t in self.targets)
        self.old = target.split(",")[0].rpartition(".")[2]
        self.new = new
        self.package = package
        self.defining = defining
        self.count = 0
        self._depth = 0
        self.exports_name = defining
        """Whether the module binds the name itself (so its `__all__` lists it)."""

    def _absolute(self, name: str) -> str:
        if not name.startswith("."):
            return name
        dots = len(name) - len(name.lstrip("."))
        base = self.package.split(".") if self.package else []
        if dots - 1 > len(base):
            return name
        kept = base[: len(base) - (dots - 1)]
        return ".".join([*kept, name[dots:]]) if kept else name[dots:]

    def _is_target(self, node: cst.CSTNode) -> bool:
        names = self.get_metadata(QualifiedNameProvider, node, set())
        # in the defining module the global binding's qualified name is the bare name;
        # a local or parameter of that name is `f.<locals>.name` and is left alone
        return any(
            self._absolute(q.name) in self.targets or (self.defining and q.name == self.old)
            for q in names
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self._depth -= 1
        if self.defining and self._depth == 0 and original_node.name.value == self.old:
            self.count += 1
            return updated_node.with_changes(name=cst.Name(self.new))
        return updated_node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._depth += 1

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        self._depth -= 1
        if self.defining and self._depth == 0 and original_node.name.value == self.old:
            self.count += 1
            return updated_node.with_changes(name=cst.Name(self.new))
        return updated_node

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False  # its names are handled as a whole in leave_ImportFrom

    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.ImportFrom:
        if isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        try:
            module = get_absolute_module_from_package_for_import(
                self.package or None, original_node
            )
        except Exception:
            return updated_node
        if module not in self.modules:
            return updated_node
        aliases = []
        for alias in updated_node.names:
            if isinstance(alias.name, cst.Name) and alias.name.value == self.old:
                self.count += 1
                self.exports_name = self.exports_name or alias.asname is None
                alias = alias.with_changes(name=cst.Name(self.new))
            aliases.append(alias)
        return updated_node.with_changes(names=aliases)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if original_node.value == self.old and self._is_target(original_node):
            self.count += 1
            return updated_node.with_changes(value=self.new)
        return updated_node

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        if original_node.attr.value == self.old and self._is_target(original_node):
            self.count += 1
            return updated_node.with_changes(attr=cst.Name(self.new))
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.exports_name:
            return updated_node
        body = [self._renamed_exports(statement) for statement in updated_node.body]
        return updated_node.with_changes(body=body)

    def _renamed_exports(self, statement: cst.BaseStatement) -> cst.BaseStatement:
        """`__all__ = [..., "old", ...]` at module level lists the new name instead."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return statement
        parts = []
        for part in statement.body:
            if (
                isinstance(part, cst.Assign)
                and any(
                    isinstance(t.target, cst.Name) and t.target.value == "__all__"
                    for t in part.targets
                )
                and isinstance(part.value, cst.List | cst.Tuple)
            ):
                elements = []
                for element in part.value.elements:
                    value = element.value
                    if isinstance(value, cst.SimpleString) and value.evaluated_value == self.old:
                        quote = value.quote
                        self.count += 1
                        element = element.with_changes(
                            value=value.with_changes(
                                value=f"{value.prefix}{quote}{self.new}{quote}"
                            )
                        )
                    elements.append(element)
                part = part.with_changes(value=part.value.with_changes(elements=elements))
            parts.append(part)
        return statement.with_changes(body=parts)


def rename_in_source(source: str, target: str, new: str, module: str) -> _Renamed:
    """`source` with `target` renamed to `new` wherever it is referenced.

    `module` is `module:package`, the file's dotted module name and its package (they
    are equal for an `__init__.py`), from `module_names`.
    """
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return _Renamed(source, 0, f"libcst cannot parse it: {exc.message}")
    module, _, package = module.partition(":")
    defining = module == target.split(",")[0].rpartition(".")[0]
    renamer = _Renamer(target, new, package, defining)
    # attribute names and import aliases that are not references are left to their own visitors
    new_tree = MetadataWrapper(tree).visit(renamer)
    return _Renamed(new_tree.code, renamer.count)


def _reexported_by(texts: dict[str, str], names: dict[str, str], target: str) -> set[str]:
    """The module defining `target` and every module that re-exports it unaliased, transitively.

    `from .users import fetch_user` in `shop/__init__.py` makes `shop.fetch_user` the
    same function, so `from shop import fetch_user` elsewhere is renamed too.
    """
    home, _, old = target.rpartition(".")
    modules = {home}
    imports: dict[str, list[tuple[str, bool]]] = {}
    for path, text in texts.items():
        module, _, package = names.get(path, ":").partition(":")
        if not module:
            continue
        try:
            tree = cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        for statement in tree.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for part in statement.body:
                if not isinstance(part, cst.ImportFrom) or isinstance(part.names, cst.ImportStar):
                    continue
                try:
                    source = get_absolute_module_from_package_for_import(package or None, part)
                except Exception:
                    continue
                plain = any(
                    isinstance(a.name, cst.Name) and a.name.value == old and a.asname is None
                    for a in part.names
                )
                if source and plain:
                    imports.setdefault(module, []).append((source, True))
    grew = True
    while grew:
        grew = False
        for module, sources in imports.items():
            if module not in modules and any(s in modules for s, _ in sources):
                modules.add(module)
                grew = True
    return modules


def _rename_job(args: tuple[str, str, str, str]) -> _Renamed:
    return rename_in_source(*args)


@runs(RenameSymbol)
def rename_symbol(
    op: RenameSymbol, work: WorkSet, matches: Counter[str], seen: list[SeenMatch], **_unused: object
) -> PatchFailure | None:
    """Rename the definition `op.from_` and every reference to it across the Python files."""
    old = op.from_.rpartition(".")[2]
    python_paths = [p for p in work.paths if p.endswith((".py", ".pyi"))]
    names = module_names(python_paths, op.from_.rpartition(".")[0])
    texts: dict[str, str] = {}
    for path in python_paths:
        text = work.text(path)
        if text is not None and old in text:
            texts[path] = text  # a cheap substring test first: most files never mention it
    modules = _reexported_by(texts, names, op.from_)
    home = op.from_.rpartition(".")[0]
    # the defining module first: `rename_in_source` tells it by that
    target = ",".join([op.from_, *sorted(f"{m}.{old}" for m in modules if m != home)])
    jobs = [(path, (text, target, op.to, names.get(path, ""))) for path, text in texts.items()]
    results: Iterable[_Renamed]
    if len(jobs) >= PARALLEL_FROM_FILES and (os.cpu_count() or 1) > 1:
        with ProcessPoolExecutor() as pool:
            results = list(pool.map(_rename_job, [args for _, args in jobs], chunksize=16))
    else:
        results = [_rename_job(args) for _, args in jobs]
    for (path, _), done in zip(jobs, results, strict=True):
        if done.error is not None:
            seen.append(SeenMatch(path, 1, old, done.error))
            continue
        if done.count:
            matches[path] += done.count
            work.set_text(path, done.source)
    return None


@fixes_imports(Language.PYTHON)
def fix_imports(
    imports: Imports, work: WorkSet, paths: Iterable[str], **_unused: object
) -> PatchFailure | None:
    """Add the listed imports where a file's edits brought the name in and it is used; remove
    the listed ones where the edits took a use out and nothing uses the name any more.

    An import is written `from pkg.mod import name` or `import pkg.mod` (or just `pkg.mod`).
    Files the edits did not touch, or whose edits do not mention the name, are not parsed;
    the others are edited in place, in their own import layout (`pyimports`).
    """
    specs = [(spec, pyimports.parse_spec(spec)) for spec in (*imports.add, *imports.remove)]
    bad = [spec for spec, parsed in specs if parsed is None]
    if bad:
        return PatchFailure(
            FailureCode.INVALID_RECIPE,
            f"imports: cannot read {bad[0]!r}",
            hint="write `from pkg.mod import name` or `import pkg.mod`",
        )
    parsed = [p for _, p in specs if p is not None]
    adds, removes = parsed[: len(imports.add)], parsed[len(imports.add) :]
    for path in paths:
        if not path.endswith((".py", ".pyi")):
            continue
        text = work.text(path)
        if text is None:
            continue
        old = work.original(path).decode("utf-8")
        try:
            new = pyimports.fix_source(old, text, adds, removes)
        except (SyntaxError, ValueError):
            try:
                cst.parse_module(text)
            except cst.ParserSyntaxError:
                continue  # the syntax guard reports it
            return PatchFailure(
                FailureCode.CODEMOD_BACKEND_ERROR,
                f"imports: Python {sys.version_info[0]}.{sys.version_info[1]}'s parser cannot "
                "read the changed file, so its imports cannot be checked",
                file=path,
                hint="run patchsmith with the Python version the code is written for",
            )
        except RecursionError:
            return PatchFailure(
                FailureCode.CODEMOD_BACKEND_ERROR,
                "imports: the changed file is nested too deeply for its names to be resolved",
                file=path,
                hint="leave this file out of the recipe's scope and change its imports by hand",
            )
        work.set_text(path, new)
    return None
