"""The MCP editor tools pass their origin: refusals name the next tool call, and `apply`
maps the server's workspace prefix inside the patch text."""

from __future__ import annotations

from pathlib import Path

from tests.workspace_snapshot import make_tree

from patchsmith.mcp.toolbox import Toolbox

SOURCE = b"def f():\n    x = 1\n\ndef g():\n    x = 1\n"


def test_str_replace_refusal_names_the_next_call(tmp_path: Path) -> None:
    """An ambiguous old_str: the lines are named and str_replace is called again, no reply."""
    box = Toolbox(make_tree(tmp_path / "ws", {"m.py": SOURCE}))

    result = box.call(
        "str_replace", {"path": "/workspace/m.py", "old_str": "    x = 1", "new_str": "    x = 2"}
    )

    assert result.is_error
    assert "at lines 2 and 5" in result.text
    assert "call str_replace again" in result.text
    assert "whole reply" not in result.text


def test_missing_file_suggests_create(tmp_path: Path) -> None:
    box = Toolbox(make_tree(tmp_path / "ws", {"m.py": SOURCE}))

    result = box.call("str_replace", {"path": "/workspace/n.py", "old_str": "x", "new_str": "y"})

    assert result.is_error and "call create" in result.text


def test_apply_maps_a_configured_prefix_in_the_patch(tmp_path: Path) -> None:
    """`--workspace-prefix /repo`: `*** Update File: /repo/m.py` names `m.py`."""
    root = make_tree(tmp_path / "ws", {"m.py": SOURCE})
    box = Toolbox(root, workspace_prefix="/repo")
    patch = (
        "*** Begin Patch\n*** Update File: /repo/m.py\n@@ def g():\n-    x = 1\n+    x = 2\n"
        "*** End Patch\n"
    )

    result = box.call("apply", {"patch": patch})

    assert not result.is_error, result.text
    assert (root / "m.py").read_bytes().endswith(b"def g():\n    x = 2\n")
