"""The commit journal: backups written and fsynced before any file changes, for rollback.

Layout: `<state>/journal/<id>/manifest.json` plus `backups.pack`, the old bytes of every
path that existed, one after another (the manifest gives each one's offset and size).
One pack rather than a file per backup: creating a file is the costliest step of a
commit on many disks, and a recipe's commit can touch thousands of files. Journals of
format 2 (a file `backup/<n>` per entry) are still read, so that an upgrade does not
strand an interrupted commit. The manifest is renamed into place only after the pack
is durable, so a journal without one means nothing was touched yet; removing the
manifest is the commit point.

Nothing on disk is trusted, because a repository can carry a `.patchsmith/journal/`
of its own. Recovery first checks the whole journal: a well-formed manifest whose id
is its directory's name, every path accepted the way a patch path is (inside the
root, never `.git/` or `.patchsmith/`, no symlink on the way), every backup hashing
to the recorded sha256, and every file holding either the journaled old or new
content. Only then does it restore, and only the files that hold the new content: a
file a person changed after the crash is never overwritten. A journal that fails any
check is moved whole to `<state>/quarantine/` and reported; nothing is restored.
Rolling back is idempotent: a crash during recovery is repaired by the next one.

A single-file commit needs no journal (its rename is the commit): an existing file's
new content is written to `.patchsmith-<id>-0.tmp` in the journal root and renamed over
it, and a new file's beside it with an `<id>.pending` note naming it; recovery removes
either leftover (docs/decisions/0044).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from patchsmith.errors import PatchFailure
from patchsmith.runtime.atomic import (
    TEMP_PREFIX,
    FileMeta,
    create_new_file,
    fsync_directory,
    meta_of,
    read_regular,
    remove_temp,
    write_all,
    write_atomically,
    write_new_file,
)
from patchsmith.runtime.content import Content, content_size, sha256_of
from patchsmith.runtime.paths import resolve_path
from patchsmith.runtime.statedir import check_entry, ensure_subdir

__all__ = [
    "MANIFEST_NAME",
    "PENDING_NAME",
    "PENDING_SUFFIX",
    "JournalEntry",
    "RecoveryResult",
    "close_journal",
    "journal_temp_name",
    "new_journal_id",
    "open_journal",
    "open_pending",
    "recover_journals",
    "roll_back",
]

_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

MANIFEST_NAME = "manifest.json"
PACK_NAME = "backups.pack"
PENDING_NAME = "pending"
"""In a journal folder of older versions: a single-file commit's note of the file it replaces."""
PENDING_SUFFIX = ".pending"
"""`<id>.pending` in the journal root: a single-file commit's note of the file it makes (or
replaces across filesystems); its temp file is beside that file; there is no manifest."""
_FORMAT_VERSION = 3
_READABLE_VERSIONS = (2, 3)
_ID = re.compile(r"[0-9a-f]{16}")
_LEFT_TEMP = re.compile(re.escape(TEMP_PREFIX) + r"[0-9a-f]{16}-0\.tmp")
"""A temp file a single-file commit made in the journal root (`journal_temp_name(id, 0)`)."""
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_MANIFEST_BYTES = 16 * 1024 * 1024
_MAX_MODE = 0o7777


@dataclass(frozen=True)
class JournalEntry:
    """One path a commit touches: its bytes and mode before, and after (`None`: absent).

    The bytes may be kept as the text that encodes to them (`EncodedText`): they are
    written and hashed a chunk at a time."""

    path: str
    """POSIX path relative to the real workspace root."""
    old_bytes: Content | None
    mode: int | None
    new_bytes: Content | None = None
    new_mode: int | None = None


@dataclass(frozen=True)
class RecoveryResult:
    """What recovery did: journals rolled back, journals quarantined (with why)."""

    rolled_back: tuple[str, ...] = ()
    quarantined: tuple[tuple[str, str], ...] = ()
    """(journal id or directory name, reason) for each journal moved aside."""
    pending: tuple[str, ...] = ()
    """Valid journals left in place because recovery ran with `restore=False`."""


