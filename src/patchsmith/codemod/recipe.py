"""`Recipe`: a codemod as data — what to change, where, under which conditions, and how to check it.

A recipe is YAML (or JSON) validated by these pydantic models: unknown keys are refused,
snake_case and camelCase keys are both accepted (`recipe_id`, `recipeId` or `id`), so are
both spellings of every operation `type` and condition name (`method_invocation_replace`
or `methodInvocationReplace`; they read as the snake_case one), and the JSON Schema
(`patchsmith schema recipe`) is derived from them and lists both. Conditions may be
written in short form: `- file_exists: pom.xml`, `- fileExists: pom.xml`, `- compiles`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Literal

import yaml
from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from patchsmith.codemod.methods import parse_method_pattern
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.yamlbound import YamlTooLarge
from patchsmith.runtime.yamlbound import safe_load as bounded_load

__all__ = [
    "AstGrepRule",
    "CompilesCheck",
    "ConfigKeyRename",
    "DependencyPresent",
    "FileExistsCheck",
    "Idempotency",
    "Imports",
    "Language",
    "MethodInvocationReplace",
    "NoReference",
    "ParsesCheck",
    "PatternPresent",
    "Recipe",
    "RecipeOperation",
    "RecipePostcondition",
    "RecipePrecondition",
    "RenameSymbol",
    "RerunProducesNoDiff",
    "Scope",
    "TestsPassCheck",
    "parse_recipe",
    "recipe_json_schema",
]


def _both_spellings(name: str) -> str | AliasChoices:
    camel = to_camel(name)
    return name if camel == name else AliasChoices(name, camel)


class RecipePart(BaseModel):
    """Base of every recipe part: frozen, unknown keys refused, camelCase aliases accepted."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=AliasGenerator(
            validation_alias=_both_spellings,
            serialization_alias=lambda name: name,
        ),
        validate_by_name=True,
        validate_by_alias=True,
    )

    @field_validator("type", mode="after", check_fields=False)
    @classmethod
    def _snake_type(cls, value: str) -> str:
        # `methodInvocationReplace` reads as `method_invocation_replace`: one name downstream
        return to_snake(value)


class Language(StrEnum):
    """The languages recipes are written for; each names its ast-grep language and suffixes."""

    PYTHON = "python"
    JAVA = "java"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    TSX = "tsx"
    GO = "go"
    RUST = "rust"
    YAML = "yaml"
    TOML = "toml"
    JSON = "json"

    @property
    def suffixes(self) -> tuple[str, ...]:
        """The file suffixes of this language, lower case with the dot."""
        return _SUFFIXES[self]


_SUFFIXES: dict[Language, tuple[str, ...]] = {
    Language.PYTHON: (".py", ".pyi"),
    Language.JAVA: (".java",),
    Language.JAVASCRIPT: (".js", ".mjs", ".cjs", ".jsx"),
    Language.TYPESCRIPT: (".ts", ".mts", ".cts"),
    Language.TSX: (".tsx",),
    Language.GO: (".go",),
    Language.RUST: (".rs",),
    Language.YAML: (".yaml", ".yml"),
    Language.TOML: (".toml",),
    Language.JSON: (".json",),
}

# -- preconditions -------------------------------------------------------------------------------


class FileExistsCheck(RecipePart):
    """A file exists in the workspace (`- file_exists: pom.xml`)."""

    type: Literal["file_exists", "fileExists"] = "file_exists"
    path: str = Field(min_length=1)


class DependencyPresent(RecipePart):
    """The project declares a dependency, read from its real manifest.

    Manifests read: pom.xml, pyproject.toml, package.json, go.mod, Cargo.toml. `name`
    is the name as the manifest spells it (`com.acme:ids` or `ids` for Maven).
    """

    type: Literal["dependency_present", "dependencyPresent"] = "dependency_present"
    name: str = Field(min_length=1)
    version: str | None = Field(default=None, min_length=1)
    """The version it must declare (pom.xml only: `${property}` values and versions
    given in `<dependencyManagement>` are resolved); other manifests fail the check."""


class PatternPresent(RecipePart):
    """An ast-grep pattern matches at least once in the recipe's scope."""

    type: Literal["pattern_present", "patternPresent"] = "pattern_present"
    pattern: str = Field(min_length=1)


RecipePrecondition = Annotated[
    FileExistsCheck | DependencyPresent | PatternPresent, Field(discriminator="type")
]

