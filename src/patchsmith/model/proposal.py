"""`PatchProposal`: a change offered by a model, with the metadata the runtime needs to judge it.

A model may propose; the runtime decides. The proposal says what should change and why
(`objective`, `rationale`, `operations`), where it may touch (`expected_files`,
`forbidden_files`), what must hold before (`preconditions`) and after
(`expected_postconditions`), and how it will be verified (`verification_plan`).
Every part is a frozen pydantic model that rejects unknown keys; variants are told
apart by their `type` field.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.formats.script import EditFormat

__all__ = [
    "AstTransformOperation",
    "BaseCommitMatch",
    "CommandOperation",
    "Compiles",
    "DiffMaxFiles",
    "DiffMaxLines",
    "DirectWriteOperation",
    "FileExists",
    "FileHashMatch",
    "NoBinaryChanged",
    "NoForbiddenPathChanged",
    "NoSecretAdded",
    "Operation",
    "PatchOperation",
    "PatchProposal",
    "PathAllowed",
    "Postcondition",
    "PostconditionType",
    "Precondition",
    "PreconditionType",
    "ProposalStrategy",
    "Risk",
    "SyntaxValid",
    "TargetRegion",
    "TestsPass",
    "VerificationPlan",
    "load_proposal",
    "proposal_json_schema",
    "strategy_mismatches",
    "unsupported_operations",
]


class ProposalModel(BaseModel):
    """Base of every proposal part: immutable, unknown keys rejected.

    Fields are snake_case; each is also accepted in camelCase (`proposalId`,
    `expectedSha256`), as JavaScript runtimes write them. Dumps and error locations
    use the snake_case names.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=False,
        loc_by_alias=False,
        # Validators are built on first use: a process that only imports the proposal's
        # types (to check a policy, to read the store) never pays for all of them.
        defer_build=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _one_spelling_per_field(cls, data: object) -> object:
        # Without this, pydantic takes one spelling and calls the other an "extra input",
        # which reads as if the field itself were unknown.
        if isinstance(data, Mapping):
            twice = [
                f"{name!r} is given twice, as {name!r} and {to_camel(name)!r}; send one"
                for name in cls.model_fields
                if to_camel(name) != name and name in data and to_camel(name) in data
            ]
            if twice:
                raise ValueError("; ".join(twice))
        return data


class ProposalStrategy(StrEnum):
    """How the proposer intends the change to be made."""

    DIRECT_FILE_EDIT = "DIRECT_FILE_EDIT"
    UNIFIED_DIFF = "UNIFIED_DIFF"
    AST_TRANSFORM = "AST_TRANSFORM"
    BUILD_TOOL_GENERATED = "BUILD_TOOL_GENERATED"
    HYBRID = "HYBRID"


class Risk(StrEnum):
    """The proposer's own estimate of how risky the change is."""

    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"


class PreconditionType(StrEnum):
    """What must hold in the workspace before anything is applied."""

    FILE_HASH_MATCH = "FILE_HASH_MATCH"
    FILE_EXISTS = "FILE_EXISTS"
    PATH_ALLOWED = "PATH_ALLOWED"
    BASE_COMMIT_MATCH = "BASE_COMMIT_MATCH"


class PostconditionType(StrEnum):
    """What must hold for the staged change (the last two are left to the verifier)."""

    NO_FORBIDDEN_PATH_CHANGED = "NO_FORBIDDEN_PATH_CHANGED"
    DIFF_MAX_FILES = "DIFF_MAX_FILES"
    DIFF_MAX_LINES = "DIFF_MAX_LINES"
    NO_SECRET_ADDED = "NO_SECRET_ADDED"
    NO_BINARY_CHANGED = "NO_BINARY_CHANGED"
    SYNTAX_VALID = "SYNTAX_VALID"
    COMPILES = "COMPILES"
    TESTS_PASS = "TESTS_PASS"


# -- preconditions -------------------------------------------------------------------------------


