"""Tests for the scanned cuts of a Python text (`runtime.pycuts`) and the first-sight
verdict of `changed_python_error` built on them (docs/decisions/0049).

A row the scan calls a cut must be one where Python's own `tokenize` starts a new
logical line at column 0 (or, in a top-level class, at its body's column with nothing
else open): checked on every Python file of the corpora, the standard library's sample
and generated texts. The verdict on a file seen for the first time must be the whole
parse's whenever the old text parses, and when it does not, a pass means the new text
parses exactly when the old one does.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from functools import cache

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.guards.changes import update
from tests.runtime.test_pyregion import _edited, _parses, _sources
from tests.shared_data import corpus_cases, corpus_dir

from patchsmith.engine.textedits import text_edits
from patchsmith.errors import FailureCode
from patchsmith.guards.syntax import syntax_failure
from patchsmith.runtime import pycuts, syntax
from patchsmith.runtime.pycuts import cuts_of, first_sight_outline
from patchsmith.runtime.syntax import FIRST_SIGHT, changed_python_error, forget_verdicts


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    forget_verdicts()
    yield
    forget_verdicts()


def _truth(text: str) -> set[tuple[int, int]] | None:
    """Rows (0-based) where `tokenize` starts a logical line at column 0, and rows where
    one starts at the body's column of a top-level class with only that class open;
    `None` when `tokenize` fails."""
    stack, starting, in_class = [0], True, False
    cuts: set[tuple[int, int]] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = token.type
            if kind in (tokenize.NL, tokenize.COMMENT):
                continue
            if kind == tokenize.INDENT:
                stack.append(token.end[1])
            elif kind == tokenize.DEDENT:
                stack.pop()
            elif kind == tokenize.NEWLINE:
                starting = True
            elif kind == tokenize.ENDMARKER:
                break
            elif starting:
                row, column = token.start
                if column == 0:
                    cuts.add((row - 1, 0))
                    in_class = token.string == "class" or (in_class and token.string == "@")
                elif len(stack) == 2 and in_class and stack[1] == column:
                    cuts.add((row - 1, column))
                starting = False
    except (tokenize.TokenError, SyntaxError):
        return None
    return cuts


def _held_to_tokenize(text: str) -> int:
    """Checks the scan's cuts against `tokenize`'s; how many it found."""
    found = cuts_of(text)
    truth = _truth(text)
    if found is None or truth is None:
        return 0
    extra = set(found) - truth
    assert not extra, sorted(extra)[:5]
    return len(found)


@cache
def _corpus_python() -> tuple[str, ...]:
    texts: dict[str, None] = {}
    for path in sorted(corpus_dir().glob("*.jsonl*")):
        for case in corpus_cases(path.name.removesuffix(".gz")):
            for side in (case.get("files"), case.get("expected")):
                if isinstance(side, dict):
                    for name, text in side.items():
                        if name.endswith((".py", ".pyi")) and isinstance(text, str):
                            texts[text] = None
    return tuple(texts)


def test_every_cut_of_every_corpus_python_file_is_a_tokenize_cut() -> None:
    texts = _corpus_python()
    assert texts
    found = sum(_held_to_tokenize(text) for text in texts + _sources())
    assert found > 10 * len(texts)  # the scan finds cuts, not nothing


_PIECES = [
    "x = 1\n",
    "class C:\n",
    "class D(\n    Base,\n):\n",
    "    def f(self):\n",
    "        return (1,\n",
    "2)\n",
    "    y = [\n",
    "]\n",
    "    z = {'a': '''\n",
    "''', 'b': 2}\n",
    '"""doc\n',
    "text with # and ( and '\n",
    '"""\n',
    "s = 'it\\'s ('\n",
    "s = r'\\'' + '#'\n",
    "t = b'\\\n",
    "continued'\n",
    "u = \\\n",
    "    3\n",
    "# a comment with ' and ( \\\n",
    "@decorator\n",
    "    @decorator\n",
    "def g():\n",
    "    pass\n",
    "if x:\n",
    "else:\n",
    "    else_ = 1\n",
    "try:\n",
    "except* E:\n",
    "finally:\n",
    "f'{x!r:>{width}}' 'y'\n",
    "F'''\n",
    'Rb"""(\n',
    '""" ; w = (\n',
    "    )\n",
    "\n",
    "    \n",
    "\t\tq = 1\n",
    "x = 1; y = (\n",
    "a = '\\\\'\n",
    "\r\n",
    "k = 1\r\n",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_cuts_of_generated_texts_are_tokenize_cuts(pieces: list[str]) -> None:
    text = "".join(pieces)
    found = _held_to_tokenize(text)
    event("tokenized" if _truth(text) is not None else "not tokenized")
    event("cuts found" if found else "no cut")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited())
