"""patchsmith's per-user cache: data derived from installed packages, safe to lose.

A process that starts cold (one CLI call per edit) would otherwise rebuild the same
derived data on every start. Entries are small JSON documents named by a key that
changes whenever what they were derived from changes; a missing, unreadable or
malformed entry is simply rebuilt, and a cache that cannot be written is skipped.

The directory is `$PATCHSMITH_CACHE_DIR`, else `$XDG_CACHE_HOME/patchsmith`, else
`~/.cache/patchsmith`; `PATCHSMITH_CACHE_DIR=off` switches the cache off. It is never
inside a workspace: a workspace's files are untrusted input (docs/decisions/0007).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir", "load_entry", "store_entry"]

CACHE_ENV = "PATCHSMITH_CACHE_DIR"
"""Environment variable naming the cache directory (`off`: no cache)."""


def cache_dir() -> Path | None:
    """The cache directory (perhaps not yet created), `None` when the cache is off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return None if chosen.lower() == "off" else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "patchsmith"
    try:
        return Path.home() / ".cache" / "patchsmith"
    except RuntimeError:  # no home directory to speak of
        return None


def load_entry(name: str) -> object | None:
    """The JSON value stored under `name`, `None` when absent or unreadable."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(folder / name, encoding="utf-8") as handle:
            value: object = json.load(handle)
    except (OSError, ValueError):
        return None
    return value


def store_entry(name: str, value: object) -> None:
    """Store `value` (JSON) under `name`, atomically; silently skipped when impossible."""
    folder = cache_dir()
    if folder is None:
        return
    import tempfile  # writing is rare: once per change of what an entry derives from

    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(value, out)
            os.replace(temporary, folder / name)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, TypeError, ValueError):
        return
