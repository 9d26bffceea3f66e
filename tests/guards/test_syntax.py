"""Tests for the syntax guard."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.guards.changes import context, create, delete, update

from patchsmith.errors import FailureCode
from patchsmith.guards.syntax import NEAR, SyntaxGuard
from patchsmith.runtime import syntax
from patchsmith.runtime.syntax import language_for, parse_problems, python_error

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


class TestVerdictCache:
    @pytest.fixture(autouse=True)
    def _fresh(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(syntax, "_VERDICTS", syntax._Verdicts())

    @pytest.mark.parametrize("text", [GOOD["a.py"], BROKEN["a.py"], "x = '\\ud800'\n"])
    def test_python_verdict_parsed_once(self, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """The same text is parsed once; the cached verdict is the parser's own."""
        calls: list[str] = []
        parse = syntax._python_error

        def counting(source: str) -> str | None:
            calls.append(source)
            return parse(source)

        monkeypatch.setattr(syntax, "_python_error", counting)

        first, again = python_error(text), python_error(text)

        assert parse(text) == first == again
        assert [text] == calls

    @pytest.mark.parametrize("path", sorted(GOOD))
    def test_tree_sitter_verdicts_unchanged(self, path: str) -> None:
        """Cached tree-sitter verdicts equal fresh ones, for good and broken texts."""
        for text in (GOOD[path], BROKEN[path]):
            first = parse_problems(path, text)
            again = parse_problems(path, text)
            syntax._VERDICTS = syntax._Verdicts()

            assert parse_problems(path, text) == first == again

    def test_grammar_is_part_of_the_key(self) -> None:
        """The same bytes under two grammars get each grammar's own verdict."""
        text = "x: [1, {\n"
        as_yaml, as_json = parse_problems("a.yaml", text), parse_problems("a.json", text)
        syntax._VERDICTS = syntax._Verdicts()

        assert (parse_problems("a.json", text), parse_problems("a.yaml", text)) == (
            as_json,
            as_yaml,
        )

    def test_size_is_bounded(self) -> None:
        """Only the most recent verdicts are kept."""
        for n in range(syntax._Verdicts.SIZE + 10):
            python_error(f"x = {n}\n")

        assert syntax._Verdicts.SIZE == len(syntax._VERDICTS._known)


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


def _functions(count: int) -> list[str]:
    """Python lines: `count` look-alike functions, six lines each."""
    return [
        line
        for n in range(count)
        for line in (
            f"def f{n}(a, b):\n",
            f"    x = a + {n}\n",
            "    if x > b:\n",
            "        return [x, b]\n",
            "    return {'k': x}\n",
            "\n",
        )
    ]


def _refused(path: str, old: str, new: str) -> bool:
    return bool(SyntaxGuard().check([update(path, old, new)], context()))


