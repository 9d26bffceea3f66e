"""`Transaction`: stage file changes in memory, show them as a git diff, commit all or none.

Staging never touches the disk. `commit` writes a journal (backups of everything that
will change, fsynced) before the first write, replaces each file atomically, and removes
the journal last; a failure midway rolls back from it, and so does the next
`Workspace(root)` or commit after a crash. Every commit first recovers, under the lock,
what another process left half done, then checks that the files are still as staged.
Staged paths are canonical: a symlinked file is updated through to its target, and
symlinks themselves are never deleted or moved.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from patchsmith.engine.linespans import LineSpan
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.runtime.atomic import (
    FileMeta,
    current_umask,
    fsync_directory,
    holds_regular,
    meta_of,
    read_regular,
    sync_paths,
    write_atomically,
    write_temp,
)
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import Content, same_content
from patchsmith.runtime.gitdiff import render_git_diff
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.statedir import StateDirUnsafe, unsafe_failure
from patchsmith.runtime.textfile import (
    TextEncoding,
    TextFile,
    decode_file,
    encode_text,
    encoded_lazily,
    encodes_back,
)
from patchsmith.runtime.workspace import Workspace, os_failure

if TYPE_CHECKING:
    from concurrent.futures import Future

    # The journal is loaded by the commit that writes one: staging and dry runs need none.
    from patchsmith.runtime.journal import JournalEntry

__all__ = [
    "DEFAULT_FILE_MODE",
    "EXECUTABLE_FILE_MODE",
    "StepCallback",
    "Transaction",
    "with_executable",
]

DEFAULT_FILE_MODE = 0o666
"""Permission bits of a created file when none are given, before the umask (as `open`)."""

EXECUTABLE_FILE_MODE = 0o777
"""Permission bits of a created executable (`new file mode 100755`), before the umask."""

LAZY_BYTES_MIN_CHARS = 1 << 20
"""A staged update of a text this long or longer keeps its bytes as the text that encodes
to them (`runtime.content.EncodedText`): a big file is then held as two texts, not as
two texts and two byte strings. Smaller files keep their bytes: encoding them on each
read would cost more than the memory it saves."""

StepCallback = Callable[[str], None]
"""Called with a step's name (`"journal"`, `"write a.py"`...) before the step runs."""


def with_executable(mode: int, executable: bool | None) -> int:
    """`mode` with execute bits set (for whoever may read) or cleared, as git's modes say.

    git records only 100644 or 100755, so `chmod +x` of a 0o640 file is 0o750: the
    execute bits follow the read bits rather than granting anyone new access.
    """
    if executable is None:
        return mode
    if executable:
        return mode | ((mode & 0o444) >> 2)
    return mode & ~0o111


class _State(Enum):
    OPEN = "open"
    COMMITTED = "committed"
    CLOSED = "closed"


def _conflict(path: str, message: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.CONFLICTING_EDITS,
        message=message,
        file=path,
        hint="combine the edits to one file into a single change",
    )


def _decoded(path: str, data: bytes, mode: int | None) -> str | None:
    """The text of `data` as the guards see it, `None` when it is binary or undecodable."""
    decoded = decode_file(path, data, 0o644 if mode is None else mode)
    return None if isinstance(decoded, PatchFailure) else decoded.text


def _no_step(_name: str) -> None:
    return None


class _Current(NamedTuple):
    """A source file's bytes, mode and text (`None` when binary), read while staging."""

    raw: Content
    mode: int
    text: str | None
    links: int = 1

    def changed(
        self,
        action: Action,
        source: str,
        target: str,
        new_bytes: Content | None,
        new_text: str | None,
        *,
        reason: str,
        executable: bool | None = None,
        whole_content: bool = False,
        generated_by_command: bool = False,
        line_spans: tuple[LineSpan, ...] | None = None,
    ) -> FileChange:
        """This file `source` rewritten (UPDATE) or moved (MOVE) to `target` with new
        content, its mode kept but for `executable`; or deleted (DELETE, no new bytes)."""
        return FileChange(
            path=target,
            action=action,
            old_path=source,
            old_bytes=self.raw,
            new_bytes=new_bytes,
            old_text=self.text,
            new_text=new_text,
            old_mode=self.mode,
            new_mode=None if new_bytes is None else with_executable(self.mode, executable),
            reason=reason,
            generated_by_command=generated_by_command,
            whole_content=whole_content,
            old_links=self.links,
            line_spans=line_spans,
        )


