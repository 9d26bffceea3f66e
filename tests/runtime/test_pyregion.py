"""Tests for the Python region check (`runtime.pyregion`) and `changed_python_error`.

The check may only ever say "the new text parses" when `ast.parse` of the whole new text
says so; when it cannot tell, the whole text is parsed. The properties edit real Python
files (the standard library's and the corpus's) at random, with edits chosen to open and
close triple quotes, brackets and blocks, and compare with parsing the whole file.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.shared_data import corpus_cases

from patchsmith.engine.textedits import text_edits
from patchsmith.runtime import pyregion, syntax
from patchsmith.runtime.pyregion import Outline, outline_of, region_outline
from patchsmith.runtime.syntax import changed_python_error, python_error

_STDLIB = [
    "textwrap",
    "dataclasses",
    "functools",
    "string",
    "shlex",
    "fractions",
    "heapq",
    "contextlib",
    "abc",
    "json.decoder",
    "email.message",
    "configparser",
    "pprint",
    "tokenize",
    "calendar",
    "csv",
]

_SNIPPETS = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    '"""',
    "'''",
    '"',
    "'",
    "\\\n",
    "\\",
    "\n",
    "    ",
    "\t",
    ":",
    ";",
    ";x = 1",
    "#",
    "else:\n",
    "elif x:\n",
    "except ValueError:\n    pass\n",
    "finally:\n    pass\n",
    "@decorator\n",
    "@(\n",
    "def f():\n",
    "    pass\n",
    "x = 1\n",
    "class C:\n",
    "if x:\n",
    "try:\n",
    "from __future__ import annotations\n",
    '"""doc\n',
    "\r",
    "\r\n",
    "\f",
    "\x00",
    "match x:\n    case 1:\n        pass\n",
    "    def method(self):\n        pass\n",
    "        return 1\n",
    "    x = 1\n",
    "  x = 1\n",
]


def _tree(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes in the files read
        return ast.parse(text)


def _parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except Exception:
            return False
    return True


def _corpus_python() -> Iterator[str]:
    seen = 0
    for case in corpus_cases("public.jsonl.gz"):
        files = case["files"]
        assert isinstance(files, dict)
        for name, text in files.items():
            if name.endswith(".py") and 2_000 < len(text) < 60_000 and _parses(text):
                yield text
                seen += 1
                if seen >= 12:
                    return


@cache
def _sources() -> tuple[str, ...]:
    files = [inspect.getsourcefile(importlib.import_module(name)) or "" for name in _STDLIB]
    texts = [Path(file).read_text(encoding="utf-8") for file in files]
    return tuple(texts + list(_corpus_python()))


@cache
def _outline(text: str) -> Outline:
    outline = outline_of(_tree(text), text)
    assert outline is not None
    return outline


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


@st.composite
def _edited(draw: st.DrawFn) -> tuple[str, str]:
    """A real Python file and the same file after one to three random edits."""
    old = draw(st.sampled_from(_sources()))
    new = old
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "insert line", "delete", "delete lines", "copy"]))
        if kind == "insert":
            new = new[:at] + draw(st.sampled_from(_SNIPPETS)) + new[at:]
        elif kind == "insert line":
            at = _line_start(new, at)
            new = new[:at] + draw(st.sampled_from(_SNIPPETS)) + new[at:]
        elif kind == "delete":
            new = new[:at] + new[at + draw(st.integers(1, 40)) :]
        else:
            start = _line_start(new, at)
            end = start
            for _ in range(draw(st.integers(1, 12))):
                found = new.find("\n", end)
                end = len(new) if found < 0 else found + 1
            if kind == "delete lines":
                new = new[:start] + new[end:]
            else:  # copy those lines to the start of another line
                to = _line_start(new, draw(st.integers(0, len(new))))
                new = new[:to] + new[start:end] + new[to:]
    return old, new


def _valid_cut(text: str, cut: int) -> bool:
    """True when no top-level statement of `text` spans row `cut` (0-based) with the
    rows before it: every statement ends before the cut or starts at it or after."""
    for statement in _tree(text).body:
        decorators = getattr(statement, "decorator_list", [])
        first = min([statement.lineno] + [d.lineno for d in decorators])
        assert statement.end_lineno is not None
        if first - 1 < cut <= statement.end_lineno - 1:
            return False
    return True


