"""Building `FileChange` values and contexts for the guard tests."""

from __future__ import annotations

from patchsmith.formats.script import Action
from patchsmith.guards import GuardContext
from patchsmith.policy import Policy
from patchsmith.runtime.change import FileChange


def update(path: str, old: str | bytes, new: str | bytes, **extra: object) -> FileChange:
    """An UPDATE of `path` from `old` to `new` (text or raw bytes)."""
    old_bytes, old_text = _sides(old)
    new_bytes, new_text = _sides(new)
    return FileChange(
        path=path,
        action=Action.UPDATE,
        old_path=path,
        old_bytes=old_bytes,
        new_bytes=new_bytes,
        old_text=old_text,
        new_text=new_text,
        **extra,  # type: ignore[arg-type]
    )


def create(path: str, new: str | bytes, **extra: object) -> FileChange:
    """A CREATE of `path` with `new`."""
    new_bytes, new_text = _sides(new)
    return FileChange(
        path=path,
        action=Action.CREATE,
        old_path=None,
        old_bytes=None,
        new_bytes=new_bytes,
        new_text=new_text,
        **extra,  # type: ignore[arg-type]
    )


def delete(path: str, old: str | bytes) -> FileChange:
    """A DELETE of `path`, which held `old`."""
    old_bytes, old_text = _sides(old)
    return FileChange(
        path=path,
        action=Action.DELETE,
        old_path=path,
        old_bytes=old_bytes,
        new_bytes=None,
        old_text=old_text,
    )


def move(old_path: str, path: str, text: str) -> FileChange:
    """A MOVE of `old_path` to `path`, content unchanged."""
    data = text.encode()
    return FileChange(
        path=path,
        action=Action.MOVE,
        old_path=old_path,
        old_bytes=data,
        new_bytes=data,
        old_text=text,
        new_text=text,
    )


def context(
    policy: Policy | None = None,
    *,
    expected: tuple[str, ...] = (),
    forbidden: tuple[str, ...] = (),
) -> GuardContext:
    """A guard context with `policy` (defaults when `None`)."""
    return GuardContext(
        policy=policy or Policy(), expected_files=expected, forbidden_files=forbidden
    )


def _sides(content: str | bytes) -> tuple[bytes, str | None]:
    if isinstance(content, bytes):
        return content, None
    return content.encode(), content