class FileHashMatch(ProposalModel):
    """The file's current bytes hash to `value` (hex sha256)."""

    type: Literal["FILE_HASH_MATCH"] = "FILE_HASH_MATCH"
    path: str = Field(min_length=1)
    value: str = Field(min_length=1)
    """Hex sha256 of the file's bytes, as `read_file` reports it."""


class FileExists(ProposalModel):
    """The file exists."""

    type: Literal["FILE_EXISTS"] = "FILE_EXISTS"
    path: str = Field(min_length=1)


class PathAllowed(ProposalModel):
    """The path stays inside the workspace, inside the write scope, and is not forbidden."""

    type: Literal["PATH_ALLOWED"] = "PATH_ALLOWED"
    path: str = Field(min_length=1)


class BaseCommitMatch(ProposalModel):
    """The repository's `HEAD` is `value` (a full or abbreviated commit id, at least 7 digits)."""

    type: Literal["BASE_COMMIT_MATCH"] = "BASE_COMMIT_MATCH"
    value: str = Field(min_length=7, max_length=64, pattern=r"^[0-9a-fA-F]+$")


Precondition = Annotated[
    FileHashMatch | FileExists | PathAllowed | BaseCommitMatch, Field(discriminator="type")
]

# -- operations ----------------------------------------------------------------------------------


class PatchOperation(ProposalModel):
    """Model output in any format patchsmith parses (unified diff, envelope, SEARCH/REPLACE...)."""

    type: Literal["patch"] = "patch"
    text: str = Field(min_length=1)
    format: EditFormat = EditFormat.AUTO


class DirectWriteOperation(ProposalModel):
    """Write `content` to `path`, only if the file still hashes to `expected_sha256`.

    `expected_sha256` is `None` when the file is not expected to exist (then
    `allow_create` must be true). `content` `None` with `allow_delete` deletes the file.
    """

    type: Literal["direct_write"] = "direct_write"
    path: str = Field(min_length=1)
    content: str | None
    expected_sha256: str | None = None
    allow_create: bool = False
    allow_delete: bool = False
    reason: str = ""

    @model_validator(mode="after")
    def _delete_is_explicit(self) -> DirectWriteOperation:
        if self.content is None and not self.allow_delete:
            raise ValueError("content is null: set allow_delete to true to delete the file")
        if self.content is not None and self.allow_delete:
            raise ValueError("allow_delete needs content null (a delete writes nothing)")
        return self


