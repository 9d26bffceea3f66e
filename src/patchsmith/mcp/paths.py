"""Editor-tool paths: absolute ones under the workspace prefix name files under the root.

Agents built for Anthropic's text-editor tool or OpenHands' `str_replace_editor` send
absolute paths such as `/workspace/src/app.py`. The server maps a path under its
configured prefix (or under the root's own absolute path) to the workspace-relative
path, and refuses any other absolute path before the workspace sees it. The mapped
path is still checked by the workspace (`..`, symlinks, `.git/`), so a mapping never
widens what a relative path could reach.
"""

from __future__ import annotations

from collections.abc import Sequence

from patchsmith.errors import FailureCode, PatchFailure

__all__ = ["ROOT", "map_path"]

ROOT = "."
"""What a path naming the workspace root itself maps to."""


def map_path(path: str, bases: Sequence[str]) -> str | PatchFailure:
    """`path` relative to the workspace: unchanged when relative, stripped of the first
    of `bases` (absolute directories standing for the root) it lies under, else refused.

    `/workspace` itself maps to `ROOT`. An absolute path under no base is
    PATH_OUTSIDE_WORKSPACE.
    """
    unified = path.replace("\\", "/")
    if not unified.startswith("/"):
        return path
    for base in bases:
        stem = base.replace("\\", "/").rstrip("/")
        if unified == stem or unified == stem + "/":
            return ROOT
        if unified.startswith(stem + "/"):
            return unified[len(stem) + 1 :].lstrip("/") or ROOT
    shown = ", ".join(f"{b.rstrip('/')}/" for b in bases[:1]) or "the workspace"
    return PatchFailure(
        FailureCode.PATH_OUTSIDE_WORKSPACE,
        f"path {path[:200]!r} is outside the workspace",
        file=path[:200],
        hint=f"use a path under {shown} or one relative to the workspace root",
    )
