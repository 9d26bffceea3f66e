"""`freeze`: a run's net change as one diff artifact, and in git as a commit on a new branch.

Every attempt of the run that wrote files is undone in memory, newest first, from the
files as they are now; what that gives back is the workspace before the run, and the
diff from there to now is the run's net change, composed. The files must still be as
the run left them. In a git checkout the change also becomes a commit on a new branch
made with plumbing only (a temporary index, `write-tree`, `commit-tree`, `update-ref`),
so the user's HEAD, index and working tree are never touched.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action
from patchsmith.pipeline.rewind import FileState, Snapshot, read_snapshot, sha256_of, touched, undo
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.gitcmd import git_argv
from patchsmith.runtime.gitdiff import render_git_diff, render_git_diff_bytes
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.textfile import decode_file
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import DB_FILE_NAME, AttemptRecord, AttemptStatus, Store

__all__ = ["BRANCH_PREFIX", "FrozenCandidate", "freeze", "run_net_change"]

BRANCH_PREFIX = "patchsmith/"
"""A frozen run's branch is `patchsmith/<run id>` unless named."""

GIT_TIMEOUT_SECONDS = 60.0
_WRITTEN = (AttemptStatus.APPLIED, AttemptStatus.PARTIAL)


@dataclass(frozen=True)
class FrozenCandidate:
    """A run's net change: the diff a pull request is made from.

    `diff` is git-format text (`diff_bytes` the exact bytes `git apply` takes);
    `attempts` the ids of the run's attempts it composes, oldest first; `out` where
    the artifact was written; `branch` and `commit` the new git branch and its
    commit (`None` outside a git checkout or when no commit was asked for).
    """

    run_id: str
    diff: str
    diff_bytes: bytes = field(repr=False)
    """The same change as `diff`, byte-exact; left out of the repr, which shows `diff` once."""
    files: tuple[str, ...]
    attempts: tuple[str, ...]
    out: str | None = None
    branch: str | None = None
    commit: str | None = None

    def to_json(self) -> dict[str, object]:
        """The JSON object `patchsmith freeze --json` prints."""
        return {
            "status": "frozen",
            "run_id": self.run_id,
            "files": list(self.files),
            "attempts": list(self.attempts),
            "out": self.out,
            "branch": self.branch,
            "commit": self.commit,
            "diff": self.diff,
            "errors": [],
        }


def freeze(
    run_id: str,
    root: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    branch: str | None = None,
    commit: bool = True,
) -> FrozenCandidate:
    """Freeze run `run_id` of the workspace `root` into one diff (and, in git, one commit).

    Writes the diff to `out` when given. In a git checkout (unless `commit` is
    false) commits the change onto HEAD's tree as a new branch `branch` (default
    `patchsmith/<run id>`), leaving HEAD, the index and the working tree as they
    are. Raises `PatchRefused`: RECORD_NOT_FOUND (no such run), NO_CHANGE (nothing
    applied, or the attempts cancel out), STALE_FILE (a file changed since the run,
    one failure per file), NOT_SUPPORTED_YET (a change that cannot be rebuilt
    exactly), PRECONDITION_FAILED (the branch exists or is not a valid name, HEAD is
    unborn, or the change does not apply to HEAD), IO_ERROR (git or the disk failed).
    """
    try:
        workspace = Workspace(root, recover=False)
    except ValueError as exc:
        raise PatchRefused([PatchFailure(FailureCode.FILE_NOT_FOUND, str(exc))]) from None
    applied, changes = run_net_change(workspace, run_id)
    candidate = FrozenCandidate(
        run_id=run_id,
        diff=render_git_diff(changes),
        diff_bytes=render_git_diff_bytes(changes),
        files=tuple(c.path for c in changes),
        attempts=tuple(r.id for r in applied),
    )
    git = _git_root(workspace.real_root) if commit else None
    if git is not None:
        name = branch or BRANCH_PREFIX + _branch_safe(run_id)
        _check_branch(git[0], name)
    elif branch is not None and commit:
        raise PatchRefused(
            [
                PatchFailure(
                    FailureCode.PRECONDITION_FAILED,
                    f"{workspace.root} is not in a git checkout, so no branch {branch!r} "
                    "can be made",
                    hint="freeze without --branch to write the diff only",
                )
            ]
        )
    written = None
    if out is not None:
        try:
            Path(out).write_bytes(candidate.diff_bytes)
        except OSError as exc:
            raise PatchRefused(
                [PatchFailure(FailureCode.IO_ERROR, f"cannot write {out}: {exc.strerror or exc}")]
            ) from None
        written = os.fspath(out)
    if git is None:
        return _with(candidate, out=written)
    top, prefix = git
    sha = _commit(top, prefix, name, candidate, _message(run_id, applied))
    return _with(candidate, out=written, branch=name, commit=sha)


