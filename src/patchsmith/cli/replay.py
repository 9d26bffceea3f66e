"""`patchsmith replay ID`: re-apply a recorded diff to a checkout and check the result is identical.

The record is read from the store at `--from DIR` (default: the `-C DIR`
workspace itself); its applied diff goes through the public `patchsmith.apply`,
then every touched file's sha256 is compared with the recorded after-hash. A
checkout whose files are neither as the attempt found them nor as it left them
has diverged: nothing is written there unless `--onto-diverged` asks for it.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, cast

from patchsmith.cli.log import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    add_store_options,
    fail,
    fail_refusal,
    load_attempt,
    write_json,
)
from patchsmith.errors import FailureCode, PatchFailure, PatchRefused, PatchsmithError
from patchsmith.runtime.paths import resolve_path
from patchsmith.store import AttemptRecord

__all__ = ["FileCheck", "ReplayStatus", "register", "run"]


class ReplayStatus(StrEnum):
    """How a replay ended."""

    IDENTICAL = "identical"
    """The diff applied and every touched file has its recorded after-hash."""
    DIFFERENT = "different"
    """The diff applied but some file's content differs from the recording."""
    ALREADY_APPLIED = "already_applied"
    """Every touched file already had its recorded after-hash; nothing was written."""
    DIVERGED = "diverged"
    """Some touched file is neither as the attempt found it nor as it left it; nothing was
    written (`--onto-diverged` applies the diff anyway)."""
    REFUSED = "refused"
    PARTIAL = "partial"


@dataclass(frozen=True)
class FileCheck:
    """One touched file: the recorded after-hash against the hash found now (`None`: absent)."""

    path: str
    expected_sha256: str | None
    actual_sha256: str | None

    @property
    def identical(self) -> bool:
        return self.expected_sha256 == self.actual_sha256

    def to_json(self) -> dict[str, object]:
        """The JSON object used in `--json` output."""
        return {
            "path": self.path,
            "expected_sha256": self.expected_sha256,
            "actual_sha256": self.actual_sha256,
            "identical": self.identical,
        }


class _ApplyReport(Protocol):
    @property
    def status(self) -> object: ...


class _Apply(Protocol):
    def __call__(self, model_output: str, root: Path, *, format: str) -> _ApplyReport: ...


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `replay` subcommand."""
    parser = subparsers.add_parser(
        "replay",
        help="re-apply a recorded diff to a checkout and check the result is identical",
        description=(
            "Re-apply the diff recorded as attempt ID to the workspace at -C DIR, then check "
            "that every touched file has exactly the content recorded."
        ),
    )
    parser.add_argument("id", metavar="ID", help="an attempt id, or a unique prefix of one")
    add_store_options(parser)
    parser.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        default=None,
        help="the workspace whose store holds the attempt (default: -C DIR)",
    )
    parser.add_argument(
        "--onto-diverged",
        action="store_true",
        help="apply the diff even when the checkout's files are not as the attempt found "
        "them (default: write nothing and report `diverged`)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay; 0 when identical, 1 when refused or different, 2 for a bad id or DIR."""
    as_json: bool = args.json
    root = Path(args.root)
    source = Path(args.source) if args.source is not None else root
    try:
        attempt = load_attempt(source, args.id)
        if not root.is_dir():
            raise PatchRefused(
                [
                    PatchFailure(
                        code=FailureCode.FILE_NOT_FOUND, message=f"{root} is not a directory"
                    )
                ]
            )
    except PatchRefused as refusal:
        return fail_refusal("replay", refusal, as_json=as_json)
    if not attempt.applied_diff:
        failure = PatchFailure(
            code=FailureCode.NO_CHANGE,
            message=f"attempt {attempt.id} ({attempt.status.value}) has no applied diff to replay",
            hint="replay an attempt whose status is applied",
        )
        return fail("replay", (failure,), as_json=as_json, exit_code=EXIT_USAGE)
    status, checks, failures = _replay(attempt, root, onto_diverged=args.onto_diverged)
    _report(attempt, status, checks, failures, as_json=as_json)
    ok = status in (ReplayStatus.IDENTICAL, ReplayStatus.ALREADY_APPLIED)
    return EXIT_OK if ok else EXIT_REFUSED


