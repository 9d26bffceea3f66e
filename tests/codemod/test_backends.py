"""The backends one by one: Python renames and imports, Java receivers and imports, config keys."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.codemod import RecipeStatus, run_recipe
from patchsmith.codemod.backends import python as python_backend
from patchsmith.codemod.backends.config import key_tokens, renamed_data
from patchsmith.codemod.backends.java import JavaFile
from patchsmith.codemod.backends.trees import parse
from patchsmith.codemod.manifests import declared_dependencies, has_dependency
from patchsmith.codemod.recipe import Recipe, RenameSymbol, parse_recipe
from patchsmith.codemod.workset import WorkSet
from patchsmith.errors import FailureCode, PatchFailure

from .helpers import write_tree


def recipe(text: str) -> Recipe:
    parsed = parse_recipe(text)
    assert isinstance(parsed, Recipe), parsed
    return parsed


class TestPythonImports:
    RECIPE = """\
recipe_id: cwd
language: python
summary: os.getcwd() to Path.cwd()
operations:
  - {type: ast_grep_rule, rule: {pattern: os.getcwd()}, fix: Path.cwd()}
imports:
  add: [from pathlib import Path]
  remove: [import os]
"""

    def test_adds_used_and_removes_unused(self, tmp_path: Path) -> None:
        """The new import is added; `import os` goes only where nothing else uses it."""
        write_tree(
            tmp_path,
            {
                "a.py": "import os\n\nhere = os.getcwd()\n",
                "b.py": "import os\n\nhere = os.getcwd()\nsep = os.sep\n",
                "c.py": "import os\n\nsep = os.sep\n",
            },
        )

        report = run_recipe(recipe(self.RECIPE), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert "from pathlib import Path\n\nhere = Path.cwd()\n" == (tmp_path / "a.py").read_text()
        b = (tmp_path / "b.py").read_text()
        assert "import os" in b and "from pathlib import Path" in b and "Path.cwd()" in b
        assert "import os\n\nsep = os.sep\n" == (tmp_path / "c.py").read_text()

    def test_bad_import_spec(self, tmp_path: Path) -> None:
        """An import that is neither `import x` nor `from x import y` is INVALID_RECIPE."""
        write_tree(tmp_path, {"a.py": "import os\nos.getcwd()\n"})
        text = self.RECIPE.replace("from pathlib import Path", "give me Path please")

        report = run_recipe(recipe(text), tmp_path, record=False)

        assert ["INVALID_RECIPE"] == [e.code.value for e in report.errors]


class TestPythonRename:
    def op(self) -> RenameSymbol:
        return RenameSymbol.model_validate({"from": "pkg.mod.old", "to": "new"})

    def test_pool_gives_the_same_result(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Many files go through a process pool, with the same result as one by one."""
        files = {"pkg/__init__.py": "", "pkg/mod.py": "def old():\n    return 1\n"}
        files |= {f"pkg/use{i}.py": "from pkg.mod import old\n\nold()\n" for i in range(6)}
        write_tree(tmp_path, files)
        monkeypatch.setattr(python_backend, "PARALLEL_FROM_FILES", 2)
        work = WorkSet(tmp_path, sorted(files))
        matches: Counter[str] = Counter()

        python_backend.rename_symbol(self.op(), work, matches, [])

        assert "from pkg.mod import new\n\nnew()\n" == work.text("pkg/use3.py")
        assert "def new():\n    return 1\n" == work.text("pkg/mod.py")
        assert 7 == len(work.changed)

    def test_unparsable_file_is_reported(self, tmp_path: Path) -> None:
        """A file libcst cannot parse is reported as seen, not changed."""
        write_tree(tmp_path, {"pkg/mod.py": "def old(:\n"})
        work = WorkSet(tmp_path, ["pkg/mod.py"])
        seen: list[object] = []

        python_backend.rename_symbol(self.op(), work, Counter(), seen)  # type: ignore[arg-type]

        assert 1 == len(seen) and not work.changed

    def test_module_names(self) -> None:
        """Module names are rooted where the defining module lives (a src/ layout)."""
        names = python_backend.module_names(
            ["src/pkg/mod.py", "src/pkg/__init__.py", "tests/t.py"], "pkg.mod"
        )

        assert {"src/pkg/mod.py": "pkg.mod:pkg", "src/pkg/__init__.py": "pkg:pkg"} == names

    def test_relative_import_beyond_top(self) -> None:
        """A relative import past the package root is left alone."""
        done = python_backend.rename_in_source(
            "from ...x import old\nold()\n", "pkg.mod.old", "new", "pkg.a:pkg"
        )

        assert "from ...x import old\nold()\n" == done.source


