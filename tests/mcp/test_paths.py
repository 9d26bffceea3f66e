"""`map_path`: editor-tool absolute paths under the prefix become workspace-relative ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.mcp.paths import ROOT, map_path

BASES = ("/workspace", "/srv/repo")


class TestMapPath:
    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ("src/app.py", "src/app.py"),
            ("/workspace/src/app.py", "src/app.py"),
            ("/workspace//src/app.py", "src/app.py"),
            ("/srv/repo/app.py", "app.py"),
            ("/workspace", ROOT),
            ("/workspace/", ROOT),
            ("\\workspace\\app.py", "app.py"),
            ("/workspace/../etc/passwd", "../etc/passwd"),
        ],
    )
    def test_mapped(self, given: str, expected: str) -> None:
        """Relative paths pass unchanged; a prefix is stripped (the workspace checks `..` later)."""
        assert expected == map_path(given, BASES)

    @pytest.mark.parametrize("given", ["/etc/passwd", "/workspacex/app.py", "/", "//host/share"])
    def test_refused(self, given: str) -> None:
        """An absolute path under no base is PATH_OUTSIDE_WORKSPACE, naming the prefix."""
        refused = map_path(given, BASES)

        assert isinstance(refused, PatchFailure)
        assert FailureCode.PATH_OUTSIDE_WORKSPACE == refused.code
        assert refused.hint is not None and "/workspace/" in refused.hint

    def test_no_bases(self) -> None:
        """Without a prefix every absolute path is refused."""
        assert isinstance(map_path("/workspace/a", ()), PatchFailure)

    @given(st.text(min_size=1))
    def test_never_absolute(self, path: str) -> None:
        """Whatever comes in, what goes out is relative or a refusal."""
        mapped = map_path(path, BASES)

        assert isinstance(mapped, PatchFailure) or not mapped.replace("\\", "/").startswith("/")
