"""mypy errors from `mypy --output json` (one JSON object per line)."""

from __future__ import annotations

import json

from patchsmith.evidence import ToolFailure
from patchsmith.verify.parsers.base import ParserInput, relative_path

__all__ = ["parse_mypy_json"]


def parse_mypy_json(data: ParserInput) -> list[ToolFailure]:
    """One failure per error line; notes are folded into no failure of their own."""
    found: list[ToolFailure] = []
    for raw in data.stdout.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            item: object = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict) or item.get("severity") == "note":
            continue
        file = item.get("file")
        found.append(
            ToolFailure(
                tool="mypy",
                message=str(item.get("message", "")),
                file=relative_path(file, data.root) if isinstance(file, str) else None,
                line=_int(item.get("line")),
                col=_int(item.get("column")),
                code=str(item["code"]) if item.get("code") else None,
                severity=str(item.get("severity") or "error"),
            )
        )
    return found


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
