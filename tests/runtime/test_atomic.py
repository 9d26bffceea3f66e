"""Low-level file primitives: no link followed, no user file clobbered, temps cleaned."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from patchsmith.runtime import atomic
from patchsmith.runtime.atomic import read_nofollow, remove_temp, write_atomically


class TestReadNofollow:
    def test_refuses_symlink_fifo_and_oversize(self, tmp_path: Path) -> None:
        """A link is ELOOP, a FIFO EINVAL, a file above the limit EFBIG."""
        (tmp_path / "f").write_bytes(b"12345")
        (tmp_path / "link").symlink_to(tmp_path / "f")
        os.mkfifo(tmp_path / "fifo")

        with pytest.raises(OSError) as link:
            read_nofollow(tmp_path / "link")
        with pytest.raises(OSError) as fifo:
            read_nofollow(tmp_path / "fifo")
        with pytest.raises(OSError) as big:
            read_nofollow(tmp_path / "f", limit=4)
        assert (errno.ELOOP, errno.EINVAL, errno.EFBIG) == (
            link.value.errno,
            fifo.value.errno,
            big.value.errno,
        )
        assert b"12345" == read_nofollow(tmp_path / "f", limit=5)[0]


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
        monkeypatch.setattr(atomic.secrets, "token_hex", lambda _n: "same")
        (tmp_path / ".patchsmith-same.tmp").write_bytes(b"mine")

        with pytest.raises(FileExistsError):
            write_atomically(tmp_path / "t", b"new", 0o644)
        assert b"mine" == (tmp_path / ".patchsmith-same.tmp").read_bytes()

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
