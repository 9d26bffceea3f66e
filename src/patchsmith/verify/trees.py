"""The trees a profile runs on: a digest of a tree, a private copy of it, the base commit's files.

Profiles never run in the workspace during a proposal: the base and the changed
tree are private copies in a temporary directory, so a tool's caches, reports and
stray writes never reach the workspace, and a crash mid-verification leaves it as
it was. Dependency folders (`.venv`, `venv`, `node_modules`) are never linked (a
link writes through): where the sandbox runs, each is an empty folder in the copy
that the real one is bound over inside the sandbox, under a throw-away layer;
otherwise, or when a staged change touches it, it is copied (reflinked where the
filesystem can).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from patchsmith.formats.script import Action
from patchsmith.runtime import sandbox
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import chunks_of
from patchsmith.runtime.gitcmd import git_argv
from patchsmith.runtime.process import run_process

__all__ = [
    "DEPENDENCY_DIRS",
    "SKIPPED_DIRS",
    "apply_changes",
    "copy_dependency",
    "copy_tree",
    "dependency_mounts",
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

DEPENDENCY_DIRS = frozenset({".venv", "venv", "node_modules"})
"""Top-level dependency folders: bound (never written) or copied into a copy, left out of the
digest."""

_FICLONE = 0x40049409
"""Linux's ioctl that makes `dst` share `src`'s blocks (btrfs, XFS, bcachefs): a copy in O(1)."""

_NO_REFLINK = frozenset({errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS})

_GIT_TIMEOUT_S = 60.0


def _walk(root: Path) -> Iterable[str]:
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        at_top = here == root
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED_DIRS and not (at_top and d in DEPENDENCY_DIRS)
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
        return {n for n in names if n in SKIPPED_DIRS or (at_top and n in DEPENDENCY_DIRS)}

    shutil.copytree(src, target, symlinks=True, ignore=ignore, copy_function=_Copier())
    _add_dependencies(src, target)
    return target


def copy_dependency(source: Path, dest: Path) -> None:
    """Copy the folder `source` to the new `dest`: reflinks where possible, never links."""
    shutil.copytree(source, dest, symlinks=True, copy_function=_Copier())


class _Copier:
    """`shutil.copy2`, but first trying a reflink (until the filesystem refuses one)."""

    def __init__(self) -> None:
        self.reflink = sys.platform.startswith("linux")

    def __call__(self, src: str, dst: str) -> str:
        if self.reflink:
            try:
                _reflink(src, dst)
                return dst
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(dst)
                if exc.errno not in _NO_REFLINK:
                    raise
                self.reflink = False
        return str(shutil.copy2(src, dst))


def _reflink(src: str, dst: str) -> None:
    import fcntl

    with open(src, "rb") as source, open(dst, "xb") as target:
        fcntl.ioctl(target.fileno(), _FICLONE, source.fileno())
    shutil.copystat(src, dst)


def _mounts_file(tree: Path) -> Path:
    # Beside the copy, not in it: a tool running in the copy cannot rewrite it.
    return tree.parent / f".{tree.name}.dependencies.json"


def _add_dependencies(source: Path, dest: Path) -> None:
    """Give the copy `dest` the dependency folders of `source`: placeholders to bind
    in the sandbox where it runs, real copies otherwise."""
    names = sorted(n for n in DEPENDENCY_DIRS if (source / n).is_dir() and not (dest / n).exists())
    if not names:
        return
    if sandbox.usable_bwrap() is None:
        for name in names:
            copy_dependency((source / name).resolve(), dest / name)
        return
    for name in names:
        (dest / name).mkdir()
    data = {"source": str(source.resolve()), "bound": names}
    _mounts_file(dest).write_text(json.dumps(data), encoding="utf-8")


def _bound(tree: Path) -> tuple[Path | None, list[str]]:
    try:
        data = json.loads(_mounts_file(tree).read_text(encoding="utf-8"))
        source = Path(str(data["source"]))
        names = [str(n) for n in data["bound"] if str(n) in DEPENDENCY_DIRS]
    except (OSError, ValueError, KeyError, TypeError):
        return None, []
    return source, names


def dependency_mounts(tree: Path) -> tuple[tuple[Path, Path], ...]:
    """The binds `(real folder, placeholder)` a run in the copy `tree` needs."""
    source, names = _bound(tree)
    if source is None:
        return ()
    return tuple(
        (source / name, tree / name)
        for name in names
        if (source / name).is_dir() and (tree / name).is_dir()
    )


def _materialise(tree: Path, name: str) -> None:
    """Replace the placeholder `name` by a real copy: a staged change goes into it."""
    source, names = _bound(tree)
    if source is None or name not in names:
        return
    placeholder = tree / name
    placeholder.rmdir()
    copy_dependency((source / name).resolve(), placeholder)
    names.remove(name)
    data = {"source": str(source), "bound": names}
    _mounts_file(tree).write_text(json.dumps(data), encoding="utf-8")


def apply_changes(dest: str | Path, changes: Sequence[FileChange]) -> None:
    """Write staged changes into a copy (never into a workspace: no journal, no checks)."""
    root = Path(dest)
    touched = {
        Path(p).parts[0]
        for change in changes
        for p in (change.path, change.old_path)
        if p is not None and Path(p).parts
    }
    for name in sorted(touched & DEPENDENCY_DIRS):
        _materialise(root, name)
    for change in changes:
        if change.action in (Action.DELETE, Action.MOVE) and change.old_path is not None:
            (root / change.old_path).unlink(missing_ok=True)
        if change.action is Action.DELETE and change.old_path is None:
            (root / change.path).unlink(missing_ok=True)
        new = change.new_content
        if new is None:
            continue
        path = root / change.path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()
        with path.open("wb") as out:  # a chunk at a time: a big file is not encoded whole
            for chunk in chunks_of(new):
                out.write(chunk)
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
    _add_dependencies(workspace, target)
    return True
