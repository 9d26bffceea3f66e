"""Content guards: no accidental emptying of a file, no oversized file."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import Content, EncodedText, content_size

__all__ = ["EmptyWriteGuard", "FileSizeGuard"]


class EmptyWriteGuard(Guard):
    """Refuse a write that empties a file without an explicit delete.

    What: an update or move whose new content is empty or only whitespace,
    while the old content was not, is refused. Deleting the file (an explicit
    DELETE) and creating an empty file (`__init__.py`, `.gitkeep`) pass.
    Why: a model that loses the file body in transit emits an empty whole-file
    edit; taking it literally destroys the file.
    Example: a whole-file edit of `app.py` with content `""` is EMPTY_WRITE;
    `{"type": "direct_write", "content": null, "allow_delete": true}` is a delete.
    """

    NAME = "empty_write"
    CODE = FailureCode.EMPTY_WRITE
    MESSAGE = "write would empty the file"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per update or move that blanks a non-blank file."""
        return [
            self.failure(
                change.path,
                f"{change.path} would become empty",
                hint="to remove the file, delete it explicitly (allow_delete)",
            )
            for change in changes
            if change.action in (Action.UPDATE, Action.MOVE)
            and change.new_content is not None
            and _blank(change.new_content)
            and change.old_content is not None
            and not _blank(change.old_content)
        ]


class FileSizeGuard(Guard):
    """Refuse new content larger than the policy's `max_file_bytes`.

    What: the size of each file's new bytes is compared with `max_file_bytes`
    (default 5 MiB).
    Why: hand-written source is small; a huge write is a runaway generation or
    an artefact that belongs outside the tree.
    Example: with `max_file_bytes = 1000`, writing 1001 bytes is FILE_TOO_LARGE.
    """

    NAME = "file_size"
    CODE = FailureCode.FILE_TOO_LARGE
    MESSAGE = "file is larger than the policy allows"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per change whose new bytes exceed the limit."""
        limit = ctx.policy.max_file_bytes
        return [
            self.failure(
                change.path,
                f"{change.path} would be {_size(change)} bytes (limit {limit})",
            )
            for change in changes
            if _size(change) > limit
        ]


def _size(change: FileChange) -> int:
    """The size of the new bytes (0 when there are none), without encoding them whole."""
    return 0 if change.new_content is None else content_size(change.new_content)


def _blank(data: Content) -> bool:
    """Whether `data` is empty or only ASCII whitespace (`not data.strip()`, without a copy)."""
    if isinstance(data, EncodedText):
        # a chunk at a time (none is empty): the first one that is not blank ends it
        return all(chunk.isspace() for chunk in data)
    return not data or data.isspace()
