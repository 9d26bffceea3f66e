"""The seed's recipe contract, camelCase throughout, runs as written on a small Maven project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml
from tests.codemod.helpers import write_tree

from patchsmith.cli import main
from patchsmith.codemod import run_recipe
from patchsmith.codemod.manifests import maven_versions
from patchsmith.codemod.recipe import (
    CompilesCheck,
    ConfigKeyRename,
    DependencyPresent,
    FileExistsCheck,
    MethodInvocationReplace,
    NoReference,
    ParsesCheck,
    Recipe,
    RerunProducesNoDiff,
    TestsPassCheck,
    parse_recipe,
    recipe_json_schema,
)
from patchsmith.codemod.report import RecipeStatus
from patchsmith.errors import PatchFailure
from patchsmith.model.evidence import Verdict

needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK here")

SEED = """\
id: java.legacy-id-generator-migration
language: java
description: Migrate LegacyIdGenerator.generate() to IdGenerator.nextId()
scope:
  include: ["src/main/java/**/*.java"]
  exclude: ["**/generated/**"]
preconditions:
  - fileExists: pom.xml
  - dependencyPresent: com.acme:legacy-id
operations:
  - type: methodInvocationReplace
    from: com.acme.legacy.LegacyIdGenerator generate()
    to: com.acme.ids.IdGenerator nextId()
imports:
  add: [com.acme.ids.IdGenerator]
  remove: [com.acme.legacy.LegacyIdGenerator]
postconditions:
  - compiles
  - noReference: LegacyIdGenerator.generate()
  - rerunProducesNoDiff
"""

POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.shop</groupId>
  <artifactId>shop</artifactId>
  <version>1.4.0</version>
  <properties>
    <legacy.version>2.3.1</legacy.version>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>com.acme</groupId>
        <artifactId>legacy-id</artifactId>
        <version>${legacy.version}</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>com.acme</groupId>
      <artifactId>legacy-id</artifactId>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <dependencies>
          <dependency>
            <groupId>org.plugin</groupId>
            <artifactId>only-the-plugin</artifactId>
            <version>1</version>
          </dependency>
        </dependencies>
      </plugin>
    </plugins>
  </build>
</project>
"""

SOURCES = {
    "src/main/java/com/acme/legacy/LegacyIdGenerator.java": (
        "package com.acme.legacy;\n\npublic final class LegacyIdGenerator {\n"
        "    public static long generate() { return 1L; }\n}\n"
    ),
    "src/main/java/com/acme/ids/IdGenerator.java": (
        "package com.acme.ids;\n\npublic final class IdGenerator {\n"
        "    public static long nextId() { return 2L; }\n}\n"
    ),
    "src/main/java/com/shop/Orders.java": (
        "package com.shop;\n\nimport com.acme.legacy.LegacyIdGenerator;\n\n"
        "public class Orders {\n    long create() {\n"
        "        return LegacyIdGenerator.generate();\n    }\n}\n"
    ),
}


@pytest.fixture(name="maven")
def _maven(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"pom.xml": POM, **SOURCES, "recipe.yaml": SEED})
    return tmp_path


