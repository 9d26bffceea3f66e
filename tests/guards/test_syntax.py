"""Tests for the syntax guard."""

from __future__ import annotations

import pytest
from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.syntax import SyntaxGuard, language_for, parse_problems, python_error

GOOD = {
    "a.py": "def f(x):\n    return x + 1\n",
    "a.js": "function f(x) {\n  return x + 1;\n}\n",
    "a.ts": "function f(x: number): number {\n  return x + 1;\n}\n",
    "a.tsx": "export const A = () => <div>{1}</div>;\n",
    "a.go": "package a\n\nfunc F(x int) int {\n\treturn x + 1\n}\n",
    "a.rs": "fn f(x: i32) -> i32 {\n    x + 1\n}\n",
    "a.json": '{"a": [1, 2]}\n',
}
BROKEN = {
    "a.py": "def f(x:\n    return x + 1\n",
    "a.js": "function f(x) {\n  return x + ;\n",
    "a.ts": "function f(x: number: number {\n  return x + 1;\n}\n",
    "a.tsx": "export const A = () => <div>{1</div>;\n",
    "a.go": "package a\n\nfunc F(x int) int {\n\treturn x +\n",
    "a.rs": "fn f(x: i32) -> i32 {\n    x + 1\n",
    "a.json": '{"a": [1, 2}\n',
}


class TestSyntaxGuard:
    @pytest.mark.parametrize("path", sorted(GOOD))
    def test_breaking_a_clean_file_is_refused(self, path: str) -> None:
        """Each supported language refuses a change that breaks a clean file."""
        failures = SyntaxGuard().check([update(path, GOOD[path], BROKEN[path])], context())

        assert [FailureCode.SYNTAX_ERROR] == [f.code for f in failures]
        assert "syntax" == failures[0].rule

    @pytest.mark.parametrize("path", sorted(GOOD))
    def test_valid_edit_passes(self, path: str) -> None:
        """A change that keeps the file valid passes."""
        new = GOOD[path].replace("1", "2")

        assert [] == SyntaxGuard().check([update(path, GOOD[path], new)], context())

    def test_creating_a_broken_file_is_refused(self) -> None:
        """A new file must parse."""
        assert 1 == len(SyntaxGuard().check([create("n.go", BROKEN["a.go"])], context()))

    def test_already_broken_file_may_stay_broken(self) -> None:
        """A file that did not parse before may be edited without fixing it."""
        old = BROKEN["a.js"]
        new = "// note\n" + old

        assert [] == SyntaxGuard().check([update("a.js", old, new)], context())

    def test_more_errors_in_a_broken_file_are_refused(self) -> None:
        """A broken file may not get more broken."""
        old = BROKEN["a.js"]
        new = old + "const = ;\nlet (;\n"

        assert 1 == len(SyntaxGuard().check([update("a.js", old, new)], context()))

    def test_python_indentation_error_caught_by_ast(self) -> None:
        """`ast` catches errors tree-sitter tolerates, and names the line."""
        old = "def f():\n    return 1\n"
        new = "def f():\n    x = 1\n      return x\n"

        failures = SyntaxGuard().check([update("m.py", old, new)], context())

        assert 1 == len(failures)
        assert "line 3" in failures[0].message

    def test_python_newer_syntax_falls_back_to_tree_sitter(self) -> None:
        """When old and new both fail `ast` (newer syntax), tree-sitter's counts decide."""
        old = "match = 1\ndef f():\n    return (yield from)\n"
        new = old + "x = 2\n"

        assert python_error(old) is not None
        assert [] == SyntaxGuard().check([update("m.py", old, new)], context())

    @pytest.mark.parametrize("path", ["notes.txt", "Makefile", "a.unknownext"])
    def test_unknown_languages_pass(self, path: str) -> None:
        """Files without a grammar are not judged."""
        assert None is language_for(path)
        assert [] == SyntaxGuard().check([update(path, "a\n", "{{{(\n")], context())

    def test_deletion_and_binary_pass(self) -> None:
        """Deleted files and binary content are not parsed."""
        changes = [delete("a.py", GOOD["a.py"]), update("b.py", "x = 1\n", b"\x00\x01")]

        assert [] == SyntaxGuard().check(changes, context())

    def test_parse_problems_reports_first_line(self) -> None:
        """The first problem's line is reported."""
        problems = parse_problems("a.go", BROKEN["a.go"])

        assert problems is not None
        assert problems.count >= 1
        assert problems.first_line is not None


class TestExcerptNearTheEdit:
    def test_broken_file_shows_the_error_nearest_the_edit(self) -> None:
        """In a file broken at its top, the excerpt is about the edit, not the old error."""
        body = "".join(f"const v{n} = {n};\n" for n in range(60))
        old = "function f( {\n" + body + "function g(x) {\n  return x;\n}\n"
        new = old.replace("  return x;\n", "  return x +;\n")

        failures = SyntaxGuard().check([update("a.js", old, new)], context())

        assert [FailureCode.SYNTAX_ERROR] == [f.code for f in failures]
        excerpt = failures[0].excerpt
        assert excerpt is not None
        assert "return x +;" in excerpt
        assert "function f( {" not in excerpt

    def test_problem_lines_are_listed(self) -> None:
        """`parse_problems` lists every line where a problem starts."""
        problems = parse_problems("a.js", "let a = ;\nlet b = 1;\nlet c = ;\n")

        assert problems is not None
        assert (1, 3) == problems.lines