def _with(
    candidate: FrozenCandidate,
    *,
    out: str | None,
    branch: str | None = None,
    commit: str | None = None,
) -> FrozenCandidate:
    return FrozenCandidate(
        candidate.run_id,
        candidate.diff,
        candidate.diff_bytes,
        candidate.files,
        candidate.attempts,
        out,
        branch,
        commit,
    )


def run_net_change(
    workspace: Workspace, run_id: str
) -> tuple[list[AttemptRecord], tuple[FileChange, ...]]:
    """The run's attempts that wrote files (oldest first) and their composed change.

    Raises `PatchRefused` as `freeze` describes (RECORD_NOT_FOUND, NO_CHANGE,
    STALE_FILE, NOT_SUPPORTED_YET).
    """
    database = workspace.real_root / STATE_DIR_NAME / DB_FILE_NAME
    if not database.is_file():
        raise _refused(FailureCode.RECORD_NOT_FOUND, f"nothing is recorded under {workspace.root}")
    with Store.open(database.parent) as store:
        records = store.run_attempts(run_id)
    if not records:
        raise _refused(
            FailureCode.RECORD_NOT_FOUND,
            f"no run {run_id!r} is recorded",
            hint="the run ids are in `patchsmith log`",
        )
    applied = [r for r in records if r.status in _WRITTEN and r.files]
    if not applied:
        raise _refused(
            FailureCode.NO_CHANGE,
            f"run {run_id!r} has no applied change ({len(records)} attempts, none wrote files)",
        )
    now = read_snapshot(workspace, touched(applied))
    stale = _drifted(now, applied)
    if stale:
        raise PatchRefused(stale)
    before: Snapshot = now
    for record in reversed(applied):
        undone = undo(before, record)
        if isinstance(undone, list):
            raise PatchRefused([_between(f, record) for f in undone])
        before = undone
    changes = tuple(
        change
        for path in sorted(now)
        if (change := _change(path, before.get(path), now.get(path))) is not None
    )
    if not changes:
        raise _refused(
            FailureCode.NO_CHANGE,
            f"the attempts of run {run_id!r} cancel out: the files are as before the run",
        )
    return applied, changes


def _drifted(now: Snapshot, applied: list[AttemptRecord]) -> list[PatchFailure]:
    """STALE_FILE for each file not as the last of the run's attempts to touch it left it."""
    last: dict[str, tuple[str | None, AttemptRecord]] = {}
    for record in applied:
        for f in record.files:
            if f.old_path is not None and f.old_path != f.path:
                last[f.old_path] = (None, record)
            last[f.path] = (f.after_sha256, record)
    failures = []
    for path, (wanted, record) in sorted(last.items()):
        actual = sha256_of(now.get(path))
        if actual != wanted:
            failures.append(
                PatchFailure(
                    FailureCode.STALE_FILE,
                    f"{path} changed since the run's attempt {record.id} left it "
                    f"(sha256 now {actual or 'absent'}, it left {wanted or 'absent'})",
                    file=path,
                    hint="undo the changes made since, or start a new run from here",
                    current_sha256=actual,
                )
            )
    return failures


def _between(failure: PatchFailure, record: AttemptRecord) -> PatchFailure:
    if failure.code is not FailureCode.STALE_FILE:
        return failure
    return PatchFailure(
        FailureCode.STALE_FILE,
        f"{failure.file} was changed between the run's attempts, outside the run, before "
        f"attempt {record.id}",
        file=failure.file,
        hint="the run's net change cannot be told apart from that edit; freeze a run "
        "whose attempts follow one another",
    )


def _change(path: str, old: FileState | None, new: FileState | None) -> FileChange | None:
    if old == new:
        return None
    action = Action.UPDATE
    if old is None:
        action = Action.CREATE
    elif new is None:
        action = Action.DELETE
    return FileChange(
        path=path,
        action=action,
        old_path=None if old is None else path,
        old_bytes=None if old is None else old.data,
        new_bytes=None if new is None else new.data,
        old_text=_text(path, old),
        new_text=_text(path, new),
        old_mode=_mode(old),
        new_mode=_mode(new),
    )


def _text(path: str, state: FileState | None) -> str | None:
    if state is None:
        return None
    decoded = decode_file(path, state.data, 0o644)
    return None if isinstance(decoded, PatchFailure) else decoded.text


def _mode(state: FileState | None) -> int | None:
    if state is None:
        return None
    return 0o755 if state.executable else 0o644


def _refused(code: FailureCode, message: str, hint: str | None = None) -> PatchRefused:
    return PatchRefused([PatchFailure(code, message, hint=hint)])


# git


