"""The table the dispatcher owns: which backend runs each operation type, and which one
fixes a language's imports.

A backend module registers its functions with `@runs(OperationType)` and
`@fixes_imports(Language.X)`. The dispatcher (`transform`) asks `backend_for` and
`import_fixer`; the first question imports the backend modules (`BACKEND_MODULES`), so
registration never depends on what else was imported. Backends import this module and
the shared types below it, never the dispatcher.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import TypeVar

from patchsmith.codemod.recipe import Language, RecipePart
from patchsmith.errors import PatchFailure

__all__ = [
    "BACKEND_MODULES",
    "Backend",
    "ImportFixer",
    "backend_for",
    "fixes_imports",
    "import_fixer",
    "runs",
]

_Op = TypeVar("_Op", bound=RecipePart)

Backend = Callable[..., PatchFailure | None]
"""Apply one operation to the work set, counting matches per file and noting the matches it
leaves alone; a failure stops the recipe. Called as `backend(op, work, matches, seen,
by_syntax=, taken=, import_names=)`: the keywords carry what one backend reports or needs
(Java's files matched without types, the simple names taken per file, the recipe's
imports); a backend that needs none of them takes `**_unused`."""

ImportFixer = Callable[..., PatchFailure | None]
"""Add and remove imports in the files the operations changed: `fixer(imports, work, paths,
taken=)`, `taken` being the names the operations found taken per file."""

BACKEND_MODULES = (
    "patchsmith.codemod.backends.config",
    "patchsmith.codemod.backends.java",
    "patchsmith.codemod.backends.python",
)
"""The modules that register backends, imported on the first look-up."""

_Function = Callable[..., PatchFailure | None]
_BACKENDS: dict[object, _Function] = {}
"""Operation type → backend."""
_IMPORT_FIXERS: dict[object, _Function] = {}
"""Language → import fixer."""
_loading = threading.Lock()
_loaded = False


def runs(op_type: type[RecipePart]) -> Callable[[Backend], Backend]:
    """Register the decorated function as the backend that runs `op_type`."""

    def register(backend: Backend) -> Backend:
        _register(_BACKENDS, op_type, backend, op_type.__name__)
        return backend

    return register


def fixes_imports(language: Language) -> Callable[[ImportFixer], ImportFixer]:
    """Register the decorated function as the one that fixes `language`'s imports."""

    def register(fixer: ImportFixer) -> ImportFixer:
        _register(_IMPORT_FIXERS, language, fixer, f"{language.value} imports")
        return fixer

    return register


def _register(table: dict[object, _Function], key: object, function: _Function, what: str) -> None:
    found = table.get(key)
    # The same module imported again (a reload) registers its function again; two
    # modules claiming one key is a mistake to see at once, not a silent override.
    if found is not None and found.__module__ != function.__module__:
        raise RuntimeError(f"{found.__module__} and {function.__module__} both handle {what}")
    table[key] = function


def backend_for(op: RecipePart) -> Backend:
    """The backend registered for `op`'s type; `LookupError` if there is none."""
    _load()
    try:
        return _BACKENDS[type(op)]
    except KeyError:
        raise LookupError(f"no codemod backend runs {type(op).__name__}") from None


def import_fixer(language: Language) -> ImportFixer:
    """The function registered to fix `language`'s imports; `LookupError` if there is none."""
    _load()
    try:
        return _IMPORT_FIXERS[language]
    except KeyError:
        raise LookupError(f"no codemod backend fixes {language.value} imports") from None


def _load() -> None:
    """Import every backend module once, so each has registered before a look-up."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if not _loaded:
            for name in BACKEND_MODULES:
                importlib.import_module(name)
            _loaded = True