def test_first_sight_verdict_is_the_whole_parse_on_valid_old_texts(
    texts: tuple[str, str],
) -> None:
    old, new = texts
    assert _parses(old)
    forget_verdicts()
    verdict = changed_python_error(old, new)
    assert (verdict is None) == _parses(new)
    event("passes" if verdict is None else "refused")
    event("judged from the edit's rows" if syntax._same_errors(old, new) else "parsed whole")


_BREAKS = ["(\n", "'''\n", "def (:\n", "  x = 1\n", "else:\n", ")\n", "@d\n"]


@st.composite
def _broken_then_edited(draw: st.DrawFn) -> tuple[str, str]:
    """A real file broken at one line (the old text), and that text edited elsewhere."""
    valid, _ = draw(_edited())
    at = valid.rfind("\n", 0, draw(st.integers(0, len(valid)))) + 1
    old = valid[:at] + draw(st.sampled_from(_BREAKS)) + valid[at:]
    start = old.rfind("\n", 0, draw(st.integers(0, len(old)))) + 1
    end = start
    for _ in range(draw(st.integers(0, 6))):
        found = old.find("\n", end)
        end = len(old) if found < 0 else found + 1
    written = draw(st.sampled_from(["", "x = 1\n", "    y = 2\n", "(\n", "else:\n", "@d\n"]))
    return old, old[:start] + written + old[end:]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_broken_then_edited())
def test_a_first_sight_pass_means_both_texts_parse_or_neither(texts: tuple[str, str]) -> None:
    old, new = texts
    if syntax._same_errors(old, new):
        assert _parses(new) == _parses(old)
        event("same errors: " + ("both parse" if _parses(new) else "neither parses"))
    else:
        event("parsed whole")


def _filler(count: int) -> str:
    return "".join(
        f"def helper_{n}(a, b={n}):\n    return (a +\n        b)\n\n\n" for n in range(count)
    )


def _big(middle: str) -> str:
    text = _filler(60) + middle + _filler(60)
    assert len(text) > FIRST_SIGHT
    return text


