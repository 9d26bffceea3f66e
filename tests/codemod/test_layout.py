"""The formatting guard of recipes: layouts kept, whitespace tidied, or the file refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.codemod.helpers import write_tree

from patchsmith.codemod import run_recipe
from patchsmith.codemod.edits import Edit, EditGroup, apply_groups
from patchsmith.codemod.layout import keep_layout, reflowed, tidy, transfer
from patchsmith.codemod.report import RecipeStatus

CALL = "compute(\n        alpha,\n        beta,  # keep\n    )"
REFLOWED = "calculate(alpha,\n    beta,  # keep)"


class TestTransfer:
    def test_multi_line_arguments_keep_their_lines(self) -> None:
        """The carried-over arguments are written as they were; the changed name is new."""
        assert "calculate(\n        alpha,\n        beta,  # keep\n    )" == transfer(
            CALL, REFLOWED
        )

    def test_one_line_original_is_left_alone(self) -> None:
        """Nothing to keep when the match was on one line."""
        assert "g(a,  b)" == transfer("f(a, b)", "g(a,  b)")

    @given(st.text(alphabet="ab( ),\n#", max_size=30), st.text(alphabet="ab( ),\n#", max_size=30))
    def test_only_whitespace_changes(self, original: str, replacement: str) -> None:
        """The result is the replacement, whitespace aside."""
        out = transfer(original, replacement)

        assert "".join(out.split()) == "".join(replacement.split())

    def test_reflow_is_seen(self) -> None:
        """Joining the lines of a carried-over stretch is a reflow; renaming is not."""
        assert reflowed(CALL, REFLOWED)
        assert not reflowed(CALL, transfer(CALL, REFLOWED))
        assert not reflowed("f(a, b)", "g(a,\n b)")


class TestKeepLayout:
    def _edit(self, data: bytes, old: bytes, new: bytes) -> tuple[list[EditGroup], bytes]:
        start = data.index(old)
        groups = [EditGroup((Edit(start, start + len(old), new),), 1)]
        raw, _ = apply_groups(data, groups)
        return groups, raw

    def test_repairs_a_fix_that_broke_the_syntax(self) -> None:
        """ast-grep's reflow put `)` inside a comment; the relaid text parses again."""
        data = f"def f():\n    x = {CALL}\n".encode()
        groups, raw = self._edit(data, CALL.encode(), REFLOWED.encode())

        fixed, refusal = keep_layout("m.py", data, groups, raw)

        assert refusal is None
        assert fixed == data.replace(b"compute(", b"calculate(")

    def test_refuses_a_reflow_it_cannot_prove(self) -> None:
        """The relaid text would change a string: the reflowed file is refused, not kept."""
        data = b'x = f(\n    "a  b",\n    c,\n)\n'
        groups, raw = self._edit(data, data[4:-1], b'g("a b", c,)')

        fixed, refusal = keep_layout("m.py", data, groups, raw)

        assert fixed == raw
        assert refusal is not None and "reflows" in refusal and "line 1" in refusal

    def test_no_grammar_no_repair(self) -> None:
        """A language no parser reads: the reflow cannot be proven harmless, so it refuses."""
        data = f"val x = {CALL}\n".encode()
        groups, raw = self._edit(data, CALL.encode(), REFLOWED.encode())

        _, refusal = keep_layout("m.kt", data, groups, raw)

        assert refusal is not None