# -- operations ----------------------------------------------------------------------------------


class AstGrepRule(RecipePart):
    """An ast-grep rule with its `fix` (run by the ast-grep CLI; see docs/codemods.md).

    `rule`, `constraints`, `utils` and `transform` are ast-grep's own rule objects,
    passed through as written and validated by ast-grep when the recipe runs.
    """

    type: Literal["ast_grep_rule", "astGrepRule"] = "ast_grep_rule"
    id: str = Field(default="rule", min_length=1)
    rule: dict[str, JsonValue]
    fix: str | dict[str, JsonValue] | None = None
    """The replacement; without it the rule only reports what it matched."""
    constraints: dict[str, JsonValue] | None = None
    utils: dict[str, JsonValue] | None = None
    transform: dict[str, JsonValue] | None = None
    language: Language | None = None
    """Overrides the recipe's language for this rule (e.g. `tsx` in a TypeScript recipe)."""


class MethodInvocationReplace(RecipePart):
    """`from: pkg.Class method(argTypes)` → `to: pkg.Class2 method2()`: calls, method references
    and static imports of that one method, resolved by javac where the sources attribute.

    `from` is a method pattern like OpenRewrite's MethodMatcher (`codemod/methods.py`:
    `()` no arguments, `*` any one, `..` any number); the arguments are kept as written.
    Where javac cannot attribute a file, the receiver is checked through the file's own
    imports instead, and the report says so. Java.
    """

    type: Literal["method_invocation_replace", "methodInvocationReplace"] = (
        "method_invocation_replace"
    )
    from_: str = Field(validation_alias="from", serialization_alias="from", min_length=1)
    to: str = Field(min_length=1)

    @field_validator("from_")
    @classmethod
    def _pattern(cls, value: str) -> str:
        parse_method_pattern(value)
        return value

    @field_validator("to")
    @classmethod
    def _shape(cls, value: str) -> str:
        split_method(value)
        return value


def split_method(value: str) -> tuple[str, str]:
    """`pkg.Class method()` as (`pkg.Class`, `method`); ValueError for any other shape."""
    parts = value.split()
    if len(parts) != 2 or not parts[1].endswith("()") or "." not in parts[0]:
        raise ValueError(f"expected 'package.Class method()', got {value!r}")
    name = parts[1][:-2]
    if not name.isidentifier() or not all(p.isidentifier() for p in parts[0].split(".")):
        raise ValueError(f"expected 'package.Class method()', got {value!r}")
    return parts[0], name


class RenameSymbol(RecipePart):
    """Rename a top-level function or class and every reference, imports included (Python).

    `from` is the dotted path of the definition (`pkg.module.old_name`), `to` the new
    name. Every file importing it (`from pkg.module import old_name`, `import
    pkg.module` then `pkg.module.old_name`) is fixed up; an import under an alias keeps
    the alias.
    """

    type: Literal["rename_symbol", "renameSymbol"] = "rename_symbol"
    from_: str = Field(validation_alias="from", serialization_alias="from", min_length=3)
    to: str = Field(min_length=1)

    @model_validator(mode="after")
    def _names(self) -> RenameSymbol:
        parts = self.from_.split(".")
        if len(parts) < 2 or not all(p.isidentifier() for p in parts):
            raise ValueError(f"from must be a dotted path module.name, got {self.from_!r}")
        if not self.to.isidentifier():
            raise ValueError(f"to must be an identifier, got {self.to!r}")
        return self


class ConfigKeyRename(RecipePart):
    """Rename one key in YAML, TOML or JSON files, keeping every comment and all formatting.

    `from` is the dotted key path (`tool.black.line-length`; a `*` segment stands for
    any one key, list items are transparent); `to` is the new last segment
    (`line_length`). Only that key token is rewritten.
    """

    type: Literal["config_key_rename", "configKeyRename"] = "config_key_rename"
    from_: str = Field(validation_alias="from", serialization_alias="from", min_length=1)
    to: str = Field(min_length=1)

    @property
    def path(self) -> tuple[str, ...]:
        """The key path as segments."""
        return tuple(self.from_.split("."))


RecipeOperation = Annotated[
    AstGrepRule | MethodInvocationReplace | RenameSymbol | ConfigKeyRename,
    Field(discriminator="type"),
]

# -- postconditions ------------------------------------------------------------------------------


class NoReference(RecipePart):
    """An ast-grep pattern matches nowhere in the recipe's scope afterwards (every file read)."""

    type: Literal["no_reference", "noReference"] = "no_reference"
    pattern: str = Field(min_length=1)