def _changed_since_read(path: str, digest: str | None) -> PatchFailure:
    """STALE_FILE for a file rewritten between the caller's read and its staged edit: the
    edit was made on a text the file no longer holds, so it is not put on the new one."""
    return PatchFailure(
        code=FailureCode.STALE_FILE,
        message=f"{path} changed on disk since it was read for this edit",
        file=path,
        hint="read the file again and redo the edit",
        current_sha256=digest,
    )


def _current_digest(target: Path, path: str, mode: int) -> str | None:
    """The sha256 of the text now at `target`, as a stale-file failure names it."""
    try:
        current, _ = read_regular(target)
    except OSError:
        return None
    decoded = decode_file(path, current, mode)
    return None if isinstance(decoded, PatchFailure) else decoded.sha256


def _atomic_alone(changes: tuple[FileChange, ...], workspace: Workspace) -> bool:
    """A lone update, or a lone create/delete in an existing directory: one atomic step."""
    if len(changes) != 1:
        return False
    change = changes[0]
    if change.action is Action.UPDATE:
        return change.old_path == change.path
    if change.action in (Action.CREATE, Action.DELETE):
        return workspace.disk_path(change.path).parent.is_dir()
    return False


def _replaced_from(
    journal_root: Path, target: Path, data: Content, mode: int, meta: FileMeta
) -> bool:
    """Replace the existing file `target` through a temp file made in `journal_root` (one
    file made, no note needed); False, with nothing left behind, when the two are on
    different filesystems."""
    from patchsmith.runtime.journal import journal_temp_name, new_journal_id

    try:
        write_atomically(
            target,
            data,
            mode,
            temp_name=journal_temp_name(new_journal_id(), 0),
            meta=meta,
            temp_dir=journal_root,
        )
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            return False
        raise
    return True


def _parents(relative: str) -> list[str]:
    parts = relative.split("/")[:-1]
    return ["/".join(parts[: index + 1]) for index in range(len(parts))]


