"""File-metadata guards: an edit never silently splits hard links or ignores a read-only bit."""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import Action
from patchsmith.guards.base import Guard, GuardContext
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.content import same_content

__all__ = ["HardLinkGuard", "ReadOnlyGuard"]

_WRITE_BITS = 0o222


def _rewrites(change: FileChange) -> bool:
    """True when the change gives the old file's name new content (or a new mode)."""
    if change.action is Action.UPDATE:
        return True
    if change.action is Action.MOVE:
        return change.old_mode != change.new_mode or not same_content(
            change.old_content, change.new_content
        )
    return False


class HardLinkGuard(Guard):
    """Refuse rewriting a file that has other hard links.

    What: an update (or a move that changes content) of a file whose link count is
    above one is refused.
    Why: patchsmith writes a new file and renames it into place (the only way a crash
    can never leave half a file), so the edit would reach this name only; the other
    names would keep the old content without a word. Switch the guard off
    (`hard_links = false`, `--break-hardlinks`) to accept that split on purpose.
    Example: `a.py` and `b.py` are one file (`ln a.py b.py`); editing `a.py` is
    HARDLINKED_FILE.
    """

    NAME = "hard_links"
    CODE = FailureCode.HARDLINKED_FILE
    MESSAGE = "file has other hard links"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per rewrite of a file with more than one link."""
        return [
            self.failure(
                change.old_path or change.path,
                f"{change.old_path or change.path} has {change.old_links} names; an edit "
                "would change this one only and leave the others with the old content",
                hint="edit it by hand, or pass --break-hardlinks (policy: "
                "[policy.guards] hard_links = false) to split the link on purpose",
            )
            for change in changes
            if change.old_links > 1 and _rewrites(change)
        ]


class ReadOnlyGuard(Guard):
    """Refuse changing a file that has no write permission bit.

    What: an update, a delete, or a move that changes content, of a file whose mode
    has no `w` bit (e.g. 0o444), is refused.
    Why: a read-only bit says someone does not want the file changed; an atomic
    rename would replace it anyway (only the directory's permission counts), even
    as a user who could not open it for writing. Switch the guard off
    (`read_only = false`, `--write-read-only`) to write such files: their mode is
    kept, so they stay read-only.
    Example: editing a checked-in `VERSION` of mode 0o444 is READ_ONLY_FILE.
    """

    NAME = "read_only"
    CODE = FailureCode.READ_ONLY_FILE
    MESSAGE = "file is read-only"

    def check(self, changes: Sequence[FileChange], ctx: GuardContext) -> list[PatchFailure]:
        """One failure per change to a file with no write bit."""
        return [
            self.failure(
                change.old_path,
                f"{change.old_path} has mode {change.old_mode:o}, without write permission",
                hint="make it writable first (chmod u+w), or pass --write-read-only (policy: "
                "[policy.guards] read_only = false)",
            )
            for change in changes
            if change.old_path is not None
            and change.old_mode is not None
            and not change.old_mode & _WRITE_BITS
            and (change.action is Action.DELETE or _rewrites(change))
        ]
