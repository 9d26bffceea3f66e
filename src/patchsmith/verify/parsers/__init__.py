"""Tool output to `ToolFailure`s: one module per tool family, chosen by a profile's `parser`."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from patchsmith.model.evidence import ToolFailure, Verdict
from patchsmith.verify.parsers.base import ParserInput
from patchsmith.verify.parsers.cargo import cargo_verdict, parse_cargo_json
from patchsmith.verify.parsers.generic import exit_code_verdict, generic_verdict, parse_generic
from patchsmith.verify.parsers.go_test import go_test_verdict, parse_go_test_json
from patchsmith.verify.parsers.mypy import mypy_verdict, parse_mypy_json
from patchsmith.verify.parsers.pytest_junit import parse_pytest_junit, pytest_verdict
from patchsmith.verify.parsers.ruff import parse_ruff_json, ruff_verdict

__all__ = ["ParserInput", "ParserName", "exit_verdict_of", "parse_output"]


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


_VERDICTS: dict[
    ParserName, Callable[[int, ParserInput, list[ToolFailure]], tuple[Verdict, str]]
] = {
    ParserName.PYTEST: pytest_verdict,
    ParserName.RUFF: ruff_verdict,
    ParserName.MYPY: mypy_verdict,
    ParserName.GENERIC: generic_verdict,
    ParserName.GO_TEST: go_test_verdict,
    ParserName.CARGO: cargo_verdict,
    ParserName.EXIT_CODE: exit_code_verdict,
}


def exit_verdict_of(
    parser: ParserName, exit_code: int, data: ParserInput, failures: list[ToolFailure]
) -> tuple[Verdict, str]:
    """What a run that ended by itself with `exit_code` established, by its tool's exit-code
    table (in the parser's module), and why."""
    return _VERDICTS[parser](exit_code, data, failures)
