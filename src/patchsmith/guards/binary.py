"""Binary guard: a change writes text, never binary content."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import content_head
from patchsmith.runtime.diffstat import BINARY_PROBE, is_binary

__all__ = ["BinaryContentGuard"]


class BinaryContentGuard(Guard):
    """Refuse a write whose new content is binary.

    What: new content with a NUL byte in its first 8000 bytes (git's test for a
    binary file) is refused; deleting a binary file is not a write and passes.
    Why: model output is text; a NUL in it means a corrupted decode or an
    attempt to smuggle bytes, and a binary file cannot be reviewed as a diff.
    Example: writing `b"PK\\x03\\x04\\x00..."` to `data.zip` is BINARY_CONTENT.
    """

    NAME = "binary_content"
    CODE = FailureCode.BINARY_CONTENT
    MESSAGE = "new content is binary"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per change whose new bytes hold a NUL within the probe window."""
        failures: list[PatchFailure] = []
        for change in changes:
            if is_binary(change.new_content) and not _wide_text(change):
                assert change.new_content is not None
                offset = content_head(change.new_content, BINARY_PROBE).index(b"\0")
                failures.append(
                    self.failure(change.path, f"{change.path} has a NUL at byte {offset}")
                )
        return failures


def _wide_text(change: FileChange) -> bool:
    # UTF-16 and UTF-32 text (kept in its encoding, BOM and all) is full of NUL bytes;
    # its decoded text decides, as for any text file.
    return change.new_text is not None and "\0" not in change.new_text[:BINARY_PROBE]