class AstTransformOperation(ProposalModel):
    """A codemod recipe (docs/codemods.md) run over its scope, staged with the other operations.

    `recipe` is a recipe id (project or built-in) or a recipe file in the workspace;
    `scope` (and its older name `paths`) narrows the recipe's files with gitignore-style
    patterns; `dry_run` makes the whole proposal a check (nothing written).
    """

    type: Literal["ast_transform"] = "ast_transform"
    recipe: str = Field(min_length=1)
    language: str | None = None
    """When given, must be the recipe's own language."""
    scope: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    dry_run: bool = False
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Recipe parameters: recipes take none yet, so a non-empty map is NOT_SUPPORTED_YET."""


class CommandOperation(ProposalModel):
    """A change produced by running an allow-listed command profile (docs/commands.md).

    The profile's argv template is filled only from `params`, each value validated by
    the profile; the command runs on a scratch copy of the workspace (with the
    proposal's other operations applied), and what it changed is staged as
    command-generated. Refused if it changes a path outside `expected_changed_paths`
    (default: the profile's) or inside `forbidden_changed_paths`.
    """

    type: Literal["command"] = "command"
    profile: str = Field(min_length=1)
    params: dict[str, str | tuple[str, ...]] = Field(default_factory=dict)
    """Values for the profile's declared parameters; never free command-line text."""
    expected_changed_paths: tuple[str, ...] = ()
    """Gitignore-style patterns of the paths the command may change."""
    forbidden_changed_paths: tuple[str, ...] = ()
    """Gitignore-style patterns of paths it must not change."""


Operation = Annotated[
    PatchOperation | DirectWriteOperation | AstTransformOperation | CommandOperation,
    Field(discriminator="type"),
]

# -- postconditions ------------------------------------------------------------------------------


class NoForbiddenPathChanged(ProposalModel):
    """No changed path matches the policy's or the proposal's forbidden patterns."""

    type: Literal["NO_FORBIDDEN_PATH_CHANGED"] = "NO_FORBIDDEN_PATH_CHANGED"


class DiffMaxFiles(ProposalModel):
    """At most `value` files change."""

    type: Literal["DIFF_MAX_FILES"] = "DIFF_MAX_FILES"
    value: int = Field(ge=0)


class DiffMaxLines(ProposalModel):
    """At most `value` lines are added plus removed, over all files."""

    type: Literal["DIFF_MAX_LINES"] = "DIFF_MAX_LINES"
    value: int = Field(ge=0)


class NoSecretAdded(ProposalModel):
    """No added line carries a credential."""

    type: Literal["NO_SECRET_ADDED"] = "NO_SECRET_ADDED"


class NoBinaryChanged(ProposalModel):
    """No binary file is created, changed or deleted."""

    type: Literal["NO_BINARY_CHANGED"] = "NO_BINARY_CHANGED"


class SyntaxValid(ProposalModel):
    """No changed file that parsed before fails to parse after."""

    type: Literal["SYNTAX_VALID"] = "SYNTAX_VALID"


class Compiles(ProposalModel):
    """The project builds (checked by the verifier, recorded here)."""

    type: Literal["COMPILES"] = "COMPILES"


class TestsPass(ProposalModel):
    """The verification plan's tests pass (checked by the verifier, recorded here)."""

    __test__ = False  # a model, not a pytest test class
    type: Literal["TESTS_PASS"] = "TESTS_PASS"


Postcondition = Annotated[
    NoForbiddenPathChanged
    | DiffMaxFiles
    | DiffMaxLines
    | NoSecretAdded
    | NoBinaryChanged
    | SyntaxValid
    | Compiles
    | TestsPass,
    Field(discriminator="type"),
]

# -- the proposal --------------------------------------------------------------------------------


class TargetRegion(ProposalModel):
    """Lines of one file the change sets out to touch (1-based, inclusive, current numbering)."""

    path: str = Field(min_length=1)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> TargetRegion:
        if self.end_line < self.start_line:
            raise ValueError("end_line is before start_line")
        return self


class VerificationPlan(ProposalModel):
    """Which verification profiles check the change before it is kept, and how.

    `profile` (one name) and `profiles` (several) are joined; at least one is needed.
    A targeted Python test profile runs only the tests importing a changed module,
    then the whole profile when `full` is true. A failing profile refuses the change
    (nothing is written) unless `keep_on_failure` is true.
    """

    profile: str | None = Field(default=None, min_length=1)
    profiles: tuple[str, ...] = ()
    timeout_seconds: float | None = Field(default=None, gt=0)
    full: bool = False
    keep_on_failure: bool = False

    @model_validator(mode="after")
    def _names_some_profile(self) -> VerificationPlan:
        if self.profile is None and not self.profiles:
            raise ValueError("name a profile: set 'profile' or 'profiles'")
        if any(not name.strip() for name in self.profiles):
            raise ValueError("a profile name must not be empty")
        return self

    def profile_names(self) -> tuple[str, ...]:
        """Every profile the plan names, once, in order."""
        names = (self.profile,) if self.profile is not None else ()
        return tuple(dict.fromkeys((*names, *self.profiles)))


class PatchProposal(ProposalModel):
    """A proposed change with its purpose, boundaries and checks."""

    proposal_id: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    attempt_no: int = Field(ge=1)
    strategy: ProposalStrategy
    objective: str = Field(min_length=1)
    rationale: str = ""
    expected_files: tuple[str, ...] = ()
    """Gitignore-style patterns of the files the change is meant to touch."""
    forbidden_files: tuple[str, ...] = ()
    """Gitignore-style patterns no change may touch (added to the policy's)."""
    target_regions: tuple[TargetRegion, ...] = ()
    """Where in each file the change is meant to land; the review guard counts hunks elsewhere."""
    allowed_dependency_changes: tuple[str, ...] = ()
    """Dependency names this change may add, remove or re-version (the dependency guard)."""
    preconditions: tuple[Precondition, ...] = ()
    operations: tuple[Operation, ...] = Field(min_length=1)
    expected_postconditions: tuple[Postcondition, ...] = ()
    verification_plan: VerificationPlan | None = None
    risk: Risk = Risk.LOW
    full_rewrite: bool = False
    """Whole-file writes in this proposal are meant as full rewrites: a write that drops
    most of a file, or its ending, is not refused as an omission."""


_STRATEGY_OPERATIONS: dict[ProposalStrategy, frozenset[str]] = {
    ProposalStrategy.DIRECT_FILE_EDIT: frozenset({"direct_write", "patch"}),
    ProposalStrategy.UNIFIED_DIFF: frozenset({"patch", "direct_write"}),
    ProposalStrategy.AST_TRANSFORM: frozenset({"ast_transform", "patch", "direct_write"}),
    ProposalStrategy.BUILD_TOOL_GENERATED: frozenset({"command", "patch", "direct_write"}),
    ProposalStrategy.HYBRID: frozenset({"patch", "direct_write", "ast_transform", "command"}),
}
"""Operation types each strategy may carry: the hand-written strategies only text edits;
AST_TRANSFORM recipes and BUILD_TOOL_GENERATED commands, each with text edits beside them
(a manifest edit with the lockfile it implies) but not the other generator."""

_STRATEGY_NEEDS: dict[ProposalStrategy, str] = {
    ProposalStrategy.AST_TRANSFORM: "ast_transform",
    ProposalStrategy.BUILD_TOOL_GENERATED: "command",
}
"""The operation a strategy is named after: a proposal of it without one contradicts it."""


def strategy_mismatches(proposal: PatchProposal) -> list[PatchFailure]:
    """STRATEGY_MISMATCH for each operation its strategy does not allow, or a missing core one."""
    allowed = _STRATEGY_OPERATIONS[proposal.strategy]
    failures = [
        PatchFailure(
            code=FailureCode.STRATEGY_MISMATCH,
            message=f"operations[{index}]: a '{operation.type}' operation contradicts the "
            f"declared strategy {proposal.strategy.value} (it allows "
            f"{', '.join(sorted(allowed))})",
            hint="declare the strategy the operations follow (HYBRID mixes them)",
            rule="strategy_operations",
        )
        for index, operation in enumerate(proposal.operations)
        if operation.type not in allowed
    ]
    needed = _STRATEGY_NEEDS.get(proposal.strategy)
    if needed is not None and all(op.type != needed for op in proposal.operations):
        failures.append(
            PatchFailure(
                code=FailureCode.STRATEGY_MISMATCH,
                message=f"strategy {proposal.strategy.value} declares a '{needed}' change but "
                "no operation is one",
                hint="declare the strategy the operations follow",
                rule="strategy_operations",
            )
        )
    return failures


def unsupported_operations(proposal: PatchProposal) -> list[PatchFailure]:
    """One NOT_SUPPORTED_YET failure per operation this version cannot execute."""
    failures: list[PatchFailure] = []
    for index, operation in enumerate(proposal.operations):
        if isinstance(operation, AstTransformOperation) and operation.params:
            failures.append(
                PatchFailure(
                    code=FailureCode.NOT_SUPPORTED_YET,
                    message=f"operations[{index}]: recipe parameters are not supported yet",
                    hint="write the values into a project recipe in .patchsmith/recipes/",
                    rule="operation_supported",
                )
            )
    return failures


ProposalSource = PatchProposal | Mapping[str, object] | str | os.PathLike[str]


def load_proposal(source: ProposalSource) -> PatchProposal | PatchFailure:
    """Validate a proposal given as a model, a dict, JSON/YAML text, or a path to a file.

    A `str` is read as a path when it is one line naming an existing file, else as
    JSON or YAML text. Returns INVALID_PROPOSAL (with each pydantic error location)
    when it does not validate, FILE_NOT_FOUND when a given path does not exist.
    """
    if isinstance(source, PatchProposal):
        return source
    data: object
    if isinstance(source, Mapping):
        data = source
    else:
        text = _read_source(source)
        if isinstance(text, PatchFailure):
            return text
        data = _parse_text(text)
        if isinstance(data, PatchFailure):
            return data
    if not isinstance(data, Mapping):
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message=f"a proposal must be a JSON or YAML object, got {type(data).__name__}",
        )
    try:
        return PatchProposal.model_validate(data)
    except ValidationError as exc:
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message=_describe(exc),
            hint="`patchsmith schema` prints the JSON Schema a proposal must follow",
        )


