"""The common compiler line formats: `file:line:col: message` and `file(line,col): message`.

gcc and clang (`main.c:5:20: error: ...`), eslint's unix formatter, tsc
(`src/a.ts(5,7): error TS2322: ...`), and most tools that follow the GNU convention.
Notes and `In function` headers are not failures.
"""

from __future__ import annotations

import re

from patchsmith.evidence import ToolFailure
from patchsmith.verify.parsers.base import ParserInput, relative_path

__all__ = ["parse_generic"]

_COLON = re.compile(
    r"^(?P<file>[^\s:()][^:()\n]*?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?P<rest>.+)$"
)
_PAREN = re.compile(r"^(?P<file>[^\s:()][^()\n]*?)\((?P<line>\d+),(?P<col>\d+)\):\s*(?P<rest>.+)$")
_SEVERITY = re.compile(r"^(?P<sev>fatal error|error|warning|note|info)\b:?\s*(?P<rest>.*)$", re.I)
_TS_CODE = re.compile(r"^(?P<code>TS\d+):\s*(?P<rest>.*)$")
_TRAILING_CODE = re.compile(r"^(?P<rest>.*?)\s*\[(?P<code>[-\w/@.]+)\]$")


def parse_generic(data: ParserInput) -> list[ToolFailure]:
    """One failure per matching line of stdout then stderr (notes skipped)."""
    found: list[ToolFailure] = []
    for stream in (data.stdout, data.stderr):
        for raw in stream.splitlines():
            failure = _parse_line(raw.rstrip(), data.root)
            if failure is not None:
                found.append(failure)
    return found


def _parse_line(line: str, root: str) -> ToolFailure | None:
    match = _COLON.match(line) or _PAREN.match(line)
    if match is None:
        return None
    rest = match["rest"].strip()
    severity = "error"
    sev = _SEVERITY.match(rest)
    if sev is not None:
        severity = sev["sev"].lower()
        rest = sev["rest"]
    if severity in ("note", "info"):
        return None
    code = None
    ts = _TS_CODE.match(rest)
    if ts is not None:
        code, rest = ts["code"], ts["rest"]
    else:
        trailing = _TRAILING_CODE.match(rest)
        if trailing is not None:
            code, rest = trailing["code"], trailing["rest"]
    col = match["col"]
    return ToolFailure(
        tool="generic",
        message=rest,
        file=relative_path(match["file"], root),
        line=int(match["line"]),
        col=int(col) if col else None,
        code=code,
        severity=severity,
    )