@pytest.fixture
def whole_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `changed_python_error` parses whole."""
    seen: list[str] = []
    real = syntax._ast_module

    def counted(text: str) -> ast.Module | str:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(syntax, "_ast_module", counted)
    return seen


def test_a_valid_first_sight_edit_is_judged_without_parsing_the_file(
    whole_parses: list[str],
) -> None:
    old = _big("def target():\n    return 1\n\n\n")
    new = old.replace("    return 1\n", "    value = 2\n    return value\n")
    assert changed_python_error(old, new) is None
    assert whole_parses == []


def test_a_breaking_first_sight_edit_gets_the_whole_files_message(
    whole_parses: list[str],
) -> None:
    old = _big("def target():\n    return 1\n\n\n")
    new = old.replace("    return 1\n", "    return (1\n")
    error = changed_python_error(old, new)
    assert error is not None and error == syntax._python_error(new)
    assert whole_parses[:1] == [new]


def test_a_deleted_statement_is_judged_without_parsing_the_file(
    whole_parses: list[str],
) -> None:
    old = _big("def target():\n    return 1\n\n\n")
    assert changed_python_error(old, old.replace("def target():\n    return 1\n", "")) is None
    assert whole_parses == []


def test_a_decorated_definition_is_not_cut_from_its_decorator(
    whole_parses: list[str],
) -> None:
    old = _big("@decorator\ndef target():\n    return 1\n\n\n")
    new = old.replace("def target():\n    return 1\n", "x = 1\n")
    assert changed_python_error(old, new) is not None  # the decorator now decorates nothing
    assert whole_parses == [new]


def test_an_else_is_not_cut_from_its_if() -> None:
    old = _big("if flag:\n    x = 1\nelse:\n    x = 2\n\n\n")
    new = old.replace("if flag:\n    x = 1\n", "x = 0\n")
    assert changed_python_error(old, new) is not None


def test_a_class_body_edit_is_judged_within_the_class(whole_parses: list[str]) -> None:
    methods = "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(200))
    old = _big(f"class Big:\n    '''doc'''\n\n{methods}\n")
    written = "        x = (150,\n             1)\n        return x\n"
    new = old.replace("        return 150\n", written)
    assert changed_python_error(old, new) is None
    assert whole_parses == []
    worse = old.replace("        return 150\n", "  return 150\n")  # an indentation error
    assert changed_python_error(old, worse) is not None


@pytest.mark.parametrize(
    "awkward",
    ["x = '\f'\n", "x = 1\rx = 2\n", "x = '\0'\n", "from __future__ import barry_as_FLUFL\n"],
)
def test_awkward_old_texts_are_not_scanned(awkward: str) -> None:
    old = _big(awkward)
    new = old.replace("return (a +\n        b)", "return a", 1)
    assert first_sight_outline(old, text_edits(old, new)) is None
    assert (changed_python_error(old, new) is None) == _parses(new)


def test_f_strings_are_not_scanned_where_they_nest(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _big("x = f'{value}'\n")
    new = old.replace("return (a +\n        b)", "return a", 1)
    assert first_sight_outline(old, text_edits(old, new)) is not None  # Python 3.11's rules
    monkeypatch.setattr(pycuts, "_NESTING", True)
    assert first_sight_outline(old, text_edits(old, new)) is None
    plain = _big("x = 1\n")
    edited = plain.replace("return (a +\n        b)", "return a", 1)
    assert first_sight_outline(plain, text_edits(plain, edited)) is not None


def test_an_old_text_that_fails_stays_judged_as_one_that_fails() -> None:
    old = _big("x = (\n") + "def tail():\n    return 1\n"
    new = old.replace("    return (a +\n        b)", "    return a", 1)
    # the edit lies before the broken line; its rows parse on their own in both texts
    assert not _parses(old) and not _parses(new)
    assert changed_python_error(old, new) is None
    assert syntax.python_error(new) is not None  # no verdict was kept for the new text


def test_the_guard_passes_and_refuses_first_sight_edits() -> None:
    old = _big("def target():\n    return 1\n\n\n")
    good = old.replace("    return 1\n", "    return 2\n")
    bad = old.replace("    return 1\n", "    return [2\n")
    assert syntax_failure(update("m.py", old, good)) is None
    failure = syntax_failure(update("m.py", old, bad))
    assert failure is not None and failure.code is FailureCode.SYNTAX_ERROR


def _class_to_the_end(methods: int) -> str:
    body = "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(methods))
    return _filler(40) + "class Last:\n    '''doc'''\n\n" + body


@pytest.mark.parametrize("ending", ["\n", ""])
def test_a_class_that_runs_to_the_end_of_the_file_is_cut_inside(
    whole_parses: list[str], ending: str
) -> None:
    old = _class_to_the_end(150).rstrip("\n") + ending
    new = old.replace("        return 140\n", "        return [140]\n")
    assert changed_python_error(old, new) is None
    assert whole_parses == []
    last = old.replace("        return 149", "        return (149")
    assert changed_python_error(old, last) is not None


def test_edits_apart_in_one_class_are_judged_within_it(whole_parses: list[str]) -> None:
    old = _class_to_the_end(150) + "\n\nx = 1\n"
    # far apart: the rows from the first edit to the last are most of the file
    new = old.replace("return 5\n", "return 6\n").replace("return 145\n", "return 146\n")
    assert changed_python_error(old, new) is None
    assert whole_parses == []
    bad = old.replace("return 5\n", "return 6\n").replace("return 145\n", "return (146\n")
    assert changed_python_error(old, bad) is not None
    # a class written inside the class's body: its rows are no longer the body's
    split = old.replace("    def m145(self):\n", "class Other:\n    def m145(self):\n")
    assert changed_python_error(old, split) is None