def new_journal_id() -> str:
    """A fresh journal id: 16 lower-case hex digits."""
    return os.urandom(8).hex()  # `secrets.token_hex(8)`, without importing `random`


def journal_temp_name(journal_id: str, number: int) -> str:
    """The temp file name for entry `number` of journal `journal_id` (short: any target fits)."""
    return f"{TEMP_PREFIX}{journal_id}-{number}.tmp"


def open_journal(
    journal_root: Path,
    entries: Sequence[JournalEntry],
    created_dirs: Sequence[str],
    journal_id: str | None = None,
) -> tuple[str, Path]:
    """Durably record `entries` before a commit; returns the journal id and directory.

    `journal_root` must be a real directory (see `statedir.ensure_subdir`).
    """
    journal_id = journal_id or new_journal_id()
    directory = journal_root / journal_id
    os.mkdir(directory, 0o700)
    records: list[dict[str, object]] = []
    pack = directory / PACK_NAME
    fd = create_new_file(pack)
    try:
        offset = 0
        for entry in entries:
            record: dict[str, object] = {"path": entry.path, "backup": None, "mode": entry.mode}
            if entry.old_bytes is not None:
                write_all(fd, entry.old_bytes)
                size = content_size(entry.old_bytes)
                record["backup"] = [offset, size]
                record["old_sha256"] = sha256_of(entry.old_bytes)
                offset += size
            if entry.new_bytes is not None:
                record["new_sha256"] = sha256_of(entry.new_bytes)
                record["new_mode"] = entry.new_mode
            else:
                record["new_sha256"] = None
            records.append(record)
        os.fsync(fd)
    finally:
        os.close(fd)
    manifest = {
        "version": _FORMAT_VERSION,
        "id": journal_id,
        "inode": directory.lstat().st_ino,
        "entries": records,
        "created_dirs": list(created_dirs),
    }
    data = json.dumps(manifest, indent=1).encode("utf-8")
    write_atomically(directory / MANIFEST_NAME, data, 0o600, temp_name=".manifest.tmp")
    fsync_directory(directory)
    # The journal directory's own entry, and (first time) the journal root's.
    fsync_directory(journal_root)
    fsync_directory(journal_root.parent)
    return journal_id, directory


def open_pending(journal_root: Path, target: str) -> tuple[str, Path]:
    """Note the file a single-file commit replaces, so that a crash's temp file is removed.

    The note is one file, `<id>.pending`, holding the target's path: a commit removes it
    when its rename is done. (Older versions made a folder `<id>/` holding `pending`;
    recovery reads both.)
    """
    journal_id = new_journal_id()
    note = journal_root / f"{journal_id}{PENDING_SUFFIX}"
    # Not synced: it only helps clean up, and a temp file lost with it is harmless.
    write_new_file(note, target.encode("utf-8", "surrogateescape"), sync=False)
    return journal_id, note