def _replay(
    attempt: AttemptRecord, root: Path, *, onto_diverged: bool = False
) -> tuple[ReplayStatus, tuple[FileCheck, ...], tuple[PatchFailure, ...]]:
    recorded = [f.path for f in attempt.files] + [f.old_path for f in attempt.files if f.old_path]
    # The store is data on disk like any other: its paths are checked before use.
    refusals = tuple(
        checked
        for path in recorded
        if isinstance(checked := resolve_path(root, path), PatchFailure)
    )
    if refusals:
        return ReplayStatus.REFUSED, (), refusals
    before = _check(attempt, root)
    if before and all(c.identical for c in before):
        return ReplayStatus.ALREADY_APPLIED, before, ()
    base = _check_base(attempt, root)
    if not onto_diverged and not all(c.identical for c in base):
        changed = ", ".join(c.path for c in base if not c.identical)
        failure = PatchFailure(
            code=FailureCode.STALE_FILE,
            message=f"the checkout has diverged from attempt {attempt.id}'s base: {changed}",
            hint="nothing was written; pass --onto-diverged to apply the recorded diff anyway",
        )
        return ReplayStatus.DIVERGED, base, (failure,)
    apply = _public_apply()
    if apply is None:
        failure = PatchFailure(
            code=FailureCode.NOT_SUPPORTED_YET,
            message="this patchsmith has no patchsmith.apply to replay with",
        )
        return ReplayStatus.REFUSED, (), (failure,)
    try:
        report = apply(attempt.applied_diff, root, format="udiff")
    except PatchsmithError as exc:
        failures = exc.failures if isinstance(exc, PatchRefused) else ()
        return ReplayStatus.REFUSED, (), failures
    applied = str(getattr(report.status, "value", report.status))
    if applied != "applied":
        errors = tuple(e for e in getattr(report, "errors", ()) if isinstance(e, PatchFailure))
        status = ReplayStatus.PARTIAL if applied == "partial" else ReplayStatus.REFUSED
        return status, (), errors
    after = _check(attempt, root)
    identical = all(c.identical for c in after)
    return (ReplayStatus.IDENTICAL if identical else ReplayStatus.DIFFERENT), after, ()


def _public_apply() -> _Apply | None:
    # Looked up at call time: the API lives in the package façade, which must
    # not import the CLI (and may not define `apply` in every build).
    import patchsmith

    return cast("_Apply | None", getattr(patchsmith, "apply", None))


def _check(attempt: AttemptRecord, root: Path) -> tuple[FileCheck, ...]:
    checks = [FileCheck(f.path, f.after_sha256, _hash_file(root / f.path)) for f in attempt.files]
    # A move must also have emptied its source path.
    checks += [
        FileCheck(f.old_path, None, _hash_file(root / f.old_path))
        for f in attempt.files
        if f.old_path
    ]
    return tuple(checks)


def _check_base(attempt: AttemptRecord, root: Path) -> tuple[FileCheck, ...]:
    """Each touched file against the hash the attempt found (a created file: absent)."""
    checks = [
        FileCheck(f.old_path or f.path, f.before_sha256, _hash_file(root / (f.old_path or f.path)))
        for f in attempt.files
    ]
    # A move's target (and a created file) must not exist yet.
    checks += [
        FileCheck(f.path, None, _hash_file(root / f.path)) for f in attempt.files if f.old_path
    ]
    return tuple(checks)


def _hash_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        # Absent or unreadable: either way it is not the recorded content.
        return None


def _report(
    attempt: AttemptRecord,
    status: ReplayStatus,
    checks: tuple[FileCheck, ...],
    failures: tuple[PatchFailure, ...],
    *,
    as_json: bool,
) -> None:
    if as_json:
        write_json(
            {
                "status": status.value,
                "attempt_id": attempt.id,
                "identical": status in (ReplayStatus.IDENTICAL, ReplayStatus.ALREADY_APPLIED),
                "files": [c.to_json() for c in checks],
                "errors": [f.to_json() for f in failures],
            }
        )
        return
    sys.stdout.write(f"replay of {attempt.id}: {status.value}\n")
    for check in checks:
        mark = "same" if check.identical else "DIFFERS"
        sys.stdout.write(f"  {mark:<7}  {check.path}\n")
    for failure in failures:
        where = f"{failure.file}: " if failure.file else ""
        sys.stdout.write(f"  {failure.code.value}  {where}{failure.message}\n")
