"""Printing shared by every subcommand: one JSON object on stdout, or text for people."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable

from patchsmith.errors import FailureCode, PatchFailure

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_UNVERIFIED",
    "EXIT_USAGE",
    "JSON_SCHEMA_VERSION",
    "missing_root",
    "print_failures",
    "usage_error",
    "write_json",
]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNVERIFIED = 3
"""`patchsmith verify`: a profile ran but established nothing (verdict `error`)."""


JSON_SCHEMA_VERSION = 1
"""The shape of every `--json` object; raised when a field changes meaning or goes away."""


def write_json(payload: dict[str, object]) -> None:
    """Print `payload` as one JSON object on stdout (ASCII, so any terminal encoding reads it).

    Every object carries `schema_version` (last), so a caller can tell which shape it reads.
    """
    versioned = {**payload, "schema_version": JSON_SCHEMA_VERSION}
    sys.stdout.write(json.dumps(versioned, ensure_ascii=True) + "\n")


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


def usage_error(command: str, failure: PatchFailure, *, as_json: bool) -> int:
    """Report a problem with the command line itself (exit 2), as JSON or text."""
    if as_json:
        write_json({"status": "error", "errors": [failure.to_json()]})
    else:
        print_failures(command, [failure])
    return EXIT_USAGE


def missing_root(command: str, root: str, *, as_json: bool) -> int | None:
    """Exit 2 with a FILE_NOT_FOUND error when `-C DIR` is not a directory, else None."""
    if os.path.isdir(root):
        return None
    failure = PatchFailure(
        FailureCode.FILE_NOT_FOUND,
        f"workspace root {root!r} is not a directory",
        hint="pass -C with an existing directory",
    )
    return usage_error(command, failure, as_json=as_json)
