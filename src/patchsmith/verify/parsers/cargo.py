"""cargo's `--message-format=json` compiler messages, and libtest's failing tests.

Compiler diagnostics are JSON lines (`reason: compiler-message`). libtest's own
results are plain text on stdout in stable Rust (`test a::b ... FAILED`, then
`thread 'a::b' panicked at src/lib.rs:14:9:` and the message on the next line).
"""

from __future__ import annotations

import json
import re

from patchsmith.evidence import ToolFailure
from patchsmith.verify.parsers.base import ParserInput, relative_path

__all__ = ["parse_cargo_json"]

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
