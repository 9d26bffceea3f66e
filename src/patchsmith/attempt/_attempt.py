"""One attempt on a workspace, from staged changes to its audit record.

`apply`, `propose` and `write_file` stage changes their own way; from there on
they share this: guards (and a proposal's postconditions) on the staged changes,
then the commit, then one record in the store. Imported lazily by `patchsmith.attempt.api`,
so `import patchsmith` loads neither the guards nor SQLite.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from patchsmith.attempt.withheld import forbidden_patterns
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused
from patchsmith.formats.script import Action, EditScript
from patchsmith.guards import DecisionStatus, GuardContext, GuardDecision, run_guards
from patchsmith.model.origin import TEXT_REPLY, CallOrigin
from patchsmith.model.report import ApplyReport, ApplyStatus, FileReport
from patchsmith.policy import Policy, default_policy, load_policy
from patchsmith.runtime.atomic import read_regular
from patchsmith.runtime.change import FileChange
from patchsmith.runtime.paths import STATE_DIR_NAME
from patchsmith.runtime.transaction import Transaction
from patchsmith.runtime.workspace import Workspace
from patchsmith.store import (
    DB_FILE_NAME,
    AttemptKind,
    AttemptRecord,
    AttemptStatus,
    FileRecord,
    Store,
)
from patchsmith.store import GuardDecision as StoredDecision

if TYPE_CHECKING:
    # Conditions are a proposal's: loaded (with the proposal's models) only when one has some.
    from patchsmith.attempt.conditions import ConditionResult
    from patchsmith.model.evidence import Evidence
    from patchsmith.runtime.intake import StagePlan

__all__ = [
    "ADHOC_RUN_ID",
    "Attempt",
    "PostCheck",
    "Verdict",
    "Verifier",
    "applied_before",
    "head_commit",
    "normalise_sha256",
    "not_ready",
    "open_workspace",
    "outside_policy_file",
    "policy_or_fallback",
    "resolve_policy",
    "review_and_commit",
    "should_record",
    "unsupported_modes",
]

ADHOC_RUN_ID = "adhoc"
"""The run id of attempts made outside a proposal run (`apply`, `write_file`)."""

GIT_TIMEOUT_SECONDS = 10.0

PostCheck = Callable[[Sequence[FileChange]], Sequence["ConditionResult"]]
"""Checks a proposal's postconditions on the staged changes."""


