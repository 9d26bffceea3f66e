"""`patchsmith tools` and `patchsmith prompt`: what an agent builder gives the model."""

from __future__ import annotations

import argparse
import json
import sys

from patchsmith.cli._output import EXIT_OK
from patchsmith.formats.script import EditFormat

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `tools` and `prompt` subcommands."""
    from patchsmith.cli.apply import edit_format

    formats = "{" + ",".join(f.value for f in EditFormat if f is not EditFormat.AUTO) + "}"
    tools = subparsers.add_parser(
        "tools",
        help="print the tool (function) definition of each edit format, as JSON",
        description="Print a JSON list of tool definitions, one per edit format (or the one "
        "--format names), in the shape --flavor's API takes. Pass a call's arguments to "
        "patchsmith apply as docs/agents.md shows.",
    )
    tools.add_argument(
        "--format", type=edit_format, default=None, metavar=formats, help="one format only"
    )
    tools.add_argument(
        "--flavor",
        choices=("openai", "anthropic", "mcp"),
        default="openai",
        help="openai: function calling, strict mode (default); anthropic: tool use; "
        "mcp: the tools of `patchsmith mcp`, as its tools/list names them",
    )
    tools.set_defaults(func=_run_tools)
    prompt = subparsers.add_parser(
        "prompt",
        help="print the system-prompt snippet that teaches a model an edit format",
        description="Print the system-prompt text teaching each edit format (or the one "
        "--format names), with one short example each.",
    )
    prompt.add_argument(
        "--format", type=edit_format, default=None, metavar=formats, help="one format only"
    )
    prompt.set_defaults(func=_run_prompt)


def _run_tools(args: argparse.Namespace) -> int:
    from patchsmith.formats.tools import tool_definitions

    if args.flavor == "mcp":
        definitions = _server_tools(args.format)
    else:
        definitions = [tool.schema(args.flavor) for tool in tool_definitions(args.format)]
    sys.stdout.write(json.dumps(definitions, indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def _server_tools(format: EditFormat | None) -> list[dict[str, object]]:
    """The MCP server's tools (every one, or the one taking `format`): one source of names."""
    from patchsmith.mcp.toolbox import tool_specs

    wanted = None if format in (None, EditFormat.AUTO) else _SERVER_TOOL.get(format, "apply")
    return [spec.definition() for spec in tool_specs() if wanted in (None, spec.name)]


_SERVER_TOOL = {EditFormat.WHOLE_FILE: "write_file", EditFormat.STR_REPLACE: "str_replace_editor"}
"""The server tool that takes each format whole; `apply` takes every other one."""


def _run_prompt(args: argparse.Namespace) -> int:
    from patchsmith.formats.tools import format_prompt

    sys.stdout.write(format_prompt(args.format))
    return EXIT_OK