def _read_source(source: str | os.PathLike[str]) -> str | PatchFailure:
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith(("{", "["))):
        return source
    path = Path(source)
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message=f"cannot read proposal file {str(path)!r}: {exc}",
            file=str(path),
        )
    except ValueError:  # a str that cannot be a path (e.g. it holds a NUL)
        pass
    if isinstance(source, str) and not source.lower().endswith((".json", ".yaml", ".yml")):
        return source
    return PatchFailure(
        code=FailureCode.FILE_NOT_FOUND,
        message=f"proposal file not found: {str(source)!r}",
        file=str(source),
    )


def _parse_text(text: str) -> object | PatchFailure:
    depth = _bracket_depth(text)
    if depth > MAX_PROPOSAL_DEPTH:
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message=f"proposal nests brackets {depth} deep; at most {MAX_PROPOSAL_DEPTH} are read",
            hint="send a flat proposal: an object with an `operations` list",
        )
    try:
        parsed: object = json.loads(text)
        return parsed
    except (ValueError, RecursionError):
        pass
    import yaml  # only proposals that are not JSON pay for the YAML parser

    try:
        # YAML is a superset of JSON, so this also gives the better message for broken JSON
        loaded: object = yaml.safe_load(text)
        return loaded
    except RecursionError:
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message="proposal nests too deeply to be read",
            hint="send a flat proposal: an object with an `operations` list",
        )
    except yaml.YAMLError as exc:
        return PatchFailure(
            code=FailureCode.INVALID_PROPOSAL,
            message=f"proposal is neither valid JSON nor valid YAML: {exc}",
        )


