"""Through the SDK client: whole-file rewrites, bounded views, finishing a run, tool names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.mcp.conftest import APP, POLICY, numbered
from tests.pipeline.gitrepo import git, make_repo

from mcp import Client
from patchsmith.cli import main
from patchsmith.mcp.arguments import DEFAULT_MAX_CHARS
from patchsmith.mcp.server import _Worker, build_server
from patchsmith.mcp.toolbox import Toolbox

BIG = "".join(f"value_{n} = {n}  # a line of a long module\n" for n in range(2000))


@pytest.fixture(name="git_repo")
def _git_repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo", {"app.py": APP, "big.py": BIG.encode(), "patchsmith.toml": POLICY}
    )


@pytest.fixture(name="worker")
def _worker(git_repo: Path) -> Iterator[_Worker]:
    worker = _Worker(Toolbox(git_repo))
    try:
        yield worker
    finally:
        worker.close()


def _session(worker: _Worker, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_server(worker)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


class TestFullRewrite:
    def test_a_shrink_needs_full_rewrite(self, git_repo: Path, worker: _Worker) -> None:
        """write_file refuses the shrink with a hint naming full_rewrite, then takes it."""
        sha = json.loads(
            json.dumps(_session(worker, ("read_file", {"path": "big.py"}))[0].structured_content)
        )["sha256"]
        args = {"path": "big.py", "content": "value = 1\n", "expected_sha256": sha}

        refused, written = _session(
            worker, ("write_file", args), ("write_file", {**args, "full_rewrite": True})
        )

        error = refused.structured_content["errors"][0]
        assert "LARGE_REMOVAL" == error["code"]
        assert "full_rewrite" in error["hint"]
        assert not written.is_error, written.content
        assert "value = 1\n" == (git_repo / "big.py").read_text()

    def test_apply_takes_full_rewrite(self, git_repo: Path, worker: _Worker) -> None:
        reply = "big.py\n```python\nvalue = 1\n```\n"
        args = {"patch": reply, "format": "whole_file"}

        refused, applied = _session(
            worker, ("apply", args), ("apply", {**args, "full_rewrite": True})
        )

        assert ["LARGE_REMOVAL"] == [e["code"] for e in refused.structured_content["errors"]]
        assert not applied.is_error, applied.content
        assert "value = 1\n" == (git_repo / "big.py").read_text()


class TestBoundedViews:
    def test_default_cap_and_a_note_to_read_on(self, worker: _Worker) -> None:
        (viewed,) = _session(worker, ("view", {"path": "big.py"}))

        text = viewed.content[0].text
        assert len(text) <= DEFAULT_MAX_CHARS + 400
        assert viewed.structured_content["truncated"] is True
        last = viewed.structured_content["end_line"]
        assert f"view_range [{last + 1}, -1]" in text
        assert "content" not in viewed.structured_content
        assert BIG not in json.dumps(viewed.structured_content)

    def test_reading_on_from_the_note(self, worker: _Worker) -> None:
        first, rest = _session(
            worker,
            ("read_file", {"path": "big.py", "max_chars": 500}),
            ("read_file", {"path": "big.py", "view_range": [1990, -1]}),
        )

        assert first.structured_content["truncated"] is True
        assert len(first.content[0].text) < 700
        assert not rest.structured_content["truncated"]
        assert 11 == len(numbered(rest))
        assert numbered(rest)[-1].startswith("2000 | value_1999 = 1999")

    def test_one_long_line_is_cut_and_says_so(self, git_repo: Path, worker: _Worker) -> None:
        (git_repo / "wide.txt").write_text("x" * 50_000 + "\nend\n")

        (viewed,) = _session(worker, ("view", {"path": "wide.txt", "max_chars": 1000}))

        assert "line cut at" in viewed.content[0].text
        assert len(viewed.content[0].text) < 1500
        assert "view_range [2, -1]" in viewed.content[0].text
        assert "a larger max_chars shows line 1 whole" in viewed.content[0].text

    def test_a_cut_line_alone_names_max_chars_only(self, git_repo: Path, worker: _Worker) -> None:
        (git_repo / "wide.txt").write_text("x" * 5_000 + "\n")

        (viewed,) = _session(
            worker, ("view", {"path": "wide.txt", "view_range": [1, 1], "max_chars": 100})
        )

        assert "a larger max_chars" in viewed.content[0].text
        assert "view_range [" not in viewed.content[0].text


class TestFinishingARun:
    def test_revert_judge_freeze(self, git_repo: Path, worker: _Worker) -> None:
        proposal = {
            "proposal_id": "r-p1",
            "run_id": "run-9",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "add a module",
            "operations": [
                {
                    "type": "patch",
                    "format": "udiff",
                    "text": "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
                }
            ],
        }
        proposed, judged, frozen, unknown = _session(
            worker,
            ("propose", {"proposal": proposal}),
            ("judge", {"subject": "run-9", "kind": "run"}),
            ("freeze", {"run_id": "run-9", "branch": "candidate"}),
            ("judge", {"subject": "no-such-run"}),
        )
        attempt = proposed.structured_content["attempt_id"]
        reverted, again = _session(
            worker, ("revert", {"id": attempt}), ("revert", {"id": attempt[:12]})
        )

        assert not proposed.is_error, proposed.content
        assert judged.structured_content["kind"] == "run"
        assert judged.structured_content["verdict"] in {"pass", "warn", "fail"}
        assert ["new.py"] == frozen.structured_content["files"]
        assert "candidate" == frozen.structured_content["branch"]
        assert "+x = 1" in git(git_repo, "show", "candidate", "--", "new.py")
        assert unknown.is_error
        assert "RECORD_NOT_FOUND" == unknown.structured_content["errors"][0]["code"]
        assert not reverted.is_error, reverted.content
        assert not (git_repo / "new.py").exists()
        assert "already_applied" == again.structured_content["status"]


class TestToolNames:
    def test_cli_lists_the_servers_tools(
        self, worker: _Worker, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`patchsmith tools --flavor mcp` prints what tools/list serves, name for name."""

        async def listed() -> Any:
            async with Client(build_server(worker)) as client:
                return await client.list_tools()

        served = anyio.run(listed).tools
        assert 0 == main(["tools", "--flavor", "mcp"])
        printed = json.loads(capsys.readouterr().out)

        assert [t.name for t in served] == [t["name"] for t in printed]
        for tool, definition in zip(served, printed, strict=True):
            assert tool.input_schema == definition["inputSchema"]
            assert tool.output_schema == definition["outputSchema"]

    @pytest.mark.parametrize(
        ("format", "name"),
        [("udiff", "apply"), ("whole_file", "write_file"), ("str_replace", "str_replace_editor")],
    )
    def test_one_format(self, format: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
        assert 0 == main(["tools", "--flavor", "mcp", "--format", format])

        assert [name] == [t["name"] for t in json.loads(capsys.readouterr().out)]


class TestProgress:
    """propose and run_recipe report their steps to a client that asks for progress."""

    @staticmethod
    def _steps(worker: _Worker, name: str, arguments: dict[str, Any]) -> tuple[Any, list[str]]:
        steps: list[str] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            steps.append(message or "")

        async def run() -> Any:
            async with Client(build_server(worker)) as client:
                return await client.call_tool(name, arguments, progress_callback=progress)

        return anyio.run(run), steps

    def test_propose_reports_its_verification(self, git_repo: Path) -> None:
        fix = (
            "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
            '-    return "Hello, " + name\n+    return f"Hello, {name}!"\n'
        )
        proposal = {
            "proposal_id": "p-progress",
            "run_id": "run-progress",
            "attempt_no": 1,
            "strategy": "UNIFIED_DIFF",
            "objective": "greet with an exclamation mark",
            "operations": [{"type": "patch", "format": "udiff", "text": fix}],
            "verification_plan": {"profile": "greeting"},
        }
        worker = _Worker(Toolbox(git_repo, trust=True))
        try:
            result, steps = self._steps(worker, "propose", {"proposal": proposal})
        finally:
            worker.close()

        assert not result.is_error, result.content
        assert any("greeting" in step for step in steps), steps

    def test_run_recipe_reports_its_steps(self, git_repo: Path, worker: _Worker) -> None:
        (git_repo / "log.py").write_bytes(b"import logging\n\nlogging.warn('x')\n")

        result, steps = self._steps(worker, "run_recipe", {"recipe": "logging-warn-to-warning"})

        assert not result.is_error, result.content
        assert steps and all("/" in step for step in steps), steps
