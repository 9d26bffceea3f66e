"""Loading the parity goldens: `../shared/parity/` when present, else the copy in `tests/data/`.

A golden missing from both is one skipped case saying so (only a renamed or
deleted file can cause that: the vendored copy ships with the repository).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.shared_data import parity_dir

PARITY_DIR = parity_dir()
"""`../shared/parity/` from the repository root, else `tests/data/parity/`."""


def load_golden(name: str) -> Any | None:
    """The decoded JSON of golden file `name`, or None when it is absent."""
    path = PARITY_DIR / name
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _absent(name: str) -> list[Any]:
    reason = f"parity golden {name} not found in {PARITY_DIR}"
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
