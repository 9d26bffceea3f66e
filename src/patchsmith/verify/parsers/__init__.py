"""Tool output to `ToolFailure`s: one module per tool family, chosen by a profile's `parser`."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from patchsmith.evidence import ToolFailure
from patchsmith.verify.parsers.base import ParserInput
from patchsmith.verify.parsers.cargo import parse_cargo_json
from patchsmith.verify.parsers.generic import parse_generic
from patchsmith.verify.parsers.go_test import parse_go_test_json
from patchsmith.verify.parsers.mypy import parse_mypy_json
from patchsmith.verify.parsers.pytest_junit import parse_pytest_junit
from patchsmith.verify.parsers.ruff import parse_ruff_json

__all__ = ["ParserInput", "ParserName", "parse_output"]


class ParserName(StrEnum):
    """The output formats a profile can declare (`parser = "..."`)."""

    PYTEST = "pytest"
    """JUnit XML written by `pytest --junitxml={report}`."""
    RUFF = "ruff"
    """`ruff check --output-format json`."""
    MYPY = "mypy"
    """`mypy --output json`."""
    GENERIC = "generic"
    """`file:line:col: message` or `file(line,col): message` lines (gcc, clang, tsc, eslint)."""
    GO_TEST = "go-test"
    """`go test -json`."""
    CARGO = "cargo"
    """`cargo build|test --message-format=json`."""
    EXIT_CODE = "exit-code"
    """Nothing parsed: the exit code alone decides."""


_PARSERS: dict[ParserName, Callable[[ParserInput], list[ToolFailure]]] = {
    ParserName.PYTEST: parse_pytest_junit,
    ParserName.RUFF: parse_ruff_json,
    ParserName.MYPY: parse_mypy_json,
    ParserName.GENERIC: parse_generic,
    ParserName.GO_TEST: parse_go_test_json,
    ParserName.CARGO: parse_cargo_json,
    ParserName.EXIT_CODE: lambda _data: [],
}


def parse_output(parser: ParserName, data: ParserInput) -> list[ToolFailure]:
    """The failures `parser` finds in one run's output (never raises on odd output)."""
    return _PARSERS[parser](data)
