"""Placeholders read by the file's blocks, and merges that must still parse."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.engine.lazy import (
    SnippetMerge,
    SnippetRefusal,
    SnippetRefused,
    merge_snippet,
)
from patchsmith.engine.placeholder import placeholders_absent_from
from patchsmith.runtime.structure import TreeStructure, structure_for


def _merge(path: str, old: str, snippet: str) -> SnippetMerge | SnippetRefused:
    return merge_snippet(old, snippet, path, structure=structure_for(path, old))


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


PY = _d(
    """
    class B:
        def f(self):
            b = 1
            log(b)
            return b

        def g(self):
            return 3


    class A:
        def f(self):
            a = 1
            log(a)
            return a

        def g(self):
            return 3
    """
)
PY_SNIPPET = _d(
    """
    # ... existing code ...
    class A:
        def f(self):
            a = 10
            log(a)
            # ... existing code ...

        def g(self):
            return 30
    """
)

PY_NEW = PY.replace("a = 1\n", "a = 10\n").removesuffix("return 3\n") + "return 30\n"

JS = _d(
    """
    function f() {
      const a = 1;
      log(a);
      return a;
    }

    function g() {
      const b = 1;
      log(b);
      return b;
    }
    """
)
JS_SNIPPET = _d(
    """
    // ... existing code ...
    function g() {
      const b = 2;
      log(b);
      // ... existing code ...
    }
    """
)
GO = _d(
    """
    package m

    func f() int {
    \ta := 1
    \tlog(a)
    \treturn a
    }

    func g() int {
    \tb := 1
    \tlog(b)
    \treturn b
    }
    """
)
GO_SNIPPET = _d(
    """
    // ... existing code ...
    func g() int {
    \tb := 2
    \tlog(b)
    \t// ... existing code ...
    }
    """
)
JAVA = _d(
    """
    class A {
        int f() {
            int a = 1;
            log(a);
            return a;
        }
    }

    class B {
        int f() {
            int b = 1;
            log(b);
            return b;
        }
    }
    """
)
JAVA_SNIPPET = _d(
    """
    // ... existing code ...
    class B {
        int f() {
            int b = 2;
            log(b);
            // ... existing code ...
        }
    }
    """
)

CASES = [
    ("m.py", PY, PY_SNIPPET, PY_NEW),
    ("m.js", JS, JS_SNIPPET, JS.replace("const b = 1;", "const b = 2;")),
    ("m.ts", JS, JS_SNIPPET, JS.replace("const b = 1;", "const b = 2;")),
    ("m.go", GO, GO_SNIPPET, GO.replace("b := 1", "b := 2")),
    ("A.java", JAVA, JAVA_SNIPPET, JAVA.replace("int b = 1;", "int b = 2;")),
]


class TestPlaceholderEndsItsBlock:
    @pytest.mark.parametrize(("path", "old", "snippet", "new"), CASES, ids=[c[0] for c in CASES])
    def test_block_structure_places_what_anchors_cannot(
        self, path: str, old: str, snippet: str, new: str
    ) -> None:
        """The chunk after a placeholder that ends a block starts where that block ends,
        though its own first lines occur elsewhere too; without the structure it is refused."""
        merged = _merge(path, old, snippet)
        alone = merge_snippet(old, snippet, path)

        assert isinstance(merged, SnippetMerge), merged
        assert new == merged.text
        assert merged.by_structure
        assert isinstance(alone, SnippetRefused)
        assert SnippetRefusal.AMBIGUOUS == alone.reason

    def test_new_first_line_is_never_placed_by_the_block(self) -> None:
        """A chunk that begins with a new line has no anchor: the end of the block does not
        say where it goes (placeholders often stand for several blocks), so it is refused."""
        old = "def f():\n    a = 1\n    log(a)\n    return a\ndef g():\n    return 3\n"
        snippet = (
            "def f():\n    a = 1\n    log(a)\n    # ... existing code ...\n"
            "def new():\n    return 4\ndef g():\n# ... existing code ...\n"
        )

        refused = _merge("m.py", old, snippet)

        assert isinstance(refused, SnippetRefused)
        assert SnippetRefusal.NO_ANCHOR == refused.reason

    def test_a_second_place_after_the_chunk_before_refuses(self) -> None:
        """The chunk's lines at the block's end and again further down: two readings, refused."""
        old = JS + "\nfunction h() {\n  return 3;\n}\n"

        refused = _merge("m.js", old, JS_SNIPPET)

        assert isinstance(refused, SnippetRefused)
        assert SnippetRefusal.AMBIGUOUS == refused.reason

    def test_placeholder_not_deeper_than_the_next_line_is_not_read_by_blocks(self) -> None:
        """A placeholder at the next line's own depth says nothing about blocks: still refused."""
        snippet = JS_SNIPPET.replace("  // ... existing code ...\n}", "// ... existing code ...\n}")

        refused = _merge("m.js", JS, snippet)

        assert isinstance(refused, SnippetRefused)
        assert SnippetRefusal.AMBIGUOUS == refused.reason

    TOP = "def g():\n    return 1\n\n\n"
    BELOW = "\n\n\ndef g():\n    return 1\n\n\ndef h():\n    pass\n"
    SNIPPET = (
        "def f():\n    if x:\n        a = 10\n        log(a)\n    # ... existing code ...\n"
        "def g():\n    return 2\n\n\ndef h():\n# ... existing code ...\n"
    )

    def test_placeholder_stands_for_the_rest_of_the_block_at_its_depth(self) -> None:
        """Of the blocks holding the skipped lines, the one the chunk comes right after is
        taken: here the function's (the `if` block ends before a line as shallow as the
        chunk's, and the chunk's lines are not there)."""
        body = "def f():\n    if x:\n        a = 1\n        log(a)\n        b = 2\n    return a\n"
        old = self.TOP + body + self.BELOW
        snippet = "# ... existing code ...\n" + self.SNIPPET

        merged = _merge("m.py", old, snippet)

        assert isinstance(merged, SnippetMerge), merged
        want = self.TOP + body.replace("a = 1", "a = 10") + self.BELOW.replace("1\n", "2\n", 1)
        assert want == merged.text
        assert (2,) == merged.by_structure
        assert isinstance(merge_snippet(old, snippet, "m.py"), SnippetRefused)

    @pytest.mark.parametrize("comment", ["    # a comment in the body", "# a top-level comment"])
    def test_skipped_line_as_shallow_as_the_chunk_refuses(self, comment: str) -> None:
        """A block whose rest holds a line no deeper than the chunk's start is not its block."""
        body = f"def f():\n    if x:\n        a = 1\n        log(a)\n{comment}\n    return a\n"
        old = self.TOP + body + self.BELOW
        snippet = "# ... existing code ...\n" + self.SNIPPET

        merged = _merge("m.py", old, snippet)

        if comment.startswith(" "):
            assert isinstance(merged, SnippetMerge), merged
            assert "a = 10" in merged.text
        else:
            assert isinstance(merged, SnippetRefused)

    def test_broken_file_has_no_structure(self) -> None:
        """A file that does not parse lends no structure: anchors only."""
        broken = "function h( {\n" + JS

        assert isinstance(_merge("m.js", broken, JS_SNIPPET), SnippetRefused)
        assert [] == list(TreeStructure("m.js", broken).block_ends(10))
        assert not TreeStructure("m.js", broken).parses

    def test_unknown_language_has_no_structure(self) -> None:
        """Files without a grammar are merged by anchors alone."""
        assert structure_for("notes.txt", "a\n") is None


