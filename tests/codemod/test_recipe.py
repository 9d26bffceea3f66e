"""The recipe contract: YAML validated by pydantic, both spellings, short forms, a schema."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.codemod.recipe import (
    CompilesCheck,
    DependencyPresent,
    FileExistsCheck,
    MethodInvocationReplace,
    NoReference,
    Recipe,
    TestsPassCheck,
    parse_recipe,
    recipe_json_schema,
)
from patchsmith.errors import FailureCode, PatchFailure

REPO = Path(__file__).resolve().parents[2]

JAVA = """\
recipeId: legacy
language: java
summary: swap the generator
preconditions:
  - file_exists: pom.xml
  - dependencyPresent: com.acme:ids
operations:
  - type: method_invocation_replace
    from: com.acme.LegacyIdGenerator generate()
    to: com.acme.IdGenerator nextId()
imports: {add: [com.acme.IdGenerator], remove: [com.acme.LegacyIdGenerator]}
postconditions:
  - no_reference: LegacyIdGenerator.generate()
  - compiles
  - tests_pass: unit
idempotency: {rerunProducesNoDiff: false}
"""


class TestParseRecipe:
    def test_camel_case_and_short_forms(self) -> None:
        """camelCase keys and one-key conditions read as the full models."""
        recipe = parse_recipe(JAVA)

        assert isinstance(recipe, Recipe)
        assert "legacy" == recipe.recipe_id
        assert (
            FileExistsCheck(path="pom.xml"),
            DependencyPresent(name="com.acme:ids"),
        ) == recipe.preconditions
        assert (
            NoReference(pattern="LegacyIdGenerator.generate()"),
            CompilesCheck(),
            TestsPassCheck(profile="unit"),
        ) == recipe.postconditions
        assert isinstance(recipe.operations[0], MethodInvocationReplace)
        assert recipe.idempotency.rerun_produces_no_diff is False

    def test_idempotency_defaults_to_true(self) -> None:
        """Without an idempotency section every apply is re-run on its output."""
        recipe = parse_recipe(JAVA.replace("idempotency: {rerunProducesNoDiff: false}\n", ""))

        assert isinstance(recipe, Recipe)
        assert recipe.idempotency.rerun_produces_no_diff is True

    def test_unknown_key_is_refused(self) -> None:
        """An unknown key is INVALID_RECIPE naming the key."""
        failure = parse_recipe(JAVA + "surprise: 1\n")

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_RECIPE == failure.code
        assert "surprise" in failure.message

    def test_x_keys_hold_anchors(self) -> None:
        """Top-level `x-` keys are free: they hold YAML anchors operations share."""
        text = (
            "x-rule: &r {pattern: foo($A)}\nrecipe_id: r\nlanguage: python\nsummary: s\n"
            "operations: [{type: ast_grep_rule, rule: *r, fix: bar($A)}]\n"
        )
        recipe = parse_recipe(text)

        assert isinstance(recipe, Recipe)
        assert {"pattern": "foo($A)"} == recipe.operations[0].rule  # type: ignore[union-attr]

    def test_operation_must_fit_language(self) -> None:
        """method_invocation_replace in a Python recipe is refused."""
        failure = parse_recipe(JAVA.replace("language: java", "language: python"))

        assert isinstance(failure, PatchFailure)
        assert "method_invocation_replace is for java" in failure.message

    def test_bad_method_shape(self) -> None:
        """`from` must read `package.Class method()`."""
        failure = parse_recipe(JAVA.replace("IdGenerator nextId()", "IdGenerator.nextId"))

        assert isinstance(failure, PatchFailure)
        assert "package.Class method()" in failure.message

    def test_not_a_mapping(self) -> None:
        """A YAML list is not a recipe."""
        failure = parse_recipe("- a\n- b\n")

        assert isinstance(failure, PatchFailure)
        assert "mapping" in failure.message

    def test_broken_yaml(self) -> None:
        """Unparseable YAML is INVALID_RECIPE."""
        failure = parse_recipe("a: [1,\n")

        assert isinstance(failure, PatchFailure)
        assert FailureCode.INVALID_RECIPE == failure.code

    @given(st.text(max_size=200))
    def test_any_text_gives_a_recipe_or_a_failure(self, text: str) -> None:
        """No input makes parse_recipe raise."""
        result = parse_recipe(text)

        assert isinstance(result, Recipe | PatchFailure)


class TestSchema:
    def test_committed_schema_is_current(self) -> None:
        """docs/recipe.schema.json is what `patchsmith schema recipe` prints."""
        committed = json.loads((REPO / "docs" / "recipe.schema.json").read_text())

        assert recipe_json_schema() == committed

    def test_schema_uses_from_and_snake_case(self) -> None:
        """The schema names `from` (not `from_`) and snake_case keys."""
        text = json.dumps(recipe_json_schema())

        assert '"from"' in text and "from_" not in text
        assert "recipe_id" in text
