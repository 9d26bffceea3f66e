"""The syntax guard on a file this process parsed before: incremental parsing, same verdicts.

`changed_problems` reuses the old text's tree-sitter tree and `changed_python_error` the
old text's outline; these tests hold them to the verdicts of parsing the new text afresh,
on random edits of real files and on edit after edit of one file.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.guards.changes import context, update
from tests.shared_data import corpus_cases

from patchsmith.guards.syntax import SyntaxGuard
from patchsmith.runtime import syntax
from patchsmith.runtime.syntax import ParseProblems, changed_problems, parse_problems

_SUFFIXES = (".js", ".ts", ".cts", ".mjs", ".json", ".toml", ".c", ".go", ".rs", ".py")

_SNIPPETS = [
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "`",
    "${",
    "/*",
    "*/",
    "//",
    "'",
    '"',
    '"""',
    ";",
    ",",
    "\n",
    "  ",
    "=>",
    "<div>",
    "</div>",
    "function f() {\n",
    "if (x) {\n",
    "} else {\n",
    "const x = 1;\n",
    "x = 1\n",
    "#",
    "\\",
]

_SMALL = {
    "a.go": "package a\n\nfunc F(x int) int {\n\treturn x + 1\n}\n\nfunc G() {}\n",
    "a.rs": "fn f(x: i32) -> i32 {\n    x + 1\n}\n\nstruct S { a: u8 }\n",
    "a.tsx": "export const A = () => <div>{1}</div>;\nexport const B = 2;\n",
    "a.json": '{"a": [1, 2], "b": {"c": null}}\n',
}


@cache
def _sources() -> tuple[tuple[str, str], ...]:
    """(path, text) of real files with a grammar, clean and broken alike."""
    found: dict[str, str] = dict(_SMALL)
    per_suffix: dict[str, int] = {}
    for case in corpus_cases("public.jsonl.gz"):
        files = case["files"]
        assert isinstance(files, dict)
        for name, text in files.items():
            suffix = name[name.rfind(".") :]
            wanted = suffix in _SUFFIXES and per_suffix.get(suffix, 0) < 6
            if wanted and 500 < len(text) < 80_000 and name not in found:
                per_suffix[suffix] = per_suffix.get(suffix, 0) + 1
                found[name] = text
    return tuple(sorted(found.items()))


@st.composite
def _edited(draw: st.DrawFn) -> tuple[str, str, str]:
    """A file's path, its text, and the text after one to three random edits."""
    path, old = draw(st.sampled_from(_sources()))
    new = old
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "delete", "copy"]))
        if kind == "insert":
            new = new[:at] + draw(st.sampled_from(_SNIPPETS)) + new[at:]
        elif kind == "delete":
            new = new[:at] + new[at + draw(st.integers(1, 40)) :]
        else:
            start = draw(st.integers(0, len(new)))
            new = new[:at] + new[start : start + draw(st.integers(1, 200))] + new[at:]
    return path, old, new


def _fresh(path: str, text: str) -> ParseProblems | None:
    syntax.forget_verdicts()
    return parse_problems(path, text)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    syntax.forget_verdicts()
    yield
    syntax.forget_verdicts()


class TestIncrementalProperties:
    @settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
    @given(_edited())
    def test_incremental_verdict_is_the_fresh_one(self, case: tuple[str, str, str]) -> None:
        """With the old text's tree kept, the verdict on the new text is a fresh parse's."""
        path, old, new = case
        parse_problems(path, old)  # keeps its tree
        incremental = changed_problems(path, old, new)

        assert _fresh(path, new) == incremental

    @settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(_sources()), st.data())
    def test_edit_after_edit(self, source: tuple[str, str], data: st.DataObject) -> None:
        """Trees carried through several incremental parses still give fresh verdicts."""
        path, text = source
        parse_problems(path, text)
        for _ in range(data.draw(st.integers(2, 5))):
            at = data.draw(st.integers(0, len(text)))
            new = text[:at] + data.draw(st.sampled_from(_SNIPPETS)) + text[at:]
            incremental = changed_problems(path, text, new)
            kept = (syntax._VERDICTS, syntax._TREES, syntax._OUTLINES)
            assert _fresh(path, new) == incremental
            syntax._VERDICTS, syntax._TREES, syntax._OUTLINES = kept
            text = new