class TestMergeMustParse:
    @pytest.mark.parametrize(
        ("path", "old", "snippet"),
        [
            (
                "m.js",
                JS,
                "// ... existing code ...\nfunction g() {\n  const b = (2;\n  log(b);\n"
                "// ... existing code ...\n",
            ),
            (
                "m.py",
                "def f():\n    a = 1\n    return a\n\n\ndef g():\n    return 2\n",
                "def f():\n    a = (1\n    return a\n# ... existing code ...\n",
            ),
        ],
    )
    def test_merge_that_breaks_a_clean_file_is_refused(
        self, path: str, old: str, snippet: str
    ) -> None:
        """A merge that leaves a cleanly parsing file unparsable is refused, with the line."""
        refused = _merge(path, old, snippet)

        assert isinstance(refused, SnippetRefused), refused
        assert SnippetRefusal.BREAKS_SYNTAX == refused.reason
        assert refused.line is not None
        assert refused.merged

    def test_broken_file_may_stay_broken(self) -> None:
        """The check is for files that parsed: a broken one is merged by anchors as before."""
        old = "function f( {\n  return 1;\n}\n\nfunction g() {\n  return 2;\n}\n"
        snippet = "// ... existing code ...\nfunction g() {\n  return 3;\n}\n"

        merged = _merge("m.js", old, snippet)

        assert isinstance(merged, SnippetMerge)
        assert old.replace("return 2", "return 3") == merged.text