class TestContract:
    def test_seed_recipe_parses_as_the_snake_case_models(self) -> None:
        """camelCase keys, `id`, operation types and condition names all read as snake_case."""
        recipe = parse_recipe(SEED)

        assert isinstance(recipe, Recipe)
        assert "java.legacy-id-generator-migration" == recipe.recipe_id
        assert recipe.summary.startswith("Migrate LegacyIdGenerator")
        assert (
            FileExistsCheck(path="pom.xml"),
            DependencyPresent(name="com.acme:legacy-id"),
        ) == recipe.preconditions
        assert isinstance(recipe.operations[0], MethodInvocationReplace)
        assert "method_invocation_replace" == recipe.operations[0].type
        assert (
            CompilesCheck(),
            NoReference(pattern="LegacyIdGenerator.generate()"),
            RerunProducesNoDiff(),
        ) == recipe.postconditions

    @pytest.mark.parametrize(
        ("item", "expected"),
        [
            ({"type": "fileExists", "path": "pom.xml"}, FileExistsCheck(path="pom.xml")),
            ({"type": "dependencyPresent", "name": "g:a"}, DependencyPresent(name="g:a")),
            ({"dependency_present": "g:a"}, DependencyPresent(name="g:a")),
        ],
    )
    def test_preconditions_long_and_short(self, item: object, expected: object) -> None:
        """Both spellings, in the long form and the short one."""
        text = yaml.safe_dump({**yaml.safe_load(SEED), "preconditions": [item]})
        recipe = parse_recipe(text)

        assert isinstance(recipe, Recipe)
        assert (expected,) == recipe.preconditions

    @pytest.mark.parametrize(
        ("item", "expected"),
        [
            ({"type": "noReference", "pattern": "x()"}, NoReference(pattern="x()")),
            ({"type": "testsPass", "profile": "unit"}, TestsPassCheck(profile="unit")),
            ("testsPass", TestsPassCheck()),
            ({"type": "rerunProducesNoDiff"}, RerunProducesNoDiff()),
            ({"rerunProducesNoDiff": True}, RerunProducesNoDiff()),
            ("rerun_produces_no_diff", RerunProducesNoDiff()),
            ({"type": "parses"}, ParsesCheck()),
        ],
    )
    def test_postconditions_long_and_short(self, item: object, expected: object) -> None:
        """Both spellings, in the long form and the short one."""
        text = yaml.safe_dump({**yaml.safe_load(SEED), "postconditions": [item]})
        recipe = parse_recipe(text)

        assert isinstance(recipe, Recipe)
        assert (expected,) == recipe.postconditions

    def test_camel_case_config_rename(self) -> None:
        """Every operation type has its camelCase spelling."""
        text = (
            "id: k\nlanguage: yaml\nsummary: s\n"
            "operations: [{type: configKeyRename, from: a.b, to: c}]\n"
        )
        recipe = parse_recipe(text)

        assert isinstance(recipe, Recipe)
        assert isinstance(recipe.operations[0], ConfigKeyRename)

    def test_unknown_type_is_still_refused(self) -> None:
        """A name that is neither spelling is INVALID_RECIPE."""
        failure = parse_recipe(SEED.replace("methodInvocationReplace", "methodInvocationSwap"))

        assert isinstance(failure, PatchFailure)
        assert "methodInvocationSwap" in failure.message

    def test_rerun_postcondition_contradicting_idempotency_is_refused(self) -> None:
        """`rerunProducesNoDiff` beside `idempotency: {rerunProducesNoDiff: false}` is refused."""
        failure = parse_recipe(SEED + "idempotency: {rerunProducesNoDiff: false}\n")

        assert isinstance(failure, PatchFailure)
        assert "contradicts" in failure.message

    def test_schema_lists_both_spellings_and_accepts_the_seed(self) -> None:
        """The JSON Schema names both spellings and validates the seed's recipe as written."""
        schema = recipe_json_schema()
        text = json.dumps(schema)

        for name in ("methodInvocationReplace", "fileExists", "dependencyPresent"):
            assert f'"{name}"' in text
        for name in ("noReference", "rerunProducesNoDiff", "method_invocation_replace"):
            assert f'"{name}"' in text
        seed = yaml.safe_load(SEED)
        seed["recipe_id"] = seed.pop("id")  # the schema spells keys in snake_case
        jsonschema.validate(seed, schema)
        seed["postconditions"].append("noSuchCheck")
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(seed, schema)


