"""pytest failures from its JUnit XML report (`--junitxml`), read with junitparser."""

from __future__ import annotations

import re

from junitparser import Error, Failure, JUnitXml, JUnitXmlError, TestSuite

from patchsmith.evidence import ToolFailure
from patchsmith.verify.parsers.base import ParserInput, relative_path

__all__ = ["parse_pytest_junit"]

# The last "path:line: ExceptionType" line of pytest's long traceback says where it failed.
_WHERE = re.compile(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<exc>[\w.]+)\s*$", re.M)


def parse_pytest_junit(data: ParserInput) -> list[ToolFailure]:
    """One failure per failed or erroring test case; none when the report is absent or broken."""
    if not data.report:
        return []
    try:
        xml = JUnitXml.fromstring(data.report)
    except (JUnitXmlError, ValueError, SyntaxError):
        return []
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
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
