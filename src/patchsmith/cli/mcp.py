"""`patchsmith mcp`: serve the workspace's tools to an agent over the Model Context Protocol.

The SDK is imported here, inside `run`, and nowhere else on the way: the other
commands never pay for it, and without it installed this command says which extra
to install (exit 2).
"""

from __future__ import annotations

import argparse
import os
import sys

from patchsmith.cli._consent import add_trust_option, trust_of
from patchsmith.cli._output import EXIT_OK, EXIT_USAGE, missing_root, print_failures
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `mcp` subcommand."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve read/edit/verify tools to an agent over MCP (stdio or HTTP)",
        description="Serve the workspace's tools (read, edit, undo, verify, audit, revert, "
        "judge, freeze; `patchsmith tools --flavor mcp` prints them) over the Model Context "
        "Protocol. The root and its policy are fixed when the server starts. "
        "Needs the MCP SDK: pip install 'patchsmith[mcp]'. See docs/mcp.md.",
    )
    parser.add_argument("-C", dest="root", metavar="ROOT", default=".", help="the workspace root")
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default): the client starts the server; http: streamable HTTP at /mcp",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP: the address to listen on (default 127.0.0.1; any address but a loopback "
        "one needs --token)",
    )
    parser.add_argument(
        "--token",
        default=None,
        help="HTTP: the bearer token every request must carry (or set PATCHSMITH_MCP_TOKEN, which "
        "keeps it out of the process list); needed for a non-loopback --host",
    )
    parser.add_argument(
        "--allowed-host",
        dest="allowed_hosts",
        action="append",
        default=[],
        metavar="NAME",
        help="HTTP: also accept this Host (NAME or NAME:PORT) and its Origin; repeatable "
        "(loopback names and the bound address are always accepted)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        metavar="N",
        help="HTTP: the port (default 8000; 0 picks a free one, printed on stderr)",
    )
    parser.add_argument(
        "--workspace-prefix",
        default="/workspace",
        metavar="DIR",
        help="absolute paths under DIR name files under ROOT (default /workspace; '' for none)",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="keep no audit record of the attempts"
    )
    add_trust_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when the client disconnects or the process is stopped."""
    missing = missing_root("mcp", args.root, as_json=False)
    if missing is not None:
        return missing
    if not 0 <= args.port <= 65535:
        return _usage(f"--port {args.port} is not a port (0 to 65535)")
    from patchsmith.mcp.httpguard import TOKEN_ENV, check_binding

    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if args.transport == "http":
        refused = check_binding(args.host, token)
        if refused is not None:
            print_failures("mcp", [refused])
            return EXIT_USAGE
    try:
        from patchsmith.mcp.server import Transport, serve
    except ImportError as exc:
        return _usage(
            f"the MCP SDK is not installed ({exc.name or exc})",
            hint="pip install 'patchsmith[mcp]'",
        )
    from patchsmith.mcp.toolbox import Toolbox

    try:
        toolbox = Toolbox(
            args.root,
            workspace_prefix=args.workspace_prefix or None,
            record=False if args.no_record else None,
            trust=trust_of(args),
        )
    except PatchRefused as refusal:
        print_failures("mcp", refusal.failures)
        return EXIT_USAGE
    try:
        serve(
            toolbox,
            transport=Transport(args.transport),
            host=args.host,
            port=args.port,
            announce=_announce,
            token=token,
            extra_hosts=args.allowed_hosts,
        )
    except OSError as exc:  # the port is taken, the address is not this machine's
        return _usage(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _announce(url: str) -> None:
    sys.stderr.write(f"patchsmith mcp: serving {url}\n")
    sys.stderr.flush()


def _usage(message: str, *, hint: str | None = None) -> int:
    print_failures("mcp", [PatchFailure(FailureCode.INVALID_ARGUMENTS, message, hint=hint)])
    return EXIT_USAGE
