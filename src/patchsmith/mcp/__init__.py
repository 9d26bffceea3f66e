"""The MCP server: patchsmith's tools for any coding agent that speaks the Model Context Protocol.

`patchsmith mcp -C ROOT` serves them over stdio (or `--transport http`). From Python,
`Toolbox(root)` offers the same tools as plain calls (`Toolbox.call(name, arguments)`)
without the SDK, and `serve(toolbox)` runs the server; only `serve` needs the optional
`mcp` SDK (`pip install 'patchsmith[mcp]'`). docs/mcp.md describes every tool.

Layer (docs/architecture.md): may import the workflows and everything below them; only `cli`
imports it, and it never imports `fleet`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchsmith.mcp.results import ToolResult
    from patchsmith.mcp.server import Transport, serve
    from patchsmith.mcp.toolbox import DEFAULT_PREFIX, Toolbox, ToolSpec

__all__ = ["DEFAULT_PREFIX", "ToolResult", "ToolSpec", "Toolbox", "Transport", "serve"]

# Loaded on first use: the toolbox pulls in pydantic and the guards, the server the SDK.
_HOME = {
    "DEFAULT_PREFIX": "patchsmith.mcp.toolbox",
    "ToolResult": "patchsmith.mcp.results",
    "ToolSpec": "patchsmith.mcp.toolbox",
    "Toolbox": "patchsmith.mcp.toolbox",
    "Transport": "patchsmith.mcp.server",
    "serve": "patchsmith.mcp.server",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'patchsmith.mcp' has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
