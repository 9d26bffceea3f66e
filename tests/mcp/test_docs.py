"""docs/mcp.md: a section per tool, each with the tool's exact input schema.

After a deliberate schema change, rewrite the schema blocks with
`PATCHSMITH_UPDATE_SNAPSHOTS=1` set.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from patchsmith.mcp.toolbox import _SPECS, ToolSpec

DOCS = Path(__file__).resolve().parents[2] / "docs"
MCP_MD = DOCS / "mcp.md"
SCHEMA_BLOCK = re.compile(r"<!-- schema:(\w+) -->\n```json\n(.*?)```\n", re.DOTALL)
TOOL_TABLE = re.compile(r"(<!-- tools:begin -->\n)(.*?)(<!-- tools:end -->)", re.DOTALL)


def _hints(spec: ToolSpec) -> str:
    hints = spec.annotations()
    shown = [
        label
        for key, label in [
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
        ]
        if hints[key]
    ]
    return ", ".join(shown) or "additive"


def tool_table() -> str:
    """The tools as docs/mcp.md and docs/agents.md list them, from `_SPECS`."""
    rows = ["| tool | annotations | what it does |", "| --- | --- | --- |"]
    rows += [f"| `{s.name}` | {_hints(s)} | {s.description.replace('|', '/')} |" for s in _SPECS]
    return "\n".join(rows) + "\n"


def _with_table(text: str) -> str:
    return TOOL_TABLE.sub(lambda m: m.group(1) + tool_table() + m.group(3), text)


def _render(name: str) -> str:
    spec = next(s for s in _SPECS if s.name == name)
    return json.dumps(spec.input_schema, indent=2) + "\n"


def _update(text: str) -> str:
    return SCHEMA_BLOCK.sub(
        lambda m: f"<!-- schema:{m.group(1)} -->\n```json\n{_render(m.group(1))}```\n", text
    )


class TestMcpPage:
    def test_a_section_per_tool(self) -> None:
        """Every tool has a `## name` section with a schema block, in the order listed."""
        text = MCP_MD.read_text(encoding="utf-8")
        headings = re.findall(r"^## `(\w+)`$", text, re.MULTILINE)
        blocks = [m.group(1) for m in SCHEMA_BLOCK.finditer(text)]

        assert [s.name for s in _SPECS] == headings
        assert headings == blocks

    def test_schemas_are_current(self) -> None:
        """Each schema block is the tool's input schema, exactly."""
        text = MCP_MD.read_text(encoding="utf-8")
        if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS"):
            MCP_MD.write_text(_update(text), encoding="utf-8")
            text = MCP_MD.read_text(encoding="utf-8")

        for match in SCHEMA_BLOCK.finditer(text):
            assert _render(match.group(1)) == match.group(2), match.group(1)

    @pytest.mark.parametrize("page", ["mcp.md", "agents.md"])
    def test_tool_table_is_current(self, page: str) -> None:
        """The generated tool table lists every tool with its annotations, as the code does."""
        path = DOCS / page
        text = path.read_text(encoding="utf-8")
        if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS"):
            path.write_text(_with_table(text), encoding="utf-8")
            text = path.read_text(encoding="utf-8")

        found = TOOL_TABLE.search(text)
        assert found is not None, f"{page} has no <!-- tools:begin --> table"
        assert tool_table() == found.group(2)

    def test_readme_does_not_count_the_tools(self) -> None:
        """A count drifts; the README names the page that lists them instead."""
        readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
        assert re.search(r"\b\d+ (MCP )?tools\b", readme) is None

    @pytest.mark.parametrize("page", ["agents.md", "../README.md"])
    def test_linked(self, page: str) -> None:
        """The agent builders' page and the README point to the MCP page."""
        assert "mcp.md" in (DOCS / page).read_text(encoding="utf-8")
