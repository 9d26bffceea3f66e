"""`go test -json` events (cmd/test2json): failing tests and build errors."""

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
from patchsmith.verify.parsers.generic import parse_generic

__all__ = ["EXIT_CODES", "MISSING_SIGNS", "go_test_verdict", "parse_go_test_json"]

EXIT_CODES: ExitTable = {
    0: ExitMeaning(Verdict.PASSED, "every package built and passed"),
    1: ExitMeaning(Verdict.FAILED, "failing tests or build errors"),
    2: ExitMeaning(Verdict.ERROR, "usage error"),
}
"""`go test`'s exit codes."""

MISSING_SIGNS = (
    "no required module provides package",
    "missing go.sum entry",
    "toolchain not available",
    "go.mod file not found",
    "cannot find main module",
)
"""go output meaning a dependency or the toolchain is not there (nothing was tested)."""


def go_test_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """The verdict of a `go test -json` run that ended with `exit_code`."""
    return exit_verdict(EXIT_CODES, exit_code, data, failures, tool="go", signs=MISSING_SIGNS)


# t.Errorf and friends print "    file_test.go:12: message" under the test's output.
_TEST_LINE = re.compile(r"^\s+(?P<file>[\w./-]+\.go):(?P<line>\d+): (?P<msg>.*)$")


def parse_go_test_json(data: ParserInput) -> list[ToolFailure]:
    """One failure per failed test (`Action: fail` with a `Test`), plus each build error."""
    outputs: dict[tuple[str, str], list[str]] = {}
    build_output: list[str] = []
    found: list[ToolFailure] = []
    for raw in data.stdout.splitlines():
        if not raw.startswith("{"):
            build_output.append(raw)  # go prints build failures as plain text before Go 1.24
            continue
        try:
            event: object = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        action = event.get("Action")
        package = str(event.get("Package") or event.get("ImportPath") or "")
        test = str(event.get("Test") or "")
        output = event.get("Output")
        if action == "build-output" and isinstance(output, str):
            build_output.append(output.rstrip("\n"))
        elif action == "output" and isinstance(output, str):
            outputs.setdefault((package, test), []).append(output.rstrip("\n"))
        elif action == "fail" and test:
            found.append(_test_failure(package, test, outputs.get((package, test), []), data.root))
    text = "\n".join(build_output)
    for failure in parse_generic(ParserInput(text, data.stderr, root=data.root)):
        found.append(
            ToolFailure(
                tool="go",
                message=failure.message,
                file=failure.file,
                line=failure.line,
                col=failure.col,
                code="build",
                severity=failure.severity,
            )
        )
    return found


def _test_failure(package: str, test: str, lines: list[str], root: str) -> ToolFailure:
    file = line = None
    messages: list[str] = []
    for text in lines:
        match = _TEST_LINE.match(text)
        if match is not None:
            if file is None:
                file, line = relative_path(match["file"], root), int(match["line"])
            messages.append(match["msg"])
    message = "; ".join(messages) or f"{test} failed"
    return ToolFailure(
        tool="go",
        message=message,
        file=file,
        line=line,
        code="test",
        test_id=f"{package}.{test}" if package else test,
        severity="failure",
    )