class Transaction:
    """Changes to one workspace, staged in memory and committed atomically.

    Each staging method returns `None` or the `PatchFailure` that refused it (the
    disk is never touched while staging). `changes` and `diff()` stay readable after
    `commit()` or `close()`; staging or committing again raises `RuntimeError`.
    """

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._staged: dict[str, FileChange] = {}
        self._claimed: dict[str, str] = {}
        # every folder above a claimed path: an overlap check in O(depth), not O(staged)
        self._claimed_folders: dict[str, str] = {}
        self._state = _State.OPEN

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._state is _State.OPEN:
            self.close()

    @property
    def changes(self) -> tuple[FileChange, ...]:
        """The staged changes, sorted by path."""
        return tuple(self._staged[path] for path in sorted(self._staged))

    def staged(self, path: str) -> FileChange | None:
        """The change staged for the canonical path `path`, if any."""
        return self._staged.get(path)

    def diff(self) -> str:
        """The staged changes as a git-format diff (see `render_git_diff`)."""
        return render_git_diff(self.changes)

    def close(self) -> None:
        """Discard anything staged; the transaction can no longer be used."""
        self._ensure_open()
        self._state = _State.CLOSED

    # staging

    def update(
        self,
        path: str,
        new_text: str,
        *,
        reason: str = "",
        executable: bool | None = None,
        whole_content: bool = False,
        line_spans: tuple[LineSpan, ...] | None = None,
        read: TextFile | None = None,
        read_links: int | None = None,
    ) -> PatchFailure | None:
        """Stage replacing the text of existing file `path`; encoding, BOM and mode are kept.

        `executable` (a git `new mode` line) sets or clears the execute bits; `None` keeps them.
        `line_spans` are the lines the edit changed, when the engine knows them. `read` is
        the file as the caller read it for this edit: when it is this very path, and size
        and mode still agree, it is taken instead of reading and decoding the file again
        (the commit checks the bytes on disk are still these before it writes). Its `raw`
        may be empty: then the bytes are read and must hash to its `sha256`. `read_links`
        is the link count from the same `fstat` as `read.raw`: with both, `read` was just
        read from this very file and is taken as it is, without looking again.
        """
        self._ensure_open()
        target = self._target(path, follow_final=True)
        if isinstance(target, PatchFailure):
            return target
        failure = self._check_unclaimed(target)
        if failure is not None:
            return failure
        known = self._known(target, read, read_links)
        if isinstance(known, PatchFailure):
            return known
        if known is None:
            raw = self._workspace.read_raw(target, canonical=True)
            if isinstance(raw, PatchFailure):
                return raw
            if read is not None and read.path == target:
                digest = hashlib.sha256(raw.raw).hexdigest()
                if digest != read.sha256:
                    return _changed_since_read(target, digest)
            decoded = decode_file(raw.path, raw.raw, raw.mode)
            if isinstance(decoded, PatchFailure):
                return decoded
            known = decoded, raw.links, decoded.raw
        current, links, old_content = known
        # A big file's new bytes are kept as its new text and encoded as they are written.
        new_bytes = (
            encoded_lazily(current, new_text)
            if len(new_text) >= LAZY_BYTES_MIN_CHARS
            else encode_text(current, new_text)
        )
        if isinstance(new_bytes, PatchFailure):
            return new_bytes
        before = _Current(old_content, current.mode, current.text, links)
        change = before.changed(
            Action.UPDATE,
            target,
            target,
            new_bytes,
            new_text,
            reason=reason,
            executable=executable,
            whole_content=whole_content,
            line_spans=line_spans,
        )
        self._stage(change, f"update of {target}")
        return None

    def _known(
        self, target: str, read: TextFile | None, read_links: int | None = None
    ) -> tuple[TextFile, int, Content] | PatchFailure | None:
        """`read`, the file's link count and its bytes, when `read` is the regular file at
        `target` with the same size and mode now, or was just read with `read_links`;
        STALE_FILE when the file no longer holds what `read` holds (the caller's edit was
        made on a text that is gone); else None (the file is read again, and must still
        hold `read`'s bytes if there is a `read`).

        A caller may have dropped `read.raw` to hold less memory while it edited the text:
        then a big file's bytes are kept as its text, when that encodes back to bytes
        with `read.sha256` (the commit compares them with the disk); else the bytes are
        read again and must have `read.sha256`.
        """
        if read is None or read.path != target:
            return None
        if read_links is not None and (read.raw or not read.text):
            return read, read_links, read.raw
        try:
            info = self._workspace.disk_path(target).stat()
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != read.mode:
            return None
        if not read.raw and info.st_size:
            if len(read.text) >= LAZY_BYTES_MIN_CHARS and read.utf8_errors is None:
                kept = encodes_back(read)
                if kept is not None and kept.size == info.st_size:
                    return read, info.st_nlink, kept
            raw = self._workspace.read_raw(target, canonical=True)
            if isinstance(raw, PatchFailure) or raw.mode != read.mode:
                return None
            digest = hashlib.sha256(raw.raw).hexdigest()
            if digest != read.sha256:
                return _changed_since_read(target, digest)
            return read._replace(raw=raw.raw), raw.links, raw.raw
        if info.st_size != len(read.raw):
            return _changed_since_read(target, None)
        return read, info.st_nlink, read.raw

    def create(
        self, path: str, text: str, mode: int | None = None, *, reason: str = ""
    ) -> PatchFailure | None:
        """Stage a new UTF-8 file; FILE_ALREADY_EXISTS if present.

        Its mode is `mode` (default 0o666) less the process umask, as any new file's.
        """
        self._ensure_open()
        if mode is not None and mode & ~0o777:
            raise ValueError(f"mode {mode:#o} is not a permission mask (0o000-0o777)")
        target = self._target(path, follow_final=False)
        if isinstance(target, PatchFailure):
            return target
        failure = self._check_unclaimed(target) or self._check_free(target)
        if failure is not None:
            return failure
        new_mode = (DEFAULT_FILE_MODE if mode is None else mode) & ~current_umask()
        blank = TextFile(
            path=target,
            text="",
            encoding=TextEncoding.UTF_8,
            bom=b"",
            mode=new_mode,
            sha256="",
            raw=b"",
        )
        new_bytes = encode_text(blank, text)
        if isinstance(new_bytes, PatchFailure):
            return new_bytes
        change = FileChange(
            path=target,
            action=Action.CREATE,
            old_path=None,
            old_bytes=None,
            new_bytes=new_bytes,
            new_text=text,
            new_mode=new_mode,
            reason=reason,
        )
        self._stage(change, f"creation of {target}")
        return None

    def delete(self, path: str, *, reason: str = "") -> PatchFailure | None:
        """Stage deleting existing file `path` (binary files included)."""
        self._ensure_open()
        target = self._existing_source(path)
        if isinstance(target, PatchFailure):
            return target
        source, current = target
        change = current.changed(Action.DELETE, source, source, None, None, reason=reason)
        self._stage(change, f"deletion of {source}")
        return None

    def stage_generated(
        self, path: str, new_bytes: bytes | None, mode: int | None = None, *, reason: str = ""
    ) -> PatchFailure | None:
        """Stage a command's output for `path`, byte for byte (`None` deletes the file).

        The change is marked `generated_by_command`, unless an earlier edit in this
        transaction already changed the file: then the command's bytes replace that
        edit's new content and the change stays a hand edit, judged as one by the guards.
        `mode` is the permission bits of a file the command created.
        """
        self._ensure_open()
        target = self._target(path, follow_final=False)
        if isinstance(target, PatchFailure):
            return target
        if new_bytes is not None and self._workspace.is_symlink(target):
            # A command that rewrote a linked file (a formatter renaming its output over
            # it) changed the file the link names: that file is updated, the link stays.
            linked = self._workspace.canonical(target, follow_final=True)
            if not self._workspace.lexists(linked):
                return PatchFailure(
                    code=FailureCode.NOT_SUPPORTED_YET,
                    message=f"{target} is a dangling symlink; a command cannot write through it",
                    file=target,
                    hint="point the link at an existing file, or remove it",
                )
            target = linked
        staged = self._staged.get(target)
        if staged is not None:
            if new_bytes is None or staged.action is Action.DELETE:
                return _conflict(
                    target,
                    f"{target} is already staged ({self._claimed[target]}); "
                    "the command cannot also create or delete it",
                )
            text = _decoded(target, new_bytes, staged.new_mode)
            self._staged[target] = replace(
                staged, new_bytes=new_bytes, new_text=text, line_spans=None
            )
            return None
        if new_bytes is None:
            failure = self.delete(target, reason=reason)
            if failure is None:
                self._staged[target] = replace(self._staged[target], generated_by_command=True)
            return failure
        if not self._workspace.lexists(target):
            failure = self._check_free(target)
            if failure is not None:
                return failure
            new_mode = (DEFAULT_FILE_MODE & ~current_umask()) if mode is None else mode
            change = FileChange(
                path=target,
                action=Action.CREATE,
                old_path=None,
                old_bytes=None,
                new_bytes=new_bytes,
                new_text=_decoded(target, new_bytes, new_mode),
                new_mode=new_mode,
                reason=reason,
                generated_by_command=True,
            )
            self._stage(change, f"creation of {target} by a command")
            return None
        raw = self._workspace.read_raw(target)
        if isinstance(raw, PatchFailure):
            return raw
        before = _Current(raw.raw, raw.mode, _decoded(target, raw.raw, raw.mode), raw.links)
        change = before.changed(
            Action.UPDATE,
            target,
            target,
            new_bytes,
            _decoded(target, new_bytes, raw.mode),
            reason=reason,
            generated_by_command=True,
        )
        self._stage(change, f"update of {target} by a command")
        return None

    def move(
        self,
        src: str,
        dst: str,
        new_text: str | None = None,
        *,
        reason: str = "",
        executable: bool | None = None,
    ) -> PatchFailure | None:
        """Stage renaming `src` to the free path `dst`, with `new_text` if given.

        The mode is kept, except that `executable` sets or clears the execute bits.
        """
        self._ensure_open()
        found = self._existing_source(src)
        if isinstance(found, PatchFailure):
            return found
        source, current = found
        target = self._target(dst, follow_final=False)
        if isinstance(target, PatchFailure):
            return target
        failure = self._check_unclaimed(target) or self._check_free(target)
        if failure is not None:
            return failure
        raw = current.raw
        assert isinstance(raw, bytes)  # a source read whole by `_existing_source`
        if new_text is None:
            new_bytes: bytes | PatchFailure = raw
            text = current.text
        else:
            decoded = decode_file(source, raw, current.mode)
            if isinstance(decoded, PatchFailure):
                return decoded
            new_bytes, text = encode_text(decoded, new_text), new_text
        if isinstance(new_bytes, PatchFailure):
            return new_bytes
        change = current.changed(
            Action.MOVE, source, target, new_bytes, text, reason=reason, executable=executable
        )
        self._stage(change, f"move of {source} to {target}", also=source)
        return None

    # committing

    def commit(
        self, *, on_step: StepCallback | None = None, leave_no_state: bool = False
    ) -> PatchFailure | None:
        """Write every staged change or none; IO_ERROR (rolled back) if the disk fails midway.

        STALE_FILE or FILE_ALREADY_EXISTS when the disk changed since staging (nothing
        is written then). With `leave_no_state` (no audit record wanted), a `.patchsmith/`
        this commit had to make for its lock is removed again afterwards.
        """
        self._ensure_open()
        self._state = _State.COMMITTED
        step = on_step or _no_step
        workspace = self._workspace
        if workspace.blocking_failures:
            return workspace.blocking_failures[0]
        changes = self.changes
        # Looked at only when it matters: whether this commit makes `.patchsmith/`.
        made_state_dir = leave_no_state and not os.path.lexists(
            workspace.real_root / STATE_DIR_NAME
        )
        try:
            with workspace.lock():
                # Another process may have died mid-commit since this one staged: put
                # its files back first, so that the freshness check below sees them.
                blocking = workspace.recover_locked()
                if blocking:
                    return blocking[0]
                failure = self._commit_locked(changes, step)
                if leave_no_state and made_state_dir:
                    workspace.discard_state_dir()
                return failure
        except StateDirUnsafe as exc:
            return unsafe_failure(exc)
        except OSError as exc:
            return os_failure(exc, ".patchsmith/lock", "lock")

    def _commit_locked(
        self, changes: tuple[FileChange, ...], step: StepCallback
    ) -> PatchFailure | None:
        from patchsmith.runtime.journal import MANIFEST_NAME, close_journal, open_journal, roll_back

        step("check")
        fresh = self._check_fresh(changes)
        if isinstance(fresh, PatchFailure):
            return fresh
        if _atomic_alone(changes, self._workspace):
            return self._commit_single(changes[0], fresh, step)
        entries, created_dirs = self._plan(changes)
        step("journal")
        workspace = self._workspace
        try:
            journal_id, journal_dir = open_journal(
                workspace.ensure_journal_root(), entries, created_dirs
            )
        except StateDirUnsafe as exc:
            return unsafe_failure(exc)
        except OSError as exc:
            return os_failure(exc, "the commit journal", "write")
        numbers = {entry.path: number for number, entry in enumerate(entries)}
        try:
            self._apply(changes, journal_id, numbers, created_dirs, fresh, step)
            step("remove journal")
            (journal_dir / MANIFEST_NAME).unlink()
        except OSError as exc:
            return self._undo(journal_dir, exc)
        except BaseException:
            # Put the old files back, then let the caller see its own exception; if the
            # rollback fails too, the journal stays and the next open finishes it.
            with contextlib.suppress(OSError, ValueError):
                roll_back(workspace.real_root, journal_dir)
                close_journal(journal_dir)
            raise
        # The manifest is gone, so the commit stands; leftovers are cleaned on next open.
        with contextlib.suppress(OSError):
            close_journal(journal_dir, manifest_removed=True)
        step("done")
        return None

    def _commit_single(
        self, change: FileChange, fresh: dict[str, os.stat_result], step: StepCallback
    ) -> PatchFailure | None:
        """One file replaced in place: the rename is the commit, so no journal is needed.

        An existing file's new content is written to a temp file in the journal directory
        and renamed over it: a crash's leftover temp file is where the next recovery looks.
        A new file, or a target on another filesystem than the state directory, gets its
        temp file beside it and a note of where that is, for the same recovery.
        """
        from patchsmith.runtime.journal import journal_temp_name, open_pending

        target = self._workspace.disk_path(change.path)
        step(f"write {change.path}")
        try:
            new_content = change.new_content
            if new_content is None or change.new_mode is None:
                target.unlink()
            else:
                meta = None if change.old_path is None else meta_of(fresh[change.old_path], target)
                journal_root = self._workspace.ensure_journal_root()
                if meta is None or not _replaced_from(
                    journal_root, target, new_content, change.new_mode, meta
                ):
                    # A new file takes its folder's defaults (ACLs, labels) by being made
                    # there; a rename across filesystems is not possible.
                    pending_id, note = open_pending(journal_root, change.path)
                    write_atomically(
                        target,
                        new_content,
                        change.new_mode,
                        temp_name=journal_temp_name(pending_id, 0),
                        meta=meta,
                    )
                    note.unlink()
            step("sync directories")
            fsync_directory(target.parent)
        except StateDirUnsafe as exc:
            return unsafe_failure(exc)
        except OSError as exc:
            return os_failure(exc, change.path, "write")
        step("done")
        return None

    def _apply(
        self,
        changes: tuple[FileChange, ...],
        journal_id: str,
        numbers: dict[str, int],
        created_dirs: list[str],
        fresh: dict[str, os.stat_result],
        step: StepCallback,
    ) -> None:
        workspace = self._workspace
        touched: set[Path] = set()
        # Every new file is written to its temp first, the batch made durable at once,
        # and only then renamed into place: each rename still lands durable content,
        # with one flush for the batch instead of one fsync per file.
        writes = [c for c in changes if _writes_content(c)]
        pending = self._write_temps(writes, journal_id, numbers, fresh, step)
        step("sync files")
        sync_paths([temp for temp, _, _ in pending])
        if len(pending) < PARALLEL_WRITES_MIN:
            for temp, target, path in pending:
                step(f"replace {path}")
                os.replace(temp, target)
        else:  # the steps are named on this thread, all before the renames run on threads
            for _, _, path in pending:
                step(f"replace {path}")
            _run_all([functools.partial(os.replace, temp, target) for temp, target, _ in pending])
        touched.update(target.parent for _, target, _ in pending)
        for change in changes:
            if change.action in (Action.DELETE, Action.MOVE) and change.old_path is not None:
                step(f"delete {change.old_path}")
                target = workspace.disk_path(change.old_path)
                target.unlink()
                touched.add(target.parent)
        step("sync directories")
        # A new directory's entry lives in its parent, which must be synced too.
        touched.update(workspace.disk_path(created).parent for created in created_dirs)
        sync_paths(sorted(touched))

    def _write_temps(
        self,
        writes: list[FileChange],
        journal_id: str,
        numbers: dict[str, int],
        fresh: dict[str, os.stat_result],
        step: StepCallback,
    ) -> list[tuple[Path, Path, str]]:
        """Write each change's temp file, on threads for a large batch; (temp, target, path).

        `fresh` holds what `_check_fresh` found of each source file (its owner and group
        pass to the new file), read under the same lock.
        """
        from patchsmith.runtime.journal import journal_temp_name

        workspace = self._workspace

        def start(change: FileChange) -> tuple[Path, Callable[[], Path]]:
            new_content = change.new_content
            assert new_content is not None and change.new_mode is not None
            step(f"write {change.path}")
            target = workspace.disk_path(change.path)
            meta = None
            if change.old_path is not None:
                meta = meta_of(fresh[change.old_path], workspace.disk_path(change.old_path))
            if change.old_path != change.path:  # an updated file's folder exists
                target.parent.mkdir(parents=True, exist_ok=True)
            write = functools.partial(
                write_temp,
                target,
                new_content,
                change.new_mode,
                temp_name=journal_temp_name(journal_id, numbers[change.path]),
                meta=meta,
            )
            return target, write

        if len(writes) < PARALLEL_WRITES_MIN:
            written: list[tuple[Path, Path, str]] = []
            for change in writes:
                target, write = start(change)
                written.append((write(), target, change.path))
            return written
        jobs = [start(change) for change in writes]
        temps = _run_all([write for _, write in jobs])
        targets = [target for target, _ in jobs]
        return [
            (temp, target, c.path) for temp, target, c in zip(temps, targets, writes, strict=True)
        ]

    def _undo(self, journal_dir: Path, exc: OSError) -> PatchFailure:
        from patchsmith.runtime.journal import close_journal, roll_back

        workspace = self._workspace
        reason = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        try:
            roll_back(workspace.real_root, journal_dir)
            close_journal(journal_dir)
        except (OSError, ValueError) as rollback_exc:
            detail = getattr(rollback_exc, "strerror", None) or rollback_exc
            return PatchFailure(
                code=FailureCode.IO_ERROR,
                message=f"commit failed: {reason}{where}; rollback failed too ({detail})",
                hint="reopen the workspace to finish the rollback from the journal",
            )
        return PatchFailure(
            code=FailureCode.IO_ERROR,
            message=f"commit failed and was rolled back: {reason}{where}",
            hint="nothing was changed; fix the cause and retry",
        )

    def _plan(self, changes: tuple[FileChange, ...]) -> tuple[list[JournalEntry], list[str]]:
        from patchsmith.runtime.journal import JournalEntry

        entries: list[JournalEntry] = []
        created_dirs: list[str] = []
        for change in changes:
            same_path = change.old_path == change.path
            if change.old_path is not None:
                entries.append(
                    JournalEntry(
                        change.old_path,
                        change.old_content,
                        change.old_mode,
                        change.new_content if same_path else None,
                        change.new_mode if same_path else None,
                    )
                )
            if not same_path:
                entries.append(
                    JournalEntry(change.path, None, None, change.new_content, change.new_mode)
                )
                for parent in _parents(change.path):
                    if parent not in created_dirs and not os.path.lexists(
                        self._workspace.disk_path(parent)
                    ):
                        created_dirs.append(parent)
        return entries, created_dirs

    def _check_fresh(
        self, changes: tuple[FileChange, ...]
    ) -> dict[str, os.stat_result] | PatchFailure:
        """Each source file's `stat` when every change still fits the disk, else why not."""
        workspace = self._workspace
        seen: dict[str, os.stat_result] = {}
        for change in changes:
            if change.old_path is not None:
                target = workspace.disk_path(change.old_path)
                try:
                    # never through a link: the staged path is the file's real one
                    same, info = holds_regular(target, change.old_content or b"")
                    mode = stat.S_IMODE(info.st_mode)
                except OSError as exc:
                    return PatchFailure(
                        code=FailureCode.STALE_FILE,
                        message=f"{change.old_path} changed since it was staged: "
                        f"{exc.strerror or exc}",
                        file=change.old_path,
                        hint="read the file again and redo the edit",
                    )
                if not same or change.old_content is None or mode != change.old_mode:
                    digest = _current_digest(target, change.old_path, mode)
                    return PatchFailure(
                        code=FailureCode.STALE_FILE,
                        message=f"{change.old_path} changed on disk since it was staged",
                        file=change.old_path,
                        hint="read the file again and redo the edit",
                        current_sha256=digest,
                    )
                seen[change.old_path] = info
            if change.old_path != change.path and os.path.lexists(workspace.disk_path(change.path)):
                return PatchFailure(
                    code=FailureCode.FILE_ALREADY_EXISTS,
                    message=f"{change.path} appeared on disk since it was staged",
                    file=change.path,
                    hint="read it and edit it instead of creating it",
                )
        return seen

    # helpers

    def _ensure_open(self) -> None:
        if self._state is not _State.OPEN:
            raise RuntimeError(f"this transaction is {self._state.value}; start a new one")

    def _target(self, path: str, *, follow_final: bool) -> str | PatchFailure:
        return self._workspace.locate(path, follow_final=follow_final)

    def _existing_source(self, path: str) -> tuple[str, _Current] | PatchFailure:
        source = self._target(path, follow_final=False)
        if isinstance(source, PatchFailure):
            return source
        failure = self._check_unclaimed(source)
        if failure is not None:
            return failure
        if self._workspace.is_symlink(source):
            return PatchFailure(
                code=FailureCode.NOT_SUPPORTED_YET,
                message=f"{source} is a symlink; deleting or moving symlinks is not supported",
                file=source,
                hint="edit the file it points to instead",
            )
        raw = self._workspace.read_raw(source)
        if isinstance(raw, PatchFailure):
            return raw
        decoded = decode_file(source, raw.raw, raw.mode)
        text = None if isinstance(decoded, PatchFailure) else decoded.text
        return source, _Current(raw.raw, raw.mode, text, raw.links)

    def _check_unclaimed(self, path: str) -> PatchFailure | None:
        if path in self._claimed:
            return _conflict(path, f"{path} is already staged ({self._claimed[path]})")
        if path in self._claimed_folders:
            claimed = self._claimed_folders[path]
            what = self._claimed[claimed]
            return _conflict(path, f"{path} overlaps {claimed}, already staged ({what})")
        for folder in _parents(path):
            if folder in self._claimed:
                what = self._claimed[folder]
                return _conflict(path, f"{path} overlaps {folder}, already staged ({what})")
        return None

    def _claim(self, path: str, what: str) -> None:
        self._claimed[path] = what
        for folder in _parents(path):
            self._claimed_folders.setdefault(folder, path)

    def _check_free(self, path: str) -> PatchFailure | None:
        workspace = self._workspace
        for parent in _parents(path):
            disk = workspace.disk_path(parent)
            if os.path.lexists(disk) and not disk.is_dir():
                return PatchFailure(
                    code=FailureCode.FILE_ALREADY_EXISTS,
                    message=f"cannot create {path}: {parent} is a file, not a directory",
                    file=path,
                )
        if workspace.lexists(path):
            kind = "a directory" if workspace.disk_path(path).is_dir() else "a file"
            return PatchFailure(
                code=FailureCode.FILE_ALREADY_EXISTS,
                message=f"{path} already exists ({kind})",
                file=path,
                hint="edit the existing file instead of creating it",
            )
        return None

    def _stage(self, change: FileChange, what: str, also: str | None = None) -> None:
        self._staged[change.path] = change
        self._claim(change.path, what)
        if also is not None:
            self._claim(also, what)


