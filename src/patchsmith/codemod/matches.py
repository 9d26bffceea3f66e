"""What a backend reports besides its edits: the matches it saw and left alone.

Below the dispatcher (`transform.py`), which imports the backends: a backend imports this
module, never the dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SeenMatch"]


@dataclass(frozen=True)
class SeenMatch:
    """A match the recipe saw but did not change, and why."""

    path: str
    line: int
    text: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "text": self.text, "reason": self.reason}
