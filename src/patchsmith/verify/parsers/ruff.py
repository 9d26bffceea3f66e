"""ruff findings from `ruff check --output-format json`."""

from __future__ import annotations

import json

from patchsmith.model.evidence import ToolFailure, Verdict
from patchsmith.verify.parsers.base import (
    ExitMeaning,
    ExitTable,
    ParserInput,
    exit_verdict,
    relative_path,
)

__all__ = ["EXIT_CODES", "parse_ruff_json", "ruff_verdict"]

EXIT_CODES: ExitTable = {
    0: ExitMeaning(Verdict.PASSED, "no violations"),
    1: ExitMeaning(Verdict.FAILED, "violations found"),
    2: ExitMeaning(Verdict.ERROR, "abnormal termination (bad configuration or options)"),
}
"""`ruff check`'s exit codes."""


def ruff_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """The verdict of a `ruff check` run that ended with `exit_code`."""
    return exit_verdict(EXIT_CODES, exit_code, data, failures, tool="ruff")


def parse_ruff_json(data: ParserInput) -> list[ToolFailure]:
    """One failure per diagnostic in ruff's JSON array; none when stdout is not that array."""
    try:
        items: object = json.loads(data.stdout)
    except ValueError:
        return []
    if not isinstance(items, list):
        return []
    found: list[ToolFailure] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        location = item.get("location") if isinstance(item.get("location"), dict) else {}
        assert isinstance(location, dict)
        filename = item.get("filename")
        found.append(
            ToolFailure(
                tool="ruff",
                message=str(item.get("message", "")),
                file=relative_path(filename, data.root) if isinstance(filename, str) else None,
                line=_int(location.get("row")),
                col=_int(location.get("column")),
                code=str(item["code"]) if item.get("code") is not None else None,
            )
        )
    return found


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