# -- the property: exactly the edit, or a refusal, and never a placeholder -------------------------

_BODY = ("x = 1", "log(x)", "return x", "y = x + 1", "pass")
_NEW = ("z = 2", "w = 3")


@dataclass(frozen=True)
class _Language:
    path: str
    header: str
    """A function's first line, `{}` standing for its name."""
    closer: str | None
    statement: str
    """A statement line, `{}` standing for its text."""
    placeholder: str


PYTHON = _Language("m.py", "def {}():", None, "    {}", "# ... existing code ...")
JAVASCRIPT = _Language("m.js", "function {}() {{", "}", "  {};", "// ... existing code ...")


@st.composite
def structured_edits(draw: st.DrawFn, language: _Language) -> tuple[str, str, str]:
    """A file of small functions (bodies often alike, names repeated), an edit that replaces
    body statements by new statements, and a lazy rendering of it whose placeholders carry
    the smallest indentation of the lines they stand for."""
    functions = draw(st.integers(1, 5))
    old: list[str] = []
    firsts: set[int] = set()
    numbered = st.integers(0, 30).map(lambda n: f"v{n} = {n}")
    for number in range(functions):
        if number:
            old += [""] * draw(st.integers(0, 2))
        old.append(language.header.format(f"f{draw(st.integers(0, 1))}"))
        firsts.add(len(old))
        body = draw(st.lists(st.one_of(st.sampled_from(_BODY), numbered), min_size=1, max_size=5))
        old += [language.statement.format(line) for line in body]
        if language.closer is not None:
            old.append(language.closer)
    new: list[str] = []
    changed: list[bool] = []
    for number, line in enumerate(old):
        # A function's first statement changes often: the chunk showing it then starts
        # with the function's header, which the file may hold more than once.
        body_line = line.startswith(" ")
        if body_line and draw(st.integers(0, 1 if number in firsts else 3)) == 0:
            # New statements only: lines the old file never holds, so that the lines a
            # chunk shows around them are the file's own, in the file's order.
            replacement = draw(st.lists(st.sampled_from(_NEW), min_size=1, max_size=2))
            new += [language.statement.format(r) for r in replacement]
            changed += [True] * len(replacement)
        else:
            new.append(line)
            changed.append(False)
    rendered: list[str] = []
    index = 0
    while index < len(new):
        if changed[index]:
            rendered.append(new[index])
            index += 1
            continue
        run_end = index
        while run_end < len(new) and not changed[run_end]:
            run_end += 1
        run = new[index:run_end]
        # The lines kept around a placeholder: at least one next to a change, maybe more.
        head = (1 if index > 0 else 0) + draw(st.integers(0, 2))
        tail = (1 if run_end < len(new) else 0) + draw(st.integers(0, 3))
        if len(run) > head + tail and draw(st.booleans()):
            elided = run[head : len(run) - tail]
            depth = min((len(x) - len(x.lstrip()) for x in elided if x.strip()), default=0)
            mark = " " * depth + language.placeholder
            rendered += [*run[:head], mark, *run[len(run) - tail :]]
        else:
            rendered += run
        index = run_end
    text = "".join(f"{line}\n" for line in old)
    result = "".join(f"{line}\n" for line in new)
    return text, result, "".join(f"{line}\n" for line in rendered)


class TestProperty:
    @pytest.mark.parametrize("language", [PYTHON, JAVASCRIPT], ids=["python", "javascript"])
    @settings(max_examples=300, deadline=None)
    @given(data=st.data())
    def test_exactly_the_edit_or_refused(self, language: _Language, data: st.DataObject) -> None:
        """Any lazy rendering of a statement-level edit merges to exactly that edit or is
        refused, and no placeholder is ever in the result."""
        old, new, snippet = data.draw(structured_edits(language))
        result = _merge(language.path, old, snippet)
        if isinstance(result, SnippetRefused):
            return
        lines = result.text.splitlines()
        assert not placeholders_absent_from(lines, old.splitlines(), language.path)
        assert new == result.text
