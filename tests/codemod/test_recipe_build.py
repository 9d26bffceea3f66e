"""A recipe's `compiles` by a real build for its language, `parses`, and `no_reference` in scope."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from tests.codemod.helpers import snapshot, write_tree

from patchsmith.cli import main
from patchsmith.codemod import parse_recipe, run_recipe
from patchsmith.codemod.build import deciding_profiles, default_profiles, tool_of
from patchsmith.codemod.recipe import CompilesCheck, Language, Recipe, TestsPassCheck
from patchsmith.verify.profiles import Profile, ProfileKind, load_profiles

needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK here")

JAVA = {
    "src/com/acme/ids/LegacyIdGenerator.java": (
        "package com.acme.ids;\n\npublic class LegacyIdGenerator {\n"
        "    public static long generate() { return 1; }\n}\n"
    ),
    "src/com/acme/ids/IdGenerator.java": (
        "package com.acme.ids;\n\npublic class IdGenerator {\n"
        "    public static long nextId() { return 2; }\n}\n"
    ),
    "src/app/App.java": (
        "package app;\n\nimport com.acme.ids.LegacyIdGenerator;\n\npublic class App {\n"
        "    long id() {\n        return LegacyIdGenerator.generate();\n    }\n}\n"
    ),
}


def java_recipe(fix: str, postcondition: str = "compiles") -> str:
    return f"""\
recipe_id: ids
language: java
summary: the new id generator
operations:
  - type: ast_grep_rule
    id: ids
    rule: {{pattern: "LegacyIdGenerator.generate()"}}
    fix: "{fix}"
postconditions:
  - {postcondition}
"""


GREEN = java_recipe("com.acme.ids.IdGenerator.nextId()")
BROKEN = java_recipe("IdGenerator.nextId()")  # no import: App.java no longer compiles


@pytest.fixture(name="java")
def _java(tmp_path: Path) -> Path:
    write_tree(tmp_path, JAVA)
    return tmp_path


def recipe_run(root: Path, text: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple:
    (root / "recipe.yaml").write_text(text)
    recipe = str(root / "recipe.yaml")
    code = main(["recipe", "run", recipe, "-C", str(root), "--json", *more])
    return code, json.loads(capsys.readouterr().out)


@needs_javac
def test_a_green_java_change_is_compiled_by_javac(
    java: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No build profile configured: javac compiles the workspace's sources, before and after."""
    code, data = recipe_run(java, GREEN, capsys, "--apply")

    assert 0 == code, data["errors"]
    [check] = data["checks"]
    assert ("compiles", "passed") == (check["condition"], check["status"])
    assert "verified by javac" in check["evidence"]
    runs = {(r["profile"], r["side"]) for r in data["verification"]}
    assert {("javac", "base"), ("javac", "changed")} == runs
    assert "IdGenerator.nextId()" in (java / "src/app/App.java").read_text()
    assert not list(java.rglob("*.class"))  # classes go to a throwaway folder