class TestPom:
    def test_versions_from_management_and_properties(self) -> None:
        """A dependency without a version takes its managed one, `${property}` resolved."""
        assert {"2.3.1"} == maven_versions(POM, "com.acme:legacy-id")
        assert {"2.3.1"} == maven_versions(POM, "legacy-id")
        assert set() == maven_versions(POM, "org.plugin:only-the-plugin")

    def test_plugin_dependencies_are_not_the_projects(self, maven: Path) -> None:
        """A plugin's own dependency does not satisfy `dependencyPresent`."""
        text = SEED.replace("com.acme:legacy-id", "org.plugin:only-the-plugin")
        (maven / "recipe.yaml").write_text(text)
        report = run_recipe(maven / "recipe.yaml", maven)

        assert RecipeStatus.REFUSED == report.status
        assert "PRECONDITION_FAILED" == report.errors[0].code.value

    @pytest.mark.parametrize(("version", "ok"), [("2.3.1", True), ("2.4.0", False)])
    def test_required_version(self, maven: Path, version: str, ok: bool) -> None:
        """A version, when required, is compared with the resolved one."""
        text = SEED.replace(
            "  - dependencyPresent: com.acme:legacy-id\n",
            f"  - type: dependencyPresent\n    name: com.acme:legacy-id\n    version: {version}\n",
        )
        (maven / "recipe.yaml").write_text(text.replace("  - compiles\n", ""))
        report = run_recipe(maven / "recipe.yaml", maven)

        check = next(c for c in report.checks if c.condition.startswith("dependency_present"))
        assert (Verdict.PASSED if ok else Verdict.FAILED) == check.status
        assert ("2.3.1" in check.evidence) is True

    def test_missing_dependency_refuses(self, maven: Path) -> None:
        """Without the dependency in the POM the precondition fails and nothing changes."""
        (maven / "pom.xml").write_text(POM.replace("legacy-id", "other-lib"))
        report = run_recipe(maven / "recipe.yaml", maven, apply=True, trust=True)

        assert RecipeStatus.REFUSED == report.status
        assert "LegacyIdGenerator.generate()" in (maven / SOURCES_KEY).read_text()


SOURCES_KEY = "src/main/java/com/shop/Orders.java"


@needs_javac
class TestSeedRunsUnchanged:
    def test_apply_through_the_cli(self, maven: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """`recipe run recipe.yaml --apply`: POM read, call replaced, javac run, re-run clean."""
        code = main(
            ["recipe", "run", str(maven / "recipe.yaml"), "-C", str(maven), "--apply", "--trust"]
        )
        out = capsys.readouterr().out

        assert 0 == code, out
        text = (maven / SOURCES_KEY).read_text()
        assert "IdGenerator.nextId()" in text and "LegacyIdGenerator" not in text
        assert "import com.acme.ids.IdGenerator;" in text

    def test_every_condition_is_proven(self, maven: Path) -> None:
        """Each pre- and postcondition passed, `compiles` by javac; the re-run was clean."""
        report = run_recipe(maven / "recipe.yaml", maven, apply=True, trust=True)

        assert RecipeStatus.APPLIED == report.status, report.errors
        verdicts = {c.condition.split()[0]: c for c in report.checks}
        assert {
            "file_exists",
            "dependency_present",
            "compiles",
            "no_reference",
            "rerun_produces_no_diff",
        } == set(verdicts)
        assert all(c.status is Verdict.PASSED for c in report.checks)
        assert "javac" in verdicts["compiles"].evidence
        assert "declared in pom.xml" in verdicts["dependency_present"].evidence
        assert report.idempotent is True

    def test_dry_run_checks_the_rerun_too(self, maven: Path) -> None:
        """Listed as a postcondition, the re-run happens on a dry run; nothing is written."""
        before = (maven / SOURCES_KEY).read_text()
        report = run_recipe(maven / "recipe.yaml", maven)

        assert RecipeStatus.DRY_RUN == report.status
        rerun = next(c for c in report.checks if c.condition == "rerun_produces_no_diff")
        assert Verdict.PASSED == rerun.status
        compiles = next(c for c in report.checks if c.condition == "compiles")
        assert Verdict.ERROR == compiles.status  # not run on a dry run: never a pass
        assert before == (maven / SOURCES_KEY).read_text()
