"""A cheap fingerprint of a real workspace, to tell whether a run wrote into it.

A command or verification tool runs on a private copy; in the sandbox the real
workspace is read-only, but where no sandbox can be made (`sandbox: none`) a tool
can still write to it by absolute path. The size, mtime and mode of every file
(`.git/` and `.patchsmith/` left out) and of `.git`'s hooks, config and info, taken
before and after the run, tell that it did (lstat only: no file is read).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["GIT_WATCHED", "SKIPPED_DIRS", "Fingerprint", "changed", "fingerprint", "walk_files"]

SKIPPED_DIRS = frozenset({".git", ".patchsmith"})
"""Not walked: version control (its watched parts below apart) and our records."""

GIT_WATCHED = ("config", "hooks", "info")
"""What of the real `.git/` is watched while a run runs: what could make git run
code later (hooks, config) or hide files (info/exclude)."""

Fingerprint = dict[str, tuple[int, int, int]]
"""Relative path to (size, mtime in ns, mode)."""


def walk_files(base: Path) -> Iterator[tuple[str, Path]]:
    """Every file below `base` (sorted, `SKIPPED_DIRS` left out): relative path, full path."""
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            full = Path(dirpath) / filename
            yield full.relative_to(base).as_posix(), full


def fingerprint(root: Path) -> Fingerprint:
    """Size, mtime and mode of every file of the workspace `root`, and of `.git`'s hooks,
    config and info."""
    found: Fingerprint = {}
    entries = list(walk_files(root))
    git = root / ".git"
    if git.is_file() or git.is_symlink():
        entries.append((".git", git))
    elif git.is_dir():
        for name in GIT_WATCHED:
            watched = git / name
            if watched.is_dir():
                entries.extend((f".git/{name}/{rel}", full) for rel, full in walk_files(watched))
            entries.append((f".git/{name}", watched))
    for relative, full in entries:
        try:
            info = full.lstat()
        except OSError:
            continue
        found[relative] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return found


def changed(before: Fingerprint, after: Fingerprint) -> list[str]:
    """The paths added, removed or changed between two fingerprints, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
