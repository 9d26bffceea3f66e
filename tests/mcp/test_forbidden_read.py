"""`read_file` and `view` refuse a path the policy forbids: its content never reaches the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.workspace_snapshot import make_tree

from patchsmith.errors import FailureCode
from patchsmith.mcp.toolbox import Toolbox

SECRET = "sk_live_" + "51HxQe2eZvKYlo2C0123456789abcdef"
POLICY = b'[policy]\nforbidden = [".env", "secrets/**"]\n'


@pytest.fixture(name="root")
def _root(tmp_path: Path) -> Path:
    root = make_tree(
        tmp_path / "repo",
        {
            "patchsmith.toml": POLICY,
            ".env": f"STRIPE_KEY={SECRET}\nDEBUG=visible-setting\n".encode(),
            "secrets/prod.txt": f"{SECRET}\n".encode(),
            "app.py": b"print('hi')\n",
        },
    )
    os.symlink(".env", root / "settings.txt")  # a link to a forbidden file is forbidden too
    return root


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        ("read_file", ".env"),
        ("read_file", "/workspace/.env"),
        ("read_file", "secrets/prod.txt"),
        ("read_file", "settings.txt"),
        ("view", ".env"),
        ("view", "secrets/prod.txt"),
    ],
)
def test_a_forbidden_file_is_refused(root: Path, tool: str, path: str) -> None:
    result = Toolbox(root).call(tool, {"path": path})

    assert result.is_error
    assert [e["code"] for e in result.content["errors"]] == [FailureCode.FORBIDDEN_PATH.value]
    assert SECRET not in result.text and SECRET not in str(result.content)


def test_other_files_still_read(root: Path) -> None:
    result = Toolbox(root).call("read_file", {"path": "app.py"})

    assert not result.is_error and result.text.endswith("1 | print('hi')")


def test_with_the_guard_off_the_file_reads(root: Path) -> None:
    (root / "patchsmith.toml").write_bytes(POLICY + b"[policy.guards]\nforbidden_paths = false\n")

    result = Toolbox(root).call("read_file", {"path": ".env"})

    assert not result.is_error and SECRET in result.text


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("str_replace", {"path": ".env", "old_str": "DEBUG=visible-settinx", "new_str": "X=1"}),
        ("insert", {"path": ".env", "insert_line": 99, "new_str": "X=1\n"}),
        (
            "apply",
            {"patch": "--- a/.env\n+++ b/.env\n@@ -2 +2 @@\n-DEBUG=visible-settinx\n+X=1\n"},
        ),
    ],
)
def test_a_refused_edit_of_a_forbidden_file_shows_none_of_its_lines(
    root: Path, tool: str, arguments: dict[str, object]
) -> None:
    result = Toolbox(root).call(tool, arguments)

    assert result.is_error
    assert "visible-setting" not in result.text + str(result.content)
    assert SECRET not in result.text + str(result.content)
