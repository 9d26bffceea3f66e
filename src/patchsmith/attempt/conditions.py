"""Checking a proposal's preconditions (before staging) and postconditions (on the staged change).

Each condition is reported one by one as a `ConditionResult` with evidence, so a
refusal says exactly which expectation did not hold.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from patchsmith.attempt.withheld import forbidden_patterns, is_withheld
from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.guards import Guard, GuardContext
from patchsmith.guards.budgets import changed_lines
from patchsmith.guards.scope import ForbiddenPathGuard
from patchsmith.guards.secrets import SecretGuard
from patchsmith.guards.syntax import SyntaxGuard
from patchsmith.model.condition import ConditionResult, ConditionStatus
from patchsmith.model.proposal import (
    BaseCommitMatch,
    DiffMaxFiles,
    DiffMaxLines,
    FileExists,
    FileHashMatch,
    NoBinaryChanged,
    NoForbiddenPathChanged,
    NoSecretAdded,
    PatchProposal,
    PathAllowed,
    Postcondition,
    PostconditionType,
    Precondition,
    PreconditionType,
    SyntaxValid,
)
from patchsmith.policy import Policy, matches
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.diffstat import is_binary
from patchsmith.runtime.gitcmd import git_argv

__all__ = [
    "ConditionResult",
    "ConditionStatus",
    "check_postconditions",
    "check_preconditions",
    "condition_failures",
]

GIT_TIMEOUT_SECONDS = 10.0


def check_preconditions(
    proposal: PatchProposal, root: str | Path, *, policy: Policy | None = None
) -> list[ConditionResult]:
    """Each precondition of `proposal` checked against the workspace at `root`, in order.

    PATH_ALLOWED consults `policy` (the defaults when `None`) narrowed by the proposal.
    """
    root_path = Path(root)
    narrowed = (policy or Policy()).tightened_by(proposal)
    return [_check_pre(pre, root_path, narrowed) for pre in proposal.preconditions]


def _check_pre(pre: Precondition, root: Path, policy: Policy) -> ConditionResult:
    kind = PreconditionType(pre.type)
    if isinstance(pre, BaseCommitMatch):
        return _base_commit(pre, root)
    location = _inside(root, pre.path)
    if location is None:
        return _result(kind, False, f"{pre.path!r} is not a path inside the workspace", pre.path)
    if isinstance(pre, PathAllowed):
        if matches(policy.forbidden, location.relative):
            return _result(kind, False, f"{location.relative} is forbidden", pre.path)
        if not policy.in_scope(location.relative):
            return _result(kind, False, f"{location.relative} is outside the write scope", pre.path)
        return _result(kind, True, f"{location.relative} may be written", pre.path)
    if isinstance(pre, FileExists):
        exists = location.absolute.is_file()
        evidence = "file exists" if exists else "no such file"
        return _result(kind, exists, f"{location.relative}: {evidence}", pre.path)
    assert isinstance(pre, FileHashMatch)
    try:
        actual = hashlib.sha256(location.absolute.read_bytes()).hexdigest()
    except OSError as exc:
        return _result(kind, False, f"{location.relative}: cannot read ({exc.strerror})", pre.path)
    expected = pre.value.strip().lower().removeprefix("sha256:")
    if is_withheld(forbidden_patterns(policy), pre.path, root):
        # A forbidden file's hash does not leave the machine (docs/policy.md): the check
        # still answers, without the file's own value.
        shown = "matches" if actual == expected else "differs (not shown: the file is forbidden)"
        evidence = f"{location.relative}: expected sha256 {expected}, actual {shown}"
    else:
        evidence = f"{location.relative}: expected sha256 {expected}, actual {actual}"
    return _result(kind, actual == expected, evidence, pre.path)


@dataclass(frozen=True)
class _Location:
    relative: str
    absolute: Path


def _inside(root: Path, path: str) -> _Location | None:
    candidate = Path(path)
    if candidate.is_absolute() or "\\" in path:
        return None
    resolved_root = root.resolve()
    resolved = (resolved_root / candidate).resolve()
    if not resolved.is_relative_to(resolved_root) or resolved == resolved_root:
        return None
    return _Location(resolved.relative_to(resolved_root).as_posix(), resolved)


def _base_commit(pre: BaseCommitMatch, root: Path) -> ConditionResult:
    kind = PreconditionType.BASE_COMMIT_MATCH
    try:
        completed = subprocess.run(
            git_argv("rev-parse", "--verify", "HEAD"),
            cwd=root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        return _result(kind, False, "git is not installed: cannot read HEAD")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _result(kind, False, f"cannot run git in {root}: {exc}")
    if completed.returncode != 0:
        reason = completed.stderr.strip().splitlines()
        detail = reason[-1] if reason else f"git exited {completed.returncode}"
        return _result(kind, False, f"{root} is not a git repository with a HEAD ({detail})")
    head = completed.stdout.strip().lower()
    expected = pre.value.lower()
    return _result(kind, head.startswith(expected), f"expected {expected}, HEAD is {head}")


def check_postconditions(
    proposal: PatchProposal, changes: Sequence[FileChange], ctx: GuardContext
) -> list[ConditionResult]:
    """Each expected postcondition of `proposal` checked on the staged `changes`, in order.

    COMPILES and TESTS_PASS are `not_checked` here: they are recorded for the verifier.
    """
    return [_check_post(post, changes, ctx) for post in proposal.expected_postconditions]


def _check_post(
    post: Postcondition, changes: Sequence[FileChange], ctx: GuardContext
) -> ConditionResult:
    kind = PostconditionType(post.type)
    if isinstance(post, DiffMaxFiles):
        count = len(changes)
        return _result(kind, count <= post.value, f"{count} files changed (max {post.value})")
    if isinstance(post, DiffMaxLines):
        count = changed_lines(changes)
        return _result(
            kind, count <= post.value, f"{count} lines added or removed (max {post.value})"
        )
    if isinstance(post, NoBinaryChanged):
        binary = [c.path for c in changes if is_binary(c.old_content) or is_binary(c.new_content)]
        evidence = "binary: " + ", ".join(binary) if binary else "no binary file changed"
        return _result(kind, not binary, evidence)
    if isinstance(post, NoForbiddenPathChanged | NoSecretAdded | SyntaxValid):
        guard: Guard
        if isinstance(post, NoForbiddenPathChanged):
            guard = ForbiddenPathGuard()
        elif isinstance(post, NoSecretAdded):
            guard = SecretGuard()
        else:
            guard = SyntaxGuard()
        failures = guard.check(changes, ctx)
        if failures:
            return _result(kind, False, "; ".join(f.message for f in failures))
        return _result(kind, True, f"{guard.NAME}: {len(changes)} files checked")
    return ConditionResult(kind, ConditionStatus.NOT_CHECKED, "recorded for the verifier")


def _result(
    kind: PreconditionType | PostconditionType, ok: bool, evidence: str, path: str | None = None
) -> ConditionResult:
    status = ConditionStatus.PASSED if ok else ConditionStatus.FAILED
    return ConditionResult(kind, status, evidence, path)


def condition_failures(results: Sequence[ConditionResult]) -> list[PatchFailure]:
    """One PRECONDITION_FAILED or POSTCONDITION_FAILED per failed result, with its evidence."""
    return [
        PatchFailure(
            code=FailureCode.PRECONDITION_FAILED
            if isinstance(result.type, PreconditionType)
            else FailureCode.POSTCONDITION_FAILED,
            message=f"{result.type.value} failed: {result.evidence}",
            file=result.path,
            rule=result.type.value,
        )
        for result in results
        if result.status is ConditionStatus.FAILED
    ]
