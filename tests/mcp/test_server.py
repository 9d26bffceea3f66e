"""The SDK server in this process: the in-memory client and streamable HTTP on a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.mcp.scenario import drive

from mcp import Client
from patchsmith.mcp.server import INSTRUCTIONS, Transport, _Worker, build_server, serve
from patchsmith.mcp.toolbox import Toolbox
from patchsmith.store import Store

SECONDS = 120.0


@pytest.fixture(name="worker")
def _worker(repo: Path) -> Iterator[_Worker]:
    worker = _Worker(Toolbox(repo))
    yield worker
    worker.close()


class TestInProcess:
    def test_session(self, repo: Path, worker: _Worker) -> None:
        """The SDK's in-memory client drives the whole session."""

        async def main() -> None:
            with anyio.fail_after(SECONDS):
                async with Client(build_server(worker)) as client:
                    await drive(client, repo)

        anyio.run(main)

    def test_annotations_and_instructions(self, worker: _Worker) -> None:
        """Reading tools say they are read-only; the server introduces itself."""

        async def main() -> tuple[dict[str, bool | None], str | None]:
            async with Client(build_server(worker), mode="legacy") as client:
                listed = await client.list_tools()
                hints = {
                    t.name: t.annotations.read_only_hint if t.annotations else None
                    for t in listed.tools
                }
                return hints, client.instructions

        hints, instructions = anyio.run(main)

        assert hints["read_file"] is True
        assert hints["apply"] is False
        assert INSTRUCTIONS == instructions

    def test_bad_arguments_are_results(self, worker: _Worker) -> None:
        """A call the schema refuses comes back as an error result with a PatchFailure."""

        async def main() -> object:
            async with Client(build_server(worker)) as client:
                return await client.call_tool("read_file", {"path": ["not", "a", "string"]})

        result = anyio.run(main)

        assert getattr(result, "is_error", False)
        content = getattr(result, "structured_content", {})
        assert "INVALID_ARGUMENTS" == content["errors"][0]["code"]

    def test_one_store_connection(self, repo: Path, worker: _Worker) -> None:
        """Every call runs on the worker thread, on one store connection."""

        async def main() -> None:
            async with Client(build_server(worker)) as client:
                await client.call_tool("str_replace", {"path": "app.py", "old_str": "Bye"})
                await client.call_tool("log", {})

        anyio.run(main)
        opened = worker._edits.submit(Store.open, worker.toolbox.state_dir()).result()
        again = worker._edits.submit(Store.open, worker.toolbox.state_dir()).result()

        assert opened._conn is not None
        assert opened._conn is again._conn


class TestHttpOnAThread:
    def test_session_and_stop(self, repo: Path) -> None:
        """serve() over HTTP on port 0 announces its URL and stops when asked."""
        urls: list[str] = []
        announced = threading.Event()
        stop = threading.Event()

        def announce(url: str) -> None:
            urls.append(url)
            announced.set()

        thread = threading.Thread(
            target=serve,
            args=(Toolbox(repo),),
            kwargs={"transport": Transport.HTTP, "port": 0, "announce": announce, "stop": stop},
            daemon=True,
        )
        thread.start()
        try:
            assert announced.wait(SECONDS)

            async def main() -> None:
                with anyio.fail_after(SECONDS):
                    async with Client(urls[0]) as client:
                        await drive(client, repo)

            anyio.run(main)
        finally:
            stop.set()
            thread.join(SECONDS)
        assert not thread.is_alive()
