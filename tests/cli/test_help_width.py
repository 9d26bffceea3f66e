"""The CLI's parsers size their help as argparse would, without importing `shutil`."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

import pytest

from patchsmith.cli import _columns, build_parser


@pytest.mark.parametrize("columns", [None, "37", "200", "0", "-3", "wide"])
def test_width_is_the_one_shutil_gives(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """COLUMNS when it is a positive number, else the terminal's, else 80."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)

    assert shutil.get_terminal_size().columns == _columns()


def test_help_wraps_at_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow COLUMNS wraps the help of the command and of `apply`'s subparser."""
    helps = {}
    for columns in ("40", "200"):
        monkeypatch.setenv("COLUMNS", columns)
        (subparsers,) = [
            a for a in build_parser("apply")._actions if isinstance(a, argparse._SubParsersAction)
        ]
        apply: argparse.ArgumentParser = subparsers.choices["apply"]
        helps[columns] = [build_parser().format_help(), apply.format_help()]

    for narrow, wide in zip(helps["40"], helps["200"], strict=True):
        # the options are wrapped to the width (a raw description keeps its own lines)
        assert len(narrow.splitlines()) > len(wide.splitlines()) + 10


def test_parsing_an_apply_command_loads_no_shutil() -> None:
    """Building `apply`'s parser and parsing its arguments leaves `shutil` unloaded."""
    code = (
        "import sys; from patchsmith.cli import build_parser; "
        "build_parser('apply').parse_args(['apply', 'r.md', '--check']); "
        "print('shutil' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert "False" == done.stdout.strip()
