"""The layers of docs/architecture.md: a checked contract, no import cycle, a pure engine.

`lint-imports` (run by scripts/test.sh) checks the package against the contracts in
`pyproject.toml`; the tests here prove those contracts catch what they are meant to (a
generated package with one forbidden import fails them), that the package has no import
cycle, and that the tree is the one the docs draw.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "patchsmith"
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]

ENGINE_FORBIDDEN = {"os", "pathlib", "subprocess", "sqlite3", "shutil", "socket", "io", "tempfile"}


def _layer_lines() -> list[list[str]]:
    """The `layers` contract's lines, top first, each split into its sibling layers."""
    (contract,) = [c for c in CONFIG["contracts"] if c["type"] == "layers"]
    return [
        [part.strip() for part in line.replace(":", "|").split("|")] for line in contract["layers"]
    ]


LINES = _layer_lines()
LAYERS = [name for line in LINES for name in line]


_LINT = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


def _run_lint(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the contracts of the `pyproject.toml` in `cwd`."""
    return subprocess.run(
        [sys.executable, "-c", _LINT, "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def _lint(package_root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the project's contracts, over the `patchsmith` in `package_root`."""
    (package_root / "pyproject.toml").write_text(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return _run_lint(package_root, {**os.environ, "PYTHONPATH": str(package_root)})


def _skeleton(tmp_path: Path) -> Path:
    """A package named `patchsmith` with every layer, each importing a layer below it."""
    package = tmp_path / "patchsmith"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for line, below in zip(LINES, [*LINES[1:], None], strict=True):
        for layer in line:
            folder = package / layer
            folder.mkdir()
            (folder / "__init__.py").write_text(f"import patchsmith.{below[0]}\n" if below else "")
    # the one import the contract lets through, so its `ignore_imports` entry matches
    (package / "mcp" / "server.py").write_text("import patchsmith\n")
    # the codemod dispatcher and its backends, which register into a table below it
    (package / "codemod" / "transform.py").write_text("import patchsmith.codemod.backends\n")
    (package / "codemod" / "backends").mkdir()
    (package / "codemod" / "backends" / "__init__.py").write_text("")
    return tmp_path


class TestContracts:
    def test_the_package_keeps_them(self) -> None:
        """The real package keeps every contract (as `scripts/test.sh` checks)."""
        done = _run_lint(ROOT)

        assert 0 == done.returncode, done.stdout + done.stderr

    def test_a_clean_skeleton_passes(self, tmp_path: Path) -> None:
        """Layers importing only downwards keep the contracts (so a failure below means it)."""
        done = _lint(_skeleton(tmp_path))

        assert 0 == done.returncode, done.stdout + done.stderr

    @pytest.mark.parametrize(
        ("module", "imports", "broken"),
        [
            ("engine/bad.py", "patchsmith.cli", "Nothing below the command line imports it"),
            ("engine/bad.py", "patchsmith.model", "The engine imports nothing of patchsmith"),
            ("verify/bad.py", "patchsmith.fleet", "Only the command line imports fleet runs"),
            ("model/bad.py", "patchsmith.runtime", "Layers point down"),
            ("fleet/bad.py", "patchsmith.mcp", "Layers point down"),
            ("errors/bad.py", "patchsmith.engine", "Layers point down"),
            ("codemod/backends/bad.py", "patchsmith.codemod.transform", "Codemod backends"),
        ],
    )
    def test_a_forbidden_import_fails(
        self, tmp_path: Path, module: str, imports: str, broken: str
    ) -> None:
        """One import against the rules makes `lint-imports` fail and name the contract."""
        root = _skeleton(tmp_path)
        (root / "patchsmith" / module).write_text(f"import {imports}\n")

        done = _lint(root)

        assert 1 == done.returncode, done.stdout + done.stderr
        broken_lines = [line for line in done.stdout.splitlines() if " BROKEN" in line]
        assert any(line.startswith(broken) for line in broken_lines), done.stdout


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


class TestNoCycle:
    def test_the_package_has_no_import_cycle(self) -> None:
        """No module reaches itself through imports, deferred ones included."""
        graph = grimp.build_graph("patchsmith", include_external_packages=False)

        assert [] == _cycles(graph)

    def test_a_cycle_is_found(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The finder sees a cycle through a deferred import (so the check above can fail)."""
        package = tmp_path / "cyclic"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "a.py").write_text("import cyclic.b\n")
        (package / "b.py").write_text("def f():\n    import cyclic.c\n")
        (package / "c.py").write_text("from cyclic import a\n")
        monkeypatch.syspath_prepend(str(tmp_path))

        graph = grimp.build_graph("cyclic", include_external_packages=False, cache_dir=None)

        assert [["cyclic.a", "cyclic.b", "cyclic.c"]] == _cycles(graph)


class TestTree:
    def test_the_root_holds_only_the_facade(self) -> None:
        """Every module lives in a layer's folder; the root keeps `__init__` and `__main__`."""
        assert ["__init__.py", "__main__.py"] == sorted(p.name for p in SRC.glob("*.py"))

    def test_every_folder_is_a_layer(self) -> None:
        """The folders are exactly the layers the contract orders."""
        folders = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file())

        assert sorted(LAYERS) == folders

    @pytest.mark.parametrize("layer", LAYERS)
    def test_every_layer_says_what_it_may_import(self, layer: str) -> None:
        """Each layer's `__init__` docstring names what it owns and what it may import."""
        tree = ast.parse((SRC / layer / "__init__.py").read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or ""

        assert "import" in doc and "docs/architecture.md" in doc, layer


def _engine_modules() -> list[Path]:
    return sorted((SRC / "engine").rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.stem)
def test_engine_does_no_io(path: Path) -> None:
    """Engine modules import nothing that touches files, processes or the network."""
    used = {name.split(".")[0] for name in _imports(path)}

    assert set() == used & ENGINE_FORBIDDEN
