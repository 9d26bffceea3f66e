"""The MCP server: `Toolbox` behind the official `mcp` SDK, over stdio or streamable HTTP.

Only this module imports the SDK, and only `patchsmith mcp` imports this module, so
`import patchsmith` and every other command never load it (docs/decisions/0023).
The SDK's low-level `Server` is used rather than its decorator framework: the input
schemas are the argument models' own, and a bad argument comes back as a
PatchFailure-shaped result the model can read, not as a protocol error.

Tool calls run on worker threads (`_Worker`): edits one at a time, reads beside them;
`verify`, `propose` and `run_recipe` report progress per step, and a cancelled call
stops the programs it runs.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from patchsmith.errors import PatchRefused
from patchsmith.mcp.httpguard import (
    BearerToken,
    allowed_hosts,
    allowed_origins,
    check_binding,
    is_loopback,
    is_wildcard,
)
from patchsmith.mcp.results import ToolResult
from patchsmith.mcp.toolbox import Toolbox, ToolSpec
from patchsmith.runtime.progress import watched

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["INSTRUCTIONS", "Transport", "build_server", "serve"]

INSTRUCTIONS = (
    "patchsmith edits this workspace as transactions: every edit is located by content, "
    "guarded, written all or nothing and recorded. Read a file first (read_file or view), "
    "then edit it (str_replace, insert, create, write_file, or apply for a diff or any other "
    "format). A refused edit changes nothing: the result names the problem and shows the "
    "file's real lines; resend the edit against them. undo_edit takes back your last edit "
    "of a file; verify runs the workspace's checks; revert, judge and freeze finish a run."
)
"""What the server tells a client about itself when it connects."""


class Transport(StrEnum):
    """How the server talks to its client."""

    STDIO = "stdio"
    """One client, which started the server, over the server's stdin and stdout."""
    HTTP = "http"
    """Streamable HTTP at `http://HOST:PORT/mcp`."""


_READERS = 4
"""Threads for the calls that run beside the edits (views, reads, verify)."""

_PROGRESS_SEND_SECONDS = 5.0


class _Worker:
    """Runs tool calls off the event loop, edits one at a time and reads beside them.

    Every call that writes, or uses the audit store, runs on one thread, which holds
    the process's one store connection (SQLite binds a connection to its thread): edits
    to the workspace are serialised. Calls that only read files (`view`, `read_file`,
    `verify`, which runs on a private copy) run on a small pool beside it, so a view
    sent during a long verify or propose answers at once. Each call can be cancelled:
    its programs are stopped (runtime/progress.py) and its answer dropped.
    """

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self._edits = ThreadPoolExecutor(max_workers=1, thread_name_prefix="patchsmith-edit")
        self._reads = ThreadPoolExecutor(max_workers=_READERS, thread_name_prefix="patchsmith-read")
        self._running: set[threading.Event] = set()
        self._stack = ExitStack()
        self._edits.submit(self._stack.enter_context, toolbox.keep_store_open()).result()
        self._beside = {spec.name for spec in toolbox.tools() if spec.beside_edits}

    def runs_beside_edits(self, name: str, arguments: Mapping[str, Any] | None) -> bool:
        """Whether the call only reads files (then it does not wait for a running edit)."""
        if name == "str_replace_editor":
            return (arguments or {}).get("command") == "view"
        return name in self._beside

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: Callable[[str], None] | None = None,
    ) -> ToolResult:
        """Run tool `name` on its thread; cancelling this coroutine stops the call's programs."""
        cancel = threading.Event()

        def run() -> ToolResult:
            with watched(progress, cancel):
                return self.toolbox.call(name, arguments)

        pool = self._reads if self.runs_beside_edits(name, arguments) else self._edits
        self._running.add(cancel)
        try:
            return await asyncio.wrap_future(pool.submit(run))
        finally:
            # Cancelled (or done): a program still running is stopped, none starts.
            cancel.set()
            self._running.discard(cancel)

    def close(self) -> None:
        for cancel in list(self._running):
            cancel.set()
        self._edits.submit(self._stack.close).result()
        self._edits.shutdown()
        self._reads.shutdown(cancel_futures=True)


