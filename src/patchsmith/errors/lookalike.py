"""One of several similar regions a refused edit may have been written for.

`patchsmith.errors` re-exports it; apart so that a process that refuses nothing never
builds the class (docs/decisions/0047).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LookAlike"]


@dataclass(frozen=True)
class LookAlike:
    """One of several similar regions a refused edit may have been written for.

    Lines are 1-based and inclusive, in the file as it is now (`current_sha256`).
    """

    start: int
    end: int
    similarity: float
    """How alike the region is to the edit's old lines, 0 to 1."""
    differing: tuple[int, ...] = ()
    """Lines of the region that are not the edit's old lines as written."""
    named: bool = False
    """The edit's line numbers (or `@@` anchor) point at this region."""

    def to_json(self) -> dict[str, object]:
        return {
            "start": self.start,
            "end": self.end,
            "similarity": round(self.similarity, 3),
            "differing": list(self.differing),
            "named": self.named,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> LookAlike:
        """The inverse of `to_json` (unknown keys ignored)."""
        differing = data.get("differing")
        similarity = data.get("similarity")
        return cls(
            start=_int(data.get("start")),
            end=_int(data.get("end")),
            similarity=float(similarity) if isinstance(similarity, int | float) else 0.0,
            differing=tuple(_int(n) for n in differing) if isinstance(differing, list) else (),
            named=data.get("named") is True,
        )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
