"""The layer rules of docs/decisions/0001: dependencies point down, and the engine does no I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "patchsmith"

# Each layer may import itself and the layers after it in this list, never one before it.
LAYERS = ["interfaces", "workflows", "runtime", "formats", "engine", "base"]

ENGINE_FORBIDDEN = {"os", "pathlib", "subprocess", "sqlite3", "shutil", "socket", "io", "tempfile"}


def _layer(module: str) -> str:
    parts = module.split(".")
    first = parts[1] if len(parts) > 1 else ""
    if first == "attempt" and len(parts) > 2:
        first = parts[2]
    if first in ("engine",):
        return "engine"
    if first in ("formats",):
        return "formats"
    if first in ("errors",):
        return "base"
    if first in (
        "policy",
        "runtime",
        "guards",
        "model",
        "policy",
        "_policy_schema",
        "proposal",
        "conditions",
        "store",
        "report",
        "_attempt",
        "evidence",
    ):
        return "runtime"
    if first in (
        "attempt",
        "api",
        "propose",
        "direct",
        "codemod",
        "commands",
        "verify",
        "pipeline",
        "fleet",
    ):
        return "workflows"
    return "interfaces"  # cli, the package façade


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append((".".join(parts), path))
    return found


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


MODULES = _modules()


class TestLayering:
    @pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
    def test_imports_point_down(self, module: str, path: Path) -> None:
        """A module imports only patchsmith modules of its own layer or lower ones."""
        own = LAYERS.index(_layer(module))
        upward = sorted(
            name
            for name in _imports(path)
            if name.startswith("patchsmith.") and LAYERS.index(_layer(name)) < own
        )

        assert [] == upward

    @pytest.mark.parametrize(
        ("module", "path"),
        [(m, p) for m, p in MODULES if m.startswith("patchsmith.engine")],
        ids=[m for m, _ in MODULES if m.startswith("patchsmith.engine")],
    )
    def test_engine_does_no_io(self, module: str, path: Path) -> None:
        """Engine modules import nothing that touches files, processes or the network."""
        used = {name.split(".")[0] for name in _imports(path)}

        assert set() == used & ENGINE_FORBIDDEN
