"""A recipe's Python import step: added only where the edits made the name a free use, written
in the file's own import layout; removed only where nothing uses the name any more."""

from __future__ import annotations

import ast
import difflib
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchsmith.cli import main
from patchsmith.codemod import RecipeStatus, run_recipe
from patchsmith.codemod.backends import pyimports
from patchsmith.codemod.backends.pyimports import ImportSpec, fix_source, parse_spec, usage
from patchsmith.codemod.backends.python import fix_imports
from patchsmith.codemod.recipe import Imports, Recipe, parse_recipe
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode

from .helpers import write_tree

TIMEZONE = ImportSpec("datetime", "timezone")


def utc(old: str) -> str:
    """The issue's deprecation edits, as ast-grep makes them (class style, module style)."""
    new = old.replace("datetime.datetime.utcnow()", "datetime.datetime.now(datetime.timezone.utc)")
    return re.sub(r"(?<![\w.])datetime\.utcnow\(\)", "datetime.now(timezone.utc)", new)


def free_names(source: str) -> set[str]:
    """Names read outside any function that binds them: a check written apart from the code
    under test, so it cannot share its mistakes."""
    used: set[str] = set()

    def walk(node: ast.AST, bound: frozenset[str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            local |= {
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            bound = bound | local
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            used.add(node.id)
        for child in ast.iter_child_nodes(node):
            walk(child, bound)

    walk(ast.parse(source), frozenset())
    return used


def imported(source: str) -> set[str]:
    return {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def unused_added(before: str, after: str) -> set[str]:
    """Names an import binds in `after` but not in `before`, that `after` never reads."""
    return (imported(after) - imported(before)) - free_names(after)


# (before, expected after) for the utcnow edit: every import style the step must keep
CORPUS: dict[str, tuple[str, str]] = {
    "grouped, sorted: into its place": (
        "from datetime import datetime, tzinfo\n\nnow = datetime.utcnow()\n",
        "from datetime import datetime, timezone, tzinfo\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "grouped, not sorted: at the end": (
        "from datetime import tzinfo, datetime\n\nnow = datetime.utcnow()\n",
        "from datetime import tzinfo, datetime, timezone\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "grouped with an alias": (
        "import os\nfrom datetime import date as day, datetime\n\nnow = datetime.utcnow()\n",
        "import os\nfrom datetime import date as day, datetime, timezone\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "classes before functions (isort order by type)": (
        "from datetime import UTC, datetime, tzinfo\n\nnow = datetime.utcnow()\n",
        "from datetime import UTC, datetime, timezone, tzinfo\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "one per line for this module: a line at its sorted place": (
        "import os\nfrom datetime import datetime\nfrom datetime import timedelta\n"
        "from os import path\n\nimport requests\n\nnow = datetime.utcnow()\n",
        "import os\nfrom datetime import datetime\nfrom datetime import timedelta\n"
        "from datetime import timezone\nfrom os import path\n\nimport requests\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "one per line in the whole file": (
        "from datetime import datetime\nfrom os import path\nfrom os import sep\n\n"
        "now = datetime.utcnow()\n",
        "from datetime import datetime\nfrom datetime import timezone\nfrom os import path\n"
        "from os import sep\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "parenthesized, trailing comma": (
        "from datetime import (\n    date,\n    datetime,\n)\n\nnow = datetime.utcnow()\n",
        "from datetime import (\n    date,\n    datetime,\n    timezone,\n)\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "parenthesized, no trailing comma, a comment kept on its line": (
        "from datetime import (\n    date,\n    datetime  # the class\n)\n\n"
        "now = datetime.utcnow()\n",
        "from datetime import (\n    date,\n    datetime,  # the class\n    timezone\n)\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "parenthesized, into the middle": (
        "from datetime import (\n    datetime,\n    tzinfo,\n)\n\nnow = datetime.utcnow()\n",
        "from datetime import (\n    datetime,\n    timezone,\n    tzinfo,\n)\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "parenthesized, closing on the last name's line": (
        "from datetime import (\n    date,\n    datetime)\n\nnow = datetime.utcnow()\n",
        "from datetime import (\n    date,\n    datetime, timezone)\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "backslash continuation": (
        "from datetime import \\\n    date, \\\n    datetime\n\nnow = datetime.utcnow()\n",
        "from datetime import \\\n    date, \\\n    datetime, timezone\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "module not imported yet: its line in the stdlib group": (
        "import os\nimport sys\nfrom pathlib import Path\n\nimport requests\n\n"
        "now = datetime.utcnow()\n",
        "import os\nimport sys\nfrom datetime import timezone\nfrom pathlib import Path\n\n"
        "import requests\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "no stdlib group: a new one before third-party": (
        '"""Doc."""\n\nfrom __future__ import annotations\n\n# third party\nimport requests\n\n'
        "now = datetime.utcnow()\n",
        '"""Doc."""\n\nfrom __future__ import annotations\n\nfrom datetime import timezone\n\n'
        "# third party\nimport requests\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "only __future__: a group after it": (
        "from __future__ import annotations\n\nnow = datetime.utcnow()\n",
        "from __future__ import annotations\n\nfrom datetime import timezone\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "no imports, a docstring": (
        '"""Doc."""\n\nnow = datetime.utcnow()\n',
        '"""Doc."""\n\nfrom datetime import timezone\n\nnow = datetime.now(timezone.utc)\n',
    ),
    "no imports, a function next: two blank lines": (
        "def stamp():\n    return datetime.utcnow()\n",
        "from datetime import timezone\n\n\ndef stamp():\n    return datetime.now(timezone.utc)\n",
    ),
    "no imports, a shebang": (
        "#!/usr/bin/env python\nnow = datetime.utcnow()\n",
        "#!/usr/bin/env python\n\nfrom datetime import timezone\n\n"
        "now = datetime.now(timezone.utc)\n",
    ),
    "module style: `timezone` only as an attribute": (
        "import datetime\n\nnow = datetime.datetime.utcnow()\n",
        "import datetime\n\nnow = datetime.datetime.now(datetime.timezone.utc)\n",
    ),
    "shadowed by a parameter": (
        "from datetime import datetime\n\n\ndef stamp(timezone):\n    return datetime.utcnow()\n",
        "from datetime import datetime\n\n\ndef stamp(timezone):\n"
        "    return datetime.now(timezone.utc)\n",
    ),
    "shadowed by a local assignment": (
        "from datetime import datetime\n\n\ndef stamp():\n    timezone = pick()\n"
        "    return datetime.utcnow()\n",
        "from datetime import datetime\n\n\ndef stamp():\n    timezone = pick()\n"
        "    return datetime.now(timezone.utc)\n",
    ),
    "bound by the module itself": (
        "from datetime import datetime\n\ntimezone = pick()\nnow = datetime.utcnow()\n",
        "from datetime import datetime\n\ntimezone = pick()\nnow = datetime.now(timezone.utc)\n",
    ),
    "already imported": (
        "from datetime import datetime, timezone\n\nnow = datetime.utcnow()\n",
        "from datetime import datetime, timezone\n\nnow = datetime.now(timezone.utc)\n",
    ),
    "used in a method, class body around it": (
        "from datetime import datetime\n\n\nclass A:\n    timezone = None\n\n"
        "    def now(self):\n        return datetime.utcnow()\n",
        "from datetime import datetime, timezone\n\n\nclass A:\n    timezone = None\n\n"
        "    def now(self):\n        return datetime.now(timezone.utc)\n",
    ),
    "Windows line ends": (
        "import os\r\nfrom pathlib import Path\r\n\r\nnow = datetime.utcnow()\r\n",
        "import os\r\nfrom datetime import timezone\r\nfrom pathlib import Path\r\n\r\n"
        "now = datetime.now(timezone.utc)\r\n",
    ),
}


class TestAddCorpus:
    @pytest.mark.parametrize("case", sorted(CORPUS))
    def test_exact_after_text(self, case: str) -> None:
        before, expected = CORPUS[case]

        after = fix_source(before, utc(before), [TIMEZONE], [])

        assert expected == after

    @pytest.mark.parametrize("case", sorted(CORPUS))
    def test_adds_no_unused_import(self, case: str) -> None:
        before, _ = CORPUS[case]

        after = fix_source(before, utc(before), [TIMEZONE], [])

        assert set() == unused_added(before, after)
        if "timezone" in free_names(after) - _assigned(after):
            assert "timezone" in imported(after)  # a free use is never left without its import

    def test_edit_without_the_name_is_not_parsed(self) -> None:
        """A file whose edits did not bring the name in is returned untouched, unparsed."""
        before = "x = old(\n"  # not Python: parsing it would raise
        after = "x = new(\n"

        assert after == fix_source(before, after, [TIMEZONE], [ImportSpec("os")])

    def test_name_already_there_before_the_edit_is_left_to_the_file(self) -> None:
        """Only names the edits brought in count: an unimported use elsewhere is not touched."""
        before = "a = timezone.utc\nb = old()\n"
        after = "a = timezone.utc\nb = new()\n"

        assert after == fix_source(before, after, [TIMEZONE], [])

    def test_module_import(self) -> None:
        before = "import os\n\nx = old()\n"

        after = fix_source(before, "import os\n\nx = shlex.quote(1)\n", [ImportSpec("shlex")], [])

        assert "import os\nimport shlex\n\nx = shlex.quote(1)\n" == after

    def test_star_import_is_not_extended(self) -> None:
        before = "from datetime import *\n\nnow = datetime.utcnow()\n"

        after = fix_source(before, utc(before), [TIMEZONE], [])

        assert "from datetime import *\nfrom datetime import timezone\n\n" in after


def _assigned(source: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


class TestRemove:
    OS = ImportSpec("os")

    def test_whole_line_and_its_blank(self) -> None:
        before = "import os\n\nimport requests\n\nhere = os.getcwd()\n"
        after = fix_source(before, before.replace("os.getcwd()", "cwd()"), [], [self.OS])
        assert "import requests\n\nhere = cwd()\n" == after

    def test_kept_while_used(self) -> None:
        before = "import os\n\nhere = os.getcwd()\nsep = os.sep\n"
        new = before.replace("os.getcwd()", "cwd()")
        assert new == fix_source(before, new, [], [self.OS])

    def test_kept_while_named_in_a_string_annotation(self) -> None:
        before = "import os\n\nhere = os.getcwd()\n\n\ndef f(p: 'os.PathLike') -> None: ...\n"
        new = before.replace("os.getcwd()", "cwd()")
        assert new == fix_source(before, new, [], [self.OS])

    def test_one_name_out_of_a_from_line(self) -> None:
        spec = ImportSpec("os", "getcwd")
        before = "from os import getcwd, sep\nfrom os.path import join\n\nx = getcwd()\n"
        after = fix_source(before, before.replace("getcwd()", "cwd()"), [], [spec])
        assert "from os import sep\nfrom os.path import join\n\nx = cwd()\n" == after

    def test_last_name_out_of_a_from_line(self) -> None:
        spec = ImportSpec("os", "sep")
        before = "from os import getcwd, sep\n\nx = sep\n"
        after = fix_source(before, before.replace("= sep", "= '/'"), [], [spec])
        assert "from os import getcwd\n\nx = '/'\n" == after

    def test_one_line_of_a_parenthesized_import(self) -> None:
        spec = ImportSpec("os", "getcwd")
        before = "from os import (\n    getcwd,\n    sep,\n)\n\nx = getcwd()\n"
        after = fix_source(before, before.replace("getcwd()", "cwd()"), [], [spec])
        assert "from os import (\n    sep,\n)\n\nx = cwd()\n" == after

    def test_lone_import_of_a_try_block_stays(self) -> None:
        before = "try:\n    import os\nexcept ImportError:\n    os = None\n\nx = os.getcwd()\n"
        new = before.replace("os.getcwd()", "cwd()")
        assert new == fix_source(before, new, [], [self.OS])

    def test_swap_in_place(self) -> None:
        """The issue's first example: `import os` out, `from pathlib import Path` in."""
        before = "import os\n\nhere = os.getcwd()\n"
        after = fix_source(
            before, "import os\n\nhere = Path.cwd()\n", [ImportSpec("pathlib", "Path")], [self.OS]
        )
        assert "from pathlib import Path\n\nhere = Path.cwd()\n" == after


class TestUsage:
    def test_scopes(self) -> None:
        source = (
            "import a\n"
            "x = [t for t in b]\n"
            "def f(p, *q, **r):\n    global g\n    g = 1\n    return p, q, r, c, lambda s: s + d\n"
            "class K:\n    e = 1\n    def m(self):\n        return e\n"
            "def outer():\n    n = 1\n    def inner():\n        nonlocal n\n        return n\n"
            "try:\n    pass\nexcept Exception as err:\n    h = err\n"
            "y = [w := 1 for _ in z]\n"
            "match v:\n    case {'k': k, **rest}:\n        pass\n    case [*more]:\n"
            "        pass\n    case other:\n        pass\n"
        )
        found = usage(ast.parse(source))
        assert {"b", "c", "d", "e", "Exception", "err", "z", "v"} <= found.free
        assert not {"t", "p", "q", "r", "s", "n", "self"} & found.free
        assert {"a", "x", "f", "g", "K", "outer", "err", "h", "w", "k", "rest", "more"} <= (
            found.module_bound
        )

    def test_spec(self) -> None:
        assert ImportSpec("os.path") == parse_spec("os.path")
        assert ImportSpec("os.path") == parse_spec("import os.path")
        assert ImportSpec("a.b", "c") == parse_spec("from a.b import c")
        assert None is parse_spec("from a import b as c")
        assert None is parse_spec("import 1x")
        assert "os" == ImportSpec("os.path").bound


class TestFixImports:
    RECIPE = """\
recipe_id: utc
language: python
summary: naive UTC to aware
operations:
  - {type: ast_grep_rule, rule: {pattern: datetime.utcnow()}, fix: datetime.now(timezone.utc)}
  - {type: ast_grep_rule, rule: {pattern: $X.assertEquals($$$A)}, fix: $X.assertEqual($$$A)}
imports:
  add: [from datetime import timezone]
"""

    def test_through_a_recipe_run(self, tmp_path: Path) -> None:
        files = {
            "a.py": "from datetime import datetime\n\nnow = datetime.utcnow()\n",
            "b.py": "import datetime\n\nnow = datetime.datetime.now()\n",
            "t.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
            "    def test(self):\n        self.assertEquals(1, 1)\n",
        }
        write_tree(tmp_path, files)
        recipe = parse_recipe(self.RECIPE)
        assert isinstance(recipe, Recipe)

        report = run_recipe(recipe, tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert (
            "from datetime import datetime, timezone\n\nnow = datetime.now(timezone.utc)\n"
            == (tmp_path / "a.py").read_text()
        )
        assert files["b.py"] == (tmp_path / "b.py").read_text()
        assert "import unittest\n\n\nclass T" in (tmp_path / "t.py").read_text()

    def work(self, tmp_path: Path, before: str, after: str) -> WorkSet:
        work = WorkSet.from_texts({"m.py": before.encode()}, tmp_path)
        work.set_text("m.py", after)
        return work

    def test_unparsable_file_is_left_to_the_syntax_guard(self, tmp_path: Path) -> None:
        work = self.work(tmp_path, "x = f(\n", "x = timezone(\n")
        imports = Imports(add=("from datetime import timezone",))

        assert None is fix_imports(imports, work, ["m.py"])
        assert "x = timezone(\n" == work.text("m.py")

    @pytest.mark.skipif(sys.version_info >= (3, 12), reason="needs a grammar newer than ast's")
    def test_newer_syntax_than_the_running_python_is_refused(self, tmp_path: Path) -> None:
        work = self.work(tmp_path, "type T = int\nx = f()\n", "type T = int\nx = timezone\n")
        imports = Imports(add=("from datetime import timezone",))

        failure = fix_imports(imports, work, ["m.py"])

        assert failure is not None
        assert FailureCode.CODEMOD_BACKEND_ERROR == failure.code
        assert "m.py" == failure.file


# -- the property: nothing unused added, nothing outside the import block and the edits moved

HEADERS = [
    "from datetime import datetime\n",
    "import os\nfrom datetime import datetime, tzinfo\n",
    "from datetime import (\n    date,\n    datetime,\n)\n",
    "from datetime import datetime\nfrom datetime import timedelta\n",
    "import datetime as dt\nfrom datetime import datetime\n\nimport requests\n",
    "from datetime import datetime, timezone\n",
    "from datetime import (\n    date,\n    datetime)\n",
    "from datetime import \\\n    date, \\\n    datetime\n",
    "from datetime import (datetime,\n                      date)\n",
    '"""Doc."""\n',
]
BODY_LINES = [
    "a = datetime.utcnow()\n",
    "b = other()\n",
    "c = dt.datetime.utcnow()\n",
    "def f(timezone):\n    return datetime.utcnow()\n",
    "def g():\n    return datetime.utcnow()\n",
    "timezone_name = 'utc'\n",
]


@settings(max_examples=150, deadline=None)
@given(
    header=st.sampled_from(HEADERS),
    body=st.lists(st.sampled_from(BODY_LINES), min_size=1, max_size=8),
    edited=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_property_only_used_names_and_only_the_block(
    header: str, body: list[str], edited: list[bool]
) -> None:
    before = header + "\n# body\n" + "".join(body)
    new_body = "".join(
        utc(line) if edit else line for line, edit in zip(body, edited, strict=False)
    )
    new = header + "\n# body\n" + new_body

    after = fix_source(before, new, [TIMEZONE], [])

    # nothing after the import block changed: the edits are as the recipe made them
    assert new[new.index("# body") :] == after[after.index("# body") :]
    # in the block, the old lines are all there in order; at most one gained the name
    old_head = new[: new.index("# body")].splitlines()
    new_head = after[: after.index("# body")].splitlines()
    opcodes = difflib.SequenceMatcher(None, old_head, new_head).get_opcodes()
    assert all(tag in ("equal", "insert", "replace") for tag, *_ in opcodes)
    assert sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "replace") <= 1
    # no import that nothing uses; and one where a free use needs it
    assert set() == unused_added(before, after)
    if "timezone" in free_names(after):
        assert "timezone" in imported(after)
    assert after == fix_source(new, after, [TIMEZONE], [])  # a second run changes nothing


def test_module_has_an_exact_public_surface() -> None:
    assert {"ImportSpec", "Usage", "fix_source", "parse_spec", "usage"} == set(pyimports.__all__)


def test_two_imports_of_one_module_go_in_in_order() -> None:
    before = "import os\n\nx = old()\n"
    new = "import os\n\nx = datetime.now(timezone.utc)\n"
    specs = [TIMEZONE, ImportSpec("datetime", "datetime")]

    after = fix_source(before, new, specs, [])

    assert "import os\nfrom datetime import datetime, timezone\n\n" + new[11:] == after


def test_too_deep_a_file_is_refused(tmp_path: Path) -> None:
    deep = "x = " + "-" * 2000 + "1\n"  # parses, but its tree is deeper than the stack
    work = WorkSet.from_texts({"m.py": (deep + "y = f()\n").encode()}, tmp_path)
    work.set_text("m.py", deep + "y = timezone\n")
    imports = Imports(add=("from datetime import timezone",))

    failure = fix_imports(imports, work, ["m.py"])

    assert failure is not None
    assert FailureCode.CODEMOD_BACKEND_ERROR == failure.code
    assert "nested too deeply" in failure.message


def test_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`patchsmith recipe run FILE --apply`: the import lands only where the name is free."""
    workspace = tmp_path / "ws"
    write_tree(
        workspace,
        {
            "a.py": "from datetime import (\n    date,\n    datetime,\n)\n\n"
            "now = datetime.utcnow()\n",
            "b.py": "import datetime\n\nnow = datetime.datetime.utcnow()\n",
        },
    )
    recipe_file = tmp_path / "utc.yaml"
    recipe_file.write_text(TestFixImports.RECIPE.replace("recipe_id: utc", "recipe_id: utc-cli"))
    modules = (
        "  - type: ast_grep_rule\n    rule: {pattern: datetime.datetime.utcnow()}\n"
        "    fix: datetime.datetime.now(datetime.timezone.utc)\n"
    )
    recipe_file.write_text(recipe_file.read_text().replace("imports:", modules + "imports:"))

    code = main(["recipe", "run", str(recipe_file), "-C", str(workspace), "--apply"])
    capsys.readouterr()

    assert 0 == code
    assert (
        "from datetime import (\n    date,\n    datetime,\n    timezone,\n)\n\n"
        "now = datetime.now(timezone.utc)\n" == (workspace / "a.py").read_text()
    )
    assert (
        "import datetime\n\nnow = datetime.datetime.now(datetime.timezone.utc)\n"
        == (workspace / "b.py").read_text()
    )
