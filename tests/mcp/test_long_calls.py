"""Long calls over stdio and streamable HTTP: reads answer while verify runs, progress
arrives, and a cancelled verify stops its programs.

The verify profile sleeps for 5 s under a unique marker in its argv, so the test can
see its process on the machine (in /proc) and see it gone after the cancel. Ordering
is asserted, not wall-clock time: the view's answer comes before verify's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.mcp.conftest import APP
from tests.mcp.test_transports import STARTUP_SECONDS, _announced_url, _server_argv
from tests.workspace_snapshot import make_tree

from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")

SLEEP_SECONDS = 5
LIMIT_SECONDS = 60.0


@pytest.fixture(name="marker")
def _marker() -> str:
    return f"patchsmith-slow-{uuid.uuid4().hex}"


@pytest.fixture(name="slow_repo")
def _slow_repo(tmp_path: Path, marker: str) -> Path:
    """A trusted repository (under pytest's basetemp): `slow` sleeps 5 s, `stuck` 10 minutes."""
    sleep = "import sys, time; time.sleep(float(sys.argv[1]))"
    policy = f"""
[verify.slow]
argv = [{sys.executable!r}, "-c", "{sleep}", "{SLEEP_SECONDS}", "{marker}"]
kind = "test"
timeout_seconds = 60

[verify.stuck]
argv = [{sys.executable!r}, "-c", "{sleep}", "600", "{marker}"]
kind = "test"
timeout_seconds = 900
"""
    return make_tree(tmp_path / "repo", {"app.py": APP, "patchsmith.toml": policy.encode()})


def _running(marker: str) -> bool:
    """Whether a process whose command line holds `marker` exists on this machine."""
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if needle in handle.read():
                    return True
        except OSError:
            continue
    return False


async def _until(condition: Any, what: str) -> None:
    with anyio.fail_after(LIMIT_SECONDS):
        while not condition():
            await anyio.sleep(0.05)


@pytest.fixture(name="http_server")
def _http_server(slow_repo: Path) -> Iterator[str]:
    process = subprocess.Popen(
        _server_argv(slow_repo, "--transport", "http", "--port", "0"),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield _announced_url(process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


@asynccontextmanager
async def _client(transport: str, repo: Path, url: str | None) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=_server_argv(repo)[1:], env={**os.environ}
        )
        async with Client(params, read_timeout_seconds=STARTUP_SECONDS) as client:
            yield client
    else:
        assert url is not None
        async with Client(url, read_timeout_seconds=STARTUP_SECONDS) as client:
            yield client


@pytest.fixture(name="transport", params=["stdio", "http"])
def _transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(name="url")
def _url(transport: str, request: pytest.FixtureRequest) -> str | None:
    return str(request.getfixturevalue("http_server")) if transport == "http" else None


def test_view_answers_during_verify_and_progress_arrives(
    transport: str, slow_repo: Path, url: str | None, marker: str
) -> None:
    """A view sent while verify runs answers before it; verify reports its profile."""
    order: list[str] = []
    steps: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(message or "")

    async def main() -> None:
        async with _client(transport, slow_repo, url) as client:

            async def verify() -> None:
                result = await client.call_tool(
                    "verify", {"base": None, "profiles": ["slow"]}, progress_callback=progress
                )
                assert not result.is_error, result.content
                order.append("verify")

            async with anyio.create_task_group() as group:
                group.start_soon(verify)
                await _until(lambda: _running(marker), "the profile to start")
                viewed = await client.call_tool("view", {"path": "app.py"})
                assert not viewed.is_error
                order.append("view")

    anyio.run(main)

    assert ["view", "verify"] == order
    assert any("slow" in step for step in steps), steps


def test_cancel_stops_verify_and_its_process(
    transport: str, slow_repo: Path, url: str | None, marker: str
) -> None:
    """Cancelling a verify kills the profile's process (which would sleep 10 minutes)."""

    async def main() -> None:
        async with _client(transport, slow_repo, url) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "verify", {"base": None, "profiles": ["stuck"]})
                await _until(lambda: _running(marker), "the profile to start")
                group.cancel_scope.cancel()
            await _until(lambda: not _running(marker), "the profile to be killed")
            after = await client.call_tool("read_file", {"path": "app.py"})
            assert not after.is_error

    anyio.run(main)

    assert not _running(marker)
