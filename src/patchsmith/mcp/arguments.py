"""The arguments of every MCP tool, as models: each one's JSON Schema is the tool's input schema.

Names and descriptions follow `patchsmith tools --flavor mcp` (`patch`, `path`,
`old_str`, `new_str`, `file_text`, `insert_line`) and the editor-tool family
(`view_range`, `command`), so a model taught one of them writes valid calls here.
Unknown keys are refused: a misspelt argument is an error the model sees, not a
silently ignored one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from patchsmith.formats.script import EditFormat

__all__ = [
    "DEFAULT_MAX_CHARS",
    "ApplyArgs",
    "CreateArgs",
    "EditorArgs",
    "FreezeArgs",
    "InsertArgs",
    "JudgeArgs",
    "LogArgs",
    "ProposeArgs",
    "ReadFileArgs",
    "RevertArgs",
    "RunRecipeArgs",
    "ShowArgs",
    "StrReplaceArgs",
    "ToolArgs",
    "UndoEditArgs",
    "VerifyArgs",
    "ViewArgs",
    "WriteFileArgs",
    "input_schema",
    "untitled",
]

DEFAULT_MAX_CHARS = 16_000
"""`view` and `read_file` show at most this many characters of numbered lines by default."""

_PATH = "the file, relative to the workspace root or absolute under the workspace prefix"
_FORMATS = tuple(f.value for f in EditFormat)


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown keys refused, values never coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_VIEW_RANGE = "[first, last] line to show (1-based; last -1 = to the end of the file)"
_MAX_CHARS = (
    f"at most this many characters of numbered lines (default {DEFAULT_MAX_CHARS}); a longer "
    "view ends early with a note naming the view_range that reads on"
)


class ReadFileArgs(ToolArgs):
    path: str = Field(description=_PATH)
    view_range: list[int] | None = Field(None, min_length=2, max_length=2, description=_VIEW_RANGE)
    start_line: Annotated[int, Field(ge=1)] | None = Field(
        None, description="first line to return (1-based), instead of view_range"
    )
    end_line: Annotated[int, Field(ge=-1)] | None = Field(
        None, description="last line to return (inclusive; -1: to the end), instead of view_range"
    )
    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=1, description=_MAX_CHARS)


class ViewArgs(ToolArgs):
    path: str = Field(description="a file or a directory (`.` or the prefix: the root)")
    view_range: list[int] | None = Field(
        None, min_length=2, max_length=2, description="for a file: " + _VIEW_RANGE
    )
    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=1, description="for a file: " + _MAX_CHARS)


_FULL_REWRITE = (
    "the content rewrites the file on purpose: lifts the guards that refuse an edit dropping "
    "most of a large file (LARGE_REMOVAL) or its ending (TRUNCATED_OUTPUT); placeholder "
    "lines stay refused"
)


class ApplyArgs(ToolArgs):
    patch: str = Field(
        description="the model's edits in any format patchsmith reads (unified diff, "
        "apply_patch envelope, SEARCH/REPLACE, whole files, str_replace calls, lazy "
        "snippets), prose and fences around them allowed"
    )
    format: Literal[_FORMATS] = Field(  # type: ignore[valid-type]
        "auto", description="the format; auto detects it by content"
    )
    check: bool = Field(False, description="dry run: report the diff, write nothing")
    partial: bool = Field(
        False, description="write the edits that located and report the rest (else all or nothing)"
    )
    full_rewrite: bool = Field(False, description=_FULL_REWRITE)


class StrReplaceArgs(ToolArgs):
    path: str = Field(description=_PATH)
    old_str: str = Field(description="the exact text to replace; it must occur once in the file")
    new_str: str = Field("", description="the replacement (empty: delete old_str)")


class InsertArgs(ToolArgs):
    path: str = Field(description=_PATH)
    insert_line: int = Field(ge=0, description="the line after which to insert (0 = at the top)")
    new_str: str | None = Field(None, description="the text to insert")
    insert_text: str | None = Field(None, description="the text to insert (alias of new_str)")


class CreateArgs(ToolArgs):
    path: str = Field(description=_PATH)
    file_text: str = Field(description="the new file's content (an existing file is refused)")


class UndoEditArgs(ToolArgs):
    path: str = Field(description=_PATH)


class EditorArgs(ToolArgs):
    """The editor-tool family's single tool: one `command` and its arguments."""

    command: Literal["view", "create", "str_replace", "insert", "undo_edit"]
    path: str = Field(description=_PATH)
    file_text: str | None = Field(None, description="create: the new file's content")
    old_str: str | None = Field(None, description="str_replace: the exact text, unique in the file")
    new_str: str | None = Field(
        None, description="str_replace: the replacement; insert: the text to insert"
    )
    insert_line: int | None = Field(
        None, ge=0, description="insert: the line after which to insert (0 = top)"
    )
    insert_text: str | None = Field(None, description="insert: the text (alias of new_str)")
    view_range: list[int] | None = Field(
        None, min_length=2, max_length=2, description="view: [first, last] line, last -1 = end"
    )
    max_chars: int | None = Field(
        None, ge=1, description=f"view: at most this many characters (default {DEFAULT_MAX_CHARS})"
    )


