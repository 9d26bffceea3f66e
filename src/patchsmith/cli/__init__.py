"""The `patchsmith` command: one module per subcommand, each with `register(subparsers)`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Subcommand modules, in the order `--help` lists them. Each defines
# `register(subparsers) -> None`, which adds its parser and sets `func`
# (a callable taking the parsed namespace and returning the exit code).
_COMMANDS: tuple[str, ...] = (
    "apply",
    "propose",
    "recipe",
    "fleet",
    "run_command",
    "verify",
    "schema",
    "log",
    "show",
    "replay",
    "tools",
    "judge",
    "freeze",
    "revert",
    "mcp",
)


def build_parser() -> argparse.ArgumentParser:
    import importlib

    from patchsmith import __version__

    parser = argparse.ArgumentParser(
        prog="patchsmith",
        description="Apply the edits language models write to a workspace, safely.",
    )
    parser.add_argument("--version", action="version", version=f"patchsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        module = importlib.import_module(f"patchsmith.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 applied, 1 refused, 2 usage error)."""
    # File names and texts may hold bytes that are not UTF-8 (kept as surrogate
    # escapes); print them escaped rather than fail after the work is done.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
