"""Verification's private copies never write through to the real tree (dependency folders too)."""

from __future__ import annotations

import errno
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.sandboxing import needs_bwrap, take_bwrap_away
from tests.verify.conftest import CALC
from tests.workspace_snapshot import make_tree, snapshot_tree

import patchsmith.cli
from patchsmith import propose
from patchsmith.errors import FailureCode
from patchsmith.formats.script import Action
from patchsmith.model.evidence import Evidence, RunSide
from patchsmith.model.report import ApplyStatus
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.sandbox import usable_bwrap
from patchsmith.verify import trees, verify_changes
from patchsmith.verify.trees import apply_changes, copy_tree, dependency_mounts

PY = json.dumps(sys.executable)
LEFT_PAD = b"module.exports = (s) => s;\n"
TOOL = b"#!/bin/sh\necho tool\n"

# The tests fail after the change: verification refuses it.
PROFILES = f"""
[verify.tests]
argv = [{PY}, "-c", "import pkg.calc as c, sys; sys.exit(0 if c.add(2, 3) == 5 else 1)"]
kind = "test"
""".encode()


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path / "proj",
        {
            "pkg/__init__.py": b"",
            "pkg/calc.py": CALC,
            "patchsmith.toml": PROFILES,
            "node_modules/left-pad/index.js": LEFT_PAD,
            ".venv/bin/tool": (TOOL, 0o755),
            "venv/lib/site.py": b"x = 1\n",
        },
    )


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _proposal() -> dict[str, Any]:
    """Breaks `add`, edits a dependency and deletes a venv tool; verification fails."""
    return {
        "proposal_id": "p",
        "run_id": "r",
        "attempt_no": 1,
        "strategy": "DIRECT_FILE_EDIT",
        "objective": "break calc, touch dependencies",
        "operations": [
            {
                "type": "direct_write",
                "path": "pkg/calc.py",
                "content": CALC.replace(b"a + b", b"a - b").decode(),
                "expected_sha256": _sha(CALC),
            },
            {
                "type": "direct_write",
                "path": "node_modules/left-pad/index.js",
                "content": "module.exports = () => 'pwned';\n",
                "expected_sha256": _sha(LEFT_PAD),
            },
            {
                "type": "direct_write",
                "path": ".venv/bin/tool",
                "content": None,
                "allow_delete": True,
                "expected_sha256": _sha(TOOL),
            },
        ],
        "verification_plan": {"profile": "tests"},
    }


