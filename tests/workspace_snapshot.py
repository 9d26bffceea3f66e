"""Byte-and-mode snapshots of a directory tree, for "the workspace is unchanged" assertions.

    before = snapshot_tree(root)
    ...refused operation...
    assert before == snapshot_tree(root)

`make_tree` builds a tree from `{path: bytes}` (or `{path: (bytes, mode)}`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Entry", "TreeSnapshot", "make_tree", "snapshot_tree"]

DEFAULT_EXCLUDE = (".patchsmith",)
"""Top-level names left out of snapshots: patchsmith's own state is not workspace content."""


@dataclass(frozen=True)
class Entry:
    """One thing in a tree: a file (bytes), a directory, or a symlink (its target)."""

    kind: str
    mode: int
    content: bytes


@dataclass(frozen=True)
class TreeSnapshot:
    """Every entry of a tree by POSIX relative path; equal snapshots mean identical trees."""

    entries: tuple[tuple[str, Entry], ...]

    def files(self) -> dict[str, bytes]:
        """The regular files' contents by path."""
        return {path: entry.content for path, entry in self.entries if entry.kind == "file"}

    def modes(self) -> dict[str, int]:
        """The regular files' permission bits by path."""
        return {path: entry.mode for path, entry in self.entries if entry.kind == "file"}


def snapshot_tree(root: Path, exclude: tuple[str, ...] = DEFAULT_EXCLUDE) -> TreeSnapshot:
    """Snapshot every file, directory and symlink under `root` (symlinks are not followed)."""
    found: list[tuple[str, Entry]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        if base == root:
            dirnames[:] = [name for name in dirnames if name not in exclude]
            filenames = [name for name in filenames if name not in exclude]
        for name in dirnames + filenames:
            path = base / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                found.append((relative, Entry("symlink", 0, os.readlink(path).encode())))
            elif stat.S_ISDIR(info.st_mode):
                found.append((relative, Entry("dir", mode, b"")))
            else:
                found.append((relative, Entry("file", mode, path.read_bytes())))
    return TreeSnapshot(tuple(sorted(found)))


def make_tree(root: Path, files: Mapping[str, bytes | tuple[bytes, int]]) -> Path:
    """Write `files` under `root` (creating directories) and return `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for relative, spec in files.items():
        data, mode = spec if isinstance(spec, tuple) else (spec, 0o644)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
    return root
