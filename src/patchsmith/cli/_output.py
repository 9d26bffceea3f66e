"""Printing shared by every subcommand: one JSON object on stdout, or text for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable

from patchsmith.errors import PatchFailure

__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "print_failures", "write_json"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def write_json(payload: dict[str, object]) -> None:
    """Print `payload` as one JSON object on stdout."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")


def print_failures(
    command: str, failures: Iterable[PatchFailure], *, excerpts: bool = True
) -> None:
    """Each failure as `code: file: message`, its hint, and its excerpt, on stderr."""
    for failure in failures:
        where = f"{failure.file}: " if failure.file else ""
        hunk = f"hunk {failure.hunk + 1}: " if failure.hunk is not None else ""
        sys.stderr.write(
            f"patchsmith {command}: {failure.code.value}: {where}{hunk}{failure.message}\n"
        )
        if failure.hint:
            sys.stderr.write(f"  hint: {failure.hint}\n")
        if excerpts and failure.excerpt:
            sys.stderr.write("  the file has:\n")
            for line in failure.excerpt.splitlines():
                sys.stderr.write(f"    {line}\n")
