"""`Workspace`: a root directory and the one seam through which patchsmith touches files.

Every user path goes through `resolve_path`; every `OSError` becomes a `PatchFailure`
here (FILE_NOT_FOUND or IO_ERROR with the OS message) and anything else propagates.
Opening a workspace rolls back a commit that was interrupted (see `journal`), and so
does every commit, under the lock, before it looks at the files. The state directory
is used only when it is a real directory of the user's own (see `statedir`).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.atomic import read_regular
from patchsmith.runtime.paths import STATE_DIR_NAME, canonical_path, locate_path, resolve_path
from patchsmith.runtime.statedir import (
    StateDirUnsafe,
    check_state_dir,
    ensure_state_dir,
    ensure_subdir,
    open_lock_file,
    prepare_state_dir,
    ready_state_dir,
    unsafe_failure,
)
from patchsmith.runtime.textfile import TextFile, decode_file

if TYPE_CHECKING:
    # Loaded when there is a journal to recover (docs/decisions/0022).
    from patchsmith.runtime.journal import RecoveryResult

__all__ = ["RawFile", "Workspace", "os_failure"]

_MAX_SUGGESTIONS = 3
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class RawFile(NamedTuple):
    """A regular file's bytes and permission bits, read through the workspace."""

    path: str
    raw: bytes
    mode: int
    links: int = 1
    """How many names the file has (hard links); more than one is refused for edits."""


