"""cargo's `--message-format=json` compiler messages, and libtest's failing tests.

Compiler diagnostics are JSON lines (`reason: compiler-message`). libtest's own
results are plain text on stdout in stable Rust (`test a::b ... FAILED`, then
`thread 'a::b' panicked at src/lib.rs:14:9:` and the message on the next line).
"""

from __future__ import annotations

import json
import re

from patchsmith.model.evidence import ToolFailure, Verdict
from patchsmith.verify.parsers.base import (
    ExitMeaning,
    ExitTable,
    ParserInput,
    exit_verdict,
    relative_path,
)

__all__ = ["EXIT_CODES", "MISSING_SIGNS", "cargo_verdict", "parse_cargo_json"]

EXIT_CODES: ExitTable = {
    0: ExitMeaning(Verdict.PASSED, "built, and every test passed"),
    101: ExitMeaning(Verdict.FAILED, "compile errors or failing tests"),
}
"""cargo's exit codes: 101 is its failure code (with nothing parsed: `error`); any other
code (1: a bad command line, a toolchain problem) is no result."""

MISSING_SIGNS = (
    "could not find `Cargo.toml`",
    "no such command",
    "failed to get `",
    "failed to download",
    "no matching package named",
    "is not installed",
)
"""cargo output meaning the toolchain or the dependencies are not there (offline, no registry)."""


def cargo_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """The verdict of a cargo run that ended with `exit_code`."""
    return exit_verdict(EXIT_CODES, exit_code, data, failures, tool="cargo", signs=MISSING_SIGNS)


_FAILED = re.compile(r"^test (?P<name>\S+) \.\.\. FAILED$")
_PANIC = re.compile(
    r"^thread '(?P<name>[^']+)'(?: \(\d+\))? panicked at "
    r"(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+):?$"
)


def parse_cargo_json(data: ParserInput) -> list[ToolFailure]:
    """Each error or warning diagnostic, then each failed test with its panic location."""
    found: list[ToolFailure] = []
    failed: list[str] = []
    panics: dict[str, tuple[str, int, int, str]] = {}
    lines = data.stdout.splitlines()
    for index, raw in enumerate(lines):
        if raw.startswith("{"):
            diagnostic = _diagnostic(raw, data.root)
            if diagnostic is not None:
                found.append(diagnostic)
            continue
        test = _FAILED.match(raw)
        if test is not None:
            failed.append(test["name"])
            continue
        panic = _PANIC.match(raw)
        if panic is not None:
            message = lines[index + 1].strip() if index + 1 < len(lines) else ""
            panics[panic["name"]] = (
                relative_path(panic["file"], data.root),
                int(panic["line"]),
                int(panic["col"]),
                message,
            )
    for name in failed:
        file, line, col, message = panics.get(name, (None, None, None, ""))
        found.append(
            ToolFailure(
                tool="cargo",
                message=message or f"test {name} failed",
                file=file,
                line=line,
                col=col,
                code="test",
                test_id=name,
                severity="failure",
            )
        )
    return found


def _diagnostic(raw: str, root: str) -> ToolFailure | None:
    try:
        item: object = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("reason") != "compiler-message":
        return None
    message = item.get("message")
    if not isinstance(message, dict):
        return None
    level = str(message.get("level") or "error")
    if level not in ("error", "warning") or _is_summary(message):
        return None
    code_obj = message.get("code")
    code = code_obj.get("code") if isinstance(code_obj, dict) else None
    spans = message.get("spans")
    primary = None
    if isinstance(spans, list):
        primary = next((s for s in spans if isinstance(s, dict) and s.get("is_primary")), None)
    file = line = col = None
    if primary is not None:
        name = primary.get("file_name")
        file = relative_path(name, root) if isinstance(name, str) else None
        line = primary.get("line_start") if isinstance(primary.get("line_start"), int) else None
        col = primary.get("column_start") if isinstance(primary.get("column_start"), int) else None
    return ToolFailure(
        tool="cargo",
        message=str(message.get("message", "")),
        file=file,
        line=line,
        col=col,
        code=str(code) if code else None,
        severity=level,
    )


def _is_summary(message: dict[str, object]) -> bool:
    # "aborting due to 2 previous errors" and "N warnings emitted" carry no location.
    spans = message.get("spans")
    return not spans and not message.get("code")