@needs_javac
def test_a_java_change_that_breaks_the_build_is_refused(
    java: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """javac's error in the changed file fails `compiles`, with its file and line."""
    before = snapshot(java)

    code, data = recipe_run(java, BROKEN, capsys, "--apply")

    assert 1 == code
    [check] = data["checks"]
    assert "failed" == check["status"]
    assert "javac: 1 introduced failure(s): src/app/App.java:7" in check["evidence"]
    assert "cannot find symbol" in check["evidence"]
    assert ["POSTCONDITION_FAILED"] == [e["code"] for e in data["errors"]]
    assert before == {p: b for p, b in snapshot(java).items() if p != "recipe.yaml"}


def test_a_misspelled_profile_is_an_error(java: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`compiles: javacc` names no profile: `error`, the known ones listed, nothing written."""
    code, data = recipe_run(java, java_recipe("IdGenerator.nextId()", "compiles: javacc"), capsys)

    assert 1 == code and "refused" == data["status"]
    [check] = data["checks"]
    assert "error" == check["status"]
    assert "unknown verification profile 'javacc'" in check["evidence"]
    assert "javac" in check["evidence"]  # among the known ones
    [error] = data["errors"]
    assert "compiles could not be established" in error["message"]
    assert "[verify.NAME]" in error["hint"]
    assert [] == data["verification"]


def test_compiles_without_a_build_for_the_language_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TypeScript recipe where nothing type-checks TypeScript: `error`, with what to set up;
    a Python type checker in the same workspace does not count for it."""
    write_tree(
        tmp_path,
        {
            "src/a.ts": "const b = new Buffer(10);\n",
            "patchsmith.toml": '[verify.types]\nargv = ["mypy", "."]\nkind = "typecheck"\n',
        },
    )
    recipe = """\
recipe_id: buffers
language: typescript
summary: Buffer.alloc
operations:
  - type: ast_grep_rule
    id: alloc
    rule: {pattern: "new Buffer($N)"}
    fix: "Buffer.alloc($N)"
postconditions:
  - compiles
"""
    code, data = recipe_run(tmp_path, recipe, capsys, "--apply")

    assert 1 == code
    [check] = data["checks"]
    assert "error" == check["status"]
    assert "no build or type-check profile for typescript" in check["evidence"]
    assert "tsc" in data["errors"][0]["hint"]
    assert "new Buffer(10)" in (tmp_path / "src/a.ts").read_text()


PYTHON = {
    "pkg/__init__.py": "",
    "pkg/old.py": "def fetch():\n    return 1\n",
    "pkg/use.py": "from pkg.old import fetch\n\nvalue = fetch()\n",
    "pkg/other.py": "from pkg.old import fetch\n\n\nvalue = fetch(2)\n",
}

RENAME_CALLS = """\
recipe_id: calls
language: python
summary: call load() instead of fetch()
operations:
  - type: ast_grep_rule
    id: calls
    rule: {pattern: "fetch()"}
    fix: "load()"
postconditions:
  - no_reference: fetch($$$ARGS)
  - parses
"""


def test_no_reference_searches_the_whole_scope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reference left in a file the recipe did not change fails, with its file and line."""
    write_tree(tmp_path, PYTHON)

    code, data = recipe_run(tmp_path, RENAME_CALLS, capsys)

    assert 1 == code and "refused" == data["status"]
    checks = {c["condition"]: c for c in data["checks"]}
    left = checks["no_reference fetch($$$ARGS)"]
    assert "failed" == left["status"]
    assert "1 reference(s) left in 4 file(s) in scope: pkg/other.py:4" == left["evidence"]
    assert ("passed", "1 changed file(s) parse (syntax only)") == (
        checks["parses"]["status"],
        checks["parses"]["evidence"],
    )


def test_no_reference_passes_when_nothing_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {**PYTHON, "pkg/other.py": "value = 2\n"})

    code, data = recipe_run(tmp_path, RENAME_CALLS, capsys, "--apply")

    assert 0 == code, data["errors"]
    assert {"passed"} == {c["status"] for c in data["checks"]}
    assert "0 reference(s) left in 4 file(s) in scope" in data["checks"][0]["evidence"]


def test_parses_fails_on_a_file_that_no_longer_parses(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = fetch()\n"})
    recipe = RENAME_CALLS.replace('fix: "load()"', 'fix: "load(("').replace(
        "  - no_reference: fetch($$$ARGS)\n", ""
    )
    (tmp_path / "r.yaml").write_text(recipe)

    report = run_recipe(str(tmp_path / "r.yaml"), tmp_path, record=False)

    [check] = report.checks
    assert ("parses", "failed") == (check.condition, check.status.value)
    assert "1 changed file(s) do not parse: a.py" == check.evidence


def test_parses_takes_no_value() -> None:
    text = RENAME_CALLS.replace("  - parses\n", "  - parses: strict\n")

    failure = parse_recipe(text)

    assert not isinstance(failure, Recipe)
    assert "INVALID_RECIPE" == failure.code.value


def test_parses_where_no_parser_reads_the_file_is_an_error() -> None:
    from patchsmith.codemod.checks import _syntax

    check = _syntax({"notes.unknownlang": b"anything"})

    assert "error" == check.status.value
    assert "no parser for 1 changed file(s)" in check.evidence


# the choice of profiles


def profile(*argv: str, kind: ProfileKind = ProfileKind.BUILD) -> Profile:
    return Profile(argv=argv, kind=kind)


def test_tool_of_reads_through_launchers() -> None:
    assert "mypy" == tool_of(profile("python3", "-m", "mypy", "src"))
    assert "tsc" == tool_of(profile("npx", "--no-install", "tsc", "--noEmit"))
    assert "tsc" == tool_of(profile("node_modules/.bin/tsc"))
    assert "gradlew" == tool_of(profile("./gradlew", "build"))


def test_go_module_gets_go_build_and_vet(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/x\n")

    found = default_profiles(Language.GO, tmp_path)

    assert {"go-build": ("go", "build", "./..."), "go-vet": ("go", "vet", "./...")} == {
        n: p.argv for n, p in found.items()
    }
    assert {} == default_profiles(Language.PYTHON, tmp_path)
    assert {} == default_profiles(Language.JAVA, tmp_path)  # no Java source


def test_the_workspace_profile_for_the_language_wins(tmp_path: Path) -> None:
    """A configured Maven build decides a Java `compiles` (javac is only the default); a
    project's own command (unknown tool) counts for any language; tests need a test kind."""
    write_tree(
        tmp_path,
        {
            **JAVA,
            "patchsmith.toml": '[verify.maven]\nargv = ["mvn", "-q", "compile"]\nkind = "build"\n'
            '[verify.check]\nargv = ["make", "check"]\nkind = "test"\n',
        },
    )
    profiles = load_profiles(tmp_path)
    assert not isinstance(profiles, Exception) and hasattr(profiles, "profiles")

    java = deciding_profiles(CompilesCheck(), Language.JAVA, tmp_path, profiles)  # type: ignore[arg-type]
    python = deciding_profiles(CompilesCheck(), Language.PYTHON, tmp_path, profiles)  # type: ignore[arg-type]
    tests = deciding_profiles(TestsPassCheck(), Language.PYTHON, tmp_path, profiles)  # type: ignore[arg-type]
    named = deciding_profiles(CompilesCheck(profile="javac"), Language.JAVA, tmp_path, profiles)  # type: ignore[arg-type]

    assert ("maven",) == java.names
    assert () == python.names and "no build or type-check profile for python" in python.problem
    assert ("check",) == tests.names
    assert ("javac",) == named.names
    javac = named.profile_set.get("javac")
    assert javac is not None and "src/app/App.java" in javac.argv


def test_without_profiles_to_run_compiles_is_an_error(tmp_path: Path) -> None:
    """Called with nothing to run the profiles (a caller that runs none): `error`."""
    from patchsmith.codemod.checks import postconditions
    from patchsmith.codemod.workset import WorkSet

    recipe = parse_recipe(java_recipe("x()"))
    assert isinstance(recipe, Recipe)
    changed = {"A.java": b"class A {}\n"}

    [check] = postconditions(recipe, changed, WorkSet.from_texts(changed, tmp_path))  # type: ignore[misc]

    assert ("error", "no verification profile was run for it") == (
        check.status.value,
        check.evidence,
    )


def test_a_run_that_did_not_finish_is_an_error() -> None:
    from patchsmith.codemod.checks import _verified
    from patchsmith.model.evidence import Evidence, RunSide
    from patchsmith.verify.report import ProfileOutcome, VerifyReport

    killed = Evidence("javac", RunSide.CHANGED, ("javac",), None, 1.0, False, "")
    outcome = ProfileOutcome("javac", ProfileKind.BUILD, (killed,), (), (), (), True, True)

    check = _verified("compiles", ["javac"], VerifyReport((outcome,)))

    assert ("error", "javac (changed) did not finish") == (check.status.value, check.evidence)


def test_a_build_tool_that_cannot_start_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The configured compiler is missing: `error` on both sides, the run refused."""
    write_tree(
        tmp_path,
        {
            **PYTHON,
            "patchsmith.toml": '[verify.build]\nargv = ["no-such-compiler-here"]\nkind = "build"\n',
        },
    )
    recipe = RENAME_CALLS.replace("  - parses\n", "  - compiles\n").replace(
        "  - no_reference: fetch($$$ARGS)\n", ""
    )

    code, data = recipe_run(tmp_path, recipe, capsys, "--apply")

    assert 1 == code and "refused" == data["status"]
    [check] = data["checks"]
    assert "error" == check["status"]
    assert "build (base) could not start" in check["evidence"]
    assert "could not be established" in data["errors"][0]["message"]
    assert {"base", "changed"} == {r["side"] for r in data["verification"]}
    assert "value = fetch()" in (tmp_path / "pkg/use.py").read_text()


def test_config_recipes_are_decided_by_the_tools_that_read_them(tmp_path: Path) -> None:
    """A TOML change is built by cargo or the project's own command, never by mypy."""
    write_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "x"\n',
            "patchsmith.toml": '[verify.types]\nargv = ["mypy", "."]\nkind = "typecheck"\n',
        },
    )
    profiles = load_profiles(tmp_path)
    assert not isinstance(profiles, Exception) and hasattr(profiles, "profiles")

    toml = deciding_profiles(CompilesCheck(), Language.TOML, tmp_path, profiles)  # type: ignore[arg-type]
    yaml = deciding_profiles(CompilesCheck(), Language.YAML, tmp_path, profiles)  # type: ignore[arg-type]

    assert ("cargo-check",) == toml.names
    assert () == yaml.names and 'kind = "build"' in yaml.hint


def test_a_build_failing_on_both_sides_without_a_readable_failure_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compiler that fails before and after and prints nothing its parser reads has
    established nothing (before: "no introduced failure", a pass)."""
    python = json.dumps(sys.executable)
    write_tree(
        tmp_path,
        {
            **PYTHON,
            "patchsmith.toml": (
                f'[verify.build]\nargv = [{python}, "-c", "import sys; sys.exit(3)"]\n'
                'parser = "generic"\nkind = "build"\n'
            ),
        },
    )
    recipe = RENAME_CALLS.replace("  - parses\n", "  - compiles\n").replace(
        "  - no_reference: fetch($$$ARGS)\n", ""
    )

    code, data = recipe_run(tmp_path, recipe, capsys, "--apply")

    assert 1 == code
    [check] = data["checks"]
    assert "error" == check["status"]
    assert "build (changed) exited 3 with no failure its parser could read" == check["evidence"]
