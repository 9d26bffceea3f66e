"""`EditScript`: every edit format parsed into one shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from patchsmith.engine.model import Hunk
from patchsmith.errors import FailureCode

__all__ = [
    "Action",
    "EditFormat",
    "EditOp",
    "EditScript",
    "FileEdit",
    "InsertText",
    "LazySnippet",
    "ParseProblem",
    "SearchReplace",
    "WholeContent",
]


class EditFormat(StrEnum):
    """The formats patchsmith reads. `AUTO` detects by content."""

    AUTO = "auto"
    UDIFF = "udiff"
    APPLY_PATCH = "apply_patch"
    SEARCH_REPLACE = "search_replace"
    WHOLE_FILE = "whole_file"
    STR_REPLACE = "str_replace"
    LAZY_SNIPPET = "lazy_snippet"


class Action(StrEnum):
    """What happens to a file."""

    UPDATE = "update"
    CREATE = "create"
    DELETE = "delete"
    MOVE = "move"


@dataclass(frozen=True)
class SearchReplace:
    """Replace the unique block `search` with `replace` (both whole lines, "\\n"-terminated).

    An empty `search` appends `replace` to the file (or creates it). A line that
    is exactly `...` in `search` (and at the same position in `replace`) elides
    unchanged lines. `exact` marks str_replace tool calls, whose `old_str` must
    occur exactly once, verbatim (no tolerance, may span partial lines).
    """

    search: str
    replace: str
    exact: bool = False
    line_hint: int | None = None
    """1-based line number given by the model, used only to break ties."""


@dataclass(frozen=True)
class WholeContent:
    """The file's new text, as a fenced block after its path gives it.

    With `explicit` (the caller chose the whole-file format, or a tool's `create`
    command) it replaces the file. Otherwise it is read as a lazy snippet would be:
    placeholder lines are merged by their anchors, and a block much shorter than the
    file replaces the one stretch it anchors to, never the whole file.
    """

    text: str
    explicit: bool = False


@dataclass(frozen=True)
class LazySnippet:
    """New text of an existing file, with placeholder lines where unchanged code is left out.

    Merged by anchors (see `patchsmith.engine.lazy`); never creates a file.
    """

    text: str


@dataclass(frozen=True)
class InsertText:
    """Insert `text` after line `after_line` (0 = at the top), as str_replace `insert` does."""

    after_line: int
    text: str


EditOp = Hunk | SearchReplace | WholeContent | InsertText | LazySnippet


@dataclass(frozen=True)
class FileEdit:
    """The edits for one file.

    `path` is the file as it is now (for CREATE: the file to create); `new_path`
    is set only for MOVE. For DELETE, `ops` may hold one `WholeContent` with the
    text the model expects the file to have (a udiff deleting every line).
    """

    path: str
    action: Action
    ops: tuple[EditOp, ...] = ()
    new_path: str | None = None
    new_mode: str | None = None
    start_line: int = 0
    """0-based line of the model text where this edit starts (for error reports)."""
    end_line: int = 0


@dataclass(frozen=True)
class ParseProblem:
    """A part of the model text that could not be parsed (lines are 1-based, inclusive)."""

    message: str
    start_line: int
    end_line: int
    text: str = ""
    code: FailureCode = FailureCode.MALFORMED_PATCH
    """MALFORMED_PATCH; PATH_MISMATCH for diff headers naming two different files;
    TRUNCATED_OUTPUT for a reply that stops inside a fence."""


@dataclass(frozen=True)
class EditScript:
    """Everything parsed from one model output, and what could not be parsed."""

    format: EditFormat
    edits: tuple[FileEdit, ...] = ()
    problems: tuple[ParseProblem, ...] = field(default_factory=tuple)
    regions: tuple[tuple[int, int], ...] = ()
    """The model-text lines each edit came from (0-based, end exclusive), before merging."""
