"""Atomic file replacement that keeps what a rename would lose, and never follows a link.

A replaced file is a new inode: without care it would belong to whoever runs
patchsmith, lose its extended attributes, and keep a setuid bit for the wrong
owner. `write_atomically` writes a temp file next to the target (created with
`O_EXCL | O_NOFOLLOW`, so an existing name, or a link planted there, is never
followed or overwritten), gives it the old file's owner, group and extended
attributes when it can, drops setuid/setgid when the owner cannot be kept, and
renames it over the target.

A multi-file commit writes all its temp files first (`write_temp`), makes them
durable together (`sync_paths`: one `syncfs` of the filesystem for a large batch on
Linux, else an `fsync` each), and only then renames them: as safe as one fsync per
file before each rename, at a fraction of the cost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import NamedTuple

from patchsmith.runtime.content import Content, chunks_of, content_size, holds_chunks

__all__ = [
    "TEMP_PREFIX",
    "FileMeta",
    "create_new_file",
    "current_umask",
    "fsync_directory",
    "holds_regular",
    "meta_of",
    "read_regular",
    "remove_temp",
    "sync_paths",
    "write_all",
    "write_atomically",
    "write_new_file",
    "write_temp",
]

TEMP_PREFIX = ".patchsmith-"
"""Every temp file patchsmith makes is named `.patchsmith-<hex>[-<n>].tmp`: short, so
that a target name near the 255-byte limit still has a temp beside it."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# File capabilities grant privileges like setuid does; new content does not inherit them.
_NEVER_COPIED = frozenset({"security.capability"})
_TEMP_ATTEMPTS = 16

SYNCFS_MIN_PATHS = 16
"""From this many paths on, `sync_paths` flushes their filesystem once instead of each path."""


class FileMeta(NamedTuple):
    """What to carry from the file being replaced: owner, group and extended attributes."""

    uid: int
    gid: int
    xattrs: tuple[tuple[str, bytes], ...] = ()


def current_umask() -> int:
    """The process umask, read without changing it where the platform allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # Elsewhere the only way is to set it and put it back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_directory(path: Path) -> None:
    """Make the entries of directory `path` durable."""
    fd = os.open(path, os.O_RDONLY | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_regular(
    path: Path, *, follow_symlinks: bool = False, limit: int | None = None
) -> tuple[bytes, os.stat_result]:
    """The bytes and `fstat` of the regular file `path`, not through a symlink by default.

    Raises `OSError` (ELOOP for a link unless `follow_symlinks`, EINVAL for anything but
    a regular file, EFBIG when it holds more than `limit` bytes). Plain `os` calls: the
    buffered file layer adds a terminal check and a seek to every read.
    """
    flags = os.O_RDONLY | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags if follow_symlinks else flags | _NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if limit is not None and info.st_size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
        # One read of the size `fstat` gives (and a byte more, to see growth): joining
        # chunks would hold the file twice.
        first = os.read(fd, info.st_size + 1)
        chunks = [first]
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return (first if len(chunks) == 1 else b"".join(chunks)), info
    finally:
        os.close(fd)


def holds_regular(path: Path, expected: Content) -> tuple[bool, os.stat_result]:
    """Whether the regular file `path` (never through a symlink) holds exactly `expected`,
    and its `fstat`; read and compared a chunk at a time, never held whole (nor is an
    `EncodedText` encoded whole).

    Raises `OSError` as `read_regular` does.
    """
    fd = os.open(path, os.O_RDONLY | _CLOEXEC | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size != content_size(expected):
            return False, info
        if isinstance(expected, bytes):
            return holds_chunks(expected, iter(lambda: os.read(fd, 1 << 20), b"")), info
        for piece in chunks_of(expected):
            if _read_exactly(fd, len(piece)) != piece:
                return False, info
        return not os.read(fd, 1), info
    finally:
        os.close(fd)


def _read_exactly(fd: int, count: int) -> bytes:
    """`count` bytes from `fd`, or fewer only at the end of the file."""
    first = os.read(fd, count)
    if len(first) == count or not first:
        return first
    parts = [first]
    got = len(first)
    while got < count and (more := os.read(fd, count - got)):
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def meta_of(info: os.stat_result, path: Path) -> FileMeta:
    """The owner, group and extended attributes of the file `path` whose `lstat` is `info`."""
    return FileMeta(info.st_uid, info.st_gid, _read_xattrs(path))


def _read_xattrs(path: Path) -> tuple[tuple[str, bytes], ...]:
    listxattr = getattr(os, "listxattr", None)
    getxattr = getattr(os, "getxattr", None)
    if listxattr is None or getxattr is None:  # pragma: no cover - not Linux
        return ()
    try:
        names = listxattr(path, follow_symlinks=False)
    except OSError:
        return ()
    found: list[tuple[str, bytes]] = []
    for name in sorted(names):
        with contextlib.suppress(OSError):
            found.append((name, getxattr(path, name, follow_symlinks=False)))
    return tuple(found)


def _open_temp(directory: Path, name: str | None) -> tuple[int, Path]:
    """A new temp file in `directory` (named `name`, else a fresh random name)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    for _ in range(_TEMP_ATTEMPTS):
        # `os.urandom(8).hex()` is `secrets.token_hex(8)`, without importing `random`
        temp = directory / (name or f"{TEMP_PREFIX}{os.urandom(8).hex()}.tmp")
        try:
            return os.open(temp, flags, 0o600), temp
        except FileExistsError:
            if name is not None:
                raise
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(directory))


