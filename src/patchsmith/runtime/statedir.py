"""The state directory `.patchsmith/`: made and used without ever following a symlink.

It holds journal backups (file contents) and the audit store (model inputs), so a
`.patchsmith` that is a symlink, not a directory, or owned by another user would send
them somewhere else: it is refused (`StateDirUnsafe`, which is an `OSError` so that
every caller's I/O error path handles it). Entries inside are created with
`O_EXCL | O_NOFOLLOW`, so a link planted at `.patchsmith/lock` or `.gitignore`
never creates or truncates a file at its target.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.atomic import fsync_directory, write_new_file
from patchsmith.runtime.paths import STATE_DIR_NAME

__all__ = [
    "STATE_DIR_MODE",
    "StateDirUnsafe",
    "check_entry",
    "check_state_dir",
    "ensure_state_dir",
    "ensure_subdir",
    "open_lock_file",
    "prepare_state_dir",
    "ready_state_dir",
    "unsafe_failure",
]

STATE_DIR_MODE = 0o700
"""`.patchsmith/` holds file contents and model inputs: readable by its owner only."""

_GITIGNORE = b"*\n"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class StateDirUnsafe(OSError):
    """`.patchsmith/` (or an entry in it) is a symlink, not a directory, or foreign-owned."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(errno.EPERM, reason, str(path))
        self.reason = reason


def unsafe_failure(exc: StateDirUnsafe) -> PatchFailure:
    """The STATE_DIR_UNSAFE failure for `exc`."""
    return PatchFailure(
        code=FailureCode.STATE_DIR_UNSAFE,
        message=f"refusing to use {exc.filename}: {exc.reason}",
        hint=f"remove it (or fix its owner) so that patchsmith can make a private "
        f"{STATE_DIR_NAME}/ directory again",
    )


def _owner_problem(info: os.stat_result) -> str | None:
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # pragma: no cover - Windows has no uids
        return None
    if info.st_uid != geteuid():
        return f"it is owned by uid {info.st_uid}, not by the user running patchsmith"
    return None


def check_entry(path: Path, *, directory: bool) -> os.stat_result | None:
    """`lstat` of `path` (None when absent); `StateDirUnsafe` unless it is a real entry.

    A real entry is a directory (or, with `directory` false, a regular file), not a
    symlink, owned by the user running patchsmith.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise StateDirUnsafe(path, "it is a symlink")
    wanted = stat.S_ISDIR if directory else stat.S_ISREG
    if not wanted(info.st_mode):
        kind = "a directory" if directory else "a regular file"
        raise StateDirUnsafe(path, f"it is not {kind}")
    problem = _owner_problem(info)
    if problem is not None:
        raise StateDirUnsafe(path, problem)
    return info


def check_state_dir(real_root: Path) -> PatchFailure | None:
    """Why `<real_root>/.patchsmith` cannot be used, or None (also when it is absent)."""
    try:
        check_entry(real_root / STATE_DIR_NAME, directory=True)
    except StateDirUnsafe as exc:
        return unsafe_failure(exc)
    except OSError:
        return None  # unreadable: the I/O that follows reports it with its own message
    return None


def ensure_subdir(path: Path) -> Path:
    """Make directory `path` (mode 0o700) unless a real one is there; refuse anything else."""
    if check_entry(path, directory=True) is None:
        # Made by another process meanwhile: fine, it is checked below.
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, STATE_DIR_MODE)
        check_entry(path, directory=True)
        fsync_directory(path.parent)
    return path


def ensure_state_dir(real_root: Path) -> Path:
    """`<real_root>/.patchsmith/`, made on first use with a `.gitignore` ignoring it all.

    Raises `StateDirUnsafe` for a symlinked, foreign-owned or non-directory state
    directory, and `OSError` when the disk fails.
    """
    return prepare_state_dir(real_root / STATE_DIR_NAME)


def prepare_state_dir(directory: Path) -> Path:
    """Make (or check) the state directory `directory`, with its `.gitignore`."""
    ready_state_dir(directory)
    return directory


def ready_state_dir(directory: Path, *, ignored: tuple[int, int] | None = None) -> tuple[int, int]:
    """`prepare_state_dir`, returning the directory's (device, inode).

    Every check is made as there; only the `.gitignore` is not tried again when `ignored`
    is the identity this directory has now (its caller made sure of the file in this very
    directory, and holds the lock under which the state directory is only ever removed).
    """
    info = check_entry(directory, directory=True)
    made = info is None
    if made:
        directory.parent.mkdir(parents=True, exist_ok=True)
        ensure_subdir(directory)
        info = check_entry(directory, directory=True)
    identity = (-1, -1) if info is None else (info.st_dev, info.st_ino)
    if made or identity != ignored:
        # A file, or a link that O_EXCL refused to follow: either way, leave it.
        with contextlib.suppress(FileExistsError):
            write_new_file(directory / ".gitignore", _GITIGNORE, 0o644)
    return identity


def open_lock_file(state_dir: Path) -> tuple[int, os.stat_result]:
    """A descriptor of `<state_dir>/lock` (created if absent), never opened through a
    link, and its `fstat`."""
    path = state_dir / "lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StateDirUnsafe(path, "it is a symlink") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise StateDirUnsafe(path, "it is not a regular file")
    return fd, info
