"""`freeze` (and every internal git call) runs none of the repository's hooks or fsmonitor."""

from __future__ import annotations

import os
from pathlib import Path

import patchsmith

from .gitrepo import git, make_repo
from .test_freeze import APP, FIRST, README, run_attempts

HOOKS = ("reference-transaction", "post-index-change", "pre-commit", "post-commit")


def plant_hooks(repo: Path, markers: Path) -> None:
    """Hooks and an fsmonitor command that each leave a marker file when git runs them."""
    markers.mkdir()
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in (*HOOKS, "fsmonitor"):
        script = hooks / name
        script.write_text(f"#!/bin/sh\ntouch '{markers / name}'\n")
        script.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hooks / "fsmonitor"))


def test_the_planted_hooks_run_under_plain_git(tmp_path: Path) -> None:
    # the planted hooks are real: plain git runs them (so the test below can fail)
    repo = make_repo(tmp_path / "repo", {"app.py": APP, "README.md": README})
    plant_hooks(repo, tmp_path / "markers")
    git(repo, "update-ref", "refs/heads/probe", "HEAD")
    git(repo, "status")
    assert (tmp_path / "markers" / "reference-transaction").exists()
    assert (tmp_path / "markers" / "fsmonitor").exists()


def test_freeze_runs_no_hook_and_no_fsmonitor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": APP, "README.md": README})
    run_attempts(repo, "r1", FIRST)
    markers = tmp_path / "markers"
    plant_hooks(repo, markers)

    frozen = patchsmith.freeze("r1", repo)

    assert frozen.branch == "patchsmith/r1"
    assert git(repo, "rev-parse", "patchsmith/r1").strip() == frozen.commit
    assert os.listdir(markers) == []


def test_git_argv_turns_hooks_fsmonitor_and_templates_off() -> None:
    from patchsmith.runtime.gitcmd import git_argv

    off = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
    assert git_argv("update-ref", "refs/x", "HEAD") == ["git", *off, "update-ref", "refs/x", "HEAD"]
    assert git_argv("clone", "--quiet", "src") == [
        "git",
        *off,
        "clone",
        "--template=",
        "--quiet",
        "src",
    ]
    assert git_argv("init") == ["git", *off, "init", "--template="]


def test_no_internal_git_call_is_spelled_by_hand() -> None:
    # every git argv in the source goes through git_argv (so none forgets the switches)
    src = Path(__file__).resolve().parents[2] / "src" / "patchsmith"
    offenders = [
        f"{path.relative_to(src)}:{number}"
        for path in src.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if '["git"' in line and path.name != "gitcmd.py"
    ]
    assert offenders == []