class Verdict(NamedTuple):
    """What verifying the staged changes found (run only when every guard passed).

    `postconditions` replace the `not_checked` COMPILES / TESTS_PASS results;
    `failures` refuse the change unless `keep` (the proposal's `keep_on_failure`).
    """

    postconditions: tuple[ConditionResult, ...] = ()
    failures: tuple[PatchFailure, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    keep: bool = False
    notes: tuple[str, ...] = ()


Verifier = Callable[[Sequence[FileChange]], Verdict]
"""Runs a proposal's verification plan on the staged changes (never on the workspace)."""

_STORED_STATUS = {
    ApplyStatus.APPLIED: AttemptStatus.APPLIED,
    ApplyStatus.REFUSED: AttemptStatus.REFUSED,
    ApplyStatus.PARTIAL: AttemptStatus.PARTIAL,
    ApplyStatus.ALREADY_APPLIED: AttemptStatus.ALREADY_APPLIED,
}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def resolve_policy(
    root: Path, policy: Policy | None, *, allow_policy_edit: bool = False
) -> Policy | PatchFailure:
    """`policy` when given, else the workspace's own (INVALID_POLICY when unreadable).

    `allow_policy_edit` switches the `policy_files` guard off for this one call.
    """
    rules = policy if policy is not None else load_policy(root)
    if allow_policy_edit and isinstance(rules, Policy):
        rules = replace(rules, guards=replace(rules.guards, policy_files=False))
    return rules


def policy_or_fallback(
    root: Path, policy: Policy | None, *, allow_policy_edit: bool = False
) -> tuple[Policy | PatchFailure, PatchFailure | None]:
    """The rules to judge a change by, and the workspace's INVALID_POLICY if it has one.

    When the workspace's own policy file cannot be read, a change to that file alone
    may still go through (docs/decisions/0025): it is judged by the default policy,
    whose `policy_files` guard refuses it when it would change the rules themselves
    (unless `allow_policy_edit`). The caller stages the change under these rules and
    then asks `outside_policy_file` whether the INVALID_POLICY refuses it after all.
    """
    rules = resolve_policy(root, policy, allow_policy_edit=allow_policy_edit)
    if isinstance(rules, Policy) or rules.code is not FailureCode.INVALID_POLICY:
        return rules, None
    fallback = resolve_policy(root, default_policy(), allow_policy_edit=allow_policy_edit)
    return fallback, rules


def outside_policy_file(unreadable: PatchFailure, paths: Sequence[str]) -> bool:
    """True when `unreadable` (the workspace's INVALID_POLICY) refuses a change to `paths`:
    any change but one to the unreadable policy file alone."""
    return not paths or any(path != unreadable.file for path in paths)


def open_workspace(root: str | os.PathLike[str], *, check: bool) -> Workspace | ApplyReport:
    """The workspace at `root`, or the refusal to give when `root` is not a directory."""
    try:
        # A dry run never restores files from a leftover journal (see `Workspace`).
        return Workspace(root, recover=not check)
    except ValueError as exc:
        failure = PatchFailure(
            FailureCode.FILE_NOT_FOUND, str(exc), hint="Pass an existing directory."
        )
        return ApplyReport(ApplyStatus.REFUSED, errors=(failure,), check=check)


def not_ready(workspace: Workspace, rules: Policy | PatchFailure) -> tuple[PatchFailure, ...]:
    """Why nothing can be committed at all: an unreadable policy, an unusable state
    directory, or a leftover journal that was quarantined or (dry run) not rolled back."""
    if isinstance(rules, PatchFailure):
        return (rules,)
    return workspace.blocking_failures


# git's modes for a symlink and a submodule: a patch that makes one is refused, not
# written as a regular file holding the link target.
_SPECIAL_MODES = {"120000": "a symlink", "160000": "a submodule"}


def unsupported_modes(script: EditScript) -> tuple[PatchFailure, ...]:
    """NOT_SUPPORTED_YET for each edit that would make a symlink or a submodule."""
    return tuple(
        PatchFailure(
            FailureCode.NOT_SUPPORTED_YET,
            f"{edit.new_path or edit.path}: mode {edit.new_mode} would make "
            f"{_SPECIAL_MODES[edit.new_mode]}; patchsmith writes regular files only",
            file=edit.new_path or edit.path,
            hint="create links and submodules with git itself; send only regular files",
        )
        for edit in script.edits
        if edit.new_mode in _SPECIAL_MODES
    )


def applied_before(workspace: Workspace, proposal_id: str, script: EditScript) -> str | None:
    """The id of an applied attempt of `proposal_id` whose files are still as it left them.

    `apply` re-sent with the same reply answers `already_applied` through this, as a
    proposal does. A mode line must also still hold (the store records content only).
    Nothing recorded, or an unreadable store, vouches for nothing.
    """
    state_dir = workspace.real_root / STATE_DIR_NAME
    if not _modes_hold(workspace, script):
        return None

    def current(path: str) -> str | None:
        try:
            # Plain `os` reads; a file that is no longer a regular one holds nothing applied.
            raw, _ = read_regular(workspace.disk_path(path), follow_symlinks=True)
        except OSError:
            return None
        return hashlib.sha256(raw).hexdigest()

    try:
        # The same connection then records the attempt (see `Store.shared`). A kept one
        # vouches that the database file is there; else nothing is made to look.
        opened = Store.kept(state_dir)
        if opened is None:
            if not (state_dir / DB_FILE_NAME).is_file():
                return None
            opened = Store.shared(state_dir)
        with opened as store:
            found = store.find_still_applied(proposal_id, current)
    except PatchRefused:
        return None
    return found.id if found is not None else None


def _modes_hold(workspace: Workspace, script: EditScript) -> bool:
    for edit in script.edits:
        if edit.new_mode is None or edit.action is Action.DELETE:
            continue
        target = workspace.resolve(edit.new_path or edit.path)
        if isinstance(target, PatchFailure):
            return False
        try:
            executable = bool(workspace.disk_path(target).stat().st_mode & 0o100)
        except OSError:
            return False
        if executable != edit.new_mode.endswith("755"):
            return False
    return True


def should_record(record: bool | None, rules: Policy | PatchFailure) -> bool:
    """`record` when given, else the policy's `record` (on when the policy is unreadable)."""
    if record is not None:
        return record
    return rules.record if isinstance(rules, Policy) else True


def normalise_sha256(value: str) -> str:
    """A hex sha256 as `read_file` prints it: lower case, no `sha256:` prefix."""
    return value.strip().lower().removeprefix("sha256:")


def head_commit(root: Path) -> str | None:
    """The commit `HEAD` names when `root` is in a git repository, else `None`.

    A plain repository's HEAD is read from its files (every apply records its base
    commit, and starting git each time would cost more than the rest of the apply);
    anything unusual (a worktree, a submodule, a missing ref) asks git itself.
    """
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    found = _read_head(git_dir)
    return found if found is not None else _ask_git(root)


_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _git_dir(root: Path) -> Path | None:
    for folder in (root, *root.parents):
        candidate = folder / ".git"
        try:
            info = os.stat(candidate)  # one look: a directory, something else, or nothing
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(info.st_mode):
            return candidate
        return Path()  # a worktree or submodule link: let git resolve it
    return None


def _read_head(git_dir: Path) -> str | None:
    if git_dir == Path():
        return None
    try:
        head = _git_file(git_dir / "HEAD")
        if head is None:
            return None
        head = head.strip()
        if _SHA.fullmatch(head):
            return head
        if not head.startswith("ref: "):
            return None
        ref = head[5:].strip()
        loose = _git_file(git_dir / ref)
        if loose is not None:
            value = loose.strip()
            return value if _SHA.fullmatch(value) else None
        packed = _git_file(git_dir / "packed-refs")
        if packed is not None:
            for line in packed.splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _SHA.fullmatch(sha):
                    return sha
    except OSError:
        return None
    return None


# What `Path.is_file()` answers False for: nothing there, or not a regular file.
_NOT_A_FILE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EINVAL})


