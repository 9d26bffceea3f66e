"""`head_commit`: the base commit recorded with every attempt, read without starting git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from patchsmith.attempt._attempt import _read_head, head_commit

SHA = "0123456789abcdef0123456789abcdef01234567"


def _fake_repo(root: Path, head: str) -> Path:
    git_dir = root / ".git"
    (git_dir / "refs" / "heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text(head, encoding="utf-8")
    return git_dir


class TestHeadCommit:
    def test_loose_branch_ref(self, tmp_path: Path) -> None:
        """HEAD naming a branch resolves through the branch's ref file."""
        git_dir = _fake_repo(tmp_path, "ref: refs/heads/main\n")
        (git_dir / "refs" / "heads" / "main").write_text(SHA + "\n", encoding="utf-8")

        assert SHA == head_commit(tmp_path)

    def test_packed_ref(self, tmp_path: Path) -> None:
        """A branch that only lives in packed-refs is found there."""
        git_dir = _fake_repo(tmp_path, "ref: refs/heads/main\n")
        (git_dir / "packed-refs").write_text(
            f"# pack-refs with: peeled\n{SHA} refs/heads/main\n", encoding="utf-8"
        )

        assert SHA == head_commit(tmp_path)

    def test_a_loose_ref_that_is_a_folder_falls_back_to_packed_refs(self, tmp_path: Path) -> None:
        """Only a regular file is a loose ref; anything else is looked up in packed-refs."""
        git_dir = _fake_repo(tmp_path, "ref: refs/heads/main\r\n")
        (git_dir / "refs" / "heads" / "main").mkdir()
        (git_dir / "packed-refs").write_text(f"{SHA} refs/heads/main\r\n", encoding="utf-8")

        assert SHA == head_commit(tmp_path)

    @pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
    def test_a_pipe_is_not_read(self, tmp_path: Path) -> None:
        """A named pipe at HEAD is not waited on: it is no file, so nothing is read from it
        (and git itself is asked)."""
        git_dir = tmp_path / ".git"
        git_dir.mkdir()
        os.mkfifo(git_dir / "HEAD")

        assert _read_head(git_dir) is None

    def test_detached_head(self, tmp_path: Path) -> None:
        """A detached HEAD holds the commit itself."""
        _fake_repo(tmp_path, SHA + "\n")

        assert SHA == head_commit(tmp_path)

    def test_subdirectory_of_a_repository(self, tmp_path: Path) -> None:
        """A workspace below the repository root finds the repository above it."""
        _fake_repo(tmp_path, SHA + "\n")
        inner = tmp_path / "pkg" / "sub"
        inner.mkdir(parents=True)

        assert SHA == head_commit(inner)

    def test_no_repository(self, tmp_path: Path) -> None:
        """Outside any repository there is no base commit."""
        assert not any((folder / ".git").exists() for folder in (tmp_path, *tmp_path.parents))

        assert head_commit(tmp_path) is None

    def test_unborn_branch(self, tmp_path: Path) -> None:
        """A branch with no commit yet has no base commit."""
        _fake_repo(tmp_path, "ref: refs/heads/main\n")

        assert head_commit(tmp_path) is None

    @pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
    def test_agrees_with_git(self, tmp_path: Path) -> None:
        """On a real repository the answer is what `git rev-parse HEAD` prints."""

        def git(*args: str) -> str:
            done = subprocess.run(
                ["git", "-c", "user.email=t@e.st", "-c", "user.name=t", *args],
                cwd=tmp_path,
                check=True,
                capture_output=True,
                text=True,
            )
            return done.stdout.strip()

        git("init", "-q")
        (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
        git("add", "f.txt")
        git("commit", "-qm", "x")

        assert git("rev-parse", "HEAD") == head_commit(tmp_path)