class CompilesCheck(RecipePart):
    """The changed code compiles: decided by a build or type-check profile for the recipe's
    language (the one named, else the workspace's, else the language's default: javac for
    Java, go build/vet for Go); where none exists the verdict is `error`, never a pass."""

    type: Literal["compiles"] = "compiles"
    profile: str | None = None


class TestsPassCheck(RecipePart):
    """The tests pass: decided by a test profile for the recipe's language (the one named,
    else the workspace's); where none exists the verdict is `error`, never a pass."""

    __test__ = False  # a model, not a pytest class
    type: Literal["tests_pass", "testsPass"] = "tests_pass"
    profile: str | None = None


class ParsesCheck(RecipePart):
    """Every changed file still parses: a syntax check only, which proves no compile."""

    type: Literal["parses"] = "parses"


class RerunProducesNoDiff(RecipePart):
    """Running the recipe again on its own output changes nothing (the idempotency re-run,
    also on a dry run; `idempotency.rerun_produces_no_diff` may not be false beside it)."""

    type: Literal["rerun_produces_no_diff", "rerunProducesNoDiff"] = "rerun_produces_no_diff"


RecipePostcondition = Annotated[
    NoReference | CompilesCheck | TestsPassCheck | ParsesCheck | RerunProducesNoDiff,
    Field(discriminator="type"),
]

# -- the recipe ----------------------------------------------------------------------------------


class Scope(RecipePart):
    """Gitignore-style patterns of the files the recipe reads (default: all of its language)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


class Imports(RecipePart):
    """Imports added to, and removed from, every file the operations changed.

    Python: `module` or `module.name`; Java: `pkg.Class`. A removal happens only when
    the file no longer uses the name.
    """

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()


class Idempotency(RecipePart):
    """Whether an apply re-runs the recipe on its own output and refuses when that changes it."""

    rerun_produces_no_diff: bool = True


# Short forms: the key that stands for the whole condition, and the field its value fills.
_SHORT_FORMS: dict[str, str | None] = {
    "file_exists": "path",
    "dependency_present": "name",
    "pattern_present": "pattern",
    "no_reference": "pattern",
    "compiles": "profile",
    "tests_pass": "profile",
    "parses": None,
    "rerun_produces_no_diff": None,
}


def _expand(item: object) -> object:
    """`compiles` → `{type: compiles}`; `{file_exists: x}` → `{type: file_exists, path: x}`."""
    key = to_snake(item) if isinstance(item, str) else None
    if key in _SHORT_FORMS:
        return {"type": key}
    if isinstance(item, Mapping) and "type" not in item and len(item) == 1:
        ((name, value),) = item.items()
        key = to_snake(name) if isinstance(name, str) else None
        if key in _SHORT_FORMS:
            slot = _SHORT_FORMS[key]
            if value is None or (slot is None and value is True):
                return {"type": key}
            # `parses` takes no value: keep it where validation names it as an unknown key
            return {"type": key, slot or "value": value}
    return item


def to_snake(name: str) -> str:
    """`noReference` → `no_reference` (camelCase keys of the short forms)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


