"""str_replace editor tool calls written as JSON (one object or a list, in prose or fences).

Accepted wrappers: `{"name": ..., "input": {...}}`, `{"type": "tool_use", "input": {...}}`,
`{"arguments": "<json string>"}` and OpenAI's `{"function": {...}}` / `{"tool_calls": [...]}`.
`str_replace` becomes an exact `SearchReplace`, `create` a CREATE with the file text, `insert`
an `InsertText`; `view` is recognised and changes nothing; `undo_edit` and unknown commands are
problems. Paths are kept as given (absolute ones included): the workspace maps or refuses them.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator

from patchsmith.engine.diffparse import split_lines
from patchsmith.formats._assemble import problem, script
from patchsmith.formats.script import (
    Action,
    EditFormat,
    EditOp,
    EditScript,
    FileEdit,
    InsertText,
    ParseProblem,
    SearchReplace,
    WholeContent,
)

__all__ = ["decode_arguments", "detect", "parse"]

_DETECT = re.compile(r'"(?:command|old_str|new_str|file_text|insert_line)"\s*:')
_START = re.compile(r"^[ \t]*(?:\{|\[[ \t]*\n?[ \t]*\{)", re.MULTILINE)
_WRAPPER_KEYS = ("input", "arguments", "parameters", "args", "function", "tool_calls", "calls")
_MAX_DEPTH = 8


def detect(text: str) -> bool:
    """True when `text` holds a JSON key of the str_replace tool (`"command"`, `"old_str"`...)."""
    return _DETECT.search(text) is not None


def decode_arguments(value: object) -> object:
    """Decode tool arguments that a client sent as a JSON string; other values pass unchanged.

    OpenAI-style function calls carry `"arguments": "<json>"`; a string that is not JSON is
    returned as it is.
    """
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            decoded: object = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return decoded
    return value


def parse(text: str) -> EditScript:
    """Every tool call in `text`, as edits; never raises."""
    lines = split_lines(text)
    line_starts = _line_starts(text)
    edits: list[FileEdit] = []
    problems: list[ParseProblem] = []
    recognised = False
    for value, start, end in _json_values(text):
        first = bisect.bisect_right(line_starts, start) - 1
        last = bisect.bisect_right(line_starts, max(start, end - 1))
        for call in _calls(value, 0):
            recognised = True
            edit = _edit(call, first, last)
            if isinstance(edit, FileEdit):
                edits.append(edit)
            elif edit:
                problems.append(problem(lines, edit, first + 1, last))
    return script(EditFormat.STR_REPLACE, lines, edits, problems, recognised=recognised)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in re.finditer("\n", text))
    return starts


def _json_values(text: str) -> Iterator[tuple[object, int, int]]:
    """JSON objects and lists that start a line, with their character span."""
    decoder = json.JSONDecoder()
    covered = 0
    for match in _START.finditer(text):
        start = match.start() + len(match.group()) - len(match.group().lstrip())
        if start < covered:
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        covered = end
        yield value, start, end


def _calls(value: object, depth: int) -> Iterator[dict[str, object]]:
    """The tool-call objects in `value`, looking through the common wrappers."""
    if depth > _MAX_DEPTH:
        return
    value = decode_arguments(value)
    if isinstance(value, list):
        for item in value:
            yield from _calls(item, depth + 1)
        return
    if not isinstance(value, dict):
        return
    if "command" in value or ("path" in value and ("old_str" in value or "file_text" in value)):
        yield {str(key): item for key, item in value.items()}
        return
    for key in _WRAPPER_KEYS:
        if key in value:
            yield from _calls(value[key], depth + 1)


def _edit(call: dict[str, object], first: int, last: int) -> FileEdit | str:
    """The edit one call asks for, "" when it asks for none (`view`), or why it is unusable."""
    command = call.get("command")
    if command is None:
        command = "str_replace" if "old_str" in call else "create"
    if command == "view":
        return ""
    if not isinstance(command, str):
        return "tool call whose command is not a string"
    if command == "undo_edit":
        return "undo_edit cannot be applied as an edit"
    if command not in ("str_replace", "create", "insert"):
        return f"unknown str_replace command {command[:40]!r}"
    path = call.get("path")
    if not isinstance(path, str) or not path.strip():
        return f"{command} call without a path"
    op = _op(command, call)
    if isinstance(op, str):
        return op
    action = Action.CREATE if command == "create" else Action.UPDATE
    return FileEdit(path, action, (op,), start_line=first, end_line=last)


def _op(command: str, call: dict[str, object]) -> EditOp | str:
    new_str = call.get("new_str")
    if new_str is not None and not isinstance(new_str, str):
        return f"{command} call whose new_str is not a string"
    if command == "str_replace":
        old_str = call.get("old_str")
        if not isinstance(old_str, str):
            return "str_replace call without old_str"
        if not old_str:
            return (
                "str_replace call with an empty old_str: it must be text copied from the "
                "file, occurring once (insert adds lines, create makes a new file)"
            )
        return SearchReplace(old_str, new_str or "", exact=True)
    if command == "create":
        file_text = call.get("file_text")
        if not isinstance(file_text, str):
            return "create call without file_text"
        return WholeContent(file_text)
    line = call.get("insert_line")
    if isinstance(line, str) and line.strip().isdigit():
        line = int(line)
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        return "insert call without a valid insert_line"
    text = new_str if new_str is not None else call.get("insert_text")
    if not isinstance(text, str):
        return "insert call without new_str"
    return InsertText(line, text)