def _valid_blocks(text: str, outline: Outline) -> None:
    """Each block is the body of a top-level class of `text`, at its column, and no
    statement of that body spans one of the block's cuts."""
    classes = [s for s in _tree(text).body if isinstance(s, ast.ClassDef) and len(s.body) > 1]
    assert not outline.blocks or outline.plain
    for block in outline.blocks:
        start = block.first
        holding = [c for c in classes if c.body[0].lineno - 1 < start <= (c.end_lineno or 0)]
        assert len(holding) == 1
        body = holding[0].body
        assert body[0].col_offset == block.indent
        for cut in block.rows():
            for statement in body:
                decorators = getattr(statement, "decorator_list", [])
                first = min([statement.lineno] + [d.lineno for d in decorators])
                assert not first - 1 < cut <= (statement.end_lineno or 0) - 1


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    syntax.forget_verdicts()
    yield
    syntax.forget_verdicts()


class TestRegionProperties:
    @settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
    @given(_edited())
    def test_region_verdict_is_the_whole_parse_verdict(self, texts: tuple[str, str]) -> None:
        """The region check says "parses" only when the whole new text parses; its cuts
        are real cuts of the new text, every cut of the new text's own outline among them."""
        old, new = texts
        found = region_outline(_outline(old), old, new, text_edits(old, new), len(new))
        event("region decided" if found is not None else "whole parse")
        if found is None:
            return
        assert _parses(new)
        assert all(_valid_cut(new, cut) for cut in found.cuts)
        own = outline_of(_tree(new), new)
        if own is not None:
            assert set(own.cuts) <= set(found.cuts)
        _valid_blocks(new, found)
        if own is not None and own.plain and found.plain:
            assert len(own.blocks) == len(found.blocks)
            for mine, theirs in zip(own.blocks, found.blocks, strict=True):
                assert set(mine.rows()) <= set(theirs.rows())

    @settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
    @given(_edited(), st.booleans())
    def test_changed_python_error_is_python_error(self, texts: tuple[str, str], seen: bool) -> None:
        """The guard's entry point gives exactly `python_error`'s answer, message and all,
        whether or not the old text was parsed before."""
        old, new = texts
        syntax.forget_verdicts()
        if seen:
            assert changed_python_error(None, old) is None  # keeps the old text's outline
        answer = changed_python_error(old, new)
        syntax.forget_verdicts()

        assert python_error(new) == answer

    @settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_edited(), min_size=2, max_size=4))
    def test_outlines_carry_from_edit_to_edit(self, steps: list[tuple[str, str]]) -> None:
        """Edit after edit of one file (each new text the next old one), the carried
        outline keeps giving the whole parse's verdict."""
        old = steps[0][0]
        changed_python_error(None, old)
        for _, edited in steps:
            new = edited if edited != old else old + "x = 1\n"
            answer = changed_python_error(old, new)
            assert (answer is None) == _parses(new)
            if answer is not None:
                return  # an invalid text has no outline: the chain ends here
            old = new


def _module(count: int) -> str:
    return "".join(f"def f{n}(a):\n    return a + {n}\n\n\n" for n in range(count))


def _check(old: str, new: str) -> Outline | None:
    return region_outline(_outline(old), old, new, text_edits(old, new), len(new))