class TestJava:
    def test_names_through_imports(self) -> None:
        """A simple name is the class only through an import, its package or a wildcard."""
        src = (
            b"package app;\nimport com.a.Gen;\nimport com.b.*;\nimport static x.Y.z;\nclass C {}\n"
        )
        info = JavaFile.read(parse("java", src).root_node)

        assert info.names("com.a.Gen", "Gen")
        assert info.names("com.a.Gen", "com.a.Gen")
        assert info.names("com.b.Other", "Other")
        assert info.names("app.Local", "Local")
        assert not info.names("com.c.Gen", "Gen")
        assert not info.names("com.z.C", "C")

    def test_instance_receiver_is_left(self, tmp_path: Path) -> None:
        """`gen.generate()` on a variable is reported, not changed."""
        text = (
            "package app;\nimport com.acme.ids.LegacyIdGenerator;\nclass A {\n"
            "  long f(LegacyIdGenerator gen) { return gen.generate(); }\n}\n"
        )
        write_tree(tmp_path, {"src/A.java": text})
        r = recipe(
            "recipe_id: j\nlanguage: java\nsummary: s\noperations:\n"
            "  - {type: method_invocation_replace, from: com.acme.ids.LegacyIdGenerator generate(),"
            " to: com.acme.ids.IdGenerator nextId()}\n"
        )

        report = run_recipe(r, tmp_path, record=False)

        assert RecipeStatus.NO_CHANGE == report.status
        assert "receiver 'gen' is an instance of" in report.unchanged_matches[0].reason
        assert "the variable's type would have to change" in report.unchanged_matches[0].reason

    RENAME = (
        "recipe_id: j\nlanguage: java\nsummary: s\noperations:\n"
        "  - {type: method_invocation_replace, from: com.acme.ids.LegacyIdGenerator generate(),"
        " to: com.acme.ids.LegacyIdGenerator nextId()}\n"
    )

    def test_typed_instance_receivers_are_renamed(self, tmp_path: Path) -> None:
        """Same class in `to`: calls on parameters, locals, for-each variables, fields and
        `this.field` of that declared type are renamed; other types and `var` are left."""
        text = """package app;
import com.acme.ids.LegacyIdGenerator;
import com.other.Counter;
import java.util.List;
class A {
  private LegacyIdGenerator field;
  private Counter counter;
  long f(LegacyIdGenerator param, List<LegacyIdGenerator> all, Counter c) {
    LegacyIdGenerator local = param;
    var inferred = local;
    for (LegacyIdGenerator each : all) { each.generate(); }
    c.generate();
    counter.generate();
    inferred.generate();
    unknown.generate();
    return param.generate() + local.generate() + field.generate() + this.field.generate();
  }
  long g(Counter field) { return field.generate(); }
}
"""
        write_tree(tmp_path, {"A.java": text})

        report = run_recipe(recipe(self.RENAME), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        out = (tmp_path / "A.java").read_text()
        for call in ("each", "param", "local", "field", "this.field"):
            assert f"{call}.nextId()" in out
        for kept in ("c", "counter", "inferred", "unknown"):
            assert f"{kept}.generate()" in out
        # the parameter `Counter field` shadows the field of the same name
        assert "long g(Counter field) { return field.generate(); }" in out
        left = {m.text: m.reason for m in report.unchanged_matches}
        assert "declared Counter" in left["c.generate()"]
        assert "of no type declared here" in left["unknown.generate()"]
        assert "of no type declared here" in left["inferred.generate()"]

    def test_local_declared_after_the_call_does_not_count(self, tmp_path: Path) -> None:
        """A local of that type declared later in the block does not type an earlier call."""
        text = """package app;
import com.acme.ids.LegacyIdGenerator;
class A {
  Object gen;
  void f() {
    gen.generate();
    LegacyIdGenerator gen2 = null;
  }
  void g() {
    x.generate();
    LegacyIdGenerator x = null;
  }
}
"""
        write_tree(tmp_path, {"A.java": text})

        report = run_recipe(recipe(self.RENAME), tmp_path, record=False)

        assert RecipeStatus.NO_CHANGE == report.status
        assert 2 == len(report.unchanged_matches)

    def test_import_added_after_package_when_none(self, tmp_path: Path) -> None:
        """Without imports, the new one goes after the package line."""
        text = (
            "package com.acme.ids;\nclass A { long f() { return LegacyIdGenerator.generate(); } }\n"
        )
        write_tree(tmp_path, {"A.java": text})
        r = recipe(
            "recipe_id: j\nlanguage: java\nsummary: s\noperations:\n"
            "  - {type: method_invocation_replace, from: com.acme.ids.LegacyIdGenerator generate(),"
            " to: com.other.IdGenerator nextId()}\nimports: {add: [com.other.IdGenerator]}\n"
        )

        report = run_recipe(r, tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert (
            (tmp_path / "A.java")
            .read_text()
            .startswith("package com.acme.ids;\n\nimport com.other.IdGenerator;\nclass A")
        )


class TestConfig:
    def test_json_rename_keeps_layout(self, tmp_path: Path) -> None:
        """A JSON key is renamed in place; spacing and order stay."""
        write_tree(tmp_path, {"a.json": '{\n  "x": {"old": 1,   "z": [ {"old": 2} ]}\n}\n'})
        r = recipe(
            "recipe_id: c\nlanguage: json\nsummary: s\n"
            "operations: [{type: config_key_rename, from: x.old, to: new key}]\n"
        )

        report = run_recipe(r, tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status
        assert (
            '{\n  "x": {"new key": 1,   "z": [ {"old": 2} ]}\n}\n'
            == (tmp_path / "a.json").read_text()
        )

    def test_quoted_toml_and_yaml_keys(self) -> None:
        """Quoted keys are read by their value."""
        toml = dict(key_tokens("toml", b"[\"a b\"]\n'c d' = 1\n"))
        yaml = dict(key_tokens("yaml", b"'it''s': {\"q\": 1}\n"))

        assert {("a b",), ("a b", "c d")} == set(toml)
        assert {("it's",), ("it's", "q")} == set(yaml)

    def test_unreadable_config_is_reported(self, tmp_path: Path) -> None:
        """A file that does not load as its format is reported, not changed."""
        write_tree(tmp_path, {"a.yaml": "old: [1, 2\nold2: x\n"})
        r = recipe(
            "recipe_id: c\nlanguage: yaml\nsummary: s\n"
            "operations: [{type: config_key_rename, from: old, to: new}]\n"
        )

        report = run_recipe(r, tmp_path, apply=True, record=False)

        assert report.status in (RecipeStatus.NO_CHANGE,)
        assert "old: [1, 2" in (tmp_path / "a.yaml").read_text()

    @given(
        st.recursive(
            st.integers() | st.text(max_size=3),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(["a", "b", "old"]), inner, max_size=3)
            ),
            max_leaves=10,
        )
    )
    def test_renamed_data_keeps_everything_else(self, data: object) -> None:
        """Renaming a key that is not there returns equal data."""
        assert data == renamed_data(data, ("missing",), "new")


class TestManifests:
    def test_every_manifest(self, tmp_path: Path) -> None:
        """Dependencies are read from pom.xml, package.json, go.mod, Cargo.toml, pyproject.toml."""
        write_tree(
            tmp_path,
            {
                "pom.xml": "<project><dependencies><dependency><groupId>g</groupId>"
                "<artifactId>a</artifactId></dependency></dependencies></project>",
                "package.json": '{"devDependencies": {"jest": "1"}}',
                "go.mod": "module m\n\nrequire x.io/one v1\nrequire (\n\ty.io/two v2 // c\n)\n",
                "Cargo.toml": "[dependencies]\nserde = '1'\n[workspace.dependencies]\nrand = '1'\n",
                "pyproject.toml": "[project.optional-dependencies]\nt = ['Py_Test>=1']\n"
                "[tool.poetry.dependencies]\nflask = '*'\n",
            },
        )
        found, broken = declared_dependencies(tmp_path)

        assert [] == broken
        for name in (
            "g:a",
            "a",
            "jest",
            "x.io/one",
            "y.io/two",
            "serde",
            "rand",
            "py-test",
            "flask",
        ):
            assert has_dependency(found, name) is not None, name
        assert has_dependency(found, "nope") is None

    def test_broken_manifest(self, tmp_path: Path) -> None:
        """An unreadable manifest is named, and dependency_present refuses."""
        write_tree(tmp_path, {"package.json": "{", "a.py": "x = 1\n"})
        r = recipe(
            "recipe_id: d\nlanguage: python\nsummary: s\npreconditions: [{dependency_present: x}]\n"
            "operations: [{type: ast_grep_rule, rule: {pattern: x}}]\n"
        )

        report = run_recipe(r, tmp_path, record=False)

        assert "package.json" in report.errors[0].message


class TestAstGrepOutput:
    LINE = (
        b'{"file": "a.py", "ruleId": "r", "text": "x", "replacement": "y",'
        b' "range": {"byteOffset": {"start": 0, "end": 1}, "start": {"line": 0}}}'
    )

    def test_stream_lines_become_matches(self) -> None:
        """Each JSON line of `--json=stream` is one match; blank lines are skipped."""
        from patchsmith.codemod.backends.astgrep import _parse_stream

        found = _parse_stream(self.LINE + b"\n\n" + self.LINE.replace(b"a.py", b"b.py") + b"\n", {})

        assert not isinstance(found, PatchFailure)
        assert [("a.py", 1, b"y"), ("b.py", 1, b"y")] == [
            (m.path, m.line, m.edit.replacement if m.edit else None) for m in found
        ]

    @pytest.mark.parametrize("bad", [b"not json", b"[1, 2]", b'{"file": "a.py"}'])
    def test_unexpected_output_is_a_backend_error(self, bad: bytes) -> None:
        """A line that is not JSON, or JSON of another shape, is CODEMOD_BACKEND_ERROR."""
        from patchsmith.codemod.backends.astgrep import _parse_stream

        found = _parse_stream(self.LINE + b"\n" + bad + b"\n", {})

        assert isinstance(found, PatchFailure)
        assert FailureCode.CODEMOD_BACKEND_ERROR == found.code
