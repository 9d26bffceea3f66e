"""Workspace-relative path checking: the one place a user-supplied path becomes trusted.

Backslashes are read as separators (models on Windows write `src\\app.py`), so a file
whose name contains a backslash cannot be addressed. Symlinks whose target stays
inside the root are followed: `canonical_path` maps a checked path to the real file
it names, and the runtime writes there, so a symlinked file keeps being a link and
its target gets the new content.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "STATE_DIR_NAME",
    "WORKSPACE_PREFIX",
    "canonical_path",
    "locate_path",
    "resolve_path",
    "under_root",
]

STATE_DIR_NAME = ".patchsmith"
"""patchsmith's own state directory at the workspace root; never a patch target."""

WORKSPACE_PREFIX = "/workspace"
"""The absolute directory editor-tool agents (Anthropic's text editor, OpenHands) use for
the workspace root: `/workspace/src/app.py` names `src/app.py`."""

_DRIVE = re.compile(r"^[A-Za-z]:")
# Decoding is repeated so that double encoding (`%252e`) cannot hide a component.
_MAX_UNQUOTE_ROUNDS = 4


def _outside(user_path: str, message: str, hint: str | None = None) -> PatchFailure:
    return PatchFailure(
        code=FailureCode.PATH_OUTSIDE_WORKSPACE,
        message=message,
        file=user_path,
        hint=hint or "use a path relative to the workspace root, without '..'",
    )


def _fully_unquoted(text: str) -> str:
    for _ in range(_MAX_UNQUOTE_ROUNDS):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def _reserved_component(component: str) -> str | None:
    # Windows and macOS file systems ignore case and trailing dots/spaces, so
    # `.GIT` and `.git.` can name the real `.git` directory.
    folded = component.rstrip(". ").lower() if component.strip(". ") else component
    if folded == ".git":
        return ".git"
    if folded == STATE_DIR_NAME:
        return STATE_DIR_NAME
    return None


def _check_components(user_path: str, parts: list[str]) -> PatchFailure | None:
    for part in parts:
        if part.strip() == "..":
            return _outside(user_path, f"path component {part!r} leaves the workspace")
        reserved = _reserved_component(part)
        if reserved is not None:
            return _outside(
                user_path,
                f"path component {part!r} is inside {reserved}/, which patchsmith never edits",
                hint=f"edit files outside {reserved}/",
            )
    return None


def _syntax_failure(user_path: str) -> PatchFailure | None:
    if not user_path.strip():
        return _outside(user_path, "empty path", hint="name a file relative to the workspace root")
    if "\x00" in user_path:
        return _outside(user_path, "path contains a NUL byte")
    decoded = _fully_unquoted(user_path)
    if "\x00" in decoded:
        return _outside(user_path, "path contains an encoded NUL byte (%00)")
    lowered = user_path.lower()
    for encoded in ("%2f", "%5c"):
        if encoded in lowered:
            return _outside(user_path, f"path contains an encoded separator ({encoded})")
    for candidate in (user_path, decoded):
        text = candidate.replace("\\", "/")
        if text.startswith("~"):
            return _outside(user_path, f"path {candidate!r} starts with '~' (a home directory)")
        if _DRIVE.match(text):
            return _outside(user_path, f"path {candidate!r} starts with a drive letter")
        if text.startswith("/"):
            kind = "a UNC path" if text.startswith("//") else "absolute"
            return _outside(user_path, f"path {candidate!r} is {kind}")
        failure = _check_components(user_path, text.split("/"))
        if failure is not None:
            return failure
    return None


