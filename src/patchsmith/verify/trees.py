"""The trees a profile runs on: a digest of a tree, a private copy of it, the base commit's files.

Profiles never run in the workspace during a proposal: the base and the changed
tree are private copies in a temporary directory, so a tool's caches, reports and
stray writes never reach the workspace, and a crash mid-verification leaves it as
it was. Dependency folders (`.venv`, `venv`, `node_modules`) are linked, not
copied: tools need them and they are large.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from patchsmith.formats.script import Action
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitcmd import git_argv
from patchsmith.runtime.process import run_process

__all__ = [
    "LINKED_DIRS",
    "SKIPPED_DIRS",
    "apply_changes",
    "copy_tree",
    "export_commit",
    "git_tree_id",
    "tree_digest",
]

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".patchsmith",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
    }
)
"""Never copied or hashed: version control, patchsmith's own state, tool caches."""

LINKED_DIRS = frozenset({".venv", "venv", "node_modules"})
"""Top-level dependency folders: linked into a copy, left out of the digest."""

_GIT_TIMEOUT_S = 60.0


def _walk(root: Path) -> Iterable[str]:
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        at_top = here == root
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED_DIRS and not (at_top and d in LINKED_DIRS)
        )
        for name in sorted(files):
            yield (here / name).relative_to(root).as_posix()


def tree_digest(root: str | Path) -> str:
    """SHA-256 over every file's path, mode bit and content (caches and dependencies left out)."""
    base = Path(root)
    digest = hashlib.sha256()
    for rel in _walk(base):
        path = base / rel
        try:
            if path.is_symlink():
                data = os.readlink(path).encode("utf-8", "surrogateescape")
                kind = b"l"
            else:
                data = path.read_bytes()
                kind = b"x" if os.access(path, os.X_OK) else b"f"
        except OSError:
            continue
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + kind)
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def copy_tree(source: str | Path, dest: str | Path) -> Path:
    """Copy `source` into the new directory `dest` (which must not exist); returns `dest`."""
    src = Path(source)
    target = Path(dest)

    def ignore(folder: str, names: list[str]) -> set[str]:
        at_top = Path(folder) == src
        return {n for n in names if n in SKIPPED_DIRS or (at_top and n in LINKED_DIRS)}

    shutil.copytree(src, target, symlinks=True, ignore=ignore)
    link_dependencies(src, target)
    return target


def link_dependencies(source: Path, dest: Path) -> None:
    """Link the dependency folders of `source` into `dest` (where `dest` has none)."""
    for name in sorted(LINKED_DIRS):
        original = source / name
        if original.is_dir() and not (dest / name).exists():
            (dest / name).symlink_to(original.resolve(), target_is_directory=True)


def apply_changes(dest: str | Path, changes: Sequence[FileChange]) -> None:
    """Write staged changes into a copy (never into a workspace: no journal, no checks)."""
    root = Path(dest)
    for change in changes:
        if change.action in (Action.DELETE, Action.MOVE) and change.old_path is not None:
            (root / change.old_path).unlink(missing_ok=True)
        if change.action is Action.DELETE and change.old_path is None:
            (root / change.path).unlink(missing_ok=True)
        if change.new_bytes is None:
            continue
        path = root / change.path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        path.write_bytes(change.new_bytes)
        if change.new_mode is not None:
            path.chmod(change.new_mode)


def _treeish(root: str | Path, rev: str) -> str | None:
    """`rev:<subdir>` naming the workspace's own folder of `rev` (the root may be below the top)."""
    prefix = run_process(git_argv("rev-parse", "--show-prefix"), cwd=root, timeout_s=_GIT_TIMEOUT_S)
    if not prefix.ok:
        return None
    return f"{rev}:{prefix.stdout.strip()}"


def git_tree_id(root: str | Path, rev: str = "HEAD") -> str | None:
    """The tree object id of the workspace's folder at `rev`, or `None` outside git."""
    treeish = _treeish(root, rev)
    if treeish is None:
        return None
    result = run_process(
        git_argv("rev-parse", "--verify", "--quiet", treeish),
        cwd=root,
        timeout_s=_GIT_TIMEOUT_S,
    )
    tree = result.stdout.strip()
    return tree if result.ok and tree else None


def export_commit(root: str | Path, rev: str, dest: str | Path) -> bool:
    """Write the files of `rev` into the new directory `dest`; False when git cannot."""
    workspace = Path(root)
    target = Path(dest)
    treeish = _treeish(workspace, rev)
    if treeish is None:
        return False
    with tempfile.TemporaryDirectory(prefix="patchsmith-archive-") as scratch:
        archive = Path(scratch) / "tree.tar"
        result = run_process(
            git_argv("archive", "--format=tar", "-o", str(archive), treeish),
            cwd=workspace,
            timeout_s=_GIT_TIMEOUT_S,
        )
        if not result.ok or not archive.is_file():
            return False
        target.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    link_dependencies(workspace, target)
    return True