def close_journal(directory: Path, *, manifest_removed: bool = False) -> None:
    """Mark the commit done (drop the manifest, durably), then delete the journal.

    `manifest_removed`: the caller has just unlinked the manifest itself (the commit
    point), so only the sync is left to do.
    """
    if not manifest_removed:
        with contextlib.suppress(FileNotFoundError):
            (directory / MANIFEST_NAME).unlink()
    # Opened never through a link (as `shutil.rmtree` refuses one): synced, and emptied of
    # its pack of backups, the one file a closed journal holds; anything else left in it,
    # `rmtree` removes.
    fd = os.open(directory, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    try:
        os.fsync(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(PACK_NAME, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        os.rmdir(directory)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        shutil.rmtree(directory)


# -- checking a journal --------------------------------------------------------------------------


class _Untrusted(Exception):
    """A journal failed a check; the message says which."""


class _Need(Enum):
    NOTHING = "nothing"
    RESTORE = "restore"


@dataclass(frozen=True)
class _Planned:
    number: int
    path: str
    backup: bytes | None
    mode: int | None
    meta: FileMeta | None
    need: _Need


def _disk_path(real_root: Path, relative: str) -> Path:
    return real_root.joinpath(*relative.split("/"))


def _checked_path(real_root: Path, value: object, what: str) -> str:
    """A manifest path accepted exactly like a patch path, with no symlink on the way."""
    if not isinstance(value, str):
        raise _Untrusted(f"{what} is not a string")
    accepted = resolve_path(real_root, value)
    if isinstance(accepted, PatchFailure):
        raise _Untrusted(f"{what} {value[:200]!r} is refused: {accepted.message}")
    if accepted != value:
        raise _Untrusted(f"{what} {value[:200]!r} is not in canonical form")
    current = real_root
    for part in accepted.split("/"):
        current = current / part
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(current.lstat().st_mode):
                raise _Untrusted(f"{what} {value[:200]!r} goes through a symlink")
    return accepted


def _optional_int(record: dict[str, object], key: str) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_MODE:
        raise _Untrusted(f"{key} {value!r} is not a permission mode")
    return value


def _optional_sha(record: dict[str, object], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise _Untrusted(f"{key} is not a sha256")
    return value


def _read_manifest(directory: Path) -> dict[str, object]:
    try:
        raw, _ = read_regular(directory / MANIFEST_NAME, limit=_MAX_MANIFEST_BYTES)
    except OSError as exc:
        raise _Untrusted(f"the manifest cannot be read: {exc.strerror or exc}") from None
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _Untrusted("the manifest is not JSON") from None
    if not isinstance(manifest, dict):
        raise _Untrusted("the manifest is not a JSON object")
    version = manifest.get("version")
    if type(version) is not int or version not in _READABLE_VERSIONS:
        raise _Untrusted(f"unknown manifest version {version!r}")
    if manifest.get("id") != directory.name or not _ID.fullmatch(directory.name):
        raise _Untrusted("the manifest's id is missing or is not its directory's name")
    # A journal copied in (a clone, an archive) sits in a directory made on this machine,
    # whose inode number its author could not know: it is not this machine's journal.
    if manifest.get("inode") != directory.lstat().st_ino:
        raise _Untrusted("the manifest was not written in this directory (inode differs)")
    if not isinstance(manifest.get("entries"), list):
        raise _Untrusted("the manifest's entries are not a list")
    if not isinstance(manifest.get("created_dirs"), list):
        raise _Untrusted("the manifest's created_dirs are not a list")
    return manifest


def _current(target: Path) -> tuple[str | None, os.stat_result | None]:
    """(sha256, fstat) of the regular file at `target`; (None, None) when nothing is there."""
    try:
        info = target.lstat()
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise _Untrusted(f"{target.name} is not a regular file")
    try:
        data, info = read_regular(target)
    except OSError as exc:
        raise _Untrusted(f"{target.name} cannot be read: {exc.strerror or exc}") from None
    return hashlib.sha256(data).hexdigest(), info


class _Backups:
    """The backups of one journal: a pack (format 3) or a file per entry (format 2)."""

    def __init__(self, directory: Path, version: int) -> None:
        self._directory = directory
        self._version = version
        self._pack: bytes | None = None

    def read(self, number: int, where: object) -> bytes:
        """The backup of entry `number`, which the manifest says is at `where`."""
        if self._version == 2:
            if where != str(number):
                raise _Untrusted(f"entry {number}'s backup is not described fully")
            return self._read(self._directory / "backup" / str(number), f"backup {number}")
        if (
            not isinstance(where, list)
            or len(where) != 2
            or any(type(value) is not int or value < 0 for value in where)
        ):
            raise _Untrusted(f"entry {number}'s backup is not described fully")
        if self._pack is None:
            self._pack = self._read(self._directory / PACK_NAME, "the backup pack")
        offset, size = where
        if offset + size > len(self._pack):
            raise _Untrusted(f"backup {number} lies beyond the end of the backup pack")
        return self._pack[offset : offset + size]

    @staticmethod
    def _read(path: Path, what: str) -> bytes:
        try:
            data, _ = read_regular(path)
        except OSError as exc:
            raise _Untrusted(f"{what} cannot be read: {exc.strerror or exc}") from None
        return data


def _plan_entry(
    real_root: Path, backups: _Backups, number: int, record: object, seen: set[str]
) -> _Planned:
    if not isinstance(record, dict):
        raise _Untrusted(f"entry {number} is not an object")
    path = _checked_path(real_root, record.get("path"), f"entry {number}'s path")
    if path in seen:
        raise _Untrusted(f"{path} is named twice")
    seen.add(path)
    old_mode = _optional_int(record, "mode")
    new_mode = _optional_int(record, "new_mode")
    old_sha = _optional_sha(record, "old_sha256")
    new_sha = _optional_sha(record, "new_sha256")
    backup_name = record.get("backup")
    backup: bytes | None = None
    meta: FileMeta | None = None
    if backup_name is not None:
        if old_sha is None or old_mode is None:
            raise _Untrusted(f"entry {number}'s backup is not described fully")
        backup = backups.read(number, backup_name)
        if hashlib.sha256(backup).hexdigest() != old_sha:
            raise _Untrusted(f"backup {number} does not hash to its recorded sha256")
    elif old_sha is not None:
        raise _Untrusted(f"entry {number} has a sha256 but no backup")
    if (new_sha is None) != (new_mode is None):
        raise _Untrusted(f"entry {number}'s new content is not described fully")
    target = _disk_path(real_root, path)
    sha, info = _current(target)
    mode = None if info is None else stat.S_IMODE(info.st_mode)
    is_new = sha == new_sha and (new_sha is None or mode == new_mode)
    is_old = sha == old_sha
    if is_new and (new_sha, new_mode) != (old_sha, old_mode if old_sha else None):
        need = _Need.RESTORE
    elif is_old:
        need = _Need.NOTHING
    else:
        raise _Untrusted(
            f"{path} holds neither the content before nor after the interrupted commit "
            "(changed since?)"
        )
    restore_mode = old_mode
    if info is not None and restore_mode is not None:
        # Owner, group and xattrs come from the file as it is, never from the manifest,
        # and a setuid/setgid bit only survives when that file carries it already.
        meta = meta_of(info, target)
        restore_mode &= ~(stat.S_ISUID | stat.S_ISGID) | info.st_mode
    elif restore_mode is not None:
        restore_mode &= 0o1777
    return _Planned(number, path, backup, restore_mode, meta, need)


def _plan(real_root: Path, directory: Path) -> tuple[str, list[_Planned], list[str]]:
    manifest = _read_manifest(directory)
    seen: set[str] = set()
    entries = manifest["entries"]
    assert isinstance(entries, list)
    version = manifest["version"]
    assert isinstance(version, int)
    backups = _Backups(directory, version)
    planned = [
        _plan_entry(real_root, backups, number, record, seen)
        for number, record in enumerate(entries)
    ]
    created_raw = manifest["created_dirs"]
    assert isinstance(created_raw, list)
    created = [_checked_path(real_root, value, "a created directory") for value in created_raw]
    return directory.name, planned, created


# -- restoring -----------------------------------------------------------------------------------


def _restore(real_root: Path, journal_id: str, item: _Planned, parents: set[Path]) -> None:
    target = _disk_path(real_root, item.path)
    temp_name = journal_temp_name(journal_id, item.number)
    remove_temp(target.parent / temp_name)
    if item.need is _Need.RESTORE:
        if item.backup is None or item.mode is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, item.backup, item.mode, temp_name=temp_name, meta=item.meta)
        parents.add(target.parent)


def _remove_temps(real_root: Path, journal_id: str, planned: list[_Planned]) -> None:
    for item in planned:
        folder = _disk_path(real_root, item.path).parent
        remove_temp(folder / journal_temp_name(journal_id, item.number))


def roll_back(real_root: Path, directory: Path) -> None:
    """Restore every path in the journal at `directory` that holds its new content.

    Raises `ValueError` (and restores nothing) when the journal fails a check (see
    the module docstring), `OSError` when the disk fails.
    """
    if not (directory / MANIFEST_NAME).exists():
        return
    try:
        journal_id, planned, created = _plan(real_root, directory)
    except _Untrusted as exc:
        raise ValueError(str(exc)) from None
    _roll_back_planned(real_root, journal_id, planned, created)


def _roll_back_planned(
    real_root: Path, journal_id: str, planned: list[_Planned], created: list[str]
) -> None:
    parents: set[Path] = set()
    for item in planned:
        _restore(real_root, journal_id, item, parents)
    for relative in reversed(created):
        folder = _disk_path(real_root, relative)
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(folder.lstat().st_mode) and not any(folder.iterdir()):
                folder.rmdir()
                parents.add(folder.parent)
    for parent in parents:
        if parent.is_dir():
            fsync_directory(parent)


def _clean_pending(real_root: Path, note: Path, journal_id: str) -> None:
    """Remove the temp file a single-file commit may have left (its target is in `note`)."""
    if not _ID.fullmatch(journal_id):
        return
    try:
        raw, _ = read_regular(note, limit=4096)
        relative = _checked_path(real_root, raw.decode("utf-8"), "the pending directory")
    except (OSError, UnicodeDecodeError, _Untrusted):
        return
    remove_temp(_disk_path(real_root, relative).parent / journal_temp_name(journal_id, 0))


def _quarantine(journal_root: Path, directory: Path) -> str:
    """Move a journal aside to `<state>/quarantine/`; returns where, relative to the state."""
    quarantine = ensure_subdir(journal_root.parent / "quarantine")
    name = f"{directory.name[:64]}-{os.urandom(4).hex()}"
    os.rename(directory, quarantine / name)
    fsync_directory(quarantine)
    return f"quarantine/{name}"


def recover_journals(
    real_root: Path, journal_root: Path, *, restore: bool = True
) -> RecoveryResult:
    """Roll back (or quarantine) every journal left by an interrupted commit.

    With `restore` false nothing in the workspace is written: untrusted journals are
    still quarantined (that only moves them inside the state directory), valid ones
    are left in place and listed as `pending`. Raises `OSError` when the disk fails.
    """
    if check_entry(journal_root, directory=True) is None:
        return RecoveryResult()
    rolled: list[str] = []
    quarantined: list[tuple[str, str]] = []
    pending: list[str] = []
    removed = False
    for directory in sorted(journal_root.iterdir()):
        entry = directory.lstat()
        if not stat.S_ISDIR(entry.st_mode):
            regular = stat.S_ISREG(entry.st_mode)
            note = regular and directory.name.endswith(PENDING_SUFFIX)
            if note and restore:
                _clean_pending(real_root, directory, directory.name[: -len(PENDING_SUFFIX)])
                directory.unlink()
                removed = True
            elif regular and restore and _LEFT_TEMP.fullmatch(directory.name):
                # a single-file commit's new content, never renamed into place
                directory.unlink()
                removed = True
            continue
        if not os.path.lexists(directory / MANIFEST_NAME):
            if restore:
                _clean_pending(real_root, directory / PENDING_NAME, directory.name)
                shutil.rmtree(directory)
                removed = True
            continue
        try:
            journal_id, planned, created = _plan(real_root, directory)
        except _Untrusted as exc:
            where = _quarantine(journal_root, directory)
            quarantined.append((directory.name, f"{exc}; moved to {where}"))
            continue
        if not restore:
            pending.append(journal_id)
            continue
        _roll_back_planned(real_root, journal_id, planned, created)
        _remove_temps(real_root, journal_id, planned)
        close_journal(directory)
        rolled.append(journal_id)
    if removed or rolled or quarantined:
        # Only a journal root this call changed has entries to make durable; every
        # commit checks for leftovers, and an empty root must not cost it an fsync.
        fsync_directory(journal_root)
    return RecoveryResult(tuple(rolled), tuple(quarantined), tuple(pending))
