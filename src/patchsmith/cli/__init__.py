"""The `patchsmith` command: one module per subcommand, each with `register(subparsers)`.

Layer (docs/architecture.md): the top; may import every layer, and no layer imports it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

__all__ = ["console", "main"]

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
    "select",
    "run",
    "schema",
    "log",
    "show",
    "replay",
    "tools",
    "judge",
    "freeze",
    "revert",
    "mcp",
    "trust",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with `only` (a command's name) the parser of that one command.

    Each subcommand module imports what its command needs, so `main` registers only the
    command it dispatches to: `patchsmith apply` never loads the store readers, the
    codemod registry or the verify profiles (docs/decisions/0022).
    """
    import importlib

    from patchsmith import __version__

    parser = _Parser(
        prog="patchsmith",
        description="Apply the edits language models write to a workspace, safely.",
    )
    parser.add_argument("--version", action="version", version=f"patchsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS if only is None else (command_module(only),) if only else ():
        module = importlib.import_module(f"patchsmith.cli.{name}")
        module.register(subparsers)
    return parser


class _Parser(argparse.ArgumentParser):
    """An `ArgumentParser` that sizes its help without `shutil` (its subparsers are `_Parser`s).

    argparse makes a help formatter for every `add_argument` (to check the metavar), and
    a formatter given no width imports `shutil` (with `bz2` and `lzma`, ~1.5 ms of a cold
    start) to ask the terminal's. `_columns` asks the same question of `os` directly.
    """

    def _get_formatter(self) -> argparse.HelpFormatter:
        # every HelpFormatter takes a width, though typeshed's factory type names only prog
        make: Callable[..., argparse.HelpFormatter] = self.formatter_class
        return make(prog=self.prog, width=_columns() - 2)  # 2 less, as argparse does


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size().columns` gives it."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (ValueError, OSError):
        return 80


# Commands registered by a module of another name.
_REGISTERED_BY = {"prompt": "tools"}


def command_module(command: str) -> str:
    """The module under `patchsmith.cli` that registers `command` (`run-command`: `run_command`)."""
    return _REGISTERED_BY.get(command, command.replace("-", "_"))


def _dispatched(argv: Sequence[str]) -> str | None:
    """The command `argv` names, `""` for `--version` alone, `None` for the whole parser.

    The top-level options take no value, so a command can only be the first word; help,
    an unknown option or an unknown command get the whole parser, whose help and errors
    list every command.
    """
    first = argv[0] if argv else "-"
    if first == "--version":
        return ""  # answered before any command is looked at
    if first.startswith("-") or "_" in first or command_module(first) not in _COMMANDS:
        return None
    return first


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 applied, 1 refused, 2 usage error)."""
    # File names and texts may hold bytes that are not UTF-8 (kept as surrogate
    # escapes); print them escaped rather than fail after the work is done.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_dispatched(words))
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = func(args)
    return code


def console(argv: Sequence[str] | None = None) -> int:
    """The `patchsmith` program: `main(argv)` in a process that ends when it returns.

    The installed command and `python -m patchsmith` call this, never `main` directly,
    and it tunes the garbage collector for a process that starts cold (docs/decisions/0022).
    A command makes most of its objects while importing (modules, classes, functions),
    and they live as long as the process: collecting at the default pace (every 700 new
    objects) only visits them again and again, and the interpreter's last collections
    on the way out visit each once more. So the first threshold is raised, as mypy does,
    far enough that a cold `apply` never collects, while a long command (a server, a
    fleet run) still collects every 50,000 new objects; and at the end everything is
    frozen (`gc.freeze`), left to reference counting. A caller of `main` keeps its
    collector as it was.
    """
    import gc

    gc.set_threshold(_FIRST_GC_THRESHOLD, *gc.get_threshold()[1:])
    code = main(argv)
    gc.freeze()
    return code


_FIRST_GC_THRESHOLD = 50_000
"""More objects than a cold `apply --check` makes (about 30,000); Python's default is 700."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console())