class TestTidy:
    def test_final_newline_is_put_back(self) -> None:
        """A block scalar at the end of a file keeps its last line break."""
        new, refusal = tidy("w.yml", b"run: |\n  make build\n", b"run: |\n  make all")

        assert (b"run: |\n  make all\n", None) == (new, refusal)

    def test_no_final_newline_stays_none(self) -> None:
        """A file that had no final newline does not get one."""
        assert (b"x = 2", None) == tidy("m.py", b"x = 1", b"x = 2")

    def test_trailing_whitespace_in_a_run_block_is_stripped(self) -> None:
        """Indented blank lines in a YAML `run: |` block: the spaces the fix added go."""
        original = b"steps:\n  - run: |\n      echo one\n      make build\n"
        new = b"steps:\n  - run: |\n      echo one\n    \n      make all  \n"

        fixed, refusal = tidy("ci.yml", original, new)

        assert refusal is None
        assert b"steps:\n  - run: |\n      echo one\n\n      make all\n" == fixed

    def test_trailing_whitespace_kept_where_it_was(self) -> None:
        """Only whitespace the change added is touched."""
        original = b"a: 1  \nb: 2\n"
        assert (b"a: 1  \nb: 3\n", None) == tidy("c.yml", original, b"a: 1  \nb: 3\n")

    def test_trailing_whitespace_in_code_is_stripped(self) -> None:
        """Outside tokens, stripping changes no code: repaired."""
        assert (b"x = g(a)\n", None) == tidy("m.py", b"x = f(a)\n", b"x = g(a)  \n")

    def test_trailing_whitespace_in_a_string_refuses(self) -> None:
        """Inside a multi-line string it is content: refused with the line."""
        new, refusal = tidy("m.py", b'x = """a\nb"""\n', b'x = """c  \nb"""\n')

        assert new == b'x = """c  \nb"""\n'
        assert refusal is not None and "trailing whitespace at line 1" in refusal

    def test_lines_outside_the_matches_refuse(self) -> None:
        """A changed line no match covered refuses the file, naming the line."""
        original = b"x = 1\ny = 2\nz = 3\n"
        spans = [(6, 11)]  # `y = 2`

        assert (b"x = 1\ny = 3\nz = 3\n", None) == tidy(
            "m.py", original, b"x = 1\ny = 3\nz = 3\n", spans
        )
        _, refusal = tidy("m.py", original, b"x = 1\ny = 3\nz = 4\n", spans)
        assert refusal is not None and "line 3 changed outside" in refusal
        _, refusal = tidy("m.py", original, b"w = 0\nx = 1\ny = 3\nz = 3\n", spans)
        assert refusal is not None and "line 1" in refusal


def _recipe(language: str, pattern: str, fix: str, kind: str | None = None) -> str:
    rule = f"{{kind: {kind}, regex: {pattern!r}}}" if kind else f"{{pattern: {pattern!r}}}"
    return (
        f"id: fmt\nlanguage: {language}\nsummary: s\noperations:\n"
        f"  - type: astGrepRule\n    rule: {rule}\n    fix: {fix!r}\n"
    ).replace("'", '"')


