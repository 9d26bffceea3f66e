"""A clean checkout of one repository at one ref, in a folder of its own.

A local repository is cloned with `--shared` (its objects are borrowed, nothing is
copied, the source is never written to); a URL is cloned as git clones it. Only
committed content is checked out: a source's uncommitted edits never reach a run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.runtime.gitcmd import git_argv

__all__ = ["GIT_ENV", "checkout", "git"]

GIT_ENV = {
    # never wait for a password or a host-key answer: an unreachable repository fails
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
    # a checkout must not depend on the user's configuration (hooks, templates, filters)
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TEMPLATE_DIR": "",
}


def git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with the fleet's environment; output captured as text."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        git_argv(*args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _unavailable(source: str, message: str, hint: str) -> PatchFailure:
    return PatchFailure(
        FailureCode.REPOSITORY_UNAVAILABLE, message, file=source, hint=hint, rule="checkout"
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def checkout(source: str, ref: str | None, into: Path) -> str | PatchFailure:
    """Clone `source` into `into` (which must not exist) and check out `ref` detached.

    Returns the full commit id checked out, or REPOSITORY_UNAVAILABLE saying what git
    could not do (no such repository, not a git repository, unknown ref).
    """
    local = Path(source)
    args = ["clone", "--quiet", "--no-checkout"]
    if local.is_absolute():
        if not local.exists():
            return _unavailable(
                source,
                f"no such repository: {source}",
                "check the path in the repositories file",
            )
        args.append("--shared")
    cloned = git([*args, "--", source, os.fspath(into)])
    if cloned.returncode != 0:
        return _unavailable(
            source,
            f"git clone failed: {_last_line(cloned.stderr)}",
            "check that the repository exists and is reachable without a password",
        )
    commit = _resolve(into, ref)
    if commit is None:
        return _unavailable(
            source,
            f"unknown ref {ref!r}" if ref else "the repository has no commit to check out",
            "name a branch, tag or commit of the repository after @",
        )
    done = git(["checkout", "--quiet", "--detach", commit], cwd=into)
    if done.returncode != 0:
        return _unavailable(
            source,
            f"git checkout failed: {_last_line(done.stderr)}",
            "check the repository's files can be checked out on this machine",
        )
    return commit


def _resolve(repo: Path, ref: str | None) -> str | None:
    names = ["HEAD"] if ref is None else [ref, f"origin/{ref}", f"refs/tags/{ref}"]
    for name in names:
        if name.startswith("-"):
            return None  # never let a ref be read as an option
        found = git(["rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=repo)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    return None
