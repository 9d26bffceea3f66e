"""End to end: `patchsmith mcp` started as a process, driven through the SDK's client.

Over stdio (the client starts the server) and over streamable HTTP on 127.0.0.1 with a
port the server picks and announces; the same session runs on both (see scenario.py).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.mcp.scenario import drive

from mcp import Client, StdioServerParameters

STARTUP_SECONDS = 60.0
"""The longest a server may take to start (a loaded CI machine imports slowly)."""
SESSION_SECONDS = 120.0


def _server_argv(repo: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "patchsmith", "mcp", "-C", str(repo), *extra]


class TestStdio:
    def test_session(self, repo: Path) -> None:
        """A client that starts the server over stdio drives edit, refusal, repair, undo, verify."""
        params = StdioServerParameters(
            command=sys.executable,
            args=_server_argv(repo)[1:],
            env={**os.environ},
        )

        async def main() -> None:
            with anyio.fail_after(SESSION_SECONDS):
                async with Client(params, read_timeout_seconds=STARTUP_SECONDS) as client:
                    await drive(client, repo)

        anyio.run(main)


@pytest.fixture(name="http_url")
def _http_url(repo: Path) -> Iterator[str]:
    """A server on 127.0.0.1 with a free port; its announced URL."""
    process = subprocess.Popen(
        _server_argv(repo, "--transport", "http", "--port", "0"),
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


def _announced_url(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + STARTUP_SECONDS
    seen = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.5)
        if ready:
            line = process.stderr.readline()
            seen += line
            found = re.search(r"serving (http://\S+)", line)
            if found:
                return found.group(1)
            if not line and process.poll() is not None:
                break
    pytest.fail(f"the server did not announce its URL within {STARTUP_SECONDS} s:\n{seen}")


class TestStreamableHttp:
    def test_session(self, repo: Path, http_url: str) -> None:
        """A client over streamable HTTP drives the same session."""
        assert http_url.startswith("http://127.0.0.1:")

        async def main() -> None:
            with anyio.fail_after(SESSION_SECONDS):
                async with Client(http_url, read_timeout_seconds=STARTUP_SECONDS) as client:
                    await drive(client, repo)

        anyio.run(main)

    def test_legacy_handshake(self, repo: Path, http_url: str) -> None:
        """A client of the older initialize handshake lists and calls tools too."""

        async def main() -> None:
            with anyio.fail_after(SESSION_SECONDS):
                async with Client(http_url, mode="legacy") as client:
                    listed = await client.list_tools()
                    read = await client.call_tool("read_file", {"path": "app.py"})

            assert "read_file" in {tool.name for tool in listed.tools}
            assert not read.is_error

        anyio.run(main)