@pytest.mark.parametrize(
    ("name", "language", "before", "after"),
    [
        (
            "m.py",
            "python",
            f"def f():\n    x = {CALL}\n    y = compute(a,\n                b)\n",
            "def f():\n    x = calculate(\n        alpha,\n        beta,  # keep\n    )\n"
            "    y = calculate(a,\n                b)\n",
        ),
        (
            "a.js",
            "javascript",
            "const x = compute(\n  alpha,\n  beta, // keep\n);\n",
            "const x = calculate(\n  alpha,\n  beta, // keep\n);\n",
        ),
        (
            "A.java",
            "java",
            'class A {\n    long f() {\n        return compute(\n            "p",  // why\n'
            "            42);\n    }\n}\n",
            'class A {\n    long f() {\n        return calculate(\n            "p",  // why\n'
            "            42);\n    }\n}\n",
        ),
    ],
)
def test_multi_line_calls_keep_their_layout(
    tmp_path: Path, name: str, language: str, before: str, after: str
) -> None:
    """A `$$$ARGS` fix over multi-line calls keeps every argument on its own line."""
    write_tree(
        tmp_path,
        {name: before, "r.yaml": _recipe(language, "compute($$$ARGS)", "calculate($$$ARGS)")},
    )

    report = run_recipe(tmp_path / "r.yaml", tmp_path, apply=True, record=False)

    assert RecipeStatus.APPLIED == report.status, report.errors
    assert after == (tmp_path / name).read_text()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (  # a block scalar in the middle of the file: blank line's indentation removed
            "jobs:\n  b:\n    steps:\n      - run: |\n          echo one\n\n"
            "          make build\n      - name: next\n",
            "jobs:\n  b:\n    steps:\n      - run: |\n          echo one\n\n"
            "          make all\n      - name: next\n",
        ),
        (  # a block scalar at the end of the file: its final newline kept
            "jobs:\n  b:\n    steps:\n      - run: |\n          echo one\n\n          make build\n",
            "jobs:\n  b:\n    steps:\n      - run: |\n          echo one\n\n          make all\n",
        ),
    ],
)
def test_yaml_block_scalars(tmp_path: Path, before: str, after: str) -> None:
    """A fix replacing a `run: |` block adds no trailing whitespace and loses no newline."""
    recipe = _recipe("yaml", "make build", "|\n  echo one\n\n  make all", kind="block_scalar")
    write_tree(tmp_path, {"ci.yml": before, "r.yaml": recipe})

    report = run_recipe(tmp_path / "r.yaml", tmp_path, apply=True, record=False)

    assert RecipeStatus.APPLIED == report.status, report.errors
    text = (tmp_path / "ci.yml").read_text()
    assert after == text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_a_refused_file_is_listed_and_the_others_change(tmp_path: Path) -> None:
    """A reflow the guard cannot repair refuses that file only, with the reason."""
    write_tree(
        tmp_path,
        {
            "bad.py": 'x = f(\n    "a  b",\n    c,\n)\n',
            "good.py": 'y = f("a  b", d)\n',
            "r.yaml": "id: fmt\nlanguage: python\noperations:\n  - type: astGrepRule\n"
            "    rule: {pattern: 'f($A, $B)'}\n    fix: 'g(\"a b\", $B)'\n",
        },
    )

    report = run_recipe(tmp_path / "r.yaml", tmp_path, apply=True, record=False)

    assert RecipeStatus.APPLIED == report.status, report.errors
    assert ["good.py"] == [f.path for f in report.files]
    [skipped] = report.skipped
    assert "bad.py" == skipped.path and "formatting guard" in skipped.reason
    assert 'x = f(\n    "a  b",\n    c,\n)\n' == (tmp_path / "bad.py").read_text()


class TestRepairLimits:
    def test_stray_indent_after_the_last_newline_goes(self) -> None:
        """A fix ending in a newline gets no indentation pushed onto the next line."""
        data = b"def f():\n    a()\n    b()\n"
        start = data.index(b"a()")
        groups = [EditGroup((Edit(start, start + 4, b"c()\n    "),), 2)]
        raw, _ = apply_groups(data, groups)

        fixed, refusal = keep_layout("m.py", data, groups, raw)

        assert (b"def f():\n    c()\n    b()\n", None) == (fixed, refusal)

    def test_whitespace_outside_brackets_is_not_repaired(self) -> None:
        """Only whitespace inside brackets may be taken from the original when the raw fix
        was broken: elsewhere (Python's indentation) it would change the code."""
        from patchsmith.codemod.layout import _between_brackets

        candidate = b"x = f(\n    a)\nif y:\n    g()\n"
        inside = candidate.index(b"    a")
        outside = candidate.index(b"    g")
        raw_in = [EditGroup((Edit(inside, inside + 4, b" "),), 1)]
        relaid_in = [EditGroup((Edit(inside, inside + 4, b"    "),), 1)]
        raw_out = [EditGroup((Edit(outside, outside + 4, b"  "),), 1)]
        relaid_out = [EditGroup((Edit(outside, outside + 4, b"    "),), 1)]

        assert _between_brackets("m.py", candidate, relaid_in, raw_in)
        assert not _between_brackets("m.py", candidate, relaid_out, raw_out)

    def test_yaml_relayout_must_keep_relative_indentation(self) -> None:
        """In YAML the relaid text is kept only if each line keeps its indentation
        relative to the others, as the fix wrote it."""
        data = b"a:\n  run: |\n    one\n      two\n"
        start = data.index(b"|")
        # a fix that flattens the nesting, written where YAML cannot read it
        replacement = b"|\n  one\n  two\nb: |\n x"
        groups = [EditGroup((Edit(start, len(data) - 1, replacement),), 2)]
        raw, _ = apply_groups(data, groups)

        fixed, _ = keep_layout("c.yml", data, groups, raw)

        assert fixed == raw  # the original's nesting is not forced onto the fix