MAX_PROPOSAL_DEPTH = 64
"""Brackets (`[`, `{`) a proposal may nest; a real one needs about five."""

_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting outside double-quoted strings (one linear pass)."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(_QUOTED.sub("", text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(depth - 1, 0)
    return deepest


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(part) for part in error["loc"]) or "(root)"
        parts.append(f"{location}: {error['msg'].removeprefix('Value error, ')}")
    shown = parts[:10]
    more = f" (and {len(parts) - len(shown)} more)" if len(parts) > len(shown) else ""
    return "invalid proposal: " + "; ".join(shown) + more


def proposal_json_schema() -> dict[str, object]:
    """The JSON Schema of `PatchProposal` (committed as docs/proposal.schema.json).

    Properties are snake_case; each object also accepts the camelCase spelling of a
    property (the same schema), and a required property may be given in either.
    """
    schema: dict[str, object] = PatchProposal.model_json_schema(by_alias=False)
    _with_camel_case(schema)
    for definition in _definitions(schema):
        _with_camel_case(definition)
    return schema


def _definitions(schema: dict[str, object]) -> list[dict[str, object]]:
    found = schema.get("$defs", {})
    assert isinstance(found, dict)
    return [value for value in found.values() if isinstance(value, dict)]


def _with_camel_case(node: dict[str, object]) -> None:
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return
    camel = {to_camel(name): value for name, value in properties.items() if to_camel(name) != name}
    properties.update(camel)
    required = node.get("required")
    if not isinstance(required, list):
        return
    either = [name for name in required if to_camel(name) != name]
    if either:
        node["required"] = [name for name in required if name not in either]
        node["allOf"] = [
            {"anyOf": [{"required": [name]}, {"required": [to_camel(name)]}]} for name in either
        ]
        if not node["required"]:
            del node["required"]
