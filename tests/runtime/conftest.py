"""Fixtures for runtime tests: temp workspaces built from `{path: bytes}`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

MakeTree = Callable[[Mapping[str, bytes | tuple[bytes, int]]], Path]


@pytest.fixture(name="make_workspace")
def _make_workspace(tmp_path: Path) -> MakeTree:
    """Build a fresh workspace directory from `{path: bytes | (bytes, mode)}`; returns its root."""
    counter = iter(range(1_000_000))

    def build(files: Mapping[str, bytes | tuple[bytes, int]]) -> Path:
        return make_tree(tmp_path / f"ws{next(counter)}", files)

    return build
