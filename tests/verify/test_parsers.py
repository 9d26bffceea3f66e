"""Parsers on real tool output (tests/verify/fixtures, captured from the real tools)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.verify.parsers import ParserInput, ParserName, parse_output

FIXTURES = Path(__file__).parent / "fixtures"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _where(failures: list) -> list[tuple[object, ...]]:  # type: ignore[type-arg]
    return [(f.file, f.line, f.col, f.code) for f in failures]


class TestPytest:
    def test_junit_failures(self) -> None:
        """Each failing test case becomes one failure with its id, place and exception."""
        found = parse_output(ParserName.PYTEST, ParserInput("", "", _read("pytest/junit.xml")))

        assert [
            ("tests/test_calc.py", 5, None, "AssertionError"),
            ("tests/test_calc.py", 13, None, "RuntimeError"),
        ] == _where(found)
        assert ["tests.test_calc::test_add", "tests.test_calc::test_error"] == [
            f.test_id for f in found
        ]
        assert found[0].message.startswith("assert -1 == 5")

    def test_no_report_or_broken_report(self) -> None:
        """A missing or malformed report parses to nothing (the exit code decides then)."""
        assert [] == parse_output(ParserName.PYTEST, ParserInput("", "", None))
        assert [] == parse_output(ParserName.PYTEST, ParserInput("", "", "<testsuites><oops"))

    def test_error_in_a_single_suite_report(self) -> None:
        """A report whose root is one <testsuite>, with an <error>, is read too."""
        xml = (
            '<testsuite name="s"><testcase classname="t.m" name="test_x">'
            '<error message="collection failed">t/m.py:3: ImportError</error>'
            "</testcase></testsuite>"
        )
        found = parse_output(ParserName.PYTEST, ParserInput("", "", xml))

        assert [("t/m.py", 3, None, "ImportError")] == _where(found)
        assert "error" == found[0].severity


class TestRuffAndMypy:
    def test_ruff_json(self) -> None:
        """ruff's JSON array: code, place, message; the path made relative to the root."""
        found = parse_output(
            ParserName.RUFF, ParserInput(_read("ruff/check.json"), "", root="/project")
        )

        assert [("pkg/calc.py", 1, 8, "F401")] == _where(found)
        assert "`os` imported but unused" == found[0].message

    def test_mypy_json_lines(self) -> None:
        """mypy's one-object-per-line output."""
        found = parse_output(ParserName.MYPY, ParserInput(_read("mypy/output.jsonl"), ""))

        assert [("pkg/calc.py", 9, 11, "return-value")] == _where(found)

    def test_garbage_is_no_failure(self) -> None:
        """Output that is not the expected JSON parses to nothing, without raising."""
        for parser in (ParserName.RUFF, ParserName.MYPY, ParserName.CARGO, ParserName.GO_TEST):
            assert [] == parse_output(parser, ParserInput("{not json\n[1, 2]\n", ""))


class TestGeneric:
    def test_gcc(self) -> None:
        """gcc's lines: the error and the warning, not the note or the header."""
        found = parse_output(ParserName.GENERIC, ParserInput("", _read("gcc/stderr.txt")))

        assert [("main.c", 4, 13, "-Wint-conversion"), ("main.c", 5, 20, None)] == _where(found)
        assert ["warning", "error"] == [f.severity for f in found]

    def test_tsc(self) -> None:
        """tsc's `file(line,col): error TSnnnn: message` lines."""
        found = parse_output(ParserName.GENERIC, ParserInput(_read("tsc/stdout.txt"), ""))

        assert [
            ("src/index.ts", 5, 7, "TS2322"),
            ("src/index.ts", 6, 13, "TS2304"),
        ] == _where(found)
        assert "Cannot find name 'missing'." == found[1].message

    def test_eslint_unix(self) -> None:
        """eslint's unix formatter: the rule in brackets becomes the code."""
        out = "/project/src/a.js:1:7: unused x. [Error/no-unused-vars]\n"
        found = parse_output(ParserName.GENERIC, ParserInput(out, "", root="/project"))

        assert [("src/a.js", 1, 7, "Error/no-unused-vars")] == _where(found)

    @given(st.text(max_size=200))
    def test_never_raises(self, text: str) -> None:
        """Any text parses without raising, and every failure found has a line number."""
        found = parse_output(ParserName.GENERIC, ParserInput(text, text))

        assert all(f.line is not None and f.line >= 0 for f in found)


class TestGoAndCargo:
    def test_go_test_json(self) -> None:
        """A failed test (with its t.Errorf place) and a build error; passing tests ignored.

        Go 1.19 prints build failures as plain text on stderr, beside the JSON events.
        """
        found = parse_output(
            ParserName.GO_TEST,
            ParserInput(_read("go/test.jsonl"), _read("go/test.stderr.txt")),
        )

        assert [("calc_test.go", 8, None, "test"), ("broken/broken.go", 4, 9, "build")] == (
            _where(found)
        )
        assert "example.com/calc.TestAdd" == found[0].test_id
        assert "add(2, 3) = -1, want 5" == found[0].message

    def test_go_build_output_events(self) -> None:
        """Go 1.24 and later report build failures as `build-output` events on stdout."""
        events = "\n".join(
            [
                '{"ImportPath":"example.com/calc/broken","Action":"build-output",'
                '"Output":"# example.com/calc/broken\\n"}',
                '{"ImportPath":"example.com/calc/broken","Action":"build-output",'
                '"Output":"broken/broken.go:4:9: undefined: missing\\n"}',
                '{"ImportPath":"example.com/calc/broken","Action":"build-fail"}',
            ]
        )
        found = parse_output(ParserName.GO_TEST, ParserInput(events, ""))

        assert [("broken/broken.go", 4, 9, "build")] == _where(found)

    def test_cargo_build_json(self) -> None:
        """rustc diagnostics: the error with its code and primary span; summaries skipped."""
        found = parse_output(ParserName.CARGO, ParserInput(_read("cargo/build.jsonl"), ""))

        assert [("src/main.rs", 6, 21, "E0308"), ("src/main.rs", 7, 30, "E0277")] == _where(found)
        assert "mismatched types" == found[0].message

    def test_cargo_test_failure(self) -> None:
        """libtest's FAILED line and panic location become one failure per test."""
        found = parse_output(ParserName.CARGO, ParserInput(_read("cargo/test.jsonl"), ""))
        tests = [f for f in found if f.test_id]

        assert [("src/main.rs", 14, 9, "test")] == _where(tests)
        assert "tests::adds" == tests[0].test_id
        assert "assertion `left == right` failed" == tests[0].message

    def test_exit_code_parser_finds_nothing(self) -> None:
        """The exit-code parser reads nothing: the exit status alone decides."""
        assert [] == parse_output(ParserName.EXIT_CODE, ParserInput("a.c:1:1: error: x", ""))