_R = TypeVar("_R")

PARALLEL_WRITES_MIN = 16
"""A commit writing this many files or more writes and renames them on several threads:
creating or replacing a file is mostly the kernel's work, and on some file systems it is
the costliest step."""
_WRITER_THREADS = 4


def _run_all(calls: list[Callable[[], _R]]) -> list[_R]:
    """Each call's result, in order; on threads for `PARALLEL_WRITES_MIN` calls or more.

    Each thread takes every n-th call: a task per call cost about as much as the call,
    and passing the GIL back and forth for each slowed both sides. Every call has
    ended when this returns or raises, so that a failure never races a rollback.
    """
    threads = min(_WRITER_THREADS, os.cpu_count() or 1)
    if len(calls) < PARALLEL_WRITES_MIN or threads < 2:
        return [call() for call in calls]
    from concurrent.futures import ThreadPoolExecutor  # only large commits

    def run_share(first: int) -> list[_R]:
        return [call() for call in calls[first::threads]]

    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(run_share, first) for first in range(threads)]
        try:
            shares = [future.result() for future in futures]
        except BaseException:
            _wait_for_all(futures)
            raise
    return [shares[index % threads][index // threads] for index in range(len(calls))]


def _wait_for_all(futures: list[Future[_R]]) -> None:
    """Wait until every future has ended, even through a second Ctrl-C: a rename landing
    after the rollback that follows would leave half a commit on disk."""
    from concurrent.futures import wait

    while True:
        try:
            wait(futures)
            return
        except BaseException:  # the shares are file operations: they end soon
            continue


def _writes_content(change: FileChange) -> bool:
    """Whether committing `change` writes a file (not a deletion, not an unchanged file)."""
    if change.new_content is None or change.new_mode is None:
        return False
    unchanged = change.old_mode == change.new_mode and same_content(
        change.old_content, change.new_content
    )
    return not (unchanged and change.old_path == change.path)
