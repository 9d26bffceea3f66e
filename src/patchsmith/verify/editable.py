"""Editable installs that point a verification copy back at the real workspace.

A workspace's virtualenv may hold an editable install of the project itself: a
`.pth` file naming the real `src/` (or the root), or setuptools' `__editable__`
finder whose mapping names the real package folders. Python run in a private copy
would then import the real, unchanged package instead of the copy's changed one,
and a broken change could pass. Each such path inside the real workspace is mapped
to the same place in the copy and put first on `PYTHONPATH`, ahead of site-packages
and of any finder, so the changed code is the code that runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["copy_import_paths"]

VENV_DIRS = (".venv", "venv")

_QUOTED = re.compile(r"""["']([^"'\n]+)["']""")
"""A quoted string in a finder file (its mapping's values are absolute folders)."""

_MAX_FILE_BYTES = 1_000_000


def copy_import_paths(real_root: Path, tree: Path) -> tuple[Path, ...]:
    """The folders of `tree` standing for what an editable install in `real_root`'s (or
    `tree`'s) virtualenv names inside `real_root`, in the order found (none: no such install)."""
    real = real_root.resolve()
    found: dict[Path, None] = {}
    for site in _site_packages((real, tree)):
        for entry in sorted(site.iterdir()):
            for named in _named_paths(entry):
                inside = _inside(named, real)
                if inside is None:
                    continue
                mapped = tree / inside
                if mapped.is_dir():
                    found.setdefault(mapped, None)
    return tuple(found)


def _site_packages(roots: tuple[Path, ...]) -> Iterator[Path]:
    for root in roots:
        for venv in VENV_DIRS:
            lib = root / venv / "lib"
            if not lib.is_dir() or lib.is_symlink():
                continue
            for site in sorted(lib.glob("python*/site-packages")):
                if site.is_dir():
                    yield site


def _named_paths(entry: Path) -> list[Path]:
    """The folders an editable install's file puts on the import path."""
    name = entry.name
    is_pth = name.endswith(".pth")
    is_finder = name.startswith("__editable__") and name.endswith(".py")
    if not (is_pth or is_finder) or not entry.is_file():
        return []
    try:
        if entry.stat().st_size > _MAX_FILE_BYTES:
            return []
        text = entry.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if is_pth:
        # site.py: each line not starting with `import` (or `#`) is a path
        lines = (line.strip() for line in text.splitlines())
        return [Path(x) for x in lines if x and not x.startswith(("#", "import "))]
    # a finder maps package names to their folders: the folder's parent is the path entry
    return [Path(x).parent for x in _QUOTED.findall(text) if x.startswith("/")]


def _inside(path: Path, real: Path) -> Path | None:
    if not path.is_absolute():
        return None
    try:
        return path.resolve().relative_to(real)
    except (OSError, ValueError, RuntimeError):
        return None
