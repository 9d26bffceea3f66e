"""What every parser gets: the tool's output, its report file, and where it ran."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["ParserInput", "relative_path"]


@dataclass(frozen=True)
class ParserInput:
    """The raw material of one run: both streams and the report file the tool wrote (if any)."""

    stdout: str
    stderr: str
    report: str | None = None
    """Text of the report file the profile asked for (`{report}` in argv), e.g. JUnit XML."""
    root: str = ""
    """Absolute directory the tool ran in: absolute paths under it are made relative."""


def relative_path(path: str, root: str) -> str:
    """`path` relative to `root` when it lies under it; otherwise as the tool gave it."""
    cleaned = path.strip()
    if cleaned.startswith("./"):
        cleaned = cleaned[2:]
    if root and cleaned.startswith("/"):
        base = PurePosixPath(root)
        candidate = PurePosixPath(cleaned)
        if candidate.is_relative_to(base):
            return candidate.relative_to(base).as_posix()
    return cleaned
