"""The common compiler line formats: `file:line:col: message` and `file(line,col): message`.

gcc and clang (`main.c:5:20: error: ...`), eslint's unix formatter, tsc
(`src/a.ts(5,7): error TS2322: ...`), and most tools that follow the GNU convention.
Notes and `In function` headers are not failures.
"""

from __future__ import annotations

import re

from patchsmith.model.evidence import ToolFailure, Verdict
from patchsmith.verify.parsers.base import (
    ExitMeaning,
    ParserInput,
    exit_verdict,
    missing_tool,
    relative_path,
)

__all__ = ["MISSING_SIGNS", "exit_code_verdict", "generic_verdict", "parse_generic"]

MISSING_SIGNS = (
    "Missing script:",
    "missing script:",
    "ERR_MODULE_NOT_FOUND",
    "MODULE_NOT_FOUND",
)
"""Output of npm, node or a shell meaning the tool or its modules are not installed."""

_NOT_INSTALLED = re.compile(r"Cannot find module '(?P<name>[^']+)'")
# A package (not a relative path) that cannot be found: `node_modules` is missing or
# incomplete, so nothing the type checker or test runner says is a result.

_SHELL_NOT_FOUND = re.compile(r"^\S*sh: \d+: .+: not found$", re.M)
# dash's "sh: 1: tsc: not found" (npm runs scripts with `sh -c`).

_UNRUNNABLE = {
    126: "the command is not executable",
    127: "the command was not found",
}


def generic_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """tsc, gcc, eslint, npm and other line-oriented tools: 0 passed, 126/127 and a missing
    tool or package `error`, any other code `failed` (compared with the base)."""
    return _line_tool_verdict("generic", exit_code, data, failures)


def exit_code_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """A profile read by its exit code alone: the same rules as `generic`."""
    return _line_tool_verdict("exit-code", exit_code, data, failures)


def _line_tool_verdict(
    tool: str, exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    if exit_code in _UNRUNNABLE:
        return Verdict.ERROR, f"exit {exit_code}: {_UNRUNNABLE[exit_code]}"
    if exit_code != 0:
        shell = _SHELL_NOT_FOUND.search(data.stderr + "\n" + data.stdout)
        if shell is not None:
            return Verdict.ERROR, f"could not run: {shell[0]}"
        package = _missing_package(data)
        if package is not None:
            return Verdict.ERROR, f"a package is not installed: {package}"
        missing = missing_tool(data, MISSING_SIGNS)
        if missing is not None:
            return Verdict.ERROR, f"could not run: {missing}"
    table = {exit_code: ExitMeaning(Verdict.PASSED if exit_code == 0 else Verdict.FAILED, "")}
    verdict, _ = exit_verdict(table, exit_code, data, failures, tool=tool, need_parsed=False)
    return verdict, f"exit {exit_code}" + ("" if exit_code else ": passed")


def _missing_package(data: ParserInput) -> str | None:
    for stream in (data.stdout, data.stderr):
        for match in _NOT_INSTALLED.finditer(stream):
            name = match["name"]
            if not name.startswith((".", "/")) or "node_modules" in name:
                return name
    return None


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
