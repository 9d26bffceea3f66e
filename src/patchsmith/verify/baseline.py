"""Only what the change broke: the base run's cache, and base-versus-changed comparison.

A base run is cached under the workspace's state directory, one JSON file per
(tree, profile): the tree is the base commit's tree id or the digest of the files,
the profile is the hash of its definition, so editing a profile or the base tree
runs it again. Failures are matched by identity (tool, file, code, message or test
id — not line numbers, which an edit above them shifts), counting duplicates.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.evidence import Evidence, ToolFailure
from patchsmith.runtime.atomic import write_new_file
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.statedir import check_entry, ensure_state_dir, ensure_subdir
from patchsmith.verify.profiles import Profile

__all__ = ["Comparison", "cache_key", "compare", "read_cached", "write_cached"]

CACHE_DIR = "verify-cache"
"""Folder under the state directory (`.patchsmith/`) holding cached base runs."""


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


def cache_key(tree: str, name: str, profile: Profile, targets: Sequence[str] = ()) -> str:
    """The cache file name for one base run of `profile` on `tree` (hex sha256)."""
    definition = json.dumps(
        {
            "tree": tree,
            "name": name,
            "profile": profile.model_dump(mode="json"),
            "targets": list(targets),
        },
        sort_keys=True,
    )
    return hashlib.sha256(definition.encode("utf-8")).hexdigest()


def read_cached(real_root: Path, key: str) -> Evidence | None:
    """The cached base run for `key`, or `None` (absent, unsafe or unreadable: run it again)."""
    folder = real_root / STATE_DIR_NAME / CACHE_DIR
    path = folder / f"{key}.json"
    try:
        for entry in (folder.parent, folder):
            if check_entry(entry, directory=True) is None:
                return None
        if check_entry(path, directory=False) is None:
            return None
        return Evidence.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cached(real_root: Path, key: str, evidence: Evidence) -> None:
    """Keep a base run for next time (best effort: a cache that cannot be written is skipped).

    Written under a fresh name (never through a link) and renamed into place.
    """
    try:
        folder = ensure_subdir(ensure_state_dir(real_root) / CACHE_DIR)
        temp = folder / f".{key}.{os.getpid()}.tmp"
        write_new_file(temp, evidence.dumps().encode("utf-8"), 0o600)
        os.replace(temp, folder / f"{key}.json")
    except OSError:
        return
