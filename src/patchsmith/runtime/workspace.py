"""`Workspace`: a root directory and the one seam through which patchsmith touches files.

Every user path goes through `resolve_path`; every `OSError` becomes a `PatchFailure`
here (FILE_NOT_FOUND or IO_ERROR with the OS message) and anything else propagates.
Opening a workspace rolls back a commit that was interrupted (see `journal`).
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.journal import recover_journals
from patchsmith.runtime.paths import STATE_DIR_NAME, canonical_path, resolve_path
from patchsmith.runtime.textfile import TextFile, decode_file

__all__ = ["RawFile", "Workspace", "os_failure"]

_STATE_GITIGNORE = "*\n"
_MAX_SUGGESTIONS = 3


@dataclass(frozen=True)
class RawFile:
    """A regular file's bytes and permission bits, read through the workspace."""

    path: str
    raw: bytes
    mode: int


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


class Workspace:
    """A rooted directory: checked paths, exact text reads, patchsmith's state directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Open `root` (it must be a directory) and roll back any interrupted commit."""
        self.root = Path(os.path.abspath(root))
        if not self.root.is_dir():
            raise ValueError(f"workspace root {str(self.root)!r} is not a directory")
        self.real_root = Path(os.path.realpath(self.root))
        self.recovery_failure: PatchFailure | None = None
        """Set when an interrupted commit could not be rolled back; commits refuse then."""
        self.recovered: tuple[str, ...] = ()
        """Ids of interrupted commits rolled back when this workspace was opened."""
        self._recover()

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @property
    def state_dir(self) -> Path:
        """`<root>/.patchsmith/`, created on first use with a `.gitignore` ignoring it all."""
        directory = self.real_root / STATE_DIR_NAME
        directory.mkdir(exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_STATE_GITIGNORE, encoding="utf-8")
        return directory

    @property
    def journal_root(self) -> Path:
        """Where commit journals live (not created by reading this)."""
        return self.real_root / STATE_DIR_NAME / "journal"

    def resolve(self, path: str) -> str | PatchFailure:
        """`path` normalised relative to the root, or why it is refused (see `resolve_path`)."""
        return resolve_path(self.root, path)

    def canonical(self, relative: str, *, follow_final: bool) -> str:
        """The real path of an accepted `relative` path, symlinks resolved (see `paths`)."""
        return canonical_path(self.root, relative, follow_final=follow_final)

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

    def read_raw(self, path: str) -> RawFile | PatchFailure:
        """The bytes and mode of the regular file at `path`, or why not (binary is fine)."""
        relative = self.resolve(path)
        if isinstance(relative, PatchFailure):
            return relative
        target = self.root / relative
        try:
            info = target.stat()
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
            raw = target.read_bytes()
        except OSError as exc:
            failure = os_failure(exc, relative, "read")
            if failure.code is FailureCode.FILE_NOT_FOUND:
                return PatchFailure(
                    code=FailureCode.FILE_NOT_FOUND,
                    message=f"{relative} does not exist",
                    file=relative,
                    hint=self._not_found_hint(relative),
                )
            return failure
        return RawFile(path=relative, raw=raw, mode=stat.S_IMODE(info.st_mode))

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

        fd = os.open(self.state_dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _recover(self) -> None:
        if not self.journal_root.is_dir():
            return
        try:
            with self.lock():
                self.recovered = recover_journals(self.real_root, self.journal_root)
        except OSError as exc:
            self.recovery_failure = PatchFailure(
                code=FailureCode.IO_ERROR,
                message=f"cannot roll back an interrupted commit: {exc.strerror or exc}",
                hint=f"fix the cause and reopen the workspace; the journal is in {STATE_DIR_NAME}/",
            )

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