class WriteFileArgs(ToolArgs):
    path: str = Field(description=_PATH)
    content: str = Field(description="the complete new content of the file")
    expected_sha256: str | None = Field(
        description="the sha256 read_file returned; null for a new file (with allow_create)"
    )
    allow_create: bool = Field(False, description="the file may not exist yet")
    full_rewrite: bool = Field(False, description=_FULL_REWRITE)
    reason: str = Field("", description="why: kept in the audit record")


class ProposeArgs(ToolArgs):
    proposal: dict[str, Any] | str = Field(
        description="a PatchProposal (JSON object, or its JSON/YAML text); `patchsmith schema` "
        "prints its JSON Schema"
    )
    check: bool = Field(False, description="dry run: check and guard everything, write nothing")
    verify: bool = Field(
        False,
        description="with check: run the verification plan too (only in a workspace the user "
        "trusts; an apply always runs it)",
    )


class RunRecipeArgs(ToolArgs):
    recipe: str | None = Field(
        None, description="the id of a recipe (built in, or in the workspace's recipe folders)"
    )
    recipe_yaml: str | None = Field(
        None, description="a recipe given inline, as YAML or JSON text (instead of `recipe`)"
    )
    apply: bool = Field(False, description="write the changes (default: dry run, diff only)")
    verify: bool = Field(
        False,
        description="on a dry run: run the profiles of compiles/tests_pass postconditions too "
        "(only in a workspace the user trusts; an apply always runs them)",
    )
    paths: list[str] = Field(
        default_factory=list, description="narrow the recipe's scope (gitignore-style patterns)"
    )


class VerifyArgs(ToolArgs):
    profiles: list[str] = Field(
        default_factory=list, description="profiles to run (default: all the workspace's)"
    )
    base: str | None = Field(
        "HEAD", description="git revision to compare with; null: no base run, every failure counts"
    )
    full: bool = Field(False, description="after targeted tests, run the whole test profile")


class LogArgs(ToolArgs):
    limit: int = Field(20, ge=1, le=1000, description="at most this many attempts, newest first")


class ShowArgs(ToolArgs):
    id: str = Field(description="an attempt id, or a unique prefix of one (from log or a report)")


class RevertArgs(ToolArgs):
    id: str = Field(description="the applied attempt to undo: its id or a unique prefix")
    check: bool = Field(False, description="dry run: report the diff, write nothing")


class JudgeArgs(ToolArgs):
    subject: str = Field(description="an attempt id (or unique prefix) or a run id")
    kind: Literal["attempt", "run"] | None = Field(
        None, description="read subject as this kind (default: an attempt id wins)"
    )
    record: bool = Field(True, description="keep the judgement in the audit store")


class FreezeArgs(ToolArgs):
    run_id: str = Field(description="the run whose applied attempts make the change")
    branch: str | None = Field(
        None, description="the new git branch's name (default: patchsmith/RUN)"
    )
    commit: bool = Field(
        True, description="in a git checkout, commit the change onto HEAD as a new branch"
    )


def input_schema(model: type[ToolArgs]) -> dict[str, Any]:
    """The JSON Schema of `model`'s arguments, without pydantic's `title` keys."""
    schema: dict[str, Any] = untitled(model.model_json_schema())
    return schema


def untitled(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: untitled(value)
            for key, value in node.items()
            # a property may itself be called "title"; only schema titles go
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [untitled(item) for item in node]
    return node
