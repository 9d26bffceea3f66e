"""Tool definitions and system-prompt snippets that teach a model each edit format.

An agent builder gives the model one tool per format it should write (`tool_definitions`),
in the shape its API wants (`ToolFlavor`: OpenAI function calling in strict mode,
Anthropic tool use, MCP), or a system-prompt snippet for replies written as plain text
(`format_prompt`). A tool call's arguments become the text `patchsmith.apply` reads with
`ToolDefinition.reply(arguments)`. Each guide carries one short example, written against
`EXAMPLE_FILE`; the tests apply every example to that file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

from patchsmith.formats.registry import format_named
from patchsmith.formats.script import EditFormat

__all__ = [
    "EXAMPLE_FILE",
    "ApplyOptions",
    "ToolDefinition",
    "ToolFlavor",
    "format_prompt",
    "tool_definitions",
]

EXAMPLE_FILE = ("app.py", 'def greet(name):\n    return "Hello, " + name\n')
"""The file every example edits: its path and its text before the edit."""

_EXAMPLE_NEW = 'def greet(name):\n    return f"Hello, {name}!"\n'


class ApplyOptions(TypedDict):
    """Keyword arguments of `patchsmith.apply` that a tool call asks for."""

    full_rewrite: bool
    """The call rewrites a file on purpose (`write_whole_file`'s `full_rewrite`)."""


class ToolFlavor(StrEnum):
    """The shape of a tool definition: which API it is for."""

    OPENAI = "openai"
    """Chat Completions function calling: `{"type": "function", "function": {...}}`, strict."""
    ANTHROPIC = "anthropic"
    """Messages API tool use: `{"name", "description", "input_schema"}`."""
    MCP = "mcp"
    """Model Context Protocol `tools/list` entry: `{"name", "description", "inputSchema"}`,
    for an MCP server of your own; `patchsmith tools --flavor mcp` prints the tools of
    patchsmith's own server instead (`patchsmith mcp`), named as it serves them."""


@dataclass(frozen=True)
class ToolDefinition:
    """One edit format as a tool: its name, description, argument schema and an example."""

    format: EditFormat
    name: str
    description: str
    parameters: Mapping[str, Any]
    """The JSON Schema of the arguments (OpenAI strict-mode compatible)."""
    example: Mapping[str, Any]
    """Arguments of one valid call, editing `EXAMPLE_FILE`."""
    prompt: str = field(repr=False)
    """The system-prompt snippet teaching the format as plain text, with one example."""
    example_reply: str = field(repr=False)
    """The example of `prompt`: a reply in this format, editing `EXAMPLE_FILE`."""

    def schema(self, flavor: ToolFlavor | str = ToolFlavor.OPENAI) -> dict[str, object]:
        """The definition as the API of `flavor` expects it (a JSON object)."""
        flavor = ToolFlavor(flavor)
        parameters = json.loads(json.dumps(self.parameters))
        if flavor is ToolFlavor.OPENAI:
            return {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": parameters,
                    "strict": True,
                },
            }
        key = "input_schema" if flavor is ToolFlavor.ANTHROPIC else "inputSchema"
        return {"name": self.name, "description": self.description, key: parameters}

    def reply(self, arguments: Mapping[str, Any] | str) -> str:
        """The text `patchsmith.apply` reads for a call with these arguments.

        `arguments` may be the decoded object or the JSON string a client received.
        """
        arguments = _decoded(arguments)
        if self.format is EditFormat.STR_REPLACE:
            # Strict mode sends every key; the unused ones are null.
            call = {key: value for key, value in arguments.items() if value is not None}
            return json.dumps(call, ensure_ascii=False)
        if self.format is EditFormat.WHOLE_FILE:
            return _whole_file(str(arguments["path"]), str(arguments["content"]))
        if self.format is EditFormat.LAZY_SNIPPET:
            return _whole_file(str(arguments["path"]), str(arguments["snippet"]))
        return str(arguments["patch"])

    def options(self, arguments: Mapping[str, Any] | str) -> ApplyOptions:
        """The keyword arguments of `patchsmith.apply` a call asks for (`full_rewrite`).

        `patchsmith.apply(tool.reply(args), root, format=tool.format, **tool.options(args))`
        applies a call as the tool's description promises.
        """
        decoded = _decoded(arguments)
        return ApplyOptions(full_rewrite=decoded.get("full_rewrite") is True)