def _tool(spec: ToolSpec) -> types.Tool:
    hints = spec.annotations()
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations(
            read_only_hint=bool(hints["readOnlyHint"]),
            destructive_hint=bool(hints["destructiveHint"]),
            idempotent_hint=bool(hints["idempotentHint"]),
            open_world_hint=bool(hints["openWorldHint"]),
        ),
    )


def _progress_sender(
    ctx: ServerRequestContext[Any], loop: asyncio.AbstractEventLoop
) -> Callable[[str], None]:
    """A reporter, called on a worker thread, sending each step as a progress notification."""
    sent = 0

    def send(step: str) -> None:
        nonlocal sent
        sent += 1
        future = asyncio.run_coroutine_threadsafe(
            ctx.session.report_progress(sent, None, step), loop
        )
        # Waiting keeps the notifications in order and all before the result.
        with suppress(Exception):
            future.result(_PROGRESS_SEND_SECONDS)

    return send


def build_server(worker: _Worker) -> Server[Any]:
    """The SDK server listing the toolbox's tools and forwarding each call to the worker."""
    from patchsmith import __version__

    tools = [_tool(spec) for spec in worker.toolbox.tools()]

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        progress = _progress_sender(ctx, asyncio.get_running_loop())
        result = await worker.call(params.name, params.arguments, progress)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=result.content,
            is_error=result.is_error,
        )

    return Server(
        "patchsmith",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(
    toolbox: Toolbox,
    *,
    transport: Transport = Transport.STDIO,
    host: str = "127.0.0.1",
    port: int = 8000,
    announce: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    token: str | None = None,
    extra_hosts: Sequence[str] = (),
) -> None:
    """Serve `toolbox` until the client goes away (stdio) or the process is stopped (HTTP).

    For HTTP, `port` 0 picks a free port; `announce` is called with the URL once the
    socket listens (connections wait until the server accepts them), and setting `stop`
    shuts the server down (for a server run on a thread of a larger program). Every
    request must carry `Authorization: Bearer <token>` when `token` is given, which a
    `host` other than a loopback address requires (`PatchRefused` otherwise); Host and
    Origin are checked on every binding, against the loopback names, the bound address
    and `extra_hosts`.
    """
    if transport is Transport.HTTP:
        failure = check_binding(host, token)
        if failure is not None:
            raise PatchRefused([failure])
    worker = _Worker(toolbox)
    try:
        server = build_server(worker)
        if transport is Transport.STDIO:
            asyncio.run(_serve_stdio(server))
        else:
            asyncio.run(
                _serve_http(server, host, port, announce or _stderr, stop, token, extra_hosts)
            )
    finally:
        worker.close()


async def _serve_stdio(server: Server[Any]) -> None:  # pragma: no cover - a subprocess in tests
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _serve_http(
    server: Server[Any],
    host: str,
    port: int,
    announce: Callable[[str], None],
    stop: threading.Event | None,
    token: str | None,
    extra_hosts: Sequence[str],
) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    # Host and Origin are checked whatever the binding (the SDK checks them on its own
    # only for the loopback names): DNS rebinding and cross-origin pages are refused.
    hosts = allowed_hosts(host, extra_hosts)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=allowed_origins(hosts),
    )
    app: Starlette = server.streamable_http_app(host=host, transport_security=security)
    asgi: Any = BearerToken(app, token) if token is not None else app
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else (host or "0.0.0.0")
    if not is_loopback(host):
        where = "every interface" if is_wildcard(host) else host
        _stderr(f"warning: listening on {where}: whoever reaches it with the token can edit files")
    http = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", lifespan="on"))
    announce(f"http://{shown}:{bound}/mcp")
    watcher = asyncio.create_task(_stop_when(stop, http)) if stop is not None else None
    try:
        await http.serve(sockets=[sock])
    finally:
        if watcher is not None:
            watcher.cancel()


async def _stop_when(stop: threading.Event, http: Any) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.05)
    http.should_exit = True


def _stderr(message: str) -> None:
    sys.stderr.write(f"patchsmith mcp: {message}\n")
    sys.stderr.flush()
