"""`git apply` as a peer: one process per call, the model's text on stdin, timed whole.

Shared by `bench/peers.py` (accuracy beside other appliers) and `bench/apply_speed.py` (the
per-call cost of `patchsmith.apply` beside a lenient `git apply` of the same case).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "LOOSE_NAME",
    "LOOSE_OPTIONS",
    "SUBPROCESS_TIMEOUT_S",
    "git_apply",
    "have_git",
    "run_stdin",
]

SUBPROCESS_TIMEOUT_S = 60

LOOSE_OPTIONS = ("--recount", "--ignore-whitespace", "-C1")
"""git's most lenient settings short of guessing: hunk counts recounted, whitespace ignored,
one line of context enough."""
LOOSE_NAME = "git apply " + " ".join(LOOSE_OPTIONS)


def have_git() -> bool:
    return shutil.which("git") is not None


def run_stdin(argv: Sequence[str], stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `argv` in `cwd` with `stdin` as its input; output captured, never raises on exit."""
    return subprocess.run(
        argv,
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )


def git_apply(
    patch: str, root: Path, options: Sequence[str] = LOOSE_OPTIONS
) -> tuple[bool, float, str]:
    """`git apply [options] -` of `patch` in `root` (outside a repository: git applies to the
    directory as it is): whether it applied, the seconds the whole process took (its start
    included), and the start of its error output."""
    start = time.perf_counter()
    done = run_stdin(["git", "apply", *options, "-"], patch, root)
    seconds = time.perf_counter() - start
    return done.returncode == 0, seconds, done.stderr.strip()[:200]