def _decoded(arguments: Mapping[str, Any] | str) -> Mapping[str, Any]:
    if isinstance(arguments, str):
        decoded = json.loads(arguments)
        if not isinstance(decoded, dict):
            raise ValueError("tool arguments must be a JSON object")
        return decoded
    return arguments


def _whole_file(path: str, content: str) -> str:
    fence = "```"
    while fence in content:
        fence += "`"
    body = content if content.endswith("\n") else content + "\n"
    return f"{path}\n{fence}\n{body}{fence}\n"


def _parameters(**fields: tuple[str, str]) -> dict[str, object]:
    """A closed object schema (OpenAI strict mode): every field `name=(type, description)`."""
    return {
        "type": "object",
        "properties": {
            name: {"type": kind, "description": description}
            for name, (kind, description) in fields.items()
        },
        "required": list(fields),
        "additionalProperties": False,
    }


_PATH = ("string", "the file, relative to the root")

_LAZY_SNIPPET = "# ... existing code ...\n" + _EXAMPLE_NEW
_LAZY_REPLY = f"{EXAMPLE_FILE[0]}\n```python\n{_LAZY_SNIPPET}```\n"

_UDIFF_EXAMPLE = (
    "--- a/app.py\n"
    "+++ b/app.py\n"
    "@@ -1,2 +1,2 @@\n"
    " def greet(name):\n"
    '-    return "Hello, " + name\n'
    '+    return f"Hello, {name}!"\n'
)

_APPLY_PATCH_EXAMPLE = (
    "*** Begin Patch\n"
    "*** Update File: app.py\n"
    "@@ def greet(name):\n"
    '-    return "Hello, " + name\n'
    '+    return f"Hello, {name}!"\n'
    "*** End Patch\n"
)

_SEARCH_REPLACE_EXAMPLE = (
    "app.py\n"
    "<<<<<<< SEARCH\n"
    '    return "Hello, " + name\n'
    "=======\n"
    '    return f"Hello, {name}!"\n'
    ">>>>>>> REPLACE\n"
)

_STR_REPLACE_EXAMPLE: dict[str, Any] = {
    "command": "str_replace",
    "path": "app.py",
    "old_str": '    return "Hello, " + name',
    "new_str": '    return f"Hello, {name}!"',
    "file_text": None,
    "insert_line": None,
}

_STR_REPLACE_REPLY = (
    json.dumps({k: v for k, v in _STR_REPLACE_EXAMPLE.items() if v is not None}, indent=2) + "\n"
)

_COMMON = (
    "Copy unchanged and removed lines exactly from the file as it is now, whitespace "
    "included; never abbreviate them with `...` or comments such as `# existing code`. "
    "Give each edit enough unchanged lines to match one place only. Paths are relative to "
    "the repository root. If a change is refused, the reply names the reason and shows the "
    "real lines: resend the edit against them."
)


_LAZY_COMMON = (
    "Copy the lines you keep next to each placeholder exactly from the file as it is now, "
    "whitespace included, and keep enough of them that they occur at one place only: the "
    "placeholder stands for exactly the lines between them. Paths are relative to the "
    "repository root. If a change is refused, the reply names the reason and shows the real "
    "lines: resend the edit against them."
)


def _prompt(
    title: str, rules: str, example: str, fence: str = "text", common: str = _COMMON
) -> str:
    # Four backticks: the whole-file example holds a fence of its own.
    return f"{title}\n\n{rules}\n\n{common}\n\nExample:\n\n````{fence}\n{example}````\n"


def _guide(
    format: EditFormat,
    name: str,
    description: str,
    parameters: dict[str, object],
    example: dict[str, Any],
    teach: tuple[str, str],
    reply: str,
    fence: str = "text",
    common: str = _COMMON,
) -> ToolDefinition:
    """One format's definition; `teach` is the prompt's (title, rules), `reply` its example."""
    title, rules = teach
    return ToolDefinition(
        format=format,
        name=name,
        description=description,
        parameters=parameters,
        example=example,
        prompt=_prompt(title, rules, reply, fence=fence, common=common),
        example_reply=reply,
    )