def _carry_meta(fd: int, meta: FileMeta, mode: int) -> int:
    """Give the temp file `meta`'s owner and attributes; returns the mode it may have."""
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) != (meta.uid, meta.gid):
        try:
            os.fchown(fd, meta.uid, meta.gid)
        except OSError:
            with contextlib.suppress(OSError):
                os.fchown(fd, -1, meta.gid)
        info = os.fstat(fd)
    # A setuid/setgid bit must never pass to an owner or group it was not set for.
    if info.st_uid != meta.uid:
        mode &= ~stat.S_ISUID
    if info.st_gid != meta.gid:
        mode &= ~stat.S_ISGID
    setxattr = getattr(os, "setxattr", None)
    if setxattr is not None:
        for name, value in meta.xattrs:
            if name in _NEVER_COPIED:
                continue
            # Some attributes are the kernel's or need privileges: keep what can be kept.
            with contextlib.suppress(OSError):
                setxattr(fd, name, value)
    return mode


def write_all(fd: int, data: Content) -> None:
    """Write all of `data` to `fd` (a short write is continued, not lost); an
    `EncodedText` is encoded and written a chunk at a time."""
    for chunk in chunks_of(data):
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]


def create_new_file(path: Path, mode: int = 0o600) -> int:
    """Open a new file at `path` for writing (never through a link, never over a name)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)


def _fill(fd: int, data: Content, mode: int, meta: FileMeta | None) -> None:
    write_all(fd, data)
    if meta is not None:
        mode = _carry_meta(fd, meta, mode)
    # fchmod after fchown: a change of owner clears setuid/setgid bits.
    os.fchmod(fd, mode)


def write_atomically(
    target: Path,
    data: Content,
    mode: int,
    *,
    temp_name: str | None = None,
    meta: FileMeta | None = None,
    temp_dir: Path | None = None,
) -> None:
    """Replace `target` with `data` and permission bits `mode`, all or nothing.

    The temp file is `temp_name` in `temp_dir` (default: the target's directory; it must
    not exist), or a fresh random `.patchsmith-<hex>.tmp`. `meta` (the replaced file's
    owner, group and xattrs) is carried over when given. A `temp_dir` on another
    filesystem fails with EXDEV, the temp file removed again.
    """
    fd, temp = _open_temp(temp_dir or target.parent, temp_name)
    try:
        try:
            _fill(fd, data, mode, meta)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_temp(
    target: Path, data: Content, mode: int, *, temp_name: str, meta: FileMeta | None = None
) -> Path:
    """Write `data` to the new temp file `temp_name` beside `target`; returns its path.

    Neither synced nor renamed: the caller makes a batch durable with `sync_paths`
    and then renames each temp over its target. Removed again if writing fails.
    """
    fd, temp = _open_temp(target.parent, temp_name)
    try:
        try:
            _fill(fd, data, mode, meta)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


@cache
def _syncfs() -> Callable[[int], int] | None:
    """Linux's `syncfs(2)` through the C library, or `None` where there is none."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - not Linux
        return None
    import ctypes  # only a commit flushes a filesystem; a dry run never loads it

    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):  # pragma: no cover - a libc without syncfs
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int
    return function


def _sync_filesystem(path: Path) -> bool:
    """Flush the whole filesystem holding `path`; False when `syncfs` is not available."""
    syncfs = _syncfs()
    if syncfs is None:  # pragma: no cover - not Linux
        return False
    fd = os.open(path, os.O_RDONLY | _CLOEXEC)
    try:
        if syncfs(fd) != 0:
            import ctypes

            code = ctypes.get_errno()
            if code == errno.ENOSYS:  # pragma: no cover - a kernel without it
                return False
            raise OSError(code, os.strerror(code), str(path))
    finally:
        os.close(fd)
    return True


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_paths(paths: Sequence[Path]) -> None:
    """Make the content (files) or entries (directories) of every path in `paths` durable.

    Fewer than `SYNCFS_MIN_PATHS`: an `fsync` each. More: one `syncfs(2)` per
    filesystem they live on (Linux; it flushes everything dirty there, which is what
    makes one call enough), else an `fsync` each. Raises `OSError` when the disk fails.
    """
    if len(paths) >= SYNCFS_MIN_PATHS:
        devices: dict[int, Path] = {}
        for path in paths:
            devices.setdefault(path.lstat().st_dev, path)
        if all(_sync_filesystem(path) for path in devices.values()):
            return
    for path in paths:
        _fsync_path(path)


def write_new_file(path: Path, data: bytes, mode: int = 0o600, *, sync: bool = True) -> None:
    """Create `path` (never through a link, never over an existing name) holding `data`."""
    fd = create_new_file(path, mode)
    try:
        write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def remove_temp(path: Path) -> None:
    """Delete a temp file patchsmith left at `path`, if it is a regular file (never a link)."""
    try:
        info = path.lstat()
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and path.name.startswith(TEMP_PREFIX):
        path.unlink()
