"""One agent session, driven through any MCP client: edit, refusal, repair, undo, verify.

Shared by the stdio, HTTP and in-process tests so every transport is held to the same
behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.conftest import APP, SLOPPY_PATCH, STALE_PATCH, excerpt_line, numbered

from mcp import Client

TOOLS = {
    "read_file",
    "view",
    "apply",
    "str_replace",
    "insert",
    "create",
    "undo_edit",
    "str_replace_editor",
    "write_file",
    "propose",
    "run_recipe",
    "verify",
    "log",
    "show",
    "revert",
    "judge",
    "freeze",
}


def _structured(result: Any) -> dict[str, Any]:
    content = result.structured_content
    assert isinstance(content, dict)
    return content


async def drive(client: Client, repo: Path) -> None:
    """The whole session; asserts on the workspace after every step."""
    listed = await client.list_tools()
    names = {tool.name for tool in listed.tools}
    assert TOOLS == names
    assert all(tool.input_schema.get("type") == "object" for tool in listed.tools)

    # read and view, with the editor family's absolute paths
    read = await client.call_tool("read_file", {"path": "/workspace/app.py"})
    assert not read.is_error
    assert APP.decode().splitlines() == [line[4:] for line in numbered(read)]
    listing = await client.call_tool("view", {"path": "/workspace"})
    assert ["app.py", "patchsmith.toml"] == _structured(listing)["entries"]

    # verification fails before the fix
    before = await client.call_tool("verify", {"base": None})
    assert before.is_error
    assert "failed" == _structured(before)["status"]

    # a sloppy patch (prose, fence, wrong line numbers) applies by content
    applied = await client.call_tool("apply", {"patch": SLOPPY_PATCH})
    assert not applied.is_error, applied.content[0].text
    assert 'return f"Hello, {name}!"' in (repo / "app.py").read_text()

    # a stale edit is refused with the real lines, and nothing is written
    fixed = (repo / "app.py").read_bytes()
    refused = await client.call_tool("apply", {"patch": STALE_PATCH})
    assert refused.is_error
    error = _structured(refused)["errors"][0]
    assert "PATCH_CONTEXT_MISMATCH" == error["code"]
    assert fixed == (repo / "app.py").read_bytes()

    # the repair copies the real line from the excerpt
    real = excerpt_line(error["excerpt"], "return")
    repaired = await client.call_tool(
        "str_replace",
        {"path": "/workspace/app.py", "old_str": real, "new_str": '    return f"Bye, {name}."'},
    )
    assert not repaired.is_error, repaired.content[0].text
    assert 'return f"Bye, {name}."' in (repo / "app.py").read_text()

    # undo takes back the repair only
    undone = await client.call_tool("undo_edit", {"path": "/workspace/app.py"})
    assert not undone.is_error, undone.content[0].text
    assert fixed == (repo / "app.py").read_bytes()

    # verification passes after the fix
    after = await client.call_tool("verify", {"base": None})
    assert not after.is_error, after.content[0].text
    assert "passed" == _structured(after)["status"]

    # no path leaves the workspace
    for path in ("/etc/passwd", "../outside.txt", "/workspace/../outside.txt"):
        escaped = await client.call_tool("create", {"path": path, "file_text": "x\n"})
        assert escaped.is_error
        assert "PATH_OUTSIDE_WORKSPACE" == _structured(escaped)["errors"][0]["code"]
    assert not (repo.parent / "outside.txt").exists()

    # every edit is in the audit store
    log = await client.call_tool("log", {"limit": 10})
    kinds = [a["kind"] for a in _structured(log)["attempts"]]
    assert ["write", "apply", "apply", "apply"] == kinds