def _git_file(path: Path) -> str | None:
    """The text of the regular file `path` (links followed), None when there is none;
    `OSError` when it is there but cannot be read. Plain `os` reads: the buffered layer
    adds a terminal check, two seeks and a `stat` to each."""
    try:
        raw, _ = read_regular(path, follow_symlinks=True)
    except OSError as exc:
        if exc.errno in _NOT_A_FILE:
            return None
        raise
    return raw.decode("utf-8")


def _ask_git(root: Path) -> str | None:
    import subprocess  # a plain repository's HEAD is read from its files, without git

    from patchsmith.runtime.gitcmd import git_argv

    try:
        done = subprocess.run(
            git_argv("rev-parse", "--verify", "--quiet", "HEAD"),
            cwd=root,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    head = done.stdout.strip()
    return head if done.returncode == 0 and head else None


@dataclass(eq=False, repr=False)  # working state, never compared or shown: only __init__ is built
class Attempt:
    """Who attempts what, and whether to keep a record of it; `finish` writes the record."""

    state_root: Path | None
    """The workspace's real root; `None` when there is no workspace to record in."""
    kind: AttemptKind
    record: bool
    proposal_id: str
    run_id: str = ADHOC_RUN_ID
    attempt_no: int = 1
    input_text: str = ""
    proposal_json: str | None = None
    base_commit: str | None = None
    created_at: str = field(default_factory=_now)
    forbidden: tuple[str, ...] = ()
    """The policy's forbidden patterns: a refusal shows nothing of those files."""
    origin: CallOrigin = TEXT_REPLY
    """The kind of call the change came in: the report's hints are worded for it."""

    def finish(
        self, report: ApplyReport, changes: Sequence[FileChange] = (), staged_diff: str = ""
    ) -> ApplyReport:
        """`report`, settled, with the id of its new audit record (or, if the store fails,
        an IO_ERROR). Settling makes its counts and hints say what was really written."""
        from patchsmith.attempt.withheld import withhold_forbidden

        report = withhold_forbidden(report, self.forbidden, self.state_root)
        report = replace(
            report,
            errors=_with_current_hashes(report.errors, self.state_root, self.forbidden),
            origin=self.origin,
        )
        report = report.settled()
        if not self.record or self.state_root is None:
            return report
        if any(f.code is FailureCode.STATE_DIR_UNSAFE for f in report.errors):
            return report  # already said: there is nowhere safe to record it
        status = _STORED_STATUS[report.status]
        if report.check and status is not AttemptStatus.REFUSED:
            status = AttemptStatus.CHECKED
        written = status in (AttemptStatus.APPLIED, AttemptStatus.PARTIAL)
        hidden = _withheld_paths(changes, self.forbidden, self.state_root)
        if hidden:
            # A forbidden file is never written; its staged lines and hashes stay out of
            # the record too (the store is read back by `show`, `log` and the MCP tools).
            from patchsmith.runtime.gitdiff import render_git_diff

            staged_diff = render_git_diff(c for c in changes if c.path not in hidden)
        kept = _Inputs(self.input_text, staged_diff, self.proposal_json, report.errors)
        if any(f.code is FailureCode.SECRET_ADDED for f in report.errors):
            kept = kept.masked(changes)
        rec = AttemptRecord(
            run_id=self.run_id,
            proposal_id=self.proposal_id,
            attempt_no=self.attempt_no,
            kind=self.kind,
            status=status,
            created_at=self.created_at,
            finished_at=_now(),
            base_commit=self.base_commit,
            input_text=_storable(kept.input_text),
            staged_diff=_storable(kept.staged_diff),
            applied_diff=_storable(report.diff) if written else "",
            files=tuple(_file_record(c, hidden) for c in changes),
            failures=tuple(_storable_failure(f) for f in kept.failures),
            decisions=tuple(_stored(d) for d in report.decisions),
            proposal_json=kept.proposal_json,
            evidence=report.evidence,
            dry_run=report.check,
        )
        try:
            with Store.shared(self.state_root / STATE_DIR_NAME) as store:
                attempt_id = store.record_attempt(rec)
        except PatchRefused as refusal:
            # The workspace already is as the report says; only its record is missing.
            unrecorded = tuple(
                replace(
                    f,
                    message=f"the attempt was not recorded: {f.message}",
                    hint="the report above still holds; pass record=False (--no-record) "
                    "to skip the audit store",
                )
                for f in refusal.failures
            )
            return replace(report, errors=(*report.errors, *unrecorded))
        return replace(report, attempt_id=attempt_id)


class _Inputs(NamedTuple):
    """What a record keeps of the attempt's inputs: the reply, staged diff, proposal, failures."""

    input_text: str
    staged_diff: str
    proposal_json: str | None
    failures: tuple[PatchFailure, ...]

    def masked(self, changes: Sequence[FileChange]) -> _Inputs:
        """The same with every credential the secret guard flags in `changes` masked.

        A change refused with SECRET_ADDED must not keep its credential in the store:
        the values the guard flagged are masked wherever they appear, and every line it
        would flag is masked as in an excerpt. The applied diff is never masked (only
        changes that passed the guards are in it, and `revert`/`replay` need it exact).
        """
        from patchsmith.runtime.excerpts import masked_json, masked_text
        from patchsmith.runtime.secrets import secret_values

        values = secret_values(changes)
        paths = ("", *dict.fromkeys(c.path for c in changes))
        return _Inputs(
            masked_text(self.input_text, paths, values),
            masked_text(self.staged_diff, paths, values),
            None if self.proposal_json is None else masked_json(self.proposal_json, paths, values),
            tuple(
                replace(
                    f,
                    message=masked_text(f.message, paths, values),
                    excerpt=None if f.excerpt is None else masked_text(f.excerpt, paths, values),
                )
                for f in self.failures
            ),
        )


# Failures whose `file` may name a place outside the workspace, or a forbidden file
# (whose hash would let a short secret be guessed offline): never read those.
_UNSAFE_PATH_CODES = {
    FailureCode.PATH_OUTSIDE_WORKSPACE,
    FailureCode.SYMLINK_ESCAPE,
    FailureCode.STATE_DIR_UNSAFE,
    FailureCode.FORBIDDEN_PATH,
}


def _withheld_paths(
    changes: Sequence[FileChange], forbidden: Sequence[str], root: Path | None
) -> frozenset[str]:
    """The changed paths whose content a record must not keep (forbidden files)."""
    if not forbidden or not changes:
        return frozenset()
    from patchsmith.attempt.withheld import is_withheld

    return frozenset(c.path for c in changes if is_withheld(forbidden, c.path, root))


def _file_record(change: FileChange, hidden: frozenset[str]) -> FileRecord:
    record = _storable_file(FileRecord.from_change(change))
    if change.path in hidden:
        return replace(record, before_sha256=None, after_sha256=None)
    return record


def _with_current_hashes(
    failures: Sequence[PatchFailure], root: Path | None, forbidden: Sequence[str] = ()
) -> tuple[PatchFailure, ...]:
    """Each failure that names a workspace file, with that file's sha256 as it is now.

    A retry made against exactly that version cannot race an edit it did not see. Only
    regular files inside the root are read; a failure that already carries a hash keeps it;
    a forbidden file's hash is never added.
    """
    if root is None:
        return tuple(failures)
    from patchsmith.attempt.withheld import is_withheld

    out = []
    for failure in failures:
        if (
            failure.current_sha256 is None
            and failure.file
            and failure.code not in _UNSAFE_PATH_CODES
            and not is_withheld(forbidden, failure.file, root)
        ):
            digest = _sha256_inside(root, failure.file)
            if digest is not None:
                failure = replace(failure, current_sha256=digest)
        out.append(failure)
    return tuple(out)


def _sha256_inside(root: Path, relative: str) -> str | None:
    try:
        path = (root / relative).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_file():
            return None
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, ValueError):
        return None


