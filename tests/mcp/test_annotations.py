"""Each tool's annotations hold against what the tool does, shown through the SDK client.

`EFFECTS` is the table of what each tool can do, read off the code: the listed hints
must follow from it, and a demonstration per tool proves the strongest claim: a
read-only tool leaves the whole tree (store and git included) byte-identical, a
destructive one is shown deleting, an additive one keeps every line there was, and
an idempotent one changes nothing when called again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.mcp.conftest import APP, POLICY
from tests.pipeline.gitrepo import make_repo
from tests.workspace_snapshot import TreeSnapshot, snapshot_tree

from mcp import Client
from patchsmith.mcp.server import _Worker, build_server
from patchsmith.mcp.toolbox import Toolbox, tool_specs

READ, ADDS, REMOVES = "read-only", "adds", "removes"

EFFECTS = {
    "read_file": READ,
    "view": READ,
    "verify": READ,  # on a private copy: nothing the profile writes lands here
    "log": READ,
    "show": READ,
    "apply": REMOVES,  # a diff can delete a file
    "str_replace": REMOVES,
    "undo_edit": REMOVES,  # undoing a create deletes the file
    "str_replace_editor": REMOVES,
    "write_file": REMOVES,
    "propose": REMOVES,
    "run_recipe": REMOVES,
    "revert": REMOVES,  # reverting a create deletes the file
    "insert": ADDS,
    "create": ADDS,
    "judge": ADDS,  # a judgement in the store
    "freeze": ADDS,  # a branch and a commit
}

IDEMPOTENT = {"create", "write_file", "revert", "freeze"}

DELETE_NEW = "--- a/new.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"


def _proposal(run: str, patch: str) -> dict[str, Any]:
    return {
        "proposal_id": f"{run}-p1",
        "run_id": run,
        "attempt_no": 1,
        "strategy": "UNIFIED_DIFF",
        "objective": "add a module",
        "operations": [{"type": "patch", "format": "udiff", "text": patch}],
    }


ADD_NEW = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n"


@pytest.fixture(name="git_repo")
def _git_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"app.py": APP, "patchsmith.toml": POLICY})


@pytest.fixture(name="worker")
def _worker(git_repo: Path) -> Iterator[_Worker]:
    worker = _Worker(Toolbox(git_repo, trust=True))
    try:
        yield worker
    finally:
        worker.close()


def _tree(root: Path) -> TreeSnapshot:
    return snapshot_tree(root, exclude=())


def test_the_table_covers_every_tool() -> None:
    assert sorted(EFFECTS) == sorted(spec.name for spec in tool_specs())


def test_listed_hints_follow_the_table(worker: _Worker) -> None:
    async def main() -> Any:
        async with Client(build_server(worker)) as client:
            return await client.list_tools()

    listed = {tool.name: tool for tool in anyio.run(main).tools}

    assert sorted(EFFECTS) == sorted(listed)
    for name, effect in EFFECTS.items():
        hints = listed[name].annotations
        assert hints is not None
        assert (effect == READ) is hints.read_only_hint, name
        assert (effect == REMOVES) is hints.destructive_hint, name
        assert (effect == READ or name in IDEMPOTENT) is hints.idempotent_hint, name
        assert hints.open_world_hint is False
        assert listed[name].output_schema is not None, name


def test_read_only_tools_leave_the_tree_byte_identical(git_repo: Path, worker: _Worker) -> None:
    """Including verify, whose profile imports app.py (a `__pycache__/` if run in place)."""

    async def main() -> None:
        async with Client(build_server(worker)) as client:
            applied = await client.call_tool("create", {"path": "b.py", "file_text": "y = 2\n"})
            attempt = applied.structured_content["attempt_id"]
            before = _tree(git_repo)
            for name, arguments in [
                ("read_file", {"path": "app.py"}),
                ("view", {"path": "."}),
                ("view", {"path": "app.py", "view_range": [1, 2]}),
                ("verify", {"base": None}),
                ("verify", {"base": "HEAD"}),
                ("log", {}),
                ("show", {"id": attempt}),
                ("str_replace_editor", {"command": "view", "path": "app.py"}),
            ]:
                result = await client.call_tool(name, arguments)
                assert result.structured_content is not None, name
                assert before == _tree(git_repo), name

    anyio.run(main)
    assert not (git_repo / "__pycache__").exists()


def test_removing_tools_are_shown_removing(git_repo: Path, worker: _Worker) -> None:
    """apply, undo_edit and revert each delete a file; write_file drops lines."""

    async def main() -> None:
        async with Client(build_server(worker)) as client:
            await client.call_tool("create", {"path": "new.py", "file_text": "x = 1\n"})
            assert not (await client.call_tool("apply", {"patch": DELETE_NEW})).is_error
            assert not (git_repo / "new.py").exists()

            await client.call_tool("create", {"path": "new.py", "file_text": "x = 1\n"})
            assert not (await client.call_tool("undo_edit", {"path": "new.py"})).is_error
            assert not (git_repo / "new.py").exists()

            made = await client.call_tool("create", {"path": "new.py", "file_text": "x = 1\n"})
            attempt = made.structured_content["attempt_id"]
            assert not (await client.call_tool("revert", {"id": attempt})).is_error
            assert not (git_repo / "new.py").exists()

    anyio.run(main)


def test_additive_tools_keep_every_line(git_repo: Path, worker: _Worker) -> None:
    """insert and create only add; judge and freeze leave the working files alone."""

    def lines(snapshot: TreeSnapshot) -> dict[str, list[bytes]]:
        return {
            path: data.splitlines()
            for path, data in snapshot.files().items()
            if not path.startswith((".git/", ".patchsmith/"))
        }

    async def main() -> None:
        async with Client(build_server(worker)) as client:
            applied = await client.call_tool(
                "propose", {"proposal": json.dumps(_proposal("run-1", ADD_NEW))}
            )
            assert not applied.is_error, applied.content
            for name, arguments in [
                ("insert", {"path": "app.py", "insert_line": 0, "new_str": "import os\n"}),
                ("create", {"path": "c.py", "file_text": "z = 3\n"}),
                ("judge", {"subject": "run-1"}),
                ("freeze", {"run_id": "run-1"}),
            ]:
                before = lines(_tree(git_repo))
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                after = lines(_tree(git_repo))
                for path, old in before.items():
                    kept = iter(after[path])
                    assert all(line in kept for line in old), (name, path)

    anyio.run(main)


def test_idempotent_tools_add_nothing_the_second_time(git_repo: Path, worker: _Worker) -> None:
    async def main() -> None:
        async with Client(build_server(worker)) as client:
            proposed = await client.call_tool(
                "propose", {"proposal": json.dumps(_proposal("run-2", ADD_NEW))}
            )
            attempt = proposed.structured_content["attempt_id"]
            read = await client.call_tool("read_file", {"path": "app.py"})
            sha = read.structured_content["sha256"]
            for name, arguments in [
                ("create", {"path": "d.py", "file_text": "w = 4\n"}),
                (
                    "write_file",
                    {
                        "path": "app.py",
                        "content": "v = 5\n",
                        "expected_sha256": sha,
                        "full_rewrite": True,
                    },
                ),
                ("freeze", {"run_id": "run-2"}),
                ("revert", {"id": attempt}),
            ]:
                await client.call_tool(name, arguments)
                once = _tree(git_repo).files()
                await client.call_tool(name, arguments)
                twice = _tree(git_repo).files()
                worked = {p: d for p, d in once.items() if not p.startswith(".patchsmith/")}
                assert worked == {
                    p: d for p, d in twice.items() if not p.startswith(".patchsmith/")
                }, name

    anyio.run(main)