class TestIncremental:
    JS = "".join(f"function f{n}(x) {{\n  return x + {n};\n}}\n" for n in range(300))

    def test_local_edit_is_not_parsed_afresh(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A clean edit of a file whose tree is kept never parses it from scratch."""
        assert ParseProblems() == changed_problems("a.js", None, self.JS)
        fresh: list[int] = []
        parsed = syntax._parsed
        monkeypatch.setattr(syntax, "_parsed", lambda *args: fresh.append(1) or parsed(*args))
        new = self.JS.replace("return x + 150;", "return x * 150;")

        assert ParseProblems() == changed_problems("a.js", self.JS, new)
        assert [] == fresh
        broken = new.replace("return x * 150;", "return x * ;")
        problems = changed_problems("a.js", new, broken)
        assert [1] == fresh  # problems are always a fresh parse's
        assert problems is not None and problems.count == 1 and problems.first_line == 452

    def test_no_grammar(self) -> None:
        assert changed_problems("notes.txt", "a", "b") is None

    def test_trees_are_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Trees are kept within a byte budget; a text bigger than it is never kept."""
        kept = syntax._Kept[object](2, 100)
        monkeypatch.setattr(syntax, "_TREES", kept)
        for n in range(4):
            parse_problems("a.json", f'{{"a": {n}}}\n')
        assert 2 == len(kept._known)
        parse_problems("a.json", '{"a": "' + "x" * 200 + '"}\n')
        assert 2 == len(kept._known) and kept._total <= 100

    def test_forget_verdicts_drops_trees_and_outlines(self) -> None:
        parse_problems("a.js", self.JS)
        syntax.changed_python_error(None, "x = 1\n")
        assert syntax._TREES._known and syntax._OUTLINES._known

        syntax.forget_verdicts()

        assert not syntax._TREES._known and not syntax._OUTLINES._known


class TestGuardEditAfterEdit:
    @pytest.mark.parametrize("path", ["m.py", "a.js", "a.ts"])
    def test_verdicts_match_a_cold_guard(self, path: str) -> None:
        """The guard judging edit after edit of one file (warm) refuses exactly what a
        guard seeing each change for the first time (cold) refuses."""
        if path.endswith(".py"):
            text = "".join(f"def f{n}(a):\n    return a + {n}\n\n\n" for n in range(80))
            edits = [
                ("return a + 10\n", "return a + 11\n"),
                ("return a + 20\n", "return (a + 20\n"),
                ("return a + 30\n", "return a + 31\n    x = 1\n"),
                ("return a + 40\n", '"""\n'),
                ("def f50(a):\n", "@decorator\ndef f50(a):\n"),
                ("return a + 60\n", "return a +\\\n 60\n"),
            ]
        else:
            text = "".join(f"function f{n}(x) {{\n  return x + {n};\n}}\n" for n in range(80))
            edits = [
                ("return x + 10;", "return x + 11;"),
                ("return x + 20;", "return (x + 20;"),
                ("return x + 30;", "return x + 31; const y = 1;"),
                ("return x + 40;", "return `x"),
                ("function f50", "async function f50"),
            ]
        guard = SyntaxGuard()
        old = text
        for before, after in edits:
            syntax.forget_verdicts()
            guard.check([update(path, "", old)], context())  # the old text seen once
            new = old.replace(before, after)
            assert new != old
            warm = guard.check([update(path, old, new)], context())
            syntax.forget_verdicts()
            cold = guard.check([update(path, old, new)], context())
            assert [f.message for f in cold] == [f.message for f in warm]
            if not warm:
                old = new  # only a change that passed is written
