"""Hash-checked single-file access: `read_file` and its pair, `write_file`.

A model reads a file (content, sha256, numbered lines), then writes it back with
the hash it read; the write is refused with STALE_FILE, naming both hashes, when
the file changed in between, and goes through the same guards, commit and audit
record as any other change.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.model.origin import CallOrigin
from patchsmith.model.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["FileView", "StagedWrite", "read_file", "stage_write", "write_file"]


@dataclass(frozen=True)
class FileView:
    """A text file as a model should see it before editing it."""

    path: str
    """The path relative to the workspace root, as given to `write_file`."""
    content: str
    sha256: str
    """Hex sha256 of the file's bytes: the `expected_sha256` of the write that follows."""
    encoding: str

    @property
    def numbered(self) -> str:
        """The content as `  12 | text` lines (the excerpt format of failures)."""
        lines = self.content.splitlines()
        width = len(str(len(lines)))
        return "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, 1))

    def to_json(self) -> dict[str, object]:
        """The JSON object used by the CLI and MCP tools."""
        return {
            "path": self.path,
            "content": self.content,
            "sha256": self.sha256,
            "encoding": self.encoding,
            "numbered": self.numbered,
        }


def read_file(root: str | os.PathLike[str], path: str) -> FileView:
    """The text file at `path` under `root` with its sha256.

    Raises `PatchRefused` (FILE_NOT_FOUND, PATH_OUTSIDE_WORKSPACE, SYMLINK_ESCAPE,
    BINARY_FILE, IO_ERROR...) when it cannot be read as text.
    """
    try:
        workspace = Workspace(root)
    except ValueError as exc:
        raise PatchRefused([PatchFailure(FailureCode.FILE_NOT_FOUND, str(exc))]) from None
    read = workspace.read(path)
    if isinstance(read, PatchFailure):
        raise PatchRefused([read])
    return FileView(read.path, read.text, read.sha256, read.encoding.value)


@dataclass(frozen=True)
class StagedWrite:
    """A direct write staged (or refused): its file report, and the hash it expected."""

    file: FileReport
    failure: PatchFailure | None = None
    expected: tuple[str, str] | None = None
    """(canonical path, expected sha256) when the write replaces an existing file."""


def stage_write(
    workspace: Workspace,
    transaction: Transaction,
    path: str,
    content: str | None,
    expected_sha256: str | None,
    *,
    reason: str = "",
    allow_create: bool = False,
    allow_delete: bool = False,
) -> StagedWrite:
    """Stage writing `content` to `path` (deleting it when `content` is None and allowed).

    The file must hash to `expected_sha256` (STALE_FILE, with both hashes, when it
    does not); `None` means it must not exist, and then `allow_create` must be set.
    """
    from patchsmith.attempt._attempt import normalise_sha256

    relative = workspace.resolve(path)
    action = Action.DELETE if content is None else Action.UPDATE
    if isinstance(relative, PatchFailure):
        return _refused(path, action, relative)
    exists = workspace.exists(relative)
    if content is None and not allow_delete:
        raise ValueError("content None deletes the file: pass allow_delete=True")
    if not exists:
        return _stage_missing(
            workspace, transaction, relative, content, expected_sha256, reason, allow_create
        )
    current = workspace.read_raw(relative)
    if isinstance(current, PatchFailure):
        return _refused(relative, action, current)
    actual = hashlib.sha256(current.raw).hexdigest()
    if expected_sha256 is None and content is not None:
        failure = PatchFailure(
            FailureCode.FILE_ALREADY_EXISTS,
            f"{relative} exists (sha256 {actual}) but the write expected no file",
            file=relative,
            hint="read it first (read_file) and pass its sha256 as expected_sha256",
            current_sha256=actual,
        )
        return _refused(relative, action, failure)
    expected = normalise_sha256(expected_sha256) if expected_sha256 is not None else actual
    if expected != actual:
        return _refused(relative, action, _stale(relative, expected, actual))
    canonical = workspace.canonical(relative, follow_final=True)
    if content is not None and _same_text(workspace, relative, content):
        return StagedWrite(FileReport(relative, action, 1, 1), expected=(canonical, expected))
    staged = (
        transaction.delete(relative, reason=reason)
        if content is None
        else transaction.update(relative, content, reason=reason, whole_content=True)
    )
    if staged is not None:
        return _refused(relative, action, staged)
    # Staging re-read the file: it must still be the version whose hash was checked.
    change = next(c for c in transaction.changes if c.old_path == canonical)
    again = hashlib.sha256(change.old_bytes or b"").hexdigest()
    if again != expected:
        return _refused(relative, action, _stale(relative, expected, again))
    return StagedWrite(FileReport(relative, action, 1, 1), expected=(canonical, expected))


