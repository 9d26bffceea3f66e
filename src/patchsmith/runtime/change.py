"""`FileChange`: one staged file change, the unit guards, diffs and the store work on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self, TypeVar, cast, overload

from patchsmith.engine.linespans import LineSpan
from patchsmith.formats.script import Action
from patchsmith.runtime.content import Content, EncodedText

_T = TypeVar("_T")

__all__ = ["FileChange"]


class _Bytes:
    """A `FileChange` bytes field: set to bytes, `None` or an `EncodedText` (the text the
    bytes encode, so that a big file is not held twice), always read as bytes.

    Reading an `EncodedText` side encodes it whole, each time: code that only writes,
    hashes, measures or compares the bytes reads `old_content`/`new_content` instead.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    @overload
    def __get__(self, change: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, change: object, owner: type | None = None) -> bytes | None: ...

    def __get__(self, change: object | None, owner: type | None = None) -> Self | bytes | None:
        if change is None:
            # no class-level value: the dataclass takes the field as required
            raise AttributeError(self._slot)
        value = change.__dict__[self._slot]
        return value.encode() if isinstance(value, EncodedText) else value

    def __set__(self, change: object, value: Content | None) -> None:
        change.__dict__[self._slot] = value


@dataclass(frozen=True)
class FileChange:
    """One file's change, staged in memory before anything is written.

    Paths are POSIX-style and relative to the workspace root. For CREATE,
    `old_path` and `old_bytes` are `None`; for DELETE, `new_bytes` is `None`;
    for MOVE, `old_path` differs from `path`. `*_text` is the decoded text
    (`None` when the content is binary or absent). Modes are `st_mode`
    permission bits (e.g. 0o644), `None` when absent.

    `old_bytes` and `new_bytes` may be given as an `EncodedText` of `old_text` or
    `new_text` (the stager does so for a text file it checked encodes back exactly):
    they still read as bytes, encoded on each read; `old_content` and `new_content`
    give them as stored, for writing, hashing and comparing a chunk at a time.
    """

    path: str
    action: Action
    old_path: str | None
    old_bytes: _Bytes = _Bytes()
    new_bytes: _Bytes = _Bytes()
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

    @property
    def old_content(self) -> Content | None:
        """The old bytes as stored: bytes, or the `EncodedText` they are kept as."""
        return cast("Content | None", self.__dict__["_old_bytes"])

    @property
    def new_content(self) -> Content | None:
        """The new bytes as stored: bytes, or the `EncodedText` they are kept as."""
        return cast("Content | None", self.__dict__["_new_bytes"])

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """`compute()` the first time `key` is asked of this change; the same value after."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(_T, self._derived[key])