@pytest.fixture(params=["bwrap", "none"])
def sandbox_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with the sandbox this machine has, and with none."""
    mode = str(request.param)
    if mode == "none":
        take_bwrap_away(monkeypatch)
    elif usable_bwrap() is None:
        pytest.skip("bwrap cannot make a sandbox on this machine")
    return mode


class TestNothingWritesThrough:
    @pytest.mark.parametrize("check", [True, False])
    def test_a_refused_proposal_leaves_the_workspace_byte_identical(
        self, project: Path, sandbox_mode: str, check: bool
    ) -> None:
        """`propose` (and `--check`) of a failing proposal that edits node_modules and deletes
        a .venv file: refused, and not one byte of the real workspace changed."""
        before = snapshot_tree(project)

        report = propose(_proposal(), project, check=check, record=False, verify=True)

        assert ApplyStatus.REFUSED == report.status
        assert FailureCode.VERIFICATION_FAILED in [e.code for e in report.errors]
        assert before == snapshot_tree(project)
        assert LEFT_PAD == (project / "node_modules/left-pad/index.js").read_bytes()
        assert TOOL == (project / ".venv/bin/tool").read_bytes()
        assert {sandbox_mode} == {e.sandbox for e in report.evidence}

    def test_the_cli_check_leaves_it_too(
        self, project: Path, tmp_path: Path, sandbox_mode: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        proposal = tmp_path / "p.json"
        proposal.write_text(json.dumps(_proposal()))
        before = snapshot_tree(project)

        code = patchsmith.cli.main(
            ["propose", str(proposal), "-C", str(project), "--check", "--verify"]
        )

        assert 0 != code
        assert before == snapshot_tree(project)
        capsys.readouterr()

    def test_the_changed_copy_sees_the_staged_dependency_edit(
        self, project: Path, sandbox_mode: str
    ) -> None:
        """A staged edit under node_modules is what the tool reads (copied, not bound)."""
        config = project / "patchsmith.toml"
        config.write_text(
            "[verify.dep]\n"
            f'argv = [{PY}, "-c", "import sys; '
            "sys.exit(0 if open('node_modules/left-pad/index.js').read() == 'new' else 1)\"]\n"
        )
        change = FileChange(
            path="node_modules/left-pad/index.js",
            action=Action.UPDATE,
            old_path="node_modules/left-pad/index.js",
            old_bytes=LEFT_PAD,
            new_bytes=b"new",
        )

        report = verify_changes(project, [change], ["dep"], cache=False)

        changed = [r for r in report.evidence if r.side is RunSide.CHANGED]
        assert [True] == [r.passed for r in changed], report.to_json(output=True)
        base = [r for r in report.evidence if r.side is RunSide.BASE]
        assert [False] == [r.passed for r in base]
        assert LEFT_PAD == (project / "node_modules/left-pad/index.js").read_bytes()


class TestDependencyCaches:
    def test_a_tool_writing_into_node_modules_passes_and_writes_nothing_real(
        self, project: Path, sandbox_mode: str
    ) -> None:
        """Tools cache into node_modules (vitest, babel): the run may, the real folder stays."""
        from patchsmith.runtime.sandbox import layers_supported

        if sandbox_mode == "bwrap" and not layers_supported():
            pytest.skip("this bwrap cannot layer a folder: node_modules is read-only")
        code = (
            "import pathlib; pathlib.Path('node_modules/.cache').mkdir();"
            " pathlib.Path('node_modules/.cache/x').write_text('x')"
        )
        (project / "patchsmith.toml").write_text(
            f'[verify.cache]\nargv = [{PY}, "-c", {json.dumps(code)}]\n'
        )
        before = snapshot_tree(project)

        report = verify_changes(project, [], ["cache"], cache=False)

        assert report.passed, report.to_json(output=True)
        assert before == snapshot_tree(project)
        assert not (project / "node_modules/.cache").exists()


class TestCopies:
    def test_no_copy_links_to_the_real_tree(self, project: Path, tmp_path: Path) -> None:
        """Bound placeholders (with bwrap) or real copies (without): never a symlink."""
        copy = copy_tree(project, tmp_path / "copy")

        for name in ("node_modules", ".venv", "venv"):
            assert (copy / name).is_dir() and not (copy / name).is_symlink()

    @needs_bwrap
    def test_with_bwrap_dependencies_are_bound_read_only(
        self, project: Path, tmp_path: Path
    ) -> None:
        copy = copy_tree(project, tmp_path / "copy")

        mounts = dependency_mounts(copy)

        assert {
            (project.resolve() / n, copy / n) for n in ("node_modules", ".venv", "venv")
        } == set(mounts)
        assert [] == list((copy / "node_modules").iterdir())

    @needs_bwrap
    def test_a_change_under_a_bound_folder_makes_it_a_copy(
        self, project: Path, tmp_path: Path
    ) -> None:
        copy = copy_tree(project, tmp_path / "copy")
        delete = FileChange(
            path=".venv/bin/tool",
            action=Action.DELETE,
            old_path=".venv/bin/tool",
            old_bytes=TOOL,
            new_bytes=None,
        )

        apply_changes(copy, [delete])

        assert {"node_modules", "venv"} == {target.name for _, target in dependency_mounts(copy)}
        assert not (copy / ".venv/bin/tool").exists()
        assert TOOL == (project / ".venv/bin/tool").read_bytes()

    def test_without_bwrap_dependencies_are_copied(
        self, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        take_bwrap_away(monkeypatch)

        copy = copy_tree(project, tmp_path / "copy")
        (copy / "node_modules/left-pad/index.js").write_bytes(b"changed in the copy")

        assert () == dependency_mounts(copy)
        assert (copy / ".venv/bin/tool").stat().st_mode & 0o111
        assert LEFT_PAD == (project / "node_modules/left-pad/index.js").read_bytes()

    def test_evidence_keeps_the_sandbox(self) -> None:
        run = Evidence("p", RunSide.CHANGED, ("x",), 0, 0.1, True, "0" * 64, sandbox="none")

        assert "none" == Evidence.loads(run.dumps()).sandbox
        assert "none" == run.to_json(output=False)["sandbox"]


class TestRequireSandbox:
    def test_refused_without_a_sandbox(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        take_bwrap_away(monkeypatch)
        config = project / "patchsmith.toml"
        config.write_text("[verify]\nrequire_sandbox = true\n" + config.read_text())

        report = verify_changes(project, [], ["tests"], cache=False)

        assert [FailureCode.SANDBOX_UNAVAILABLE] == [e.code for e in report.errors]
        assert () == report.outcomes
        proposal = propose(_proposal(), project, check=True, record=False, verify=True)
        assert FailureCode.SANDBOX_UNAVAILABLE in [e.code for e in proposal.errors]
        assert () == proposal.evidence

    @needs_bwrap
    def test_runs_with_one(self, project: Path) -> None:
        config = project / "patchsmith.toml"
        config.write_text("[verify]\nrequire_sandbox = true\n" + config.read_text())

        report = verify_changes(project, [], ["tests"], cache=False)

        assert [] == list(report.errors)
        assert {"bwrap"} == {r.sandbox for r in report.evidence}


class TestReflinkCopier:
    def test_a_reflink_is_tried_first(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cloned: list[str] = []

        def clone(src: str, dst: str) -> None:
            cloned.append(src)
            Path(dst).write_bytes(Path(src).read_bytes())

        monkeypatch.setattr(trees, "_reflink", clone)
        (tmp_path / "a").write_bytes(b"a")
        copier = trees._Copier()
        copier.reflink = True

        copier(str(tmp_path / "a"), str(tmp_path / "b"))

        assert [str(tmp_path / "a")] == cloned
        assert b"a" == (tmp_path / "b").read_bytes()

    def test_a_filesystem_without_reflinks_gets_plain_copies(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refuse(src: str, dst: str) -> None:
            Path(dst).write_bytes(b"")  # a half-made target is removed
            raise OSError(errno.EOPNOTSUPP, "not supported")

        monkeypatch.setattr(trees, "_reflink", refuse)
        (tmp_path / "a").write_bytes(b"a")
        copier = trees._Copier()
        copier.reflink = True

        copier(str(tmp_path / "a"), str(tmp_path / "b"))

        assert b"a" == (tmp_path / "b").read_bytes()
        assert not copier.reflink

    def test_other_errors_are_not_hidden(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def fail(src: str, dst: str) -> None:
            raise OSError(errno.EACCES, "denied")

        monkeypatch.setattr(trees, "_reflink", fail)
        copier = trees._Copier()
        copier.reflink = True

        with pytest.raises(OSError):
            copier(str(tmp_path / "a"), str(tmp_path / "b"))

    def test_a_real_copy_never_shares_an_inode(self, tmp_path: Path) -> None:
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "f").write_bytes(b"data")

        trees.copy_dependency(tmp_path / "src", tmp_path / "dst")

        assert b"data" == (tmp_path / "dst" / "f").read_bytes()
        assert (tmp_path / "src" / "f").stat().st_ino != (tmp_path / "dst" / "f").stat().st_ino

    def test_a_damaged_mount_list_binds_nothing(self, tmp_path: Path) -> None:
        tree = tmp_path / "copy"
        tree.mkdir()
        (tmp_path / ".copy.dependencies.json").write_text("{not json")

        assert () == dependency_mounts(tree)
        trees.apply_changes(tree, [])