def _is_within(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def _symlink_failure(
    root: Path, user_path: str, parts: list[str], real_root: str
) -> PatchFailure | None:
    current = os.fspath(root)
    for index, part in enumerate(parts):
        current = os.path.join(current, part)
        if not os.path.islink(current):
            continue
        target = os.path.realpath(current)
        shown = "/".join(parts[: index + 1])
        if not _is_within(target, real_root):
            kind = "file" if index == len(parts) - 1 else "directory"
            return PatchFailure(
                code=FailureCode.SYMLINK_ESCAPE,
                message=f"{shown!r} is a symlinked {kind} pointing outside the workspace",
                file=user_path,
                hint="edit the file at its real location inside the workspace",
            )
        real_parts = Path(os.path.relpath(target, real_root)).parts
        failure = _check_components(user_path, list(real_parts))
        if failure is not None:
            return _outside(
                user_path,
                f"{shown!r} is a symlink into a protected directory: {failure.message}",
                hint=failure.hint,
            )
    return None


def resolve_path(root: Path, user_path: str, *, real_root: str | None = None) -> str | PatchFailure:
    """Return `user_path` as a normalised POSIX path relative to `root`, or why it is refused.

    Refuses (PATH_OUTSIDE_WORKSPACE) absolute, drive, UNC and `~` paths, `..` in any
    spelling (backslashes, URL encoding), NUL bytes, empty paths and anything under
    `.git/` or `.patchsmith/`; refuses (SYMLINK_ESCAPE) a path whose file or parent
    directory is a symlink resolving outside `root`. The path need not exist.
    `real_root` is `root` with its symlinks resolved, when the caller knows it already.
    """
    resolved = _resolve(root, user_path, real_root)
    return resolved if isinstance(resolved, PatchFailure) else resolved[0]


def locate_path(
    root: Path, user_path: str, *, follow_final: bool, real_root: str | None = None
) -> str | PatchFailure:
    """`canonical_path` of what `resolve_path` accepts, or why it is refused.

    The same answer as the two calls, in one walk of the path when no link is on it
    (what staging a thousand files mostly meets).
    """
    real = os.path.realpath(root) if real_root is None else real_root
    resolved = _resolve(root, user_path, real)
    if isinstance(resolved, PatchFailure):
        return resolved
    relative, linked = resolved
    if not linked:
        return relative
    return canonical_path(root, relative, follow_final=follow_final, real_root=real)


def _resolve(root: Path, user_path: str, real_root: str | None) -> tuple[str, bool] | PatchFailure:
    """`resolve_path`'s answer, and whether a link is on the path (file or folder)."""
    failure = _syntax_failure(user_path)
    if failure is not None:
        return failure
    try:
        user_path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        # A lone surrogate (JSON's "\ud800") names no file any file system can hold.
        return PatchFailure(
            code=FailureCode.MALFORMED_PATCH,
            message=f"path {user_path[:200]!r} holds U+{ord(user_path[exc.start]):04X}, "
            "a lone surrogate that is not a character",
            file=user_path[:200].encode("ascii", "backslashreplace").decode("ascii"),
            hint="send the path as valid UTF-8 text (in JSON, a surrogate only as half of a pair)",
        )
    parts = [part for part in user_path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts:
        return _outside(user_path, f"path {user_path!r} names the workspace root, not a file")
    if user_path.endswith(("/", "\\")):
        return PatchFailure(
            code=FailureCode.MALFORMED_PATCH,
            message=f"path {user_path[:200]!r} ends with a separator: it names a directory",
            file=user_path[:200],
            hint="name the file itself, without a trailing slash",
        )
    too_long = next((p for p in parts if len(p.encode("utf-8", "surrogateescape")) > 255), None)
    if too_long is not None or len(user_path) > 4096:
        return PatchFailure(
            code=FailureCode.MALFORMED_PATCH,
            message=f"path {user_path[:80]!r}... is too long for a file system",
            file=user_path[:200],
            hint="use the file's real path; a path component is at most 255 bytes",
        )
    if not _any_link(root, parts):
        return "/".join(parts), False
    real = os.path.realpath(root) if real_root is None else real_root
    failure = _symlink_failure(root, user_path, parts, real)
    if failure is not None:
        return failure
    return "/".join(parts), True


def _any_link(root: Path, parts: list[str]) -> bool:
    """Whether a component of `root`/`parts` below `root` is a symlink (one lstat each)."""
    current = os.fspath(root)
    for part in parts:
        current = os.path.join(current, part)
        if os.path.islink(current):
            return True
    return False


def canonical_path(
    root: Path, relative: str, *, follow_final: bool, real_root: str | None = None
) -> str:
    """The real POSIX path, relative to `root`, of a path `resolve_path` accepted.

    Symlinked parent directories are always resolved; the last component only when
    `follow_final` is set (reading or rewriting a file follows a symlink, deleting
    or creating one does not). `real_root` as for `resolve_path`.
    """
    if real_root is None:
        real_root = os.path.realpath(root)
    parts = relative.split("/")
    # The common case, no link on the way, in one lstat per component under the root
    # (`realpath` walks every component from `/`, in Python).
    current = real_root
    for part in parts if follow_final else parts[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current):
            break
    else:
        return relative
    joined = os.path.join(real_root, *parts)
    if follow_final:
        real = os.path.realpath(joined)
    else:
        real = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
    return Path(os.path.relpath(real, real_root)).as_posix()


def under_root(path: str, bases: tuple[str, ...]) -> str:
    """`path` relative to the root when it is absolute and under one of `bases` (absolute
    directories standing for the root: the workspace prefix, the root's own path); else
    `path` as given.

    Only the base is taken off: what is left (`../etc/passwd` from
    `/workspace/../etc/passwd`) is still checked by `resolve_path`, so a mapping never
    reaches further than a relative path could.
    """
    unified = path.replace("\\", "/")
    if not unified.startswith("/") and not os.path.isabs(path):
        return path
    for base in bases:
        stem = base.replace("\\", "/").rstrip("/")
        if stem and unified.startswith(stem + "/"):
            return unified[len(stem) + 1 :].lstrip("/")
    return path
