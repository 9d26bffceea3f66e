"""Undo recorded attempts in memory: from the files as they are to the files as they were.

A `Snapshot` maps workspace paths to their bytes and execute bit (`None`: absent).
`undo` takes one applied attempt off a snapshot: every file it touched must hash to
what the attempt left (else the snapshot has drifted from it), and its recorded diff,
played backwards at exactly its lines, must give bytes that hash to what the attempt
found. Anything else is a failure naming the file; nothing is ever guessed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.pipeline.recorded import RecordedSection, apply_exact, parse_sections
from patchsmith.runtime.textfile import decode_file, encode_text
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import AttemptRecord, FileRecord

__all__ = [
    "FileState",
    "Snapshot",
    "as_before",
    "drifted",
    "read_snapshot",
    "recorded_sections",
    "sha256_of",
    "touched",
    "undo",
]


@dataclass(frozen=True)
class FileState:
    """One file's bytes and whether it is executable."""

    data: bytes
    executable: bool = False


Snapshot = Mapping[str, FileState | None]
"""Workspace paths to their state; `None` (or no entry) means the file is absent."""


def sha256_of(state: FileState | None) -> str | None:
    """The hex sha256 of the file's bytes; `None` for an absent file."""
    return None if state is None else hashlib.sha256(state.data).hexdigest()


def touched(records: Iterable[AttemptRecord]) -> list[str]:
    """Every path the records wrote, created, deleted or moved from, in first-seen order."""
    paths: dict[str, None] = {}
    for record in records:
        for f in record.files:
            if f.old_path is not None:
                paths.setdefault(f.old_path)
            paths.setdefault(f.path)
    return list(paths)


def read_snapshot(workspace: Workspace, paths: Iterable[str]) -> dict[str, FileState | None]:
    """The current state of `paths` in `workspace`.

    A path that cannot be read as a regular file inside the root (absent, a
    directory, outside it) is `None`.
    """
    out: dict[str, FileState | None] = {}
    for path in paths:
        raw = workspace.read_raw(path)
        out[path] = (
            None if isinstance(raw, PatchFailure) else FileState(raw.raw, bool(raw.mode & 0o100))
        )
    return out


def drifted(snapshot: Snapshot, record: AttemptRecord) -> list[FileRecord]:
    """The files of `record` that are no longer as it left them in `snapshot` (bytes or mode)."""
    sections = recorded_sections(record) or {}
    out = []
    for index, f in enumerate(record.files):
        state = snapshot.get(f.path)
        gone = f.old_path is None or f.old_path == f.path or snapshot.get(f.old_path) is None
        executable = sections.get(index, RecordedSection()).new_executable()
        mode_held = executable is None or state is None or state.executable == executable
        if sha256_of(state) != f.after_sha256 or not gone or not mode_held:
            out.append(f)
    return out


def as_before(snapshot: Snapshot, record: AttemptRecord) -> bool:
    """True when every file of `record` is in `snapshot` as it was before the attempt."""
    sections = recorded_sections(record) or {}
    for index, f in enumerate(record.files):
        source = f.old_path if f.old_path is not None else f.path
        state = snapshot.get(source)
        if sha256_of(state) != f.before_sha256:
            return False
        if f.old_path is not None and f.old_path != f.path and snapshot.get(f.path) is not None:
            return False
        executable = sections.get(index, RecordedSection()).old_executable()
        if executable is not None and state is not None and state.executable != executable:
            return False
    return True


def recorded_sections(record: AttemptRecord) -> dict[int, RecordedSection] | None:
    """The sections of `record`'s applied diff by file index (`None`: it does not parse)."""
    names = [(f.old_path or f.path, f.path) for f in record.files]
    return parse_sections(record.applied_diff.encode("utf-8", "surrogateescape"), names)


def undo(
    snapshot: Snapshot, record: AttemptRecord
) -> dict[str, FileState | None] | list[PatchFailure]:
    """`snapshot` as it was before `record` was applied, or why that cannot be known.

    Fails with STALE_FILE for each file not as the attempt left it, and with
    NOT_SUPPORTED_YET when the recorded diff cannot give back the exact bytes (a
    binary file, or a diff the store could not keep byte for byte).
    """
    stale = drifted(snapshot, record)
    if stale:
        return [
            PatchFailure(
                code=FailureCode.STALE_FILE,
                message=f"{f.path} is not as attempt {record.id} left it "
                f"(sha256 now {sha256_of(snapshot.get(f.path)) or 'absent'}, "
                f"the attempt left {f.after_sha256 or 'absent'})",
                file=f.path,
                current_sha256=sha256_of(snapshot.get(f.path)),
            )
            for f in stale
        ]
    sections = recorded_sections(record)
    if sections is None:
        return [_unreadable(record, None, "its recorded diff does not parse")]
    out = dict(snapshot)
    failures: list[PatchFailure] = []
    for index, f in enumerate(record.files):
        section = sections.get(index, RecordedSection())
        before = _before(snapshot.get(f.path), f, section)
        if isinstance(before, PatchFailure):
            failures.append(_unreadable(record, f.path, before.message))
            continue
        if f.action is Action.MOVE and f.old_path is not None:
            out[f.path] = None
            out[f.old_path] = before
        else:
            out[f.path] = before
    return failures or out


def _before(
    after: FileState | None, f: FileRecord, section: RecordedSection
) -> FileState | PatchFailure | None:
    if f.action is Action.CREATE:
        return None
    if section.binary:
        return PatchFailure(FailureCode.NOT_SUPPORTED_YET, f"{f.path} is binary")
    executable = section.old_executable()
    if executable is None:
        executable = after.executable if after is not None else False
    data = after.data if after is not None else b""
    restored = apply_exact(data, section.hunks, reverse=True)
    if restored is not None and hashlib.sha256(restored).hexdigest() == f.before_sha256:
        return FileState(restored, executable)
    restored = _through_text(after, f, section)
    if restored is not None and hashlib.sha256(restored).hexdigest() == f.before_sha256:
        return FileState(restored, executable)
    return PatchFailure(
        FailureCode.NOT_SUPPORTED_YET,
        f"undoing the recorded diff of {f.path} does not give back the bytes it had "
        f"(sha256 {f.before_sha256})",
    )


def _through_text(after: FileState | None, f: FileRecord, section: RecordedSection) -> bytes | None:
    """The before bytes of a file whose diff was recorded as text (Latin-1, UTF-16...)."""
    if after is None:
        return None
    decoded = decode_file(f.path, after.data, 0o644)
    if isinstance(decoded, PatchFailure):
        return None
    as_utf8 = decoded.text.encode("utf-8", "surrogateescape")
    restored = apply_exact(as_utf8, section.hunks, reverse=True)
    if restored is None:
        return None
    encoded = encode_text(decoded, restored.decode("utf-8", "surrogateescape"))
    return None if isinstance(encoded, PatchFailure) else encoded


def _unreadable(record: AttemptRecord, path: str | None, why: str) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.NOT_SUPPORTED_YET,
        message=f"attempt {record.id} cannot be undone exactly: {why}",
        file=path,
        hint="the store keeps diffs, not file contents; restore this file by hand "
        "(`patchsmith show` prints the recorded diff)",
    )
