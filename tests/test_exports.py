"""The public surface: `patchsmith.__all__` is exactly what the package offers."""

from __future__ import annotations

import subprocess
import sys
import types

import patchsmith


class TestExportedMembers:
    def test_all_names_resolve(self) -> None:
        """Every name in `__all__` is importable from `patchsmith`."""
        missing = [name for name in patchsmith.__all__ if getattr(patchsmith, name, None) is None]

        assert [] == missing

    def test_all_is_sorted_and_unique(self) -> None:
        """`__all__` is sorted and names each object once."""
        assert sorted(set(patchsmith.__all__)) == list(patchsmith.__all__)

    def test_no_public_extras(self) -> None:
        """Public-looking attributes are in `__all__`, or are submodules (bound on import)."""
        extras = {
            name
            for name, value in vars(patchsmith).items()
            if not name.startswith("_")
            and name not in patchsmith.__all__
            and not isinstance(value, types.ModuleType)
        }

        assert set() == extras - {"annotations", "TYPE_CHECKING"}

    def test_import_is_cheap(self) -> None:
        """`import patchsmith` loads no tree-sitter, detect-secrets, sqlite3, pydantic or yaml."""
        code = (
            "import sys, patchsmith; "
            "heavy = ('tree_sitter', 'detect_secrets', 'sqlite3', 'pydantic', 'yaml', 'rich'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.strip()

        assert "[]" == out
