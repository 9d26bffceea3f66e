"""Tool definitions and prompts per format: schemas take their examples, examples apply."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.workspace_snapshot import make_tree

import patchsmith
from patchsmith.cli import main
from patchsmith.formats.script import EditFormat
from patchsmith.formats.tools import EXAMPLE_FILE, ToolDefinition, ToolFlavor
from patchsmith.model.report import ApplyStatus

GUIDES = patchsmith.tool_definitions()
EXPECTED = b'def greet(name):\n    return f"Hello, {name}!"\n'


def ids(guide: ToolDefinition) -> str:
    return guide.format.value


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws", {EXAMPLE_FILE[0]: EXAMPLE_FILE[1].encode()})


def _objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema inside `schema`."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found.extend(_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_objects(value))
    return found


class TestDefinitions:
    def test_one_per_concrete_format(self) -> None:
        assert [f for f in EditFormat if f is not EditFormat.AUTO] == [g.format for g in GUIDES]
        assert len({g.name for g in GUIDES}) == len(GUIDES)

    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_schema_validates_its_example(self, guide: ToolDefinition) -> None:
        jsonschema.Draft202012Validator.check_schema(dict(guide.parameters))
        jsonschema.validate(dict(guide.example), dict(guide.parameters))

    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_schema_refuses_an_unknown_argument(self, guide: ToolDefinition) -> None:
        """The other side: the schema is not a free-for-all."""
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**guide.example, "extra": 1}, dict(guide.parameters))

    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_openai_strict_mode_rules(self, guide: ToolDefinition) -> None:
        """Strict mode: every object closed and every property required; no defaults."""
        schema = guide.schema(ToolFlavor.OPENAI)
        function = schema["function"]
        assert isinstance(function, dict)

        assert "function" == schema["type"]
        assert True is function["strict"]
        for node in _objects(function["parameters"]):
            assert False is node["additionalProperties"]
            assert sorted(node["properties"]) == sorted(node["required"])
        assert "default" not in json.dumps(function["parameters"])

    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_flavors_carry_the_same_parameters(self, guide: ToolDefinition) -> None:
        anthropic = guide.schema("anthropic")
        mcp = guide.schema(ToolFlavor.MCP)

        assert dict(guide.parameters) == anthropic["input_schema"] == mcp["inputSchema"]
        assert guide.name == anthropic["name"] == mcp["name"]

    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_example_call_applies(self, guide: ToolDefinition, root: Path) -> None:
        """The example arguments, turned into text by `reply`, apply to the example file."""
        report = patchsmith.apply(guide.reply(guide.example), root, format=guide.format)

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert EXPECTED == (root / EXAMPLE_FILE[0]).read_bytes()

    def test_reply_takes_the_json_string_clients_receive(self) -> None:
        (guide,) = patchsmith.tool_definitions("str_replace")

        assert guide.reply(json.dumps(guide.example)) == guide.reply(guide.example)
        assert "null" not in guide.reply(guide.example)
        with pytest.raises(ValueError):
            guide.reply("[1, 2]")

    def test_whole_file_reply_survives_fences_in_the_content(self, root: Path) -> None:
        (guide,) = patchsmith.tool_definitions(EditFormat.WHOLE_FILE)
        content = "# Doc\n\n```python\nprint(1)\n```\n"

        report = patchsmith.apply(guide.reply({"path": "README.md", "content": content}), root)

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert content.encode() == (root / "README.md").read_bytes()

    def test_whole_file_full_rewrite_is_passed_on(self, root: Path) -> None:
        """A legitimate shrink goes through with full_rewrite, and is refused without it."""
        (guide,) = patchsmith.tool_definitions(EditFormat.WHOLE_FILE)
        (root / "big.py").write_text("".join(f"x{n} = {n}\n" for n in range(60)))
        call = {"path": "big.py", "content": "x = 1\n", "full_rewrite": False}

        refused = patchsmith.apply(
            guide.reply(call), root, format=guide.format, **guide.options(call)
        )
        call["full_rewrite"] = True
        options = guide.options(json.dumps(call))
        applied = patchsmith.apply(guide.reply(call), root, format=guide.format, **options)

        assert ["LARGE_REMOVAL"] == [e.code.value for e in refused.errors]
        assert "full_rewrite" in (refused.errors[0].hint or "")
        assert ApplyStatus.APPLIED == applied.status, applied.errors
        assert "x = 1\n" == (root / "big.py").read_text()

    def test_aliases_and_unknown_names(self) -> None:
        assert ["udiff"] == [g.format.value for g in patchsmith.tool_definitions("diff")]
        assert GUIDES == patchsmith.tool_definitions("auto")
        with pytest.raises(ValueError, match="unknown edit format"):
            patchsmith.tool_definitions("nope")


class TestPrompts:
    @pytest.mark.parametrize("guide", GUIDES, ids=ids)
    def test_prompt_example_applies(self, guide: ToolDefinition, root: Path) -> None:
        """The example shown in the prompt is a reply patchsmith applies, auto-detected."""
        assert guide.example_reply in guide.prompt

        report = patchsmith.apply(guide.example_reply, root)

        assert ApplyStatus.APPLIED == report.status, report.errors
        assert EXPECTED == (root / EXAMPLE_FILE[0]).read_bytes()

    def test_all_formats_in_one_prompt(self) -> None:
        text = patchsmith.format_prompt()

        assert all(guide.prompt in text for guide in GUIDES)
        assert patchsmith.format_prompt("search_replace") == GUIDES[2].prompt


class TestCli:
    @pytest.mark.parametrize("flavor", ["openai", "anthropic"])
    def test_tools(self, flavor: str, capsys: pytest.CaptureFixture[str]) -> None:
        code = main(["tools", "--flavor", flavor])

        printed = json.loads(capsys.readouterr().out)
        assert 0 == code
        assert [g.schema(flavor) for g in GUIDES] == printed

    def test_tools_one_format(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert 0 == main(["tools", "--format", "apply_patch"])

        (only,) = json.loads(capsys.readouterr().out)
        assert "apply_patch" == only["function"]["name"]

    def test_prompt(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert 0 == main(["prompt", "--format", "udiff"])

        assert GUIDES[0].prompt == capsys.readouterr().out

    def test_unknown_format_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert 2 == main(["prompt", "--format", "nope"])
        assert 2 == main(["tools", "--flavor", "gemini"])


AGENTS_MD = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
FORMAT_TABLE = re.compile(
    r"(<!-- format-tools:begin -->\n)(.*?)(<!-- format-tools:end -->)", re.DOTALL
)


def format_table() -> str:
    """The format tools as docs/agents.md lists them, from the definitions themselves."""
    rows = ["| format | tool name | arguments |", "| --- | --- | --- |"]
    for guide in GUIDES:
        properties = guide.parameters["properties"]
        arguments = "; ".join(
            f"`{name}`" + (f": {spec['description']}" if "description" in spec else "")
            for name, spec in properties.items()
        )
        rows.append(f"| `{guide.format.value}` | `{guide.name}` | {arguments} |")
    return "\n".join(rows) + "\n"


class TestDocs:
    def test_format_table_is_current(self) -> None:
        """docs/agents.md's table of format tools is generated (PATCHSMITH_UPDATE_SNAPSHOTS=1)."""
        text = AGENTS_MD.read_text(encoding="utf-8")
        if os.environ.get("PATCHSMITH_UPDATE_SNAPSHOTS"):
            text = FORMAT_TABLE.sub(lambda m: m.group(1) + format_table() + m.group(3), text)
            AGENTS_MD.write_text(text, encoding="utf-8")

        found = FORMAT_TABLE.search(text)
        assert found is not None
        assert format_table() == found.group(2)
