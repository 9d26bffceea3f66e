"""The commit journal: backups written and fsynced before any file changes, for rollback.

Layout: `<state>/journal/<id>/manifest.json` plus `backup/<n>` for every path that
existed. The manifest is renamed into place only after every backup is durable, so a
journal without one means nothing was touched yet; removing the manifest is the commit
point. Rolling back is idempotent: a crash during recovery is repaired by the next one.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MANIFEST_NAME",
    "JournalEntry",
    "close_journal",
    "fsync_directory",
    "open_journal",
    "recover_journals",
    "roll_back",
    "temp_path_for",
    "write_atomically",
]

MANIFEST_NAME = "manifest.json"
_FORMAT_VERSION = 1


@dataclass(frozen=True)
class JournalEntry:
    """One path a commit touches, as it was before: its bytes and mode, or absent."""

    path: str
    """POSIX path relative to the real workspace root."""
    old_bytes: bytes | None
    mode: int | None


def temp_path_for(target: Path, journal_id: str) -> Path:
    """The temp file used to replace `target`; named after the journal so recovery finds it."""
    return target.with_name(f".{target.name}.{journal_id}.tmp")


def fsync_directory(path: Path) -> None:
    """Make the entries of directory `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(target: Path, data: bytes, mode: int, temp: Path) -> None:
    """Replace `target` with `data` and permission bits `mode`, all or nothing."""
    temp.unlink(missing_ok=True)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(temp, target)


def open_journal(
    real_root: Path,
    journal_root: Path,
    entries: Sequence[JournalEntry],
    created_dirs: Sequence[str],
) -> tuple[str, Path]:
    """Durably record `entries` before a commit; returns the journal id and directory."""
    journal_id = uuid.uuid4().hex[:16]
    directory = journal_root / journal_id
    backups = directory / "backup"
    backups.mkdir(parents=True)
    records: list[dict[str, object]] = []
    for number, entry in enumerate(entries):
        backup_name: str | None = None
        if entry.old_bytes is not None:
            backup_name = str(number)
            write_atomically(
                backups / backup_name, entry.old_bytes, 0o600, backups / f".{number}.tmp"
            )
        records.append({"path": entry.path, "backup": backup_name, "mode": entry.mode})
    fsync_directory(backups)
    manifest = {
        "version": _FORMAT_VERSION,
        "id": journal_id,
        "entries": records,
        "created_dirs": list(created_dirs),
    }
    data = json.dumps(manifest, indent=1).encode("utf-8")
    write_atomically(directory / MANIFEST_NAME, data, 0o600, directory / ".manifest.tmp")
    fsync_directory(directory)
    fsync_directory(journal_root)
    return journal_id, directory


def _disk_path(real_root: Path, relative: str) -> Path:
    return real_root.joinpath(*relative.split("/"))


def roll_back(real_root: Path, directory: Path) -> None:
    """Restore every path in the journal at `directory` to its recorded state."""
    manifest_path = directory / MANIFEST_NAME
    if not manifest_path.exists():
        return
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    journal_id = str(manifest["id"])
    parents: set[Path] = set()
    for record in manifest["entries"]:
        target = _disk_path(real_root, str(record["path"]))
        temp = temp_path_for(target, journal_id)
        backup = record["backup"]
        if backup is None:
            target.unlink(missing_ok=True)
            temp.unlink(missing_ok=True)
        else:
            data = (directory / "backup" / str(backup)).read_bytes()
            mode = int(record["mode"])
            temp.unlink(missing_ok=True)
            if _already(target, data, mode):
                # Never replaced (the commit stopped before it): rewriting it would need
                # a temp file in its directory, which may be read-only.
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data, mode, temp)
        parents.add(target.parent)
    for relative in reversed(manifest["created_dirs"]):
        created = _disk_path(real_root, str(relative))
        if created.is_dir() and not any(created.iterdir()):
            created.rmdir()
            parents.add(created.parent)
    for parent in parents:
        if parent.is_dir():
            fsync_directory(parent)


def _already(target: Path, data: bytes, mode: int) -> bool:
    """Whether `target` is a regular file holding exactly `data` with permission bits `mode`."""
    try:
        if target.is_symlink() or not target.is_file():
            return False
        return (target.stat().st_mode & 0o777) == mode and target.read_bytes() == data
    except OSError:
        return False


def close_journal(directory: Path) -> None:
    """Mark the commit done (drop the manifest, durably), then delete the journal."""
    (directory / MANIFEST_NAME).unlink(missing_ok=True)
    fsync_directory(directory)
    shutil.rmtree(directory)


def recover_journals(real_root: Path, journal_root: Path) -> tuple[str, ...]:
    """Roll back every journal left by an interrupted commit; returns their ids."""
    if not journal_root.is_dir():
        return ()
    recovered: list[str] = []
    for directory in sorted(journal_root.iterdir()):
        if not directory.is_dir():
            continue
        if (directory / MANIFEST_NAME).exists():
            roll_back(real_root, directory)
            recovered.append(directory.name)
        shutil.rmtree(directory)
    fsync_directory(journal_root)
    return tuple(recovered)