class TestRegion:
    def test_local_edit_parses_only_its_statement(self) -> None:
        """A change inside one function is judged by that function's rows alone."""
        old = _module(50)
        new = old.replace("return a + 25\n", "return [a, 25]\n")

        found = _check(old, new)

        assert found is not None
        assert list(_outline(new).cuts) == list(found.cuts)

    def test_broken_statement_is_left_to_the_whole_parse(self) -> None:
        assert _check(_module(5), _module(5).replace("return a + 2\n", "return (a + 2\n")) is None

    def test_lines_joined_across_the_region_end(self) -> None:
        """Deleting the line break that ends the region's last row joins it to the next
        statement: the region alone would parse, the file does not."""
        old = "x = 1\ny = 2\n"
        new = "x = 1y = 2\n"

        assert not _parses(new)
        assert _check(old, new) is None

    def test_backslash_before_the_region(self) -> None:
        """A line continued by a backslash runs into the region: not cut there."""
        old = "x = 1\n\\\ny = 2\nz = 3\n"
        new = old.replace("y = 2", "  y = 2")

        assert _check(old, new) is None
        assert changed_python_error(None, old) is None
        assert python_error(new) == changed_python_error(old, new)

    def test_backslash_at_the_region_end(self) -> None:
        old = "x = 1\ny = 2\nz = 3\n"
        new = "x = 1\ny = 2 \\\nz = 3\n"

        assert _check(old, new) is None

    def test_else_after_the_region_stays_with_its_if(self) -> None:
        """An `if` and its `else` are one statement: an edit of either parses both."""
        old = "if x:\n    a = 1\nelse:\n    a = 2\ny = 3\n"
        new = old.replace("    a = 1\n", "    a = 1\n    b = 1\n")

        found = _check(old, new)

        assert found is not None and [5, 6] == list(found.cuts)
        assert _check(old, old.replace("if x:\n", "while x:\n")) is not None
        assert _check(old, old.replace("if x:\n", "x = 1\n")) is None

    def test_opening_a_triple_quote_is_refused_by_the_whole_parse(self) -> None:
        old = _module(3)
        new = old.replace("return a + 1\n", 'return """a + 1\n')

        assert _check(old, new) is None
        assert python_error(new) == changed_python_error(old, new)

    def test_future_import_mid_file_is_left_to_the_whole_parse(self) -> None:
        old = _module(3)
        new = old + "from __future__ import annotations\n"

        assert _check(old, new) is None

    def test_lone_carriage_return(self) -> None:
        """Python counts a lone CR as a line break; the rows here do not: no outline, and
        an edit that writes one is left to the whole parse."""
        assert outline_of(_tree("x = 1\ry = 2\n"), "x = 1\ry = 2\n") is None
        old = _module(3)
        assert _check(old, old.replace("return a + 1\n", "return a + 1\r")) is None

    def test_barry_as_flufl(self) -> None:
        text = "from __future__ import barry_as_FLUFL\nx = 1\n"
        assert outline_of(_tree(text), text) is None
        old = _module(3)
        new = old.replace("return a + 1\n", "return barry_as_FLUFL\n")
        assert _check(old, new) is None

    def test_region_too_big(self) -> None:
        """A change that touches most statements is parsed whole."""
        old = _module(10)
        new = old.replace("return a", "return -a")

        assert region_outline(_outline(old), old, new, text_edits(old, new), len(new) // 2) is None
        assert _check(old, new) is not None

    def test_no_edit_keeps_the_outline(self) -> None:
        old = _module(3)
        assert _outline(old) == region_outline(_outline(old), old, old, [], 0)

    def test_semicolon_statements_share_a_row(self) -> None:
        """Statements on one line are never cut apart."""
        text = "x = 1; y = (\n2)\nz = 3\n"

        assert [2, 3] == list(_outline(text).cuts)

    def test_text_without_final_newline(self) -> None:
        old = "x = 1\ny = 2"
        new = "x = 1\ny = 2\nz = 3"

        found = _check(old, new)

        assert found is not None
        assert changed_python_error(old, new) is None

    def test_edits_in_two_places(self) -> None:
        """Edits far apart are two regions; both must parse."""
        old = _module(40)
        new = old.replace("return a + 3\n", "return a + 33\n").replace(
            "return a + 37\n", "return a + 377\n"
        )
        assert _check(old, new) is not None
        broken = new.replace("return a + 377\n", "return a + \n")
        assert _check(old, broken) is None


def _class(methods: int) -> str:
    body = "".join(
        f"    def m{n}(self, a):\n        if a:\n            return a + {n}\n        return {n}\n\n"
        for n in range(methods)
    )
    return f'import os\n\n\nclass Big:\n    """A big class."""\n\n{body}\nx = Big()\n'


def _plain(outline: Outline | None) -> object:
    """What an outline says, whichever way its blocks hold their rows."""
    if outline is None:
        return None
    blocks = [(block.indent, block.rows()) for block in outline.blocks]
    return list(outline.cuts), blocks, outline.plain


class TestClassBody:
    """Inside a top-level class, the region is the body statements around the edit."""

    def _parsed_lengths(self, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        lengths: list[int] = []
        parse = ast.parse

        def counting(text: str, *args: Any, **kwargs: Any) -> ast.Module:
            lengths.append(len(text))
            return parse(text, *args, **kwargs)

        monkeypatch.setattr(pyregion.ast, "parse", counting)
        return lengths

    def test_edit_in_a_method_parses_that_method(self, monkeypatch: pytest.MonkeyPatch) -> None:
        old = _class(100)
        new = old.replace("return a + 50\n", "return [a, 50]\n")
        _outline(old)
        lengths = self._parsed_lengths(monkeypatch)

        found = _check(old, new)

        assert found is not None and 1 == len(lengths) and lengths[0] < 200
        monkeypatch.undo()
        own = outline_of(_tree(new), new)
        assert own is not None and _plain(own) == _plain(found)

    def test_new_method_between_two(self) -> None:
        old = _class(20)
        new = old.replace("    def m7(", "    def extra(self):\n        pass\n\n    def m7(")

        found = _check(old, new)

        assert found is not None
        assert _plain(found) == _plain(outline_of(_tree(new), new))

    @pytest.mark.parametrize(
        "written",
        [
            "def m9(self, a):\n",  # dedented to column 0: the class would end here
            "      def m9(self, a):\n",  # a column the class body does not use
            "    def m9(self, a:\n",  # unclosed
            "    else:\n        pass\n    def m9(self, a):\n",  # continues nothing
        ],
    )
    def test_what_leaves_the_body_is_the_whole_parse(self, written: str) -> None:
        """Rows that would not be the same class's body are not judged as one."""
        old = _class(20)
        new = old.replace("    def m9(self, a):\n", written)

        assert python_error(new) is not None
        assert _check(old, new) is None
        assert changed_python_error(None, old) is None
        assert python_error(new) == changed_python_error(old, new)

    def test_tabs_keep_no_blocks(self) -> None:
        """A tab anywhere (here in a string) and class bodies are not cut."""
        text = _class(3) + "y = '\t'\n"

        outline = outline_of(_tree(text), text)

        assert outline is not None and () == outline.blocks and not outline.plain
        new = text.replace("return a + 1\n", "return a + 11\n")
        found = _check(text, new)
        assert found is not None and () == found.blocks

    def test_tab_written_into_a_method_drops_the_blocks(self) -> None:
        old = _class(10)
        new = old.replace("return a + 5\n", "return a + 5  # \t\n")

        found = _check(old, new)

        assert found is not None and () == found.blocks and not found.plain

    def test_edit_of_the_first_body_statement_is_a_top_level_region(self) -> None:
        old = _class(10)
        new = old.replace('"""A big class."""', '"""A bigger class."""')

        found = _check(old, new)

        assert found is not None and _plain(found) == _plain(outline_of(_tree(new), new))


class TestChangedPythonError:
    def test_whole_parse_not_repeated_for_a_local_edit(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The second edit of a file parses only the changed statement."""
        old = _module(200)
        assert changed_python_error(None, old) is None
        parsed: list[int] = []
        whole = syntax._ast_module

        def counting(text: str) -> ast.Module | str:
            parsed.append(len(text))
            return whole(text)

        monkeypatch.setattr(syntax, "_ast_module", counting)
        new = old.replace("return a + 100\n", "return a - 100\n")

        assert changed_python_error(old, new) is None
        assert [] == parsed
        broken = new.replace("return a - 100\n", "return a -\n")
        assert python_error(broken) == changed_python_error(new, broken)
        assert [len(broken)] == parsed  # a failing region: the whole text decides

    def test_unseen_old_text_parses_the_new_one_whole(self) -> None:
        old = _module(3)
        new = old.replace("+ 1", "+ 2")

        assert changed_python_error(old, new) is None
        assert changed_python_error(old, new + "(\n") == python_error(new + "(\n")

    def test_outlines_are_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Only so many outlines (and cuts) are kept."""
        kept = syntax._Kept[Outline](3, 5)
        monkeypatch.setattr(syntax, "_OUTLINES", kept)
        for n in range(6):
            changed_python_error(None, f"x = {n}\ny = {n}\n")

        assert 2 == len(kept._known) and 4 == kept._total
        big = _module(10)
        changed_python_error(None, big)
        assert 2 == len(kept._known)  # ten cuts: more than the whole budget, not kept

    def test_class_bodies_count_in_the_size(self) -> None:
        text = _class(3)
        outline = outline_of(_tree(text), text)

        assert outline is not None and 3 + 4 == outline.size  # 3 top-level, 4 body cuts