class TestAlreadyBrokenFile:
    """A file that did not parse before is judged by where its problems are, not how many."""

    BROKEN_IMPORTS = (
        "import os\nimport sys\nfrom_v2 codecs import open\n\n"
        "from setuptools import_v2 setup\nfrom setuptools import find_packages\n\n"
        + "".join(_functions(6))
    )

    def test_edit_away_from_the_old_problem_passes(self) -> None:
        """A clean edit far from the broken line is accepted."""
        new = self.BROKEN_IMPORTS.replace("    x = a + 4\n", "    x = a + 4\n    y = 2\n")

        assert not _refused("setup.py", self.BROKEN_IMPORTS, new)

    def test_edit_next_to_the_old_problem_passes(self) -> None:
        """Deleting the line after a broken one: tree-sitter re-reads the rest of the file
        differently (new problems far below), so the count grows; read again with the old
        problem's lines blank, the edit adds none."""
        old = (
            "import sys\nfrom_v2 codecs import open\n\nfrom setuptools import_v2 setup\n"
            "from setuptools.command.test import test as TestCommand\n\n"
            "if sys.version_info < (3, 8):\n"
            '    sys.stderr.write(\n        """\nUnsupported\n""".format(\n            *(3, 8)\n'
            "        )\n    )\n    sys.exit(1)\n\n\nclass PyTest(TestCommand):\n"
            "    def run_tests(self):\n        import pytest\n\n"
            "        errno = pytest.main(self.pytest_args)\n        sys.exit(errno)\n"
        )
        new = old.replace("from setuptools.command.test import test as TestCommand\n", "")

        assert parse_problems("setup.py", new).count > parse_problems("setup.py", old).count
        assert not _refused("setup.py", old, new)

    def test_insertion_between_broken_lines_passes(self) -> None:
        """A valid line written between two broken ones is not blamed for their problems."""
        new = self.BROKEN_IMPORTS.replace(
            "\nfrom setuptools import_v2", "\nimport json\nfrom setuptools import_v2"
        )

        assert not _refused("setup.py", self.BROKEN_IMPORTS, new)

    def test_edit_that_shifts_the_old_problem_passes(self) -> None:
        """Lines added above the old problem move it down; it is still old news."""
        lines = _functions(8)
        old = "".join([*lines[:30], "def_v2 g(a):\n", "    return a\n", *lines[30:]])
        new = "".join(["import json\nimport re\n\n", *old.splitlines(keepends=True)])

        assert not _refused("m.py", old, new)

    def test_rewriting_the_broken_lines_passes(self) -> None:
        """An edit that rewrites lines the parser could not read before is not judged by
        how the parser reads them now (the broken `def` still spoils them)."""
        method = [
            "class C:\n",
            "    def_v2 method(\n",
            "        self, a: int, b: int\n",
            "    ) -> int:\n",
            "        return a\n",
            "\n",
        ]
        old = "".join([*_functions(3), *method, *_functions(3)])
        new = old.replace(
            "        self, a: int, b: int\n",
            "        self,\n        a: int,\n        b: int,\n        c: bool = False,\n",
        )

        assert parse_problems("m.py", new).count > parse_problems("m.py", old).count
        assert not _refused("m.py", old, new)

    def test_new_error_far_from_the_old_problem_is_refused(self) -> None:
        """A broken line written where the file parsed is refused, however broken the
        rest of the file is, and even when the problem count does not grow."""
        new = self.BROKEN_IMPORTS.replace("    x = a + 4\n", "    x = (a + 4\n")

        failures = SyntaxGuard().check([update("setup.py", self.BROKEN_IMPORTS, new)], context())

        assert [FailureCode.SYNTAX_ERROR] == [f.code for f in failures]
        assert failures[0].excerpt is not None and "x = (a + 4" in failures[0].excerpt
        assert "from_v2" not in failures[0].excerpt

    def test_new_error_next_to_the_old_problem_is_refused(self) -> None:
        """A broken line written next to a broken one is still the edit's."""
        new = self.BROKEN_IMPORTS.replace("import sys\n", "import sys\nimport (\n")

        assert _refused("setup.py", self.BROKEN_IMPORTS, new)

    def test_trading_the_old_problem_for_a_new_one_is_refused(self) -> None:
        """Fixing the old problem does not pay for a new one elsewhere (same count)."""
        new = self.BROKEN_IMPORTS.replace("from_v2 codecs", "from codecs").replace(
            "    x = a + 4\n", "    x = a +\n"
        )

        assert _refused("setup.py", self.BROKEN_IMPORTS, new)

    @pytest.mark.parametrize(
        ("edit", "refused"),
        [
            (("  return x;\n", "  return x;\n  const y = 1;\n"), False),
            (("  return x;\n", "  return x +;\n"), True),
            (("function g(x) {\n", "// g\nfunction g(x) {\n"), False),
            (("function g(x) {\n", "function g(x {\n"), True),
        ],
    )
    def test_other_languages_by_location(self, edit: tuple[str, str], refused: bool) -> None:
        """The same rule for every grammar: JavaScript broken at its top."""
        body = "".join(f"const v{n} = {n};\n" for n in range(30))
        old = "function f( {\n" + body + "function g(x) {\n  return x;\n}\n"

        assert refused == _refused("a.js", old, old.replace(*edit))

    def test_clean_file_is_judged_as_before(self) -> None:
        """A file that parsed before: any problem refuses, as the count rule did."""
        old = "".join(_functions(4))
        new = old.replace("def f3(a, b):\n", "def f3(a, b:\n")

        failures = SyntaxGuard().check([update("m.py", old, new)], context())

        assert 1 == len(failures)
        assert "line 19" in failures[0].message


@st.composite
def _broken_python(draw: st.DrawFn) -> tuple[list[str], int]:
    """Look-alike functions with one keyword misspelt (a stale file's damage), and where."""
    lines = _functions(draw(st.integers(2, 8)))
    candidates = [
        n for n, line in enumerate(lines) if line.lstrip().startswith(("def ", "if ", "return "))
    ]
    at = draw(st.sampled_from(candidates))
    keyword = lines[at].lstrip().split(" ", 1)[0]
    lines[at] = lines[at].replace(keyword + " ", keyword + "_v2 ", 1)
    return lines, at


class TestAlreadyBrokenProperties:
    @given(_broken_python(), st.data())
    def test_a_valid_statement_anywhere_passes(
        self, case: tuple[list[str], int], data: st.DataObject
    ) -> None:
        """Inserting a valid statement into any function body of the broken file passes."""
        lines, _ = case
        bodies = [n + 1 for n, line in enumerate(lines) if line.startswith("    x = a")]
        at = data.draw(st.sampled_from(bodies))
        statement = data.draw(st.sampled_from(["    y = 1\n", "    print(a)\n", "    # note\n"]))
        new = [*lines[:at], statement, *lines[at:]]

        assert not _refused("m.py", "".join(lines), "".join(new))

    @given(_broken_python(), st.data())
    def test_a_broken_statement_away_from_the_damage_is_refused(
        self, case: tuple[list[str], int], data: st.DataObject
    ) -> None:
        """A broken statement written more than `NEAR` lines from the damage is refused."""
        lines, broken = case
        bodies = [
            n + 1
            for n, line in enumerate(lines)
            if line.startswith("    x = a") and abs(n + 1 - broken) > NEAR + 1
        ]
        assume(bodies)
        at = data.draw(st.sampled_from(bodies))
        statement = data.draw(st.sampled_from(["    y = (1,\n", "    return ]\n", "    if :\n"]))
        new = [*lines[:at], statement, *lines[at:]]

        assert _refused("m.py", "".join(lines), "".join(new))


class TestCarriedToTheEnd:
    def test_problem_that_ends_with_the_text_moves_with_it(self) -> None:
        """A problem that runs to the end of the text is carried to the new end."""
        old = "a = 1\nb = 2\nc = 3\n(\n"
        new = "z = 0\n" + old.replace("b = 2", "b = 3")

        problems = parse_problems("a.toml", old)
        assert problems is not None and problems.spans[-1][2] == 4  # past the last line
        assert not _refused("a.toml", old, new)
        assert _refused("a.toml", old, new.replace("b = 3", "b = ]"))
