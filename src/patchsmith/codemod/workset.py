"""`WorkSet`: the texts a recipe works on, changed in memory, never on disk."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from patchsmith.codemod.backends.astgrep import AstGrepMatch, scan
from patchsmith.errors import PatchFailure
from patchsmith.runtime.atomic import create_new_file, write_all

__all__ = ["NOT_UTF8", "WorkSet", "scratch_dir"]

NOT_UTF8 = "not UTF-8 text without a BOM (recipes edit by byte offsets into UTF-8)"


_MEMORY_FS = Path("/dev/shm")


def scratch_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for texts ast-grep must read: in memory (`/dev/shm`) where there is one.

    Thousands of small files are written and removed there per run; on a disk the
    removals alone cost more than the scan.
    """
    folder = _MEMORY_FS if _MEMORY_FS.is_dir() and os.access(_MEMORY_FS, os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix=prefix, dir=folder)


class WorkSet:
    """The files a recipe reads, under `root`: their original bytes and their changed bytes.

    Files are read on first use. A file that is not UTF-8 (or starts with a BOM) is
    recorded in `unreadable` with the reason and never changed.
    """

    def __init__(self, root: Path, paths: Sequence[str]) -> None:
        self.root = root
        self.paths = list(paths)
        self.sources = root
        """The workspace the texts come from, where a type-aware backend finds the rest of
        the project's sources (a re-run's work set holds only the changed files)."""
        self._original: dict[str, bytes] = {}
        self._current: dict[str, bytes] = {}
        self.unreadable: dict[str, str] = {}
        self.spans: dict[str, list[tuple[int, int]] | None] = {}
        """Per file, the byte ranges of the original that rules' matches replaced (`None`
        once a rule edited text an earlier one had changed: ranges no longer comparable)."""
        self.refusals: dict[str, str] = {}
        """Per file, why the formatting guard refuses it (`codemod.layout`)."""

    @classmethod
    def from_texts(cls, texts: dict[str, bytes], folder: Path) -> WorkSet:
        """A work set over `texts`, written under `folder` (for ast-grep to read)."""
        _write_texts(texts, folder)
        work = cls(folder, sorted(texts))
        work._original = dict(texts)
        return work

    def data(self, path: str) -> bytes | None:
        """The file's current bytes; `None` when it cannot be worked on (see `unreadable`)."""
        if path in self._current:
            return self._current[path]
        if path in self.unreadable:
            return None
        original = self._original.get(path)
        if original is None:
            try:
                original = (self.root / path).read_bytes()
            except OSError as exc:
                self.unreadable[path] = f"cannot be read: {exc.strerror or exc}"
                return None
            self._original[path] = original
        if original.startswith(b"\xef\xbb\xbf") or not _is_utf8(original):
            self.unreadable[path] = NOT_UTF8
            return None
        return original

    def text(self, path: str) -> str | None:
        """The file's current text (`None` as for `data`)."""
        data = self.data(path)
        return None if data is None else data.decode("utf-8")

    def original(self, path: str) -> bytes:
        """The bytes the file had when first read."""
        return self._original[path]

    def set(self, path: str, data: bytes) -> None:
        """Record new bytes for `path` (a file already read)."""
        if data == self._original.get(path):
            self._current.pop(path, None)
        else:
            self._current[path] = data

    def note_edits(
        self, path: str, data: bytes, ranges: Sequence[tuple[int, int]], refusal: str | None
    ) -> None:
        """Record that edits over `ranges` of `data` (the file's bytes then) were made, and
        the formatting guard's refusal of them, if any."""
        if refusal is not None:
            self.refusals.setdefault(path, refusal)
        if data != self._original.get(path):
            self.spans[path] = None
            return
        known = self.spans.setdefault(path, [])
        if known is not None:
            known.extend(ranges)

    def set_text(self, path: str, text: str) -> None:
        self.set(path, text.encode("utf-8"))

    @property
    def changed(self) -> dict[str, bytes]:
        """Every file whose bytes differ from the original, path to new bytes, sorted."""
        return {p: self._current[p] for p in sorted(self._current)}

    def scan(
        self, rules: Sequence[dict[str, object]], paths: Sequence[str]
    ) -> list[AstGrepMatch] | PatchFailure:
        """ast-grep matches of `rules` in the current texts of `paths`."""
        plain = [p for p in paths if p not in self._current]
        found = scan(rules, self.root, plain, self.unreadable)
        if isinstance(found, PatchFailure):
            return found
        modified = [p for p in paths if p in self._current]
        if modified:
            with scratch_dir("patchsmith-codemod-") as tmp:
                _write_texts({path: self._current[path] for path in modified}, Path(tmp))
                more = scan(rules, Path(tmp), modified, self.unreadable)
            if isinstance(more, PatchFailure):
                return more
            found.extend(more)
        return found


def _write_texts(texts: dict[str, bytes], folder: Path) -> None:
    """Write each relative path's bytes under the scratch folder `folder` (made by us, empty).

    Plain `os` calls, each folder made once: a thousand files are written per recipe run,
    and the buffered file layer and repeated `mkdir`s cost more than the writes.
    """
    made: set[str] = set()
    base = os.fspath(folder)
    for path, data in texts.items():
        parent = path.rpartition("/")[0]
        if parent and parent not in made:
            os.makedirs(os.path.join(base, parent), exist_ok=True)
            made.add(parent)
        fd = create_new_file(Path(base, path))
        try:
            write_all(fd, data)
        finally:
            os.close(fd)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
