"""Loading the parity goldens from `../shared/parity/` (relative to the repository root).

The goldens are shared, read-only material outside the repository; when they
are absent, every parametrised parity test is one skipped case saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PARITY_DIR = Path(__file__).resolve().parent.parent / ".." / "shared" / "parity"
"""`../shared/parity/` from the repository root."""


def load_golden(name: str) -> Any | None:
    """The decoded JSON of golden file `name`, or None when it is absent."""
    path = PARITY_DIR / name
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _absent(name: str) -> list[Any]:
    reason = f"parity golden ../shared/parity/{name} not found (shared material absent)"
    return [pytest.param(None, id="golden-absent", marks=pytest.mark.skip(reason=reason))]


def golden_cases(name: str, ident: Callable[[int, dict[str, Any]], str]) -> list[Any]:
    """One `pytest.param` per record of a list golden, with the id `ident(index, record)`."""
    data = load_golden(name)
    if data is None:
        return _absent(name)
    return [pytest.param(record, id=ident(i, record)) for i, record in enumerate(data)]


def semantics_cases(name: str = "js_semantics.json") -> list[Any]:
    """One `pytest.param((primitive, record))` per record of the js_semantics golden."""
    data = load_golden(name)
    if data is None:
        return _absent(name)
    return [
        pytest.param((primitive, record), id=f"{primitive}/{i}")
        for primitive, records in data.items()
        for i, record in enumerate(records)
    ]


def by_name(_index: int, record: dict[str, Any]) -> str:
    """The record's `name` as its test id."""
    return str(record["name"])