def _git(
    args: list[str],
    cwd: Path,
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            git_argv(*args),
            cwd=cwd,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _refused(FailureCode.IO_ERROR, f"git {args[0]} could not run: {exc}") from None


def _git_root(root: Path) -> tuple[Path, str] | None:
    """The top of the git checkout holding `root` and `root`'s path in it, or `None`."""
    try:
        done = _git(["rev-parse", "--show-toplevel", "--show-prefix"], root)
    except PatchRefused:
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 2 or not lines[0]:
        return None
    return Path(lines[0]), lines[1]


_UNSAFE_REF = re.compile(r"[^A-Za-z0-9._/-]+")


def _branch_safe(run_id: str) -> str:
    cleaned = _UNSAFE_REF.sub("-", run_id).strip("./-") or "run"
    return re.sub(r"\.\.+|//+", "-", cleaned).removesuffix(".lock")


def _check_branch(top: Path, name: str) -> None:
    checked = _git(["check-ref-format", "--branch", name], top)
    if checked.returncode != 0:
        raise _refused(
            FailureCode.PRECONDITION_FAILED,
            f"{name!r} is not a valid branch name",
            hint="name the branch with --branch",
        )
    exists = _git(["rev-parse", "--verify", "--quiet", f"refs/heads/{name}"], top)
    if exists.returncode == 0:
        raise _refused(
            FailureCode.PRECONDITION_FAILED,
            f"branch {name!r} already exists; freeze never moves an existing branch",
            hint="name a new branch with --branch, or delete the old one",
        )
    head = _git(["rev-parse", "--verify", "--quiet", "HEAD"], top)
    if head.returncode != 0:
        raise _refused(
            FailureCode.PRECONDITION_FAILED,
            "HEAD names no commit yet, so there is nothing to commit the run onto",
            hint="make a first commit, or freeze with --no-commit",
        )


def _commit(top: Path, prefix: str, name: str, candidate: FrozenCandidate, message: str) -> str:
    with tempfile.TemporaryDirectory(prefix="patchsmith-freeze-") as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        steps: list[tuple[list[str], bytes | None]] = [
            (["read-tree", "HEAD"], None),
            (
                [
                    "apply",
                    "--cached",
                    "--whitespace=nowarn",
                    *([f"--directory={prefix}"] if prefix else []),
                    "-",
                ],
                candidate.diff_bytes,
            ),
        ]
        for args, stdin in steps:
            done = _git(args, top, stdin=stdin, env=env)
            if done.returncode != 0:
                raise _refused(
                    FailureCode.PRECONDITION_FAILED,
                    "the run's change does not apply to HEAD's files: " + _stderr(done),
                    hint="the run started from changes that are not committed; commit them "
                    "first, or freeze with --no-commit to write the diff only",
                )
        tree = _git(["write-tree"], top, env=env)
        if tree.returncode != 0:  # pragma: no cover - git wrote the index it now reads
            raise _refused(FailureCode.IO_ERROR, "git write-tree failed: " + _stderr(tree))
        made = _git(
            ["commit-tree", tree.stdout.decode().strip(), "-p", "HEAD", "-F", "-"],
            top,
            stdin=message.encode("utf-8"),
        )
        if made.returncode != 0:
            raise _refused(
                FailureCode.IO_ERROR,
                "git commit-tree failed: " + _stderr(made),
                hint="set user.name and user.email in git's config",
            )
        sha = made.stdout.decode().strip()
        # The empty old value makes git refuse to move a branch that appeared meanwhile.
        ref = _git(["update-ref", "-m", "patchsmith freeze", f"refs/heads/{name}", sha, ""], top)
        if ref.returncode != 0:
            raise _refused(
                FailureCode.PRECONDITION_FAILED,
                f"branch {name!r} could not be created: " + _stderr(ref),
            )
    return sha


def _stderr(done: subprocess.CompletedProcess[bytes]) -> str:
    text = done.stderr.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else f"exit {done.returncode}"


def _message(run_id: str, applied: list[AttemptRecord]) -> str:
    objectives: list[str] = []
    for record in applied:
        objective = _objective(record.proposal_json)
        if objective and objective not in objectives:
            objectives.append(objective)
    title = objectives[0].splitlines()[0] if objectives else f"Run {run_id}"
    body = "\n".join(f"- {o}" for o in objectives[1:])
    attempts = "\n".join(f"  {r.id} {r.kind.value} {r.proposal_id}" for r in applied)
    parts = [title[:72], body, f"patchsmith run {run_id}, attempts:\n{attempts}"]
    return "\n\n".join(p for p in parts if p) + "\n"


def _objective(proposal_json: str | None) -> str | None:
    if not proposal_json:
        return None
    try:
        data = json.loads(proposal_json)
    except ValueError:
        return None
    objective = data.get("objective") if isinstance(data, dict) else None
    return objective.strip() if isinstance(objective, str) and objective.strip() else None
