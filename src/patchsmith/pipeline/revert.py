"""`revert`: undo one applied attempt, when its files are still exactly as it left them.

The store keeps each attempt's diff and the sha256 of every file before and after it.
A revert plays the diff backwards at exactly its lines, checks the result against
the recorded "before" hashes, and writes it through the same transaction, guards and
audit record as any change (a `revert` attempt in the reverted attempt's run). A file
changed since is never overwritten: the revert is refused with the diff of what changed.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.model.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.pipeline.recorded import RecordedSection, split_lines
from patchsmith.pipeline.rewind import (
    FileState,
    Snapshot,
    as_before,
    read_snapshot,
    recorded_sections,
    sha256_of,
    touched,
    undo,
)
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitdiff import render_git_diff
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.textfile import decode_file
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import DB_FILE_NAME, AttemptRecord, AttemptStatus, Store

if TYPE_CHECKING:
    from patchsmith.policy import Policy

__all__ = ["CONTENT_GUARDS", "REVERT_PREFIX", "find_attempt", "revert"]

REVERT_PREFIX = "revert:"
"""A revert's proposal id is this prefix and the reverted attempt's id."""

_EXCERPT_LINES = 60

CONTENT_GUARDS = (
    "binary_content",
    "secrets",
    "empty_write",
    "placeholders",
    "truncated_write",
    "whole_file_removal",
    "max_files",
    "max_changed_lines",
    "hunks_outside_expected",
    "syntax",
    "review",
    "dependencies",
    "licence_header",
)
"""Guards that judge new content. A revert writes back bytes the files already had, so
these are off for it; the guards on paths, ownership and permissions still hold."""


def revert(
    attempt_id: str,
    root: str | os.PathLike[str],
    *,
    check: bool = False,
    record: bool | None = None,
    policy: Policy | None = None,
) -> ApplyReport:
    """Undo the applied attempt `attempt_id` (an id or a unique prefix) in the workspace `root`.

    Every file the attempt touched must still hash to what it left; then each gets
    back the exact bytes (and execute bit) it had before, in one guarded, atomic
    transaction recorded as a `revert` attempt. Reverting again answers
    `already_applied` ("already reverted"). Refused, with nothing written, when a
    file changed since (STALE_FILE, its excerpt the diff of what changed), when the
    attempt wrote nothing (NO_CHANGE) or is unknown (RECORD_NOT_FOUND), or when the
    recorded diff cannot give back exact bytes (NOT_SUPPORTED_YET: a binary file).
    With `check`, nothing is written and the report carries the diff that would be.
    """
    from patchsmith.attempt._attempt import (
        Attempt,
        head_commit,
        not_ready,
        open_workspace,
        resolve_policy,
        review_and_commit,
        should_record,
    )
    from patchsmith.guards import GuardContext
    from patchsmith.store import AttemptKind

    workspace = open_workspace(root, check=check)
    if isinstance(workspace, ApplyReport):
        return workspace
    try:
        target = find_attempt(workspace, attempt_id)
    except PatchRefused as refusal:
        return ApplyReport(ApplyStatus.REFUSED, errors=refusal.failures, check=check)
    rules = _for_revert(resolve_policy(workspace.root, policy))
    attempt = Attempt(
        state_root=workspace.real_root,
        kind=AttemptKind.REVERT,
        record=should_record(record, rules),
        proposal_id=REVERT_PREFIX + target.id,
        run_id=target.run_id,
        input_text=target.id,
        base_commit=head_commit(workspace.real_root),
    )
    files = tuple(FileReport(f.path, f.action, 1, 1, f.old_path) for f in target.files)
    blocked = not_ready(workspace, rules)
    if blocked or isinstance(rules, PatchFailure):
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=blocked, check=check))
    if target.status not in (AttemptStatus.APPLIED, AttemptStatus.PARTIAL) or not target.files:
        failure = PatchFailure(
            FailureCode.NO_CHANGE,
            f"attempt {target.id} wrote nothing (status {target.status.value}); "
            "there is nothing to revert",
            hint="revert an attempt whose status is applied or partial (`patchsmith log`)",
        )
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=(failure,), check=check))
    now = read_snapshot(workspace, touched([target]))
    if as_before(now, target):
        note = f"already reverted: the files of attempt {target.id} are as they were before it"
        return attempt.finish(ApplyReport(ApplyStatus.ALREADY_APPLIED, check=check, notes=(note,)))
    before = undo(now, target)
    if isinstance(before, list):
        failures = tuple(_explained(f, workspace, target, now) for f in before)
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, files, failures, check=check))
    with Transaction(workspace) as transaction:
        failures = _stage(transaction, target, now, before)
        if failures:
            refused = ApplyReport(ApplyStatus.REFUSED, files, failures, check=check)
            return attempt.finish(refused, transaction.changes, transaction.diff())
        return review_and_commit(
            attempt,
            transaction,
            GuardContext(rules, root=workspace.root),
            ApplyReport(ApplyStatus.APPLIED, files, notes=(f"reverts attempt {target.id}",)),
            check=check,
        )


def _for_revert(rules: Policy | PatchFailure) -> Policy | PatchFailure:
    if isinstance(rules, PatchFailure):
        return rules
    off = dict.fromkeys(CONTENT_GUARDS, False)
    return replace(rules, guards=replace(rules.guards, **off))


def find_attempt(workspace: Workspace, attempt_id: str) -> AttemptRecord:
    """The attempt recorded in `workspace` under this id or unique prefix.

    Raises `PatchRefused` with RECORD_NOT_FOUND when there is no store or no such
    attempt, or the prefix names several (listed in the message).
    """
    database = workspace.real_root / STATE_DIR_NAME / DB_FILE_NAME
    if not database.is_file():
        raise _not_found(f"nothing is recorded under {workspace.root}")
    with Store.shared(database.parent) as store:
        ids = store.find_ids(attempt_id, limit=20)
        found = store.get(ids[0]) if len(ids) == 1 else None
    if found is not None:
        return found
    if ids:
        raise _not_found(f"id prefix {attempt_id!r} matches several attempts: {', '.join(ids)}")
    raise _not_found(f"no attempt with id {attempt_id!r}")


def _not_found(message: str) -> PatchRefused:
    return PatchRefused(
        [
            PatchFailure(
                FailureCode.RECORD_NOT_FOUND,
                message,
                hint="list the recorded attempts with `patchsmith log`",
            )
        ]
    )


def _stage(
    transaction: Transaction,
    target: AttemptRecord,
    now: Snapshot,
    before: Snapshot,
) -> tuple[PatchFailure, ...]:
    """Stage each file back to `before`; the staged bytes must be exactly those."""
    failures: list[PatchFailure] = []
    reason = f"revert of attempt {target.id}"
    for f in target.files:
        source = f.old_path if f.old_path is not None else f.path
        old = before.get(source)
        current = now.get(f.path)
        executable = None if old is None else old.executable
        if f.action is Action.CREATE:
            failure = transaction.delete(f.path, reason=reason)
        elif old is None:  # pragma: no cover - undo gives every non-created file its bytes
            continue
        elif f.action is Action.DELETE:
            failure = transaction.create(
                f.path, _text(old), 0o777 if old.executable else None, reason=reason
            )
        elif f.action is Action.MOVE:
            text = None if current is not None and current.data == old.data else _text(old)
            failure = transaction.move(f.path, source, text, reason=reason, executable=executable)
        else:
            failure = transaction.update(f.path, _text(old), reason=reason, executable=executable)
        if failure is not None:
            failures.append(failure)
    if failures:
        return tuple(failures)
    for change in transaction.changes:
        wanted = sha256_of(before.get(change.path))
        got = None if change.new_bytes is None else hashlib.sha256(change.new_bytes).hexdigest()
        if got != wanted:
            failures.append(
                PatchFailure(
                    FailureCode.NOT_SUPPORTED_YET,
                    f"restoring {change.path} would not give back its exact bytes "
                    f"(sha256 {wanted}): its encoding or byte order mark changed",
                    file=change.path,
                    hint="restore this file by hand (`patchsmith show` prints the recorded diff)",
                )
            )
    return tuple(failures)


def _text(state: FileState) -> str:
    decoded = decode_file("", state.data, 0o644)
    if isinstance(decoded, PatchFailure):  # pragma: no cover - undo refuses binary files
        return state.data.decode("utf-8", "surrogateescape")
    return decoded.text


def _explained(
    failure: PatchFailure, workspace: Workspace, target: AttemptRecord, now: Snapshot
) -> PatchFailure:
    """A STALE_FILE failure with the diff of what changed since the attempt, as its excerpt."""
    if failure.code is not FailureCode.STALE_FILE or failure.file is None:
        return failure
    path = failure.file
    left = _left_by(workspace, target, path)
    current = now.get(path)
    if left is not None:
        old_bytes = left.data if isinstance(left, FileState) else None
        new_bytes = None if current is None else current.data
        action = Action.UPDATE
        if old_bytes is None:
            action = Action.CREATE
        elif new_bytes is None:
            action = Action.DELETE
        change = FileChange(
            path=path,
            action=action,
            old_path=None if old_bytes is None else path,
            old_bytes=old_bytes,
            new_bytes=new_bytes,
        )
        excerpt = render_git_diff([change]) or "(only the file's mode changed)"
        how = "what changed since, as a diff from what the attempt left to what is there now"
    else:
        excerpt = _hunk_drift(target, path, current)
        how = "the attempt's changed regions as it left them and as they are now"
    return replace(
        failure,
        message=f"{failure.message}; nothing was reverted",
        hint=f"the excerpt shows {how}; undo those changes first, or edit the file by hand",
        excerpt=_bounded(excerpt),
    )


_ABSENT = object()


def _left_by(workspace: Workspace, target: AttemptRecord, path: str) -> FileState | object | None:
    """What `target` left at `path`, rebuilt by undoing the recorded attempts since.

    `_ABSENT` when it left no file there; `None` when the changes since were not all
    recorded (an edit by hand), so what it left cannot be known.
    """
    database = workspace.real_root / STATE_DIR_NAME / DB_FILE_NAME
    with Store.shared(database.parent) as store:
        later = [r for r in store.applied_since(target.created_at) if r.id != target.id]
    snapshot: Snapshot = read_snapshot(workspace, touched([target, *later]))
    for record in reversed(later):
        undone = undo(snapshot, record)
        if isinstance(undone, list):
            return None
        snapshot = undone
    wanted = next(f.after_sha256 for f in target.files if f.path == path)
    state = snapshot.get(path)
    if sha256_of(state) != wanted:
        return None
    return _ABSENT if state is None else state


def _hunk_drift(target: AttemptRecord, path: str, current: FileState | None) -> str:
    if current is None:
        return f"{path} has been deleted since"
    sections = recorded_sections(target)
    index = next(i for i, f in enumerate(target.files) if f.path == path)
    section = (sections or {}).get(index, RecordedSection())
    lines = split_lines(current.data)
    out: list[str] = []
    for hunk in section.hunks:
        now = lines[hunk.new_start : hunk.new_start + len(hunk.new_lines)]
        if tuple(now) == hunk.new_lines:
            continue
        out.extend(
            difflib.unified_diff(
                _decoded(hunk.new_lines),
                _decoded(now),
                fromfile=f"a/{path} (as the attempt left it)",
                tofile=f"b/{path} (now)",
                lineterm="",
                n=0,
            )
        )
    if not out:
        return f"{path} changed outside the attempt's regions (sha256 {sha256_of(current)})"
    return "\n".join(out) + "\n"


def _decoded(lines: Sequence[bytes]) -> list[str]:
    return [line.decode("utf-8", "replace").rstrip("\r\n") for line in lines]


def _bounded(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= _EXCERPT_LINES:
        return text
    kept = "\n".join(lines[:_EXCERPT_LINES])
    return f"{kept}\n... ({len(lines) - _EXCERPT_LINES} more lines)\n"