def _storable(text: str) -> str:
    # SQLite text is UTF-8; a Latin-1 file's diff or a surrogate-escaped input is not.
    if text.isascii():  # known without a pass over the text (CPython marks ASCII strings)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _storable_file(record: FileRecord) -> FileRecord:
    old_path = None if record.old_path is None else _storable(record.old_path)
    return replace(record, path=_storable(record.path), old_path=old_path)


def _storable_failure(failure: PatchFailure) -> PatchFailure:
    return replace(
        failure,
        message=_storable(failure.message),
        file=None if failure.file is None else _storable(failure.file),
        hint=None if failure.hint is None else _storable(failure.hint),
        excerpt=None if failure.excerpt is None else _storable(failure.excerpt),
    )


def _stored(decision: GuardDecision) -> StoredDecision:
    if decision.status is DecisionStatus.DISABLED:
        return StoredDecision(decision.name, decision.code, True, "disabled by the policy")
    detail = _storable("; ".join(f.message for f in decision.failures))
    return StoredDecision(
        decision.name, decision.code, decision.status is DecisionStatus.PASSED, detail
    )


def review_and_commit(
    attempt: Attempt,
    transaction: Transaction,
    ctx: GuardContext,
    template: ApplyReport,
    *,
    check: bool,
    postcheck: PostCheck | None = None,
    verifier: Verifier | None = None,
    expected_sha256: Mapping[str, str] | None = None,
    awaited: Callable[[], Sequence[PatchFailure]] | None = None,
) -> ApplyReport:
    """Guard the staged changes, commit them unless refused or `check`, and record the attempt.

    `template` carries the status to report on success (applied or partial), the
    files, and failures already found; `expected_sha256` (path to the hash a direct
    write expected) turns a commit-time STALE_FILE into one naming both hashes.
    `verifier` runs after the guards pass and before anything is written (also with
    `check`); its failures refuse the change unless its verdict says keep.
    `awaited` waits for a check left running while the guards ran (a recipe's
    idempotency re-run); its failures refuse the change, named before the guards'.
    """
    changes = transaction.changes
    staged_diff = transaction.diff()
    guards = run_guards(changes, ctx)
    post = tuple(postcheck(changes)) if postcheck is not None else ()
    refusals = guards.failures
    if awaited is not None:
        refusals = (*awaited(), *refusals)
    if post:
        from patchsmith.attempt.conditions import condition_failures

        refusals = (*refusals, *condition_failures(post))
    report = replace(
        template,
        decisions=guards.decisions,
        postconditions=post,
        check=check,
        notes=(*template.notes, *guards.notes),
    )
    if refusals:
        refused = replace(report, status=ApplyStatus.REFUSED, errors=(*report.errors, *refusals))
        return attempt.finish(refused, changes, staged_diff)
    if verifier is not None:
        verdict = verifier(changes)
        report = replace(
            report,
            postconditions=_merged(report.postconditions, verdict.postconditions),
            evidence=(*report.evidence, *verdict.evidence),
            notes=(*report.notes, *verdict.notes),
        )
        if verdict.failures and not verdict.keep:
            refused = replace(
                report, status=ApplyStatus.REFUSED, errors=(*report.errors, *verdict.failures)
            )
            return attempt.finish(refused, changes, staged_diff)
    if check:
        return attempt.finish(replace(report, diff=staged_diff), changes, staged_diff)
    failure = transaction.commit(leave_no_state=not attempt.record)
    if failure is not None:
        failure = _with_hashes(failure, expected_sha256 or {})
        refused = replace(report, status=ApplyStatus.REFUSED, errors=(*report.errors, failure))
        return attempt.finish(refused, changes, staged_diff)
    return attempt.finish(replace(report, diff=staged_diff), changes, staged_diff)


