"""The structured result of every MCP tool, as models: their JSON Schemas are the output schemas.

They describe the top level of the JSON each tool answers with (the same object the
CLI's `--json` prints for the same work); nested objects are left open, and a
key added to a report later is allowed (`additionalProperties`), so a schema never
rejects a result the code produces. A refusal (`isError`) is `{"status", "errors"}`
and is not held to the schema, as the protocol says.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AttemptList",
    "AttemptShown",
    "EditResult",
    "FileView",
    "Frozen",
    "Judged",
    "RecipeResult",
    "ToolOutput",
    "VerifyResult",
    "output_schema",
]

_Objects = list[dict[str, Any]]


class ToolOutput(BaseModel):
    """Base of every result: a status and the failures (empty when it went through)."""

    model_config = ConfigDict(extra="allow")

    status: str
    errors: _Objects = []


class FileView(ToolOutput):
    """`view`/`read_file`: a file's metadata (its numbered lines are the text), or a listing."""

    path: str
    sha256: str | None = None
    encoding: str | None = None
    total_lines: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    truncated: bool
    kind: str | None = None
    entries: list[str] | None = None


class EditResult(ToolOutput):
    """Every edit (`apply`, `write_file`, `propose`, `revert`, ...): an ApplyReport."""

    files: _Objects
    diff: str
    check: bool
    decisions: _Objects
    attempt_id: str | None
    warnings: _Objects


class RecipeResult(ToolOutput):
    """`run_recipe`: a RecipeReport."""

    recipe_id: str | None
    dry_run: bool
    files: _Objects
    attempt_id: str | None


class VerifyResult(ToolOutput):
    """`verify`: a VerifyReport (per profile: verdict, introduced, fixed, pre-existing)."""

    level: str
    profiles: _Objects


class AttemptList(ToolOutput):
    """`log`: the recorded attempts, newest first."""

    attempts: _Objects


class AttemptShown(ToolOutput):
    """`show`: one recorded attempt."""

    attempt: dict[str, Any]


class Judged(ToolOutput):
    """`judge`: the score and verdict of an attempt or a run, criterion by criterion."""

    subject: str
    kind: str
    score: float
    verdict: str
    criteria: _Objects


class Frozen(ToolOutput):
    """`freeze`: a run's net change as one diff, and the branch and commit made of it."""

    run_id: str
    files: list[str]
    attempts: list[str]
    branch: str | None
    commit: str | None
    diff: str


def output_schema(model: type[ToolOutput]) -> dict[str, Any]:
    """The JSON Schema of `model`, without pydantic's `title` keys."""
    from patchsmith.mcp.arguments import untitled

    schema: dict[str, Any] = untitled(model.model_json_schema())
    return schema
