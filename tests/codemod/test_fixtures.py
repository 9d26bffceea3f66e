"""Every built-in recipe passes its fixtures, positive and negative; scaffolding makes one."""

from __future__ import annotations

import compileall
import shutil
from pathlib import Path

import pytest

from patchsmith.codemod import run_recipe
from patchsmith.codemod.fixtures import FixtureKind, run_fixtures, scaffold_recipe
from patchsmith.codemod.recipe import Language
from patchsmith.codemod.registry import (
    BUILTIN_DIR,
    find_recipe,
    list_recipes,
    load_recipe_file,
)
from patchsmith.codemod.report import RecipeStatus
from patchsmith.errors import FailureCode, PatchFailure

REPO = Path(__file__).resolve().parents[2]
BUILTIN = sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "recipe.yaml").is_file())
EXAMPLES = REPO / "examples" / "recipes"


class TestBuiltinFixtures:
    @pytest.mark.parametrize("recipe_id", BUILTIN)
    def test_fixtures_pass(self, recipe_id: str) -> None:
        """The recipe turns each before/ into its after/ and leaves each unchanged/ alone."""
        entry = find_recipe(recipe_id, None)
        assert not isinstance(entry, PatchFailure)

        results = run_fixtures(entry)

        assert [] == [(r.case, r.kind.value, r.detail) for r in results if not r.passed]
        kinds = {r.kind for r in results}
        assert {FixtureKind.POSITIVE, FixtureKind.NEGATIVE} <= kinds

    def test_example_project_recipe(self) -> None:
        """The package-rename example under examples/recipes passes its fixtures."""
        entry = find_recipe("rename-fetch-user", None, [EXAMPLES])
        assert not isinstance(entry, PatchFailure)

        assert all(r.passed for r in run_fixtures(entry))

    def test_java_fixture_compiles(self) -> None:
        """The Java recipe's output compiles with javac (skipped, with a reason, without a JDK)."""
        entry = find_recipe("legacy-id-generator", None)
        assert not isinstance(entry, PatchFailure)

        compiled = [r for r in run_fixtures(entry) if r.kind is FixtureKind.COMPILE]

        assert compiled and all(r.passed for r in compiled)
        if shutil.which("javac") is None:
            assert compiled[0].skipped == "javac is not installed (no JDK)"
        else:
            assert "javac compiled" in compiled[0].detail


class TestFixtureFailures:
    def test_missing_fixtures_fail(self, tmp_path: Path) -> None:
        """A recipe without fixtures fails both the positive and the negative check."""
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "recipe.yaml").write_text(
            "recipe_id: r\nlanguage: python\nsummary: s\n"
            "operations: [{type: ast_grep_rule, rule: {pattern: a}, fix: b}]\n"
        )
        entry = load_recipe_file(tmp_path / "r" / "recipe.yaml")
        assert not isinstance(entry, PatchFailure)

        results = run_fixtures(entry)

        assert [False, False] == [r.passed for r in results]

    def test_wrong_after_shows_a_diff(self, tmp_path: Path) -> None:
        """A positive fixture whose output differs fails with the difference."""
        path = scaffold_recipe("swap", Language.PYTHON, "x = old()\n", "x = new()\n", tmp_path)
        after = tmp_path / "swap" / "fixtures" / "example" / "after" / "example.py"
        after.write_text("x = other()\n")
        entry = load_recipe_file(path)
        assert not isinstance(entry, PatchFailure)

        failed = [r for r in run_fixtures(entry) if not r.passed]

        assert ["example"] == [r.case for r in failed]
        assert "+x = new()" in failed[0].detail


