"""Which files a recipe reads: its languages' suffixes and its scope, never patchsmith's state."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pathspec

from patchsmith.codemod.recipe import Recipe

__all__ = ["ALWAYS_EXCLUDED", "language_files", "select_files"]

ALWAYS_EXCLUDED = (".git/", ".patchsmith/", ".hg/", ".svn/", "node_modules/", ".venv/", "venv/")
"""Folders no recipe reads: version control, patchsmith's records, installed dependencies."""


def _spec(patterns: Iterable[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def _gitignore(root: Path) -> list[str]:
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return text.splitlines()


def _folders_only(patterns: Iterable[str]) -> bool:
    """Whether every gitignore line is blank, a comment or a folder pattern (ends in `/`)."""
    for line in patterns:
        text = line.rstrip()  # leading blanks belong to the pattern, as in git
        if text.strip() and not text.startswith("#") and not text.endswith("/"):
            return False
    return True


def select_files(
    root: Path, recipe: Recipe, narrow_to: Iterable[str] = ()
) -> tuple[list[str], int]:
    """The sorted relative paths the recipe reads, and how many files of its language were left out.

    A file is read when its suffix is one of the recipe's languages, it matches
    `scope.include` (when given) and `narrow_to` (when given), and it matches neither
    `scope.exclude`, the root `.gitignore`, nor `ALWAYS_EXCLUDED`. Symlinks are not followed.
    """
    return _walk(root, recipe.suffixes, recipe.scope.include, recipe.scope.exclude, narrow_to)


def language_files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    """Every file with one of `suffixes` a recipe with no scope would read (sorted)."""
    return _walk(root, suffixes, (), (), ())[0]


def _walk(
    root: Path,
    suffixes: tuple[str, ...],
    include_patterns: Iterable[str],
    exclude_patterns: Iterable[str],
    narrow_to: Iterable[str],
) -> tuple[list[str], int]:
    exclusions = [*ALWAYS_EXCLUDED, *_gitignore(root), *exclude_patterns]
    excluded = _spec(exclusions)
    # Folder-only patterns (`build/`) are decided when the walk meets the folder, which
    # it then skips: the files it does visit need not be matched against them again.
    files_excluded = None if _folders_only(exclusions) else excluded
    includes = list(include_patterns)
    include = _spec(includes) if includes else None
    narrow = list(narrow_to)
    narrowed = _spec(narrow) if narrow else None
    chosen: list[str] = []
    left_out = 0
    # os.scandir rather than os.walk: each entry says whether it is a link or a folder
    # from the directory listing itself, so ten thousand files cost no extra lstat each.
    pending = [("", os.fspath(root))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            if entry.is_dir(follow_symlinks=False):
                if not excluded.match_file(prefix + entry.name + "/"):
                    pending.append((prefix + entry.name + "/", entry.path))
                continue
            if not entry.name.lower().endswith(suffixes):
                continue
            relative = prefix + entry.name
            if (
                entry.is_symlink()
                or (files_excluded is not None and files_excluded.match_file(relative))
                or (include is not None and not include.match_file(relative))
                or (narrowed is not None and not narrowed.match_file(relative))
            ):
                left_out += 1
                continue
            chosen.append(relative)
    chosen.sort()
    return chosen, left_out