_WHOLE_FILE_REPLY = f"{EXAMPLE_FILE[0]}\n```python\n{_EXAMPLE_NEW}```\n"

_GUIDES: tuple[ToolDefinition, ...] = (
    _guide(
        EditFormat.UDIFF,
        "apply_unified_diff",
        "Edit files with a unified diff (as `git diff` prints it). Each file "
        "starts with `--- a/PATH` and `+++ b/PATH`; each hunk with `@@`, then lines "
        "starting with ' ' (unchanged), '-' (removed) or '+' (added). `--- /dev/null` "
        "creates a file, `+++ /dev/null` deletes one. Line numbers are optional.",
        _parameters(patch=("string", "the unified diff, every file's hunks")),
        {"patch": _UDIFF_EXAMPLE},
        (
            "Write file edits as a unified diff.",
            "Start each file with `--- a/PATH` and `+++ b/PATH`, each hunk with `@@` (line "
            "numbers may be left out), then its lines: ' ' unchanged, '-' removed, '+' added. "
            "Use `--- /dev/null` to create a file and `+++ /dev/null` to delete one.",
        ),
        _UDIFF_EXAMPLE,
        fence="diff",
    ),
    _guide(
        EditFormat.APPLY_PATCH,
        "apply_patch",
        "Edit files with an apply_patch envelope: `*** Begin Patch`, then "
        "`*** Update File: PATH` (or `*** Add File:` / `*** Delete File:`, and "
        "`*** Move to: NEW` after an update), `@@ ANCHOR` lines naming where a change is, "
        "lines starting with ' ', '-' or '+', and `*** End Patch`.",
        _parameters(patch=("string", "the whole envelope, Begin to End Patch")),
        {"patch": _APPLY_PATCH_EXAMPLE},
        (
            "Write file edits as an apply_patch envelope.",
            "Open with `*** Begin Patch` and close with `*** End Patch`. Per file: `*** "
            "Update File: PATH`, `*** Add File: PATH` (every line starts with '+') or `*** "
            "Delete File: PATH`. In an update, `@@ LINE` names a nearby line such as the "
            "enclosing function, then lines start with ' ' unchanged, '-' removed, '+' added.",
        ),
        _APPLY_PATCH_EXAMPLE,
    ),
    _guide(
        EditFormat.SEARCH_REPLACE,
        "search_replace",
        "Edit files with SEARCH/REPLACE blocks: the file's path on its own "
        "line, `<<<<<<< SEARCH`, the exact current lines, `=======`, the new lines, "
        "`>>>>>>> REPLACE`. An empty SEARCH creates the file (or appends to it).",
        _parameters(patch=("string", "one or more SEARCH/REPLACE blocks")),
        {"patch": _SEARCH_REPLACE_EXAMPLE},
        (
            "Write file edits as SEARCH/REPLACE blocks.",
            "For each change write the file's path on its own line, then `<<<<<<< SEARCH`, "
            "the lines to change exactly as they are now, `=======`, the new lines, and "
            "`>>>>>>> REPLACE`. The SEARCH lines must occur once in the file. An empty SEARCH "
            "creates the file.",
        ),
        _SEARCH_REPLACE_EXAMPLE,
    ),
    _guide(
        EditFormat.WHOLE_FILE,
        "write_whole_file",
        "Replace a file (or create it) with its complete new content. Send the "
        "whole file, never a part of it: every line not sent is deleted. Content that "
        "drops most of a large file (LARGE_REMOVAL) or its ending (TRUNCATED_OUTPUT) is "
        "refused unless full_rewrite is true.",
        _parameters(
            path=_PATH,
            content=("string", "the complete new file"),
            full_rewrite=(
                "boolean",
                "true when the file is being rewritten on purpose and may shrink a lot",
            ),
        ),
        {"path": EXAMPLE_FILE[0], "content": _EXAMPLE_NEW, "full_rewrite": False},
        (
            "Write each changed file whole.",
            "Write the file's path on its own line, then the complete new content of the "
            "file in a fenced code block. Never leave parts out: every line missing from the "
            "block is deleted from the file.",
        ),
        _WHOLE_FILE_REPLY,
        fence="markdown",
    ),
    _guide(
        EditFormat.STR_REPLACE,
        "str_replace_editor",
        "Edit a file like a text editor. `str_replace`: replace `old_str`, "
        "which must occur exactly once, with `new_str`. `create`: write `file_text` as a "
        "new file. `insert`: insert `new_str` after line `insert_line` (0 = at the top). "
        "Set the arguments a command does not use to null.",
        {
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": ["str_replace", "create", "insert"]},
                "path": {"type": _PATH[0], "description": _PATH[1]},
                "old_str": {
                    "type": ["string", "null"],
                    "description": "str_replace: the exact text to replace, unique in the file",
                },
                "new_str": {
                    "type": ["string", "null"],
                    "description": "str_replace: the replacement; insert: the text to insert",
                },
                "file_text": {
                    "type": ["string", "null"],
                    "description": "create: the new file's content",
                },
                "insert_line": {
                    "type": ["integer", "null"],
                    "description": "insert: the line after which to insert (0 = top)",
                },
            },
            "required": ["command", "path", "old_str", "new_str", "file_text", "insert_line"],
            "additionalProperties": False,
        },
        _STR_REPLACE_EXAMPLE,
        (
            "Edit files with str_replace editor calls, written as JSON.",
            'Each call is an object with "command" ("str_replace", "create" or "insert") '
            'and "path". str_replace replaces "old_str" (exact text, found once in the file) '
            'with "new_str"; create writes "file_text" as a new file; insert puts "new_str" '
            'after line "insert_line". Send several calls as a JSON list.',
        ),
        _STR_REPLACE_REPLY,
        fence="json",
    ),
    _guide(
        EditFormat.LAZY_SNIPPET,
        "edit_with_placeholders",
        "Edit a file by sending its changed parts with their new content, "
        "unchanged stretches replaced by a placeholder comment such as "
        "`# ... existing code ...`. Keep unchanged lines that occur once in the file next to "
        "each placeholder; the edit is merged by them, or refused.",
        _parameters(
            path=_PATH,
            snippet=(
                "string",
                "the new text of the changed parts, with placeholder comments where "
                "unchanged code is left out",
            ),
        ),
        {"path": EXAMPLE_FILE[0], "snippet": _LAZY_SNIPPET},
        (
            "Write each changed part of a file, leaving unchanged code out.",
            "Write the file's path on its own line, then a fenced code block with the new "
            "text of the parts that change. Replace each stretch of unchanged lines with one "
            "placeholder comment in the file's syntax (`# ... existing code ...`, "
            "`// ... existing code ...`, `<!-- ... -->`).",
        ),
        _LAZY_REPLY,
        fence="markdown",
        common=_LAZY_COMMON,
    ),
)


def _selected(format: EditFormat | str | None) -> tuple[ToolDefinition, ...]:
    if format is None:
        return _GUIDES
    wanted = format if isinstance(format, EditFormat) else format_named(format)
    if wanted is None:
        names = ", ".join(f.value for f in EditFormat)
        raise ValueError(f"unknown edit format {format!r} (choose from {names})")
    if wanted is EditFormat.AUTO:
        return _GUIDES
    return tuple(guide for guide in _GUIDES if guide.format is wanted)


def tool_definitions(format: EditFormat | str | None = None) -> tuple[ToolDefinition, ...]:
    """The tool definition of `format`, or of every format (`None` or `auto`).

    Call `.schema(flavor)` on each for the JSON object an API takes, and
    `.reply(arguments)` on a call's arguments for the text `patchsmith.apply` reads.
    Format names and aliases are those of `patchsmith apply --format`; an unknown
    one raises `ValueError`.
    """
    return _selected(format)


def format_prompt(format: EditFormat | str | None = None) -> str:
    """The system-prompt snippet teaching `format` (or every format, one after another)."""
    return "\n".join(guide.prompt for guide in _selected(format))
