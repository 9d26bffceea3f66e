"""Low-level file primitives: no link followed, no user file clobbered, temps cleaned."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from patchsmith.runtime import atomic
from patchsmith.runtime.atomic import read_regular, remove_temp, write_atomically


class TestReadRegular:
    def test_refuses_symlink_fifo_and_oversize(self, tmp_path: Path) -> None:
        """A link is ELOOP, a FIFO EINVAL, a file above the limit EFBIG."""
        (tmp_path / "f").write_bytes(b"12345")
        (tmp_path / "link").symlink_to(tmp_path / "f")
        os.mkfifo(tmp_path / "fifo")

        with pytest.raises(OSError) as link:
            read_regular(tmp_path / "link")
        with pytest.raises(OSError) as fifo:
            read_regular(tmp_path / "fifo")
        with pytest.raises(OSError) as big:
            read_regular(tmp_path / "f", limit=4)
        assert (errno.ELOOP, errno.EINVAL, errno.EFBIG) == (
            link.value.errno,
            fifo.value.errno,
            big.value.errno,
        )
        assert b"12345" == read_regular(tmp_path / "f", limit=5)[0]

    def test_follows_a_link_when_asked(self, tmp_path: Path) -> None:
        """With `follow_symlinks`, a link is read through; a FIFO behind it is still EINVAL."""
        (tmp_path / "f").write_bytes(b"12345")
        (tmp_path / "link").symlink_to(tmp_path / "f")
        os.mkfifo(tmp_path / "fifo")
        (tmp_path / "to-fifo").symlink_to(tmp_path / "fifo")

        data, info = read_regular(tmp_path / "link", follow_symlinks=True)

        assert (b"12345", 5) == (data, info.st_size)
        with pytest.raises(OSError) as fifo:
            read_regular(tmp_path / "to-fifo", follow_symlinks=True)
        assert errno.EINVAL == fifo.value.errno


class TestWriteAtomically:
    def test_failed_write_leaves_no_temp(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A write that fails midway removes its temp file and keeps the target."""
        (tmp_path / "t").write_bytes(b"old")

        def full(*_args: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(atomic.os, "write", full)
        with pytest.raises(OSError):
            write_atomically(tmp_path / "t", b"new", 0o644)
        assert ["t"] == os.listdir(tmp_path)
        assert b"old" == (tmp_path / "t").read_bytes()

    def test_no_free_temp_name(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """If every random temp name is taken, the write fails without touching anything."""
        monkeypatch.setattr(atomic.os, "urandom", lambda n: b"\x00" * n)
        taken = tmp_path / ".patchsmith-0000000000000000.tmp"
        taken.write_bytes(b"mine")

        with pytest.raises(FileExistsError):
            write_atomically(tmp_path / "t", b"new", 0o644)
        assert b"mine" == taken.read_bytes()

    def test_capabilities_never_copied(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`security.capability` is skipped when xattrs are carried over."""
        copied: list[str] = []
        monkeypatch.setattr(atomic.os, "setxattr", lambda _fd, name, _v: copied.append(name))
        info = os.stat(tmp_path)
        meta = atomic.FileMeta(info.st_uid, info.st_gid, (("security.capability", b"x"),))
        write_atomically(tmp_path / "t", b"new", 0o755, meta=meta)

        assert [] == copied


class TestRemoveTemp:
    def test_only_our_regular_temp_files(self, tmp_path: Path) -> None:
        """Links, directories and files not named like our temps are never removed."""
        (tmp_path / "target").write_bytes(b"keep")
        (tmp_path / ".patchsmith-link.tmp").symlink_to(tmp_path / "target")
        (tmp_path / ".patchsmith-dir.tmp").mkdir()
        (tmp_path / "user.tmp").write_bytes(b"keep")
        (tmp_path / ".patchsmith-ours.tmp").write_bytes(b"x")
        for name in os.listdir(tmp_path):
            remove_temp(tmp_path / name)
        remove_temp(tmp_path / "missing")

        assert sorted(
            [".patchsmith-dir.tmp", ".patchsmith-link.tmp", "target", "user.tmp"]
        ) == sorted(os.listdir(tmp_path))


class TestBatchWrites:
    def test_write_temp_writes_beside_and_leaves_the_target(self, tmp_path: Path) -> None:
        """The temp holds the bytes and mode; the target is untouched until renamed."""
        target = tmp_path / "a.txt"
        target.write_bytes(b"old")

        temp = atomic.write_temp(target, b"new", 0o640, temp_name=".patchsmith-x-0.tmp")

        assert (b"old", b"new") == (target.read_bytes(), temp.read_bytes())
        assert 0o640 == temp.stat().st_mode & 0o777
        assert tmp_path == temp.parent

    def test_failed_temp_write_leaves_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A write error removes the half-written temp and propagates."""

        def full(_fd: int, _data: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "write", full)
        with pytest.raises(OSError):
            atomic.write_temp(tmp_path / "a.txt", b"x", 0o644, temp_name=".patchsmith-y-0.tmp")
        monkeypatch.undo()
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.parametrize("count", [1, atomic.SYNCFS_MIN_PATHS])
    def test_sync_paths_fsyncs_a_small_batch_and_flushes_a_large_one_once(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
    ) -> None:
        """Below the threshold every path is fsynced; from it on, one syncfs per filesystem."""
        paths = [tmp_path / f"f{n}" for n in range(count)]
        for path in paths:
            path.write_bytes(b"x")
        fsynced: list[int] = []
        flushed: list[Path] = []
        real_fsync, real_flush = os.fsync, atomic._sync_filesystem
        monkeypatch.setattr(os, "fsync", lambda fd: fsynced.append(fd) or real_fsync(fd))
        monkeypatch.setattr(
            atomic, "_sync_filesystem", lambda p: flushed.append(p) or real_flush(p)
        )

        atomic.sync_paths([*paths, tmp_path])

        large = count + 1 >= atomic.SYNCFS_MIN_PATHS
        assert (0 if large else count + 1) == len(fsynced)
        assert (1 if large else 0) == len(flushed)

    def test_sync_paths_falls_back_to_fsync_without_syncfs(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Where syncfs is missing, a large batch is fsynced path by path."""
        paths = [tmp_path / f"f{n}" for n in range(atomic.SYNCFS_MIN_PATHS)]
        for path in paths:
            path.write_bytes(b"x")
        fsynced: list[int] = []
        monkeypatch.setattr(os, "fsync", fsynced.append)
        monkeypatch.setattr(atomic, "_sync_filesystem", lambda _path: False)

        atomic.sync_paths(paths)

        assert len(paths) == len(fsynced)

    def test_syncfs_error_is_an_os_error(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A failing syncfs (a writeback error) raises instead of passing silently."""
        import ctypes

        monkeypatch.setattr(atomic, "_syncfs", lambda: lambda _fd: -1)
        monkeypatch.setattr(ctypes, "get_errno", lambda: errno.EIO)

        with pytest.raises(OSError) as raised:
            atomic._sync_filesystem(tmp_path)
        assert errno.EIO == raised.value.errno
