"""`FileChange`: one staged file change, the unit guards, diffs and the store work on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

from patchsmith.engine.linespans import LineSpan
from patchsmith.formats.script import Action

_T = TypeVar("_T")

__all__ = ["FileChange"]


@dataclass(frozen=True)
class FileChange:
    """One file's change, staged in memory before anything is written.

    Paths are POSIX-style and relative to the workspace root. For CREATE,
    `old_path` and `old_bytes` are `None`; for DELETE, `new_bytes` is `None`;
    for MOVE, `old_path` differs from `path`. `*_text` is the decoded text
    (`None` when the content is binary or absent). Modes are `st_mode`
    permission bits (e.g. 0o644), `None` when absent.
    """

    path: str
    action: Action
    old_path: str | None
    old_bytes: bytes | None
    new_bytes: bytes | None
    old_text: str | None = None
    new_text: str | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    reason: str = ""
    """Why this file changes (a proposal's objective, a direct write's reason)."""
    generated_by_command: bool = False
    """True for changes a command profile produced (lockfiles may only change this way)."""
    whole_content: bool = False
    """True when the new text was sent whole (a whole-file edit, a direct write), not as a diff."""
    old_links: int = 1
    """How many hard links the old file has; an edit through one name would split them."""
    line_spans: tuple[LineSpan, ...] | None = None
    """The old text's lines the edit replaced and the new lines in their place, as the
    engine located them (`None`: not known, e.g. a whole-file write): the line diff is
    then aligned inside these spans only (`runtime.diffstat.change_opcodes`)."""
    _derived: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Values computed from this change once (e.g. its line diff, which several guards ask
    for): they live as long as the change does, never longer."""

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """`compute()` the first time `key` is asked of this change; the same value after."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(_T, self._derived[key])
