"""Temporary git checkouts for the pipeline tests, and the state a test must not disturb."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.workspace_snapshot import TreeSnapshot, make_tree, snapshot_tree

__all__ = ["CheckoutState", "checkout_state", "git", "make_repo"]


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    """Run git in `root`; its stdout as text (raises when git fails)."""
    done = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def make_repo(root: Path, files: Mapping[str, bytes | tuple[bytes, int]]) -> Path:
    """A git checkout at `root` with `files` committed on `main`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "commit.gpgsign", "false")
    make_tree(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@dataclass(frozen=True)
class CheckoutState:
    """HEAD, the index's bytes, the branch checked out, and the working tree."""

    head: str
    branch: str
    index_sha256: str
    tree: TreeSnapshot
    status: str


def checkout_state(root: Path) -> CheckoutState:
    """What the user's checkout looks like now (the `.patchsmith` directory aside)."""
    index = root / ".git" / "index"
    return CheckoutState(
        head=git(root, "rev-parse", "HEAD").strip(),
        branch=git(root, "symbolic-ref", "HEAD").strip(),
        index_sha256=hashlib.sha256(index.read_bytes()).hexdigest(),
        tree=snapshot_tree(root, exclude=(".patchsmith", ".git")),
        status=git(root, "status", "--porcelain"),
    )