def os_failure(exc: OSError, path: str, action: str) -> PatchFailure:
    """The `PatchFailure` for an `OSError` raised while doing `action` to `path`."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT:
        return PatchFailure(
            code=FailureCode.FILE_NOT_FOUND,
            message=f"cannot {action} {path}: {reason}",
            file=path,
        )
    return PatchFailure(
        code=FailureCode.IO_ERROR,
        message=f"cannot {action} {path}: {reason}",
        file=path,
    )


_BLOCKING = frozenset({FailureCode.IO_ERROR, FailureCode.STATE_DIR_UNSAFE})


def _recovery_warnings(result: RecoveryResult) -> tuple[PatchFailure, ...]:
    quarantined = tuple(
        PatchFailure(
            code=FailureCode.JOURNAL_QUARANTINED,
            message=f"an interrupted-commit journal ({name}) was not trusted: {reason}",
            file=f"{STATE_DIR_NAME}/journal/{name}",
            hint="nothing was restored; check the files it names (the journal is kept in "
            f"{STATE_DIR_NAME}/quarantine/), then retry",
        )
        for name, reason in result.quarantined
    )
    pending = tuple(
        PatchFailure(
            code=FailureCode.INTERRUPTED_COMMIT,
            message=f"an interrupted commit ({journal_id}) is waiting to be rolled back",
            file=f"{STATE_DIR_NAME}/journal/{journal_id}",
            hint="run the command without --check once: it rolls the commit back first",
        )
        for journal_id in result.pending
    )
    return (*quarantined, *pending)


def _same_file(opened: os.stat_result, path: Path) -> bool:
    """True when the file whose `fstat` is `opened` is still the one at `path` (not
    unlinked or replaced); an open file's device and inode never change."""
    try:
        named = os.lstat(path)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _has_entries(directory: Path) -> bool:
    """Whether the journal directory `directory` needs the locked recovery: it exists and
    is anything but an empty real directory of this user's (a link, a file or a foreign
    owner counts, so that the recovery judges and reports it)."""
    try:
        fd = os.open(directory, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        geteuid = getattr(os, "geteuid", None)
        if geteuid is not None and os.fstat(fd).st_uid != geteuid():
            return True
        with os.scandir(fd) as entries:
            return next(entries, None) is not None
    except OSError:
        return True
    finally:
        os.close(fd)


class Workspace:
    """A rooted directory: checked paths, exact text reads, patchsmith's state directory."""

    def __init__(self, root: str | os.PathLike[str], *, recover: bool = True) -> None:
        """Open `root` (it must be a directory) and roll back any interrupted commit.

        With `recover` false (a dry run) no file is restored: a valid leftover journal
        makes `blocking_failures` hold INTERRUPTED_COMMIT instead.
        """
        self.root = Path(os.path.abspath(root))
        if not self.root.is_dir():
            raise ValueError(f"workspace root {str(self.root)!r} is not a directory")
        self._real_root_text = os.path.realpath(self.root)
        self.real_root = Path(self._real_root_text)
        self.recovery_failure: PatchFailure | None = None
        """Set when the state directory is unusable or an interrupted commit could not be
        rolled back; commits refuse then."""
        self.recovered: tuple[str, ...] = ()
        """Ids of interrupted commits rolled back when this workspace was opened."""
        self.recovery_warnings: tuple[PatchFailure, ...] = ()
        """JOURNAL_QUARANTINED / INTERRUPTED_COMMIT for the journals found on opening."""
        self._locked_state_dir: tuple[int, int] | None = None
        # (device, inode) of the state directory `lock()` holds the lock of, while it does.
        self.recovery_failure = check_state_dir(self.real_root)
        if self.recovery_failure is None:
            self._recover(restore=recover)

    @property
    def blocking_failures(self) -> tuple[PatchFailure, ...]:
        """Why this workspace must not be written now (empty when it may be)."""
        if self.recovery_failure is not None:
            return (self.recovery_failure, *self.recovery_warnings)
        return self.recovery_warnings

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @property
    def state_dir(self) -> Path:
        """`<root>/.patchsmith/`, created on first use with a `.gitignore` ignoring it all.

        Raises `StateDirUnsafe` (an `OSError`) when it is a symlink, not a directory,
        or owned by someone else.
        """
        return ensure_state_dir(self.real_root)

    def ensure_journal_root(self) -> Path:
        """The journal directory, made (privately) if absent; `StateDirUnsafe` if not real."""
        # Under `lock()`, the `.gitignore` that made sure of is not tried again (the
        # state directory itself is checked again all the same).
        ready_state_dir(self.real_root / STATE_DIR_NAME, ignored=self._locked_state_dir)
        return ensure_subdir(self.journal_root)

    @property
    def journal_root(self) -> Path:
        """Where commit journals live (not created by reading this)."""
        return self.real_root / STATE_DIR_NAME / "journal"

    def resolve(self, path: str) -> str | PatchFailure:
        """`path` normalised relative to the root, or why it is refused (see `resolve_path`)."""
        return resolve_path(self.root, path, real_root=self._real_root_text)

    def canonical(self, relative: str, *, follow_final: bool) -> str:
        """The real path of an accepted `relative` path, symlinks resolved (see `paths`)."""
        return canonical_path(
            self.root, relative, follow_final=follow_final, real_root=self._real_root_text
        )

    def locate(self, path: str, *, follow_final: bool) -> str | PatchFailure:
        """`canonical(resolve(path))` or why `path` is refused; one walk when no link is on it."""
        return locate_path(
            self.root, path, follow_final=follow_final, real_root=self._real_root_text
        )

    def disk_path(self, relative: str) -> Path:
        """The absolute path of a real (canonical) relative path."""
        return self.real_root.joinpath(*relative.split("/"))

    def exists(self, path: str) -> bool:
        """True when `path` is accepted and names an existing file (not a directory)."""
        relative = self.resolve(path)
        if isinstance(relative, PatchFailure):
            return False
        return (self.root / relative).is_file()

    def is_symlink(self, relative: str) -> bool:
        """True when the last component of an accepted path is a symlink."""
        return self.disk_path(self.canonical(relative, follow_final=False)).is_symlink()

    def lexists(self, relative: str) -> bool:
        """True when anything (file, directory, even a dangling symlink) is at `relative`."""
        return os.path.lexists(self.disk_path(self.canonical(relative, follow_final=False)))

    def read_raw(self, path: str, *, canonical: bool = False) -> RawFile | PatchFailure:
        """The bytes and mode of the regular file at `path`, or why not (binary is fine).

        `canonical`: `path` is what `canonical` returned for a path `resolve` accepted, so
        its links are not walked again (one that climbs out, after a race, still is).
        """
        inside = canonical and not path.startswith("/") and ".." not in path.split("/")
        relative = path if inside else self.resolve(path)
        if isinstance(relative, PatchFailure):
            return relative
        try:
            info = (self.root / relative).stat()
        except OSError as exc:
            return self._read_failure(exc, relative)
        return self.read_resolved(relative, info)

    def stat_resolved(self, relative: str) -> os.stat_result | None:
        """The `stat` (links followed) of a path `resolve` just accepted; None when it
        cannot be had (absent, unreadable)."""
        try:
            return os.stat(self.root / relative)
        except OSError:
            return None

    def read_resolved(self, relative: str, info: os.stat_result) -> RawFile | PatchFailure:
        """`read_raw` of a path `resolve` just accepted, whose `stat` the caller just took
        (`stat_resolved`): neither is done again."""
        target = self.root / relative
        try:
            if stat.S_ISDIR(info.st_mode):
                return PatchFailure(
                    code=FailureCode.FILE_NOT_FOUND,
                    message=f"{relative} is a directory, not a file",
                    file=relative,
                    hint="name a file inside it",
                )
            if not stat.S_ISREG(info.st_mode):
                return PatchFailure(
                    code=FailureCode.IO_ERROR,
                    message=f"{relative} is not a regular file",
                    file=relative,
                )
            raw, opened = read_regular(target, follow_symlinks=True)
        except OSError as exc:
            return self._read_failure(exc, relative)
        return RawFile(
            path=relative, raw=raw, mode=stat.S_IMODE(opened.st_mode), links=opened.st_nlink
        )

    def _read_failure(self, exc: OSError, relative: str) -> PatchFailure:
        failure = os_failure(exc, relative, "read")
        if failure.code is FailureCode.FILE_NOT_FOUND:
            return PatchFailure(
                code=FailureCode.FILE_NOT_FOUND,
                message=f"{relative} does not exist",
                file=relative,
                hint=self._not_found_hint(relative),
            )
        return failure

    def read(self, path: str) -> TextFile | PatchFailure:
        """The decoded text file at `path`, or FILE_NOT_FOUND, BINARY_FILE, IO_ERROR..."""
        raw = self.read_raw(path)
        if isinstance(raw, PatchFailure):
            return raw
        return decode_file(raw.path, raw.raw, raw.mode)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the workspace's commit lock (an advisory file lock where the OS has one)."""
        if sys.platform == "win32":  # pragma: no cover - no fcntl there
            yield
            return
        import fcntl

        state_dir = self.real_root / STATE_DIR_NAME
        while True:
            identity = ready_state_dir(state_dir)
            fd, opened = open_lock_file(state_dir)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            if _same_file(opened, state_dir / "lock"):
                break
            # The holder removed the state directory (`discard_state_dir`) while this
            # process waited on its lock file: lock the one that exists now instead.
            os.close(fd)
        self._locked_state_dir = identity
        try:
            yield
        finally:
            self._locked_state_dir = None
            os.close(fd)

    def discard_state_dir(self) -> None:
        """Remove `.patchsmith/` again if it holds nothing but a lock and a `.gitignore`.

        Called under `lock()` by a commit that made the directory only to lock it (no
        audit record wanted): such a run leaves no trace in the workspace. Anything else
        in it (a record, a journal left by a crash) keeps it.
        """
        directory = self.real_root / STATE_DIR_NAME
        self._locked_state_dir = None  # whatever is made there next gets its .gitignore
        with contextlib.suppress(OSError):
            (directory / "journal").rmdir()  # only when empty
        try:
            if not {entry.name for entry in os.scandir(directory)} <= {"lock", ".gitignore"}:
                return
            (directory / "lock").unlink()
            (directory / ".gitignore").unlink(missing_ok=True)
            directory.rmdir()
        except OSError:
            # Someone wrote here meanwhile: keep the directory, and keep it ignored by git.
            with contextlib.suppress(OSError):
                prepare_state_dir(directory)

    def recover_locked(self, *, restore: bool = True) -> tuple[PatchFailure, ...]:
        """Recover leftover journals; the caller holds `lock()`. Returns why not to write.

        A commit calls this under its lock before it checks anything, so a commit that
        another process left half done is rolled back before this one builds on it.
        """
        from patchsmith.runtime.journal import recover_journals

        try:
            result = recover_journals(self.real_root, self.journal_root, restore=restore)
        except StateDirUnsafe as exc:
            return (unsafe_failure(exc),)
        except OSError as exc:
            return (
                PatchFailure(
                    code=FailureCode.IO_ERROR,
                    message=f"cannot roll back an interrupted commit: {exc.strerror or exc}",
                    hint="fix the cause and reopen the workspace; the journal is in "
                    f"{STATE_DIR_NAME}/journal/",
                ),
            )
        self.recovered = (*self.recovered, *result.rolled_back)
        return _recovery_warnings(result)

    def _recover(self, *, restore: bool) -> None:
        if not _has_entries(self.journal_root):
            # Nothing left over: no lock to take. A journal written after this look is a
            # commit in progress, which every commit recovers under the lock anyway.
            return
        try:
            with self.lock():
                found = self.recover_locked(restore=restore)
        except StateDirUnsafe as exc:
            found = (unsafe_failure(exc),)
        except OSError as exc:
            found = (os_failure(exc, f"{STATE_DIR_NAME}/lock", "lock"),)
        blocking = [f for f in found if f.code in _BLOCKING]
        self.recovery_failure = blocking[0] if blocking else None
        self.recovery_warnings = tuple(f for f in found if f.code not in _BLOCKING)

    def _not_found_hint(self, relative: str) -> str:
        parent_rel, _, name = relative.rpartition("/")
        parent = self.root / parent_rel if parent_rel else self.root
        try:
            siblings = [entry.name for entry in parent.iterdir() if entry.is_file()]
        except OSError:
            return f"directory {parent_rel or '.'}/ does not exist either"
        matches = difflib.get_close_matches(name, siblings, n=_MAX_SUGGESTIONS)
        prefix = f"{parent_rel}/" if parent_rel else ""
        if matches:
            return "did you mean " + ", ".join(prefix + match for match in matches) + "?"
        return "check the path; to make a new file, create it instead of editing it"