class Recipe(RecipePart):
    """A deterministic, repeatable change: operations over a scope, with checks before and after."""

    recipe_id: str = Field(
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        validation_alias=AliasChoices("recipe_id", "recipeId", "id"),
    )
    language: Language
    summary: str = Field(default="", min_length=1)
    """One line; when left out, the description's first line, else the id."""
    description: str = ""
    preconditions: tuple[RecipePrecondition, ...] = ()
    scope: Scope = Scope()
    operations: tuple[RecipeOperation, ...] = Field(min_length=1)
    imports: Imports = Imports()
    postconditions: tuple[RecipePostcondition, ...] = ()
    idempotency: Idempotency = Idempotency()

    @model_validator(mode="before")
    @classmethod
    def _default_summary(cls, data: object) -> object:
        if not isinstance(data, Mapping) or "summary" in data:
            return data
        text = data.get("description")
        first = (
            text.strip().splitlines()[0].strip() if isinstance(text, str) and text.strip() else ""
        )
        name = next((data[k] for k in ("recipe_id", "recipeId", "id") if k in data), None)
        summary = first or (name if isinstance(name, str) else "")
        return {**data, "summary": summary} if summary else data

    @field_validator("preconditions", "postconditions", mode="before")
    @classmethod
    def _short_forms(cls, value: object) -> object:
        if isinstance(value, list | tuple):
            return [_expand(item) for item in value]
        return value

    @model_validator(mode="after")
    def _operations_fit_language(self) -> Recipe:
        for index, op in enumerate(self.operations):
            if isinstance(op, MethodInvocationReplace) and self.language is not Language.JAVA:
                raise ValueError(f"operations[{index}]: method_invocation_replace is for java")
            if isinstance(op, RenameSymbol) and self.language is not Language.PYTHON:
                raise ValueError(f"operations[{index}]: rename_symbol is for python")
            if isinstance(op, ConfigKeyRename) and self.language not in _CONFIG_LANGUAGES:
                raise ValueError(f"operations[{index}]: config_key_rename is for yaml/toml/json")
        rerun = any(isinstance(p, RerunProducesNoDiff) for p in self.postconditions)
        if rerun and not self.idempotency.rerun_produces_no_diff:
            raise ValueError(
                "postconditions: rerun_produces_no_diff contradicts "
                "idempotency.rerun_produces_no_diff: false"
            )
        if (self.imports.add or self.imports.remove) and self.language not in (
            Language.PYTHON,
            Language.JAVA,
        ):
            raise ValueError("imports.add/remove are supported for python and java")
        return self

    @property
    def suffixes(self) -> tuple[str, ...]:
        """Suffixes of every language the recipe reads (a rule may name another one)."""
        found = list(self.language.suffixes)
        for op in self.operations:
            if isinstance(op, AstGrepRule) and op.language is not None:
                found.extend(s for s in op.language.suffixes if s not in found)
        if self.language in _CONFIG_LANGUAGES:
            found = [s for lang in _CONFIG_LANGUAGES for s in lang.suffixes]
        return tuple(found)


_CONFIG_LANGUAGES = (Language.YAML, Language.TOML, Language.JSON)


def parse_recipe(text: str, *, source: str = "<recipe>") -> Recipe | PatchFailure:
    """Validate recipe YAML/JSON text; INVALID_RECIPE (with each error's location) when it fails."""
    try:
        data: object = bounded_load(text)
    except yaml.YAMLError as exc:
        return _invalid(source, f"not valid YAML: {exc}")
    except YamlTooLarge as exc:
        return _invalid(source, f"the recipe's YAML is refused: {exc}")
    if not isinstance(data, Mapping):
        return _invalid(source, f"a recipe must be a YAML mapping, got {type(data).__name__}")
    # `x-` keys are free-form: a place for YAML anchors that operations share
    data = {k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("x-"))}
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        parts = []
        for error in exc.errors(include_url=False):
            where = ".".join(str(p) for p in error["loc"]) or "(root)"
            parts.append(f"{where}: {error['msg']}")
        more = f" (and {len(parts) - 8} more)" if len(parts) > 8 else ""
        return _invalid(source, "; ".join(parts[:8]) + more)


def _invalid(source: str, message: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.INVALID_RECIPE,
        f"{source}: {message}",
        file=source if source != "<recipe>" else None,
        hint="`patchsmith schema recipe` prints the JSON Schema a recipe must follow",
    )


def recipe_json_schema() -> dict[str, object]:
    """The JSON Schema of `Recipe` (committed as docs/recipe.schema.json), with the short
    forms of conditions (`- compiles`, `- fileExists: pom.xml`) beside the long ones."""
    schema: dict[str, object] = Recipe.model_json_schema(by_alias=True)
    properties = schema["properties"]
    assert isinstance(properties, dict)
    for key, kinds in (("preconditions", _PRE_SHORT), ("postconditions", _POST_SHORT)):
        listing = properties[key]
        names = [n for name in kinds for n in _spellings(name)]
        bare = [
            n for name in kinds if _SHORT_FORMS[name] in (None, "profile") for n in _spellings(name)
        ]
        one_key = {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "propertyNames": {"enum": names},
            "additionalProperties": {"type": ["string", "null", "boolean"]},
        }
        listing["items"] = {"anyOf": [listing["items"], {"enum": bare}, one_key]}
    return schema


_PRE_SHORT = ("file_exists", "dependency_present", "pattern_present")
_POST_SHORT = ("no_reference", "compiles", "tests_pass", "parses", "rerun_produces_no_diff")


def _spellings(name: str) -> list[str]:
    camel = to_camel(name)
    return [name] if camel == name else [name, camel]