def _stage_missing(
    workspace: Workspace,
    transaction: Transaction,
    relative: str,
    content: str | None,
    expected_sha256: str | None,
    reason: str,
    allow_create: bool,
) -> StagedWrite:
    if content is None:
        # nothing to delete: the reader says why (absent, a directory...)
        read = workspace.read_raw(relative)
        failure = (
            read
            if isinstance(read, PatchFailure)
            else PatchFailure(
                FailureCode.FILE_NOT_FOUND, f"{relative} is not a file", file=relative
            )
        )
        return _refused(relative, Action.DELETE, failure)
    action = Action.CREATE
    if expected_sha256 is not None:
        failure = PatchFailure(
            FailureCode.STALE_FILE,
            f"{relative} changed since it was read: expected sha256 "
            f"{expected_sha256}, but the file does not exist",
            file=relative,
            hint="read the directory again; to create the file, send expected_sha256 null "
            "(None) and allow_create true",
        )
        return _refused(relative, action, failure)
    if not allow_create:
        failure = PatchFailure(
            FailureCode.FILE_NOT_FOUND,
            f"{relative} does not exist",
            file=relative,
            hint="set allow_create to true to create it",
        )
        return _refused(relative, action, failure)
    staged = transaction.create(relative, content, reason=reason)
    if staged is not None:
        return _refused(relative, action, staged)
    return StagedWrite(FileReport(relative, action, 1, 1))


def _same_text(workspace: Workspace, relative: str, content: str) -> bool:
    current = workspace.read(relative)
    return not isinstance(current, PatchFailure) and current.text == content


def _stale(path: str, expected: str, actual: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.STALE_FILE,
        f"{path} changed since it was read: expected sha256 {expected}, actual {actual}",
        file=path,
        hint="read the file again (read_file) and redo the write against its new content",
        current_sha256=actual,
    )


def _refused(path: str, action: Action, failure: PatchFailure) -> StagedWrite:
    return StagedWrite(FileReport(path, action, 0, 1), failure)


def write_file(
    root: str | os.PathLike[str],
    path: str,
    content: str,
    expected_sha256: str | None,
    reason: str,
    allow_create: bool = False,
    *,
    check: bool = False,
    record: bool | None = None,
    policy: Policy | None = None,
    full_rewrite: bool = False,
    allow_policy_edit: bool = False,
) -> ApplyReport:
    """Replace the file at `path` with `content` if it still hashes to `expected_sha256`.

    `expected_sha256` is the `sha256` from `read_file` (`None` with `allow_create`
    for a new file). Refused, with nothing written, on STALE_FILE (expected and
    actual hash in the message) or any guard of the policy; recorded as a `write`
    attempt. Writing the workspace's policy is refused (PROTECTED_PATH) unless
    `allow_policy_edit`. The omission guards refuse content with placeholder lines,
    and content that drops the file's ending or most of a large file unless
    `full_rewrite` says the file is being rewritten. Never raises for bad input.
    """
    from patchsmith.attempt._attempt import (
        open_attempt,
        outside_policy_file,
        review_and_commit,
    )
    from patchsmith.guards import GuardContext
    from patchsmith.store import AttemptKind

    opened = open_attempt(
        root,
        check=check,
        policy=policy,
        allow_policy_edit=allow_policy_edit,
        record=record,
        kind=AttemptKind.WRITE,
        proposal_id=f"write:{path}",
        input_text=reason,
        origin=CallOrigin.tool_call("write_file"),
    )
    if isinstance(opened, ApplyReport):
        return opened
    workspace, rules, unreadable, attempt = opened
    with Transaction(workspace) as transaction:
        staged = stage_write(
            workspace,
            transaction,
            path,
            content,
            expected_sha256,
            reason=reason,
            allow_create=allow_create,
        )
        if unreadable is not None and outside_policy_file(unreadable, [staged.file.path]):
            # As in `apply`: only a write of the unreadable policy file itself goes on.
            refused = ApplyReport(ApplyStatus.REFUSED, errors=(unreadable,), check=check)
            return attempt.finish(refused)
        if staged.failure is not None:
            refused = ApplyReport(
                ApplyStatus.REFUSED, (staged.file,), (staged.failure,), check=check
            )
            return attempt.finish(refused)
        if not transaction.changes:
            failure = PatchFailure(
                FailureCode.NO_CHANGE,
                f"{staged.file.path} already has exactly this content",
                file=staged.file.path,
                hint="nothing to write",
            )
            return attempt.finish(
                ApplyReport(ApplyStatus.REFUSED, (staged.file,), (failure,), check=check)
            )
        return review_and_commit(
            attempt,
            transaction,
            GuardContext(rules, root=workspace.root, full_rewrite=full_rewrite),
            ApplyReport(ApplyStatus.APPLIED, (staged.file,)),
            check=check,
            expected_sha256=dict([staged.expected]) if staged.expected else None,
        )
