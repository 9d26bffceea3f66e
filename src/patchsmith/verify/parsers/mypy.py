"""mypy errors from `mypy --output json` (one JSON object per line)."""

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

__all__ = ["EXIT_CODES", "mypy_verdict", "parse_mypy_json"]

EXIT_CODES: ExitTable = {
    0: ExitMeaning(Verdict.PASSED, "no errors"),
    1: ExitMeaning(Verdict.FAILED, "type errors"),
    2: ExitMeaning(Verdict.FAILED, "blocking errors (a file that does not parse)"),
}
"""mypy's exit codes. 2 is also a crash or a usage error: with no error parsed it is `error`."""


def mypy_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """The verdict of a mypy run that ended with `exit_code`."""
    return exit_verdict(EXIT_CODES, exit_code, data, failures, tool="mypy")


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
