"""Where the store lives: `<root>/.patchsmith/patchsmith.db` and SQLite's side files,
checked (never through a link) before anything opens them."""

from __future__ import annotations

from pathlib import Path

from patchsmith.errors import PatchRefused
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.statedir import (
    StateDirUnsafe,
    check_entry,
    prepare_state_dir,
    unsafe_failure,
)
from patchsmith.store.errors import io_failure

__all__ = ["DB_FILE_NAME", "SQLITE_SIDE_FILES", "STATE_DIR_NAME", "check_state_dir"]

DB_FILE_NAME = "patchsmith.db"
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
"""The suffixes of the files SQLite keeps next to a database."""


def check_state_dir(state_dir: Path) -> None:
    """Make (or check) the state directory and the database's files; never through a link."""
    try:
        # Never through a symlink: the store holds model inputs and file contents.
        prepare_state_dir(state_dir)
        for name in (DB_FILE_NAME, *(DB_FILE_NAME + s for s in SQLITE_SIDE_FILES)):
            check_entry(state_dir / name, directory=False)
    except StateDirUnsafe as exc:
        raise PatchRefused([unsafe_failure(exc)]) from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise io_failure(f"cannot open the store in {state_dir}: {reason}") from exc
