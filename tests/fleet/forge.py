"""A fleet whose repositories each have a `forge` remote: a local bare repository.

What a forge would be in real use; pushing to it needs no network.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .sample import make_fleet

__all__ = ["CHANGED", "SIZE", "git_out", "make_forge_fleet"]

SIZE = 20
"""Repositories in the forge fleet of the tests."""
CHANGED = [n for n in range(SIZE) if n % 5 != 4 and n % 7 != 6]
"""Those `unittest-to-assert` changes (14 of 20): not the JavaScript ones, not the refused."""

_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git_out(repo: Path, *args: str) -> str:
    """Run git in `repo` (no user configuration) and return its stripped output."""
    done = subprocess.run(
        ["git", *args], cwd=repo, env=_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def make_forge_fleet(folder: Path, count: int) -> Path:
    """`make_fleet`, then a bare `folder/forge/repoNNNN.git` per repository, as its `forge`."""
    listing = make_fleet(folder, count)
    forge = folder / "forge"
    forge.mkdir()
    for n in range(count):
        name = f"repo{n:04d}"
        bare = forge / f"{name}.git"
        subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], env=_ENV, check=True)
        git_out(folder / name, "remote", "add", "forge", str(bare))
        git_out(folder / name, "push", "--quiet", "forge", "main")
    return listing