def _merged(
    checked: tuple[ConditionResult, ...], verified: tuple[ConditionResult, ...]
) -> tuple[ConditionResult, ...]:
    """`checked` with each result the verifier decided put in place of the one it replaces."""
    by_type = {result.type: result for result in verified}
    merged = tuple(by_type.pop(result.type, result) for result in checked)
    return (*merged, *by_type.values())


def _with_hashes(failure: PatchFailure, expected: Mapping[str, str]) -> PatchFailure:
    if failure.code is not FailureCode.STALE_FILE or failure.file is None:
        return failure
    if failure.file not in expected:
        return failure
    actual = failure.current_sha256 or "unknown (unreadable or binary)"
    return replace(
        failure,
        message=f"{failure.file} changed since it was read: expected sha256 "
        f"{expected[failure.file]}, actual {actual}",
        hint="read the file again (read_file) and redo the write against its new content",
    )


class Opened(NamedTuple):
    """A workspace opened for one attempt, the policy it is under, and the attempt itself
    (a tuple, so the callers unpack it in one line)."""

    workspace: Workspace
    rules: Policy
    unreadable: PatchFailure | None
    """The policy file that could not be read (the defaults stand in), if any."""
    attempt: Attempt


def open_attempt(
    root: str | os.PathLike[str],
    *,
    check: bool,
    policy: Policy | None,
    allow_policy_edit: bool,
    record: bool | None,
    kind: AttemptKind,
    proposal_id: str,
    input_text: str,
    with_base_commit: bool = False,
    origin: CallOrigin = TEXT_REPLY,
) -> Opened | ApplyReport:
    """The start `apply` and `write_file` share: open the workspace, read its policy, begin
    the attempt's record; a refusal (recorded) when the workspace or its policy is not ready.
    """
    workspace = open_workspace(root, check=check)
    if isinstance(workspace, ApplyReport):
        return workspace
    rules, unreadable = policy_or_fallback(
        workspace.root, policy, allow_policy_edit=allow_policy_edit
    )
    attempt = Attempt(
        state_root=workspace.real_root,
        kind=kind,
        record=should_record(record, rules),
        proposal_id=proposal_id,
        input_text=input_text,
        base_commit=head_commit(workspace.real_root) if with_base_commit else None,
        forbidden=forbidden_patterns(rules),
        origin=origin,
    )
    blocked = not_ready(workspace, rules)
    if blocked or isinstance(rules, PatchFailure):
        return attempt.finish(ApplyReport(ApplyStatus.REFUSED, errors=blocked, check=check))
    return Opened(workspace, rules, unreadable, attempt)


def file_reports(plan: StagePlan) -> tuple[FileReport, ...]:
    """Each staged file's outcome, as the report lists it."""
    return tuple(
        FileReport(
            f.path,
            f.action,
            f.hunks_applied,
            f.hunks_total,
            f.new_path,
            f.mode,
            placements=f.placements,
        )
        for f in plan.files
    )
