"""Attacks through the CLI: every way out of the workspace is refused and nothing outside changes.

Each case runs `patchsmith apply` (and `patchsmith propose` with a direct write) on a
workspace that sits next to an `outside/` directory and a fake home directory; after
the refusal, both, and the workspace itself, are byte-identical.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.workspace_snapshot import TreeSnapshot, make_tree, snapshot_tree

import patchsmith.cli

CliRun = Callable[..., tuple[int, str, str]]

TRAVERSALS = [
    "../outside/victim.txt",
    "sub/../../outside/victim.txt",
    "..\\outside\\victim.txt",
    "sub\\..\\..\\outside\\victim.txt",
    "%2e%2e/outside/victim.txt",
    "..%2Foutside%2Fvictim.txt",
    "%252e%252e/outside/victim.txt",
    "ABSOLUTE",
    "~/victim.txt",
    "~root/victim.txt",
    "linkdir/victim.txt",
    ".git/hooks/pre-commit",
    ".GIT/hooks/pre-commit",
    "sub/../.git/config",
    ".patchsmith/patchsmith.db",
]


class Box:
    """A workspace next to `outside/` and a fake `home/`, with a symlinked dir pointing out."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = make_tree(
            tmp_path / "ws",
            {
                "a.py": b"x = 1\n",
                "sub/b.py": b"b = 1\n",
                ".git/hooks/pre-commit.sample": b"#!/bin/sh\n",
                ".git/config": b"[core]\n",
            },
        )
        self.outside = make_tree(tmp_path / "outside", {"victim.txt": b"victim\n"})
        self.home = make_tree(tmp_path / "home", {"victim.txt": b"home victim\n"})
        os.symlink(self.outside, self.root / "linkdir")

    def path(self, spelling: str) -> str:
        return str(self.outside / "victim.txt") if spelling == "ABSOLUTE" else spelling

    def snapshot(self) -> tuple[TreeSnapshot, TreeSnapshot, TreeSnapshot]:
        return snapshot_tree(self.root), snapshot_tree(self.outside), snapshot_tree(self.home)


@pytest.fixture(name="box")
def _box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Box:
    box = Box(tmp_path)
    monkeypatch.setenv("HOME", str(box.home))
    return box


@pytest.fixture(name="cli")
def _cli(capsys: pytest.CaptureFixture[str]) -> CliRun:
    """Run `patchsmith ARGS...` in-process; returns (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = patchsmith.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _patches(path: str) -> dict[str, str]:
    return {
        "udiff-create": f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+pwned\n",
        "udiff-update": f"--- a/{path}\n+++ b/{path}\n@@\n-victim\n+pwned\n",
        "envelope-add": f"*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch\n",
        "envelope-move": "*** Begin Patch\n*** Update File: a.py\n"
        f"*** Move to: {path}\n*** End Patch\n",
        "search-replace": f"{path}\n<<<<<<< SEARCH\nvictim\n=======\npwned\n>>>>>>> REPLACE\n",
        "str-replace": json.dumps({"command": "create", "path": path, "file_text": "pwned\n"}),
    }


def _refused_json(out: str) -> list[str]:
    data = json.loads(out)
    assert "refused" == data["status"]
    return [e["code"] for e in data["errors"]]


class TestTraversal:
    @pytest.mark.parametrize("spelling", TRAVERSALS)
    @pytest.mark.parametrize("kind", sorted(_patches("x")))
    def test_apply_refuses(
        self, cli: CliRun, box: Box, tmp_path: Path, spelling: str, kind: str
    ) -> None:
        """`patchsmith apply` refuses the path and nothing anywhere changes."""
        patch = tmp_path / "patch.txt"
        patch.write_text(_patches(box.path(spelling))[kind])
        before = box.snapshot()

        code, out, _ = cli("apply", str(patch), "-C", str(box.root), "--json")

        assert 1 == code
        # two search/replace spellings do not parse as a path at all: refused as malformed
        assert set(_refused_json(out)) <= {
            "PATH_OUTSIDE_WORKSPACE",
            "SYMLINK_ESCAPE",
            "MALFORMED_PATCH",
        }
        assert before == box.snapshot()

    @pytest.mark.parametrize("spelling", TRAVERSALS)
    def test_propose_direct_write_refuses(
        self, cli: CliRun, box: Box, tmp_path: Path, spelling: str
    ) -> None:
        """`patchsmith propose` with a direct write to the path is refused too."""
        proposal = {
            "proposal_id": "p",
            "run_id": "r",
            "attempt_no": 1,
            "strategy": "DIRECT_FILE_EDIT",
            "objective": "escape",
            "operations": [
                {
                    "type": "direct_write",
                    "path": box.path(spelling),
                    "content": "pwned\n",
                    "allow_create": True,
                }
            ],
        }
        path = tmp_path / "p.json"
        path.write_text(json.dumps(proposal))
        before = box.snapshot()

        code, out, _ = cli("propose", str(path), "-C", str(box.root), "--json")

        assert 1 == code
        assert set(_refused_json(out)) <= {
            "PATH_OUTSIDE_WORKSPACE",
            "SYMLINK_ESCAPE",
            "FILE_ALREADY_EXISTS",
        }
        assert before == box.snapshot()


class TestSymlinks:
    def test_patch_cannot_create_a_symlink(self, cli: CliRun, box: Box, tmp_path: Path) -> None:
        """A git diff with mode 120000 is refused; no link and no file appears."""
        patch = tmp_path / "patch.diff"
        patch.write_text(
            "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n"
            "@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n"
        )
        before = box.snapshot()

        code, out, _ = cli("apply", str(patch), "-C", str(box.root), "--json")

        assert (1, ["NOT_SUPPORTED_YET"]) == (code, _refused_json(out))
        assert before == box.snapshot()

    def test_symlink_then_write_through_it(self, cli: CliRun, box: Box, tmp_path: Path) -> None:
        """Creating a link and writing through it in one patch is refused as a whole."""
        patch = tmp_path / "patch.diff"
        patch.write_text(
            "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n"
            "@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n"
            "diff --git a/evil/victim.txt b/evil/victim.txt\nnew file mode 100644\n"
            "--- /dev/null\n+++ b/evil/victim.txt\n@@ -0,0 +1 @@\n+pwned\n"
        )
        before = box.snapshot()

        code, _, _ = cli("apply", str(patch), "-C", str(box.root))

        assert 1 == code
        assert before == box.snapshot()

    def test_symlinked_file_pointing_out(self, cli: CliRun, box: Box, tmp_path: Path) -> None:
        """A symlinked file whose target is outside is SYMLINK_ESCAPE."""
        os.symlink(box.outside / "victim.txt", box.root / "link.txt")
        patch = tmp_path / "patch.diff"
        patch.write_text("--- a/link.txt\n+++ b/link.txt\n@@\n-victim\n+pwned\n")
        before = box.snapshot()

        code, out, _ = cli("apply", str(patch), "-C", str(box.root), "--json")

        assert (1, ["SYMLINK_ESCAPE"]) == (code, _refused_json(out))
        assert before == box.snapshot()

    def test_check_mode_is_refused_too(self, cli: CliRun, box: Box, tmp_path: Path) -> None:
        """A dry run refuses the same way (exit 1) and writes nothing."""
        patch = tmp_path / "patch.diff"
        patch.write_text(_patches("../outside/victim.txt")["udiff-update"])
        before = box.snapshot()

        code, _, err = cli("apply", str(patch), "-C", str(box.root), "--check")

        assert 1 == code
        assert "PATH_OUTSIDE_WORKSPACE" in err
        assert before == box.snapshot()
