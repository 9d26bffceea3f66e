"""Targeted tests for Python: the test files that import a changed module, directly or not.

The import graph is read with `ast` from every `.py` file of the tree (nothing is
imported or run). A file's module name is its path with `/` as `.`, and also the
same without a leading `src/` (the src layout). A test file — `test_*.py` or
`*_test.py` — is targeted when a changed module is reachable from it through
imports, including `from pkg import module` and relative imports.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from patchsmith.verify.trees import DEPENDENCY_DIRS, SKIPPED_DIRS

__all__ = ["is_test_file", "module_names", "targeted_tests"]


def is_test_file(path: str) -> bool:
    """True for pytest's default test file names."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_names(path: str) -> tuple[str, ...]:
    """The dotted names `path` may be imported as (`src/pkg/a.py` → `src.pkg.a`, `pkg.a`)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if not parts:
        return ()
    if parts[-1] == "__init__":
        parts.pop()
    if not parts:
        return ()
    names = [".".join(parts)]
    if parts[0] in ("src", "lib") and len(parts) > 1:
        names.append(".".join(parts[1:]))
    return tuple(names)


def targeted_tests(root: str | Path, changed: Sequence[str]) -> tuple[str, ...]:
    """Test files (sorted, relative) that import a changed `.py` file, directly or through others.

    A changed test file is itself targeted. Files that do not parse are skipped.
    """
    base = Path(root)
    files = sorted(_python_files(base))
    owner: dict[str, str] = {}
    for rel in files:
        for name in module_names(rel):
            owner.setdefault(name, rel)
    importers: dict[str, set[str]] = {}
    for rel in files:
        for imported in _imports(base / rel, rel):
            target = _resolve(imported, owner)
            if target is not None and target != rel:
                importers.setdefault(target, set()).add(rel)
    start = [c for c in changed if c.endswith(".py")]
    seen = set(start)
    queue = deque(start)
    while queue:
        current = queue.popleft()
        for importer in importers.get(current, ()):
            if importer not in seen:
                seen.add(importer)
                queue.append(importer)
    return tuple(sorted(p for p in seen if is_test_file(p) and (base / p).is_file()))


def _python_files(root: Path) -> Iterable[str]:
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        top = rel.parts[0] if rel.parts else ""
        if top in DEPENDENCY_DIRS or any(part in SKIPPED_DIRS for part in rel.parts):
            continue
        yield rel.as_posix()


def _resolve(module: str, owner: dict[str, str]) -> str | None:
    """The file of `module`, or of its nearest package (`pkg.a.func` → `pkg/a.py`)."""
    parts = module.split(".")
    while parts:
        found = owner.get(".".join(parts))
        if found is not None:
            return found
        parts.pop()
    return None


def _imports(path: Path, rel: str) -> set[str]:
    try:
        tree = ast.parse(path.read_bytes(), filename=rel)
    except (OSError, SyntaxError, ValueError):
        return set()
    package = list(PurePosixPath(rel).parent.parts)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                prefixes = [".".join(anchor)] if anchor else [""]
                if anchor and anchor[0] in ("src", "lib"):
                    prefixes.append(".".join(anchor[1:]))
            else:
                prefixes = [""]
            for prefix in prefixes:
                head = ".".join(p for p in (prefix, node.module or "") if p)
                if head:
                    found.add(head)
                # `from pkg import module` imports a module, not only a name.
                found.update(
                    ".".join(p for p in (head, alias.name) if p)
                    for alias in node.names
                    if alias.name != "*"
                )
    return found
