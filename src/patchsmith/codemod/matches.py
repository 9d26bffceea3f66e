"""What a backend reports besides its edits: the matches it saw and left alone.

Below the dispatcher (`transform.py`), which imports the backends: a backend imports this
module, never the dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SeenMatch", "SyntaxFallback"]


@dataclass(frozen=True)
class SeenMatch:
    """A match the recipe saw but did not change, and why."""

    path: str
    line: int
    text: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "text": self.text, "reason": self.reason}


@dataclass(frozen=True)
class SyntaxFallback:
    """A file matched by syntax because its types could not be resolved, and why.

    A type-aware operation (Java's `method_invocation_replace`) falls back to reading the
    file's imports and declarations when javac cannot attribute it (a missing
    dependency, no JDK); the report lists every such file, so that no match made by
    syntax passes for one made by types.
    """

    path: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}
