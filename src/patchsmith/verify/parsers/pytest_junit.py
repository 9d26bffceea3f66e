"""pytest failures from its JUnit XML report (`--junitxml`), read with junitparser."""

from __future__ import annotations

import re
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, JUnitXmlError, TestSuite

from patchsmith.model.evidence import ToolFailure, Verdict
from patchsmith.verify.parsers.base import (
    ExitMeaning,
    ExitTable,
    ParserInput,
    exit_verdict,
    missing_tool,
    relative_path,
)

__all__ = ["EXIT_CODES", "collected_files", "parse_pytest_junit", "pytest_verdict"]

EXIT_CODES: ExitTable = {
    0: ExitMeaning(Verdict.PASSED, "every collected test passed"),
    1: ExitMeaning(Verdict.FAILED, "tests failed"),
    2: ExitMeaning(Verdict.ERROR, "interrupted (collection errors or a signal)"),
    3: ExitMeaning(Verdict.ERROR, "internal error"),
    4: ExitMeaning(Verdict.ERROR, "usage error (bad options or addopts, a conftest that fails)"),
    5: ExitMeaning(Verdict.ERROR, "no tests collected"),
}
"""pytest's exit codes (`pytest.ExitCode`). Exit 2 is `error` even when the report names
collection errors: no test ran, so nothing about the tests was established."""


def pytest_verdict(
    exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """The verdict of a pytest run: its exit code, and its JUnit report when one was asked."""
    suites = _suites(data.report)
    if suites is None:
        missing = missing_tool(data)
        if missing is not None:
            return Verdict.ERROR, f"pytest could not run: {missing}"
        if data.report_expected:
            meaning = EXIT_CODES.get(exit_code)
            said = f" ({meaning.meaning})" if meaning is not None else ""
            return Verdict.ERROR, f"pytest exit {exit_code}{said} and no JUnit report"
    return exit_verdict(EXIT_CODES, exit_code, data, failures, tool="pytest")


def collected_files(data: ParserInput) -> tuple[str, ...]:
    """The test files (relative to `data.root`) the report lists a test case of, sorted."""
    suites = _suites(data.report)
    if suites is None or not data.root:
        return ()
    root = Path(data.root)
    found: set[str] = set()
    for suite in suites:
        for case in suite:
            file = case._elem.get("file")  # junit_family=xunit1 writes it
            if file:
                found.add(relative_path(file, data.root))
                continue
            parts = (case.classname or "").split(".")
            # `tests.test_a.TestX` is tests/test_a.py: the longest prefix naming a file.
            for end in range(len(parts), 0, -1):
                candidate = "/".join(parts[:end]) + ".py"
                if (root / candidate).is_file():
                    found.add(candidate)
                    break
    return tuple(sorted(found))


def _suites(report: str | None) -> list[TestSuite] | None:
    if not report:
        return None
    try:
        xml = JUnitXml.fromstring(report)
    except (JUnitXmlError, ValueError, SyntaxError):
        return None
    return [xml] if isinstance(xml, TestSuite) else list(xml)


# The last "path:line: ExceptionType" line of pytest's long traceback says where it failed.
_WHERE = re.compile(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<exc>[\w.]+)\s*$", re.M)


def parse_pytest_junit(data: ParserInput) -> list[ToolFailure]:
    """One failure per failed or erroring test case; none when the report is absent or broken."""
    suites = _suites(data.report)
    if suites is None:
        return []
    found: list[ToolFailure] = []
    for suite in suites:
        for case in suite:
            for result in case.result:
                if not isinstance(result, Failure | Error):
                    continue
                found.append(_failure(case.classname or "", case.name or "", result, data.root))
    return found


def _failure(classname: str, name: str, result: Failure | Error, root: str) -> ToolFailure:
    text = result.text or ""
    where = list(_WHERE.finditer(text))
    file = line = code = None
    if where:
        last = where[-1]
        file = relative_path(last["file"], root)
        line = int(last["line"])
        code = last["exc"]
    message = (result.message or "").strip() or (text.strip().splitlines() or [""])[-1]
    kind = "error" if isinstance(result, Error) else "failure"
    return ToolFailure(
        tool="pytest",
        message=message,
        file=file,
        line=line,
        code=code or result.type or kind,
        test_id=f"{classname}::{name}" if classname else name,
        severity=kind,
    )
