"""Only what the change broke: the base run's cache, and base-versus-changed comparison.

A base run is cached in the user's cache directory (`runtime/usercache.py`), never in
the workspace: a `.patchsmith/verify-cache/` that a repository commits would otherwise
decide which failures count as pre-existing (docs/decisions/0031). One JSON file per
key; the key covers the tree's content hash (the git tree id or the digest of the
files), the workspace, the profile's definition and targets, the environment the run
gets and the program it starts (its resolved path, size and mtime, and its version when
known), so a change to any of them runs the base again. Failures are matched by identity
(tool, file, code, message or test id — not line numbers, which an edit above them
shifts), counting duplicates.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.model.evidence import Evidence, ToolFailure
from patchsmith.runtime.process import scrub_env
from patchsmith.runtime.usercache import cache_dir
from patchsmith.verify.profiles import Profile

__all__ = [
    "CACHE_SUBDIR",
    "Comparison",
    "cache_key",
    "compare",
    "read_cached",
    "tool_identity",
    "write_cached",
]

CACHE_SUBDIR = "verify"
"""Folder under the user's cache directory holding cached base runs."""

_CACHE_MODE = 0o700
"""Cached runs hold tool output (file contents, paths): readable by their owner only."""


@dataclass(frozen=True)
class Comparison:
    """A changed run's failures sorted against the base run's."""

    introduced: tuple[ToolFailure, ...]
    """In the changed run, not in the base run: what the change broke."""
    fixed: tuple[ToolFailure, ...]
    """In the base run, gone from the changed run."""
    preexisting: tuple[ToolFailure, ...]
    """In both runs: not the change's doing."""


def compare(base: Sequence[ToolFailure], changed: Sequence[ToolFailure]) -> Comparison:
    """Split `changed` into introduced and pre-existing failures, and find the fixed ones."""
    remaining = Counter(f.identity() for f in base)
    introduced: list[ToolFailure] = []
    preexisting: list[ToolFailure] = []
    for failure in changed:
        key = failure.identity()
        if remaining[key] > 0:
            remaining[key] -= 1
            preexisting.append(failure)
        else:
            introduced.append(failure)
    still = Counter(f.identity() for f in changed)
    fixed: list[ToolFailure] = []
    for failure in base:
        key = failure.identity()
        if still[key] > 0:
            still[key] -= 1
        else:
            fixed.append(failure)
    return Comparison(tuple(introduced), tuple(fixed), tuple(preexisting))


def tool_identity(profile: Profile, root: Path) -> str:
    """What identifies the program `profile` starts: its resolved path, size and mtime.

    A relative program path (`.venv/bin/python`) is read below the workspace's profile
    folder, a bare name from the PATH the run gets. A program that cannot be found is
    named as written (the run will say it could not start).
    """
    program = profile.argv[0]
    if os.sep in program or "/" in program:
        found: str | None = str(root / profile.cwd / program)
    else:
        path = scrub_env(profile.allowed_env(), extra=profile.set_env).get("PATH")
        found = shutil.which(program, path=path)
    if found is None:
        return f"missing:{program}"
    try:
        real = os.path.realpath(found)
        info = os.stat(real)
    except OSError:
        return f"missing:{program}"
    return f"{real}:{info.st_size}:{info.st_mtime_ns}"


def cache_key(
    tree: str,
    name: str,
    profile: Profile,
    targets: Sequence[str] = (),
    *,
    root: Path,
    tool_version: str | None = None,
) -> str:
    """The cache file name for one base run of `profile` on `tree` in workspace `root`.

    `tool_version` is the program's own version where one is known; without it the
    program's path, size and mtime (`tool_identity`) stand for it.
    """
    env = scrub_env(profile.allowed_env(), extra=profile.set_env)
    definition = json.dumps(
        {
            "tree": tree,
            "root": str(root),
            "name": name,
            "profile": profile.model_dump(mode="json"),
            "targets": list(targets),
            "env": sorted(env.items()),
            "tool": tool_identity(profile, root),
            "tool_version": tool_version,
        },
        sort_keys=True,
    )
    return hashlib.sha256(definition.encode("utf-8")).hexdigest()


def _folder() -> Path | None:
    base = cache_dir()
    return None if base is None else base / CACHE_SUBDIR


def read_cached(key: str) -> Evidence | None:
    """The cached base run for `key`, or `None` (absent, off or unreadable: run it again)."""
    folder = _folder()
    if folder is None:
        return None
    try:
        return Evidence.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cached(key: str, evidence: Evidence) -> None:
    """Keep a base run for next time (best effort: a cache that cannot be written is skipped).

    Written to a fresh temp file in the cache folder and renamed into place.
    """
    folder = _folder()
    if folder is None:
        return
    try:
        folder.mkdir(mode=_CACHE_MODE, parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(evidence.dumps())
            os.replace(temp, folder / f"{key}.json")
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return