class TestScaffold:
    def test_scaffolded_recipe_passes(self, tmp_path: Path) -> None:
        """`recipe new` from one example writes a recipe whose fixtures pass."""
        before = "import os\n\n\ndef home():\n    return os.getenv('HOME')\n"
        after = "import os\n\n\ndef home():\n    return os.environ.get('HOME')\n"

        path = scaffold_recipe("getenv", Language.PYTHON, before, after, tmp_path, file_name="m.py")
        entry = load_recipe_file(path)

        assert not isinstance(entry, PatchFailure)
        rule = entry.recipe.operations[0]
        assert {"pattern": "os.getenv($$$ARGS)"} == rule.rule  # type: ignore[union-attr]
        assert "os.environ.get($$$ARGS)" == rule.fix  # type: ignore[union-attr]
        assert all(r.passed for r in run_fixtures(entry))

    def test_scaffolded_rule_matches_another_call_site(self, tmp_path: Path) -> None:
        """The rule is the call with metavariables, not the example's statement: it rewrites
        a different call site, with other arguments, in another statement."""
        before = "import os\n\n\ndef home():\n    return os.getenv('HOME')\n"
        after = "import os\n\n\ndef home():\n    return os.environ.get('HOME')\n"
        path = scaffold_recipe("getenv", Language.PYTHON, before, after, tmp_path / "r")
        (tmp_path / "app.py").write_text("import os\nuser = os.getenv(NAME, 'nobody') or 'x'\n")

        report = run_recipe(path, tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        assert "user = os.environ.get(NAME, 'nobody') or 'x'\n" in (tmp_path / "app.py").read_text()

    def test_not_a_call_keeps_the_changed_lines(self, tmp_path: Path) -> None:
        """A change no call holds keeps the lines that differ as the pattern."""
        path = scaffold_recipe("lit", Language.PYTHON, "x = 1\n", "x = 2\n", tmp_path)
        entry = load_recipe_file(path)

        assert not isinstance(entry, PatchFailure)
        assert {"pattern": "x = 1"} == entry.recipe.operations[0].rule  # type: ignore[union-attr]

    def test_existing_folder_is_refused(self, tmp_path: Path) -> None:
        """Scaffolding never overwrites a recipe."""
        scaffold_recipe("x", Language.PYTHON, "a()\n", "b()\n", tmp_path)

        with pytest.raises(FileExistsError):
            scaffold_recipe("x", Language.PYTHON, "a()\n", "b()\n", tmp_path)


class TestRegistry:
    def test_project_recipe_cannot_take_a_builtin_id(self, tmp_path: Path) -> None:
        """A recipe in .patchsmith/recipes with a built-in's id is refused, and so is the id."""
        folder = tmp_path / ".patchsmith" / "recipes"
        folder.mkdir(parents=True)
        (folder / "mine.yaml").write_text(
            "recipe_id: unittest-to-assert\nlanguage: python\nsummary: mine\n"
            "operations: [{type: ast_grep_rule, rule: {pattern: a}}]\n"
        )

        entry = find_recipe("unittest-to-assert", tmp_path)

        assert isinstance(entry, PatchFailure)
        assert FailureCode.INVALID_RECIPE == entry.code
        assert "belongs to a built-in recipe" in entry.message
        entries, failures = list_recipes(tmp_path)
        [builtin] = [e for e in entries if e.recipe.recipe_id == "unittest-to-assert"]
        assert builtin.builtin and [entry] == failures

    def test_configured_folder(self, tmp_path: Path) -> None:
        """patchsmith.toml [codemod] recipe_dirs adds a folder."""
        (tmp_path / "patchsmith.toml").write_text('[codemod]\nrecipe_dirs = ["ops/recipes"]\n')
        (tmp_path / "ops" / "recipes").mkdir(parents=True)
        (tmp_path / "ops" / "recipes" / "o.yml").write_text(
            "recipe_id: ours\nlanguage: go\nsummary: s\n"
            "operations: [{type: ast_grep_rule, rule: {pattern: a}}]\n"
        )

        entries, failures = list_recipes(tmp_path)

        assert [] == failures
        assert "ours" in [e.recipe.recipe_id for e in entries]

    def test_bad_configured_folder(self, tmp_path: Path) -> None:
        """recipe_dirs that is not a list of strings is INVALID_POLICY."""
        (tmp_path / "pyproject.toml").write_text("[tool.patchsmith.codemod]\nrecipe_dirs = 3\n")

        _, failures = list_recipes(tmp_path)

        assert [FailureCode.INVALID_POLICY] == [f.code for f in failures]

    def test_broken_recipe_is_reported(self, tmp_path: Path) -> None:
        """A recipe file that does not validate is listed as a failure, and found by id as one."""
        folder = tmp_path / ".patchsmith" / "recipes"
        folder.mkdir(parents=True)
        (folder / "broken.yaml").write_text("recipe_id: broken\nlanguage: cobol\n")

        _, failures = list_recipes(tmp_path)
        found = find_recipe("broken", tmp_path)

        assert [FailureCode.INVALID_RECIPE] == [f.code for f in failures]
        assert isinstance(found, PatchFailure) and FailureCode.INVALID_RECIPE == found.code


def test_bytecode_next_to_the_fixtures_is_not_part_of_them(tmp_path: Path) -> None:
    """pip byte-compiles every `.py` it installs, the fixtures' too: that is no change."""
    folder = tmp_path / "unittest-to-assert"
    shutil.copytree(BUILTIN_DIR / "unittest-to-assert", folder)
    assert compileall.compile_dir(folder, quiet=1)
    assert list((folder / "fixtures").rglob("*.pyc"))
    entry = load_recipe_file(folder / "recipe.yaml", builtin=True)
    assert not isinstance(entry, PatchFailure)

    results = run_fixtures(entry)

    assert results and all(r.passed for r in results), [r.detail for r in results]
