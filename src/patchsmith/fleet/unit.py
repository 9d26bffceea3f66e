"""The unit of work: (repository@ref, change@version, policy) → `RepoResult`.

`run_unit` does one repository in the current process: a clean checkout in a fresh
folder, the recipe or proposal applied through the normal transaction and guards,
verification when asked, the folder removed. It depends on nothing but its arguments
and the repository's content, so every executor gets the same result for the same unit.

`run_batch` is what executors call: it hands units to a child process
(`python -m patchsmith.fleet.worker`, kept for the next batches of the same thread) and
reads one result line per unit, so that a repository that hangs is killed at its
timeout (with every process it started) and one that crashes its interpreter costs
only itself; the next unit gets a fresh child.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import ChangeKind, ChangeSpec, policy_from_text
from patchsmith.fleet.checkout import checkout
from patchsmith.fleet.lifeline import PARENT_ENV
from patchsmith.fleet.repos import RepoSpec
from patchsmith.fleet.result import FleetStatus, RepoResult
from patchsmith.model.evidence import Verdict
from patchsmith.runtime.statedir import StateDirUnsafe, ensure_subdir

__all__ = [
    "DEFAULT_TIMEOUT",
    "WorkUnit",
    "WorkerProcess",
    "close_workers",
    "interrupt_workers",
    "run_batch",
    "run_unit",
]

CHECKOUT_MARKER = ".patchsmith-fleet-checkout"
"""Written in every checkout folder a worker makes: the resume sweep removes only those."""

DEFAULT_TIMEOUT = 600.0
"""Seconds one repository may take, checkout and verification included."""


@dataclass(frozen=True)
class WorkUnit:
    """One repository and everything needed to change it; plain data, picklable."""

    repo: RepoSpec
    change: ChangeSpec
    workdir: str
    """The folder under which the checkout is made (and removed after)."""
    timeout: float = DEFAULT_TIMEOUT
    keep_checkout: bool = False
    """Keep the checkout folder when the repository ends `changed` (others are removed)."""
    trust: bool = False
    """`--trust`: the repositories may run their programs (with `--verify`) in this run."""

    def to_json(self) -> dict[str, object]:
        return {
            "repo": self.repo.to_json(),
            "change": self.change.to_json(),
            "workdir": self.workdir,
            "timeout": self.timeout,
            "keep_checkout": self.keep_checkout,
            "trust": self.trust,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> WorkUnit:
        repo = data["repo"]
        change = data["change"]
        assert isinstance(repo, dict) and isinstance(change, dict)
        ref = repo.get("ref")
        timeout = data.get("timeout", DEFAULT_TIMEOUT)
        return cls(
            RepoSpec(str(repo["key"]), str(repo["source"]), str(ref) if ref else None),
            ChangeSpec.from_json(change),
            str(data["workdir"]),
            float(timeout) if isinstance(timeout, int | float) else DEFAULT_TIMEOUT,
            bool(data.get("keep_checkout", False)),
            data.get("trust") is True,
        )


def folder_prefix(key: str) -> str:
    """The start of the name of every work folder made for the repository `key`."""
    import hashlib

    return "repo-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16] + "-"


def run_unit(unit: WorkUnit) -> RepoResult:
    """Check out, change and verify one repository; never raises for a bad repository."""
    started = time.perf_counter()
    base = Path(unit.workdir)
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        ensure_subdir(base)  # never a checkout through a linked work/
        holder = Path(tempfile.mkdtemp(prefix=folder_prefix(unit.repo.key), dir=base))
    except OSError as exc:
        return RepoResult.failed(unit.repo.key, _unusable_workdir(unit, exc))
    root = holder / "checkout"
    keep = False
    try:
        (holder / CHECKOUT_MARKER).write_bytes(b"")
        commit = checkout(unit.repo.source, unit.repo.ref, root)
        if isinstance(commit, PatchFailure):
            return RepoResult.failed(unit.repo.key, commit, seconds=time.perf_counter() - started)
        result = _change(unit, root, commit)
        # `--keep-checkouts` keeps the changed ones only: the rest hold nothing to look at
        keep = unit.keep_checkout and result.status is FleetStatus.CHANGED
        return RepoResult(
            result.key,
            result.status,
            commit=commit,
            diff=result.diff,
            files=result.files,
            errors=result.errors,
            report=result.report,
            verification=result.verification,
            seconds=time.perf_counter() - started,
        )
    finally:
        if not keep:
            shutil.rmtree(holder, ignore_errors=True)


def _unusable_workdir(unit: WorkUnit, exc: OSError) -> PatchFailure:
    if isinstance(exc, StateDirUnsafe):
        return PatchFailure(
            FailureCode.STATE_DIR_UNSAFE,
            f"refusing to use {exc.filename}: {exc.reason}",
            file=unit.repo.key,
            hint="the run's work/ folder must be a real folder, not a link",
            rule="checkout",
        )
    return PatchFailure(
        FailureCode.IO_ERROR,
        f"cannot make a checkout folder under {unit.workdir}: {exc}",
        file=unit.repo.key,
        hint="check the run folder is writable",
        rule="checkout",
    )


def _change(unit: WorkUnit, root: Path, commit: str) -> RepoResult:
    key = unit.repo.key
    policy = None
    if unit.change.policy_text is not None:
        policy = policy_from_text(unit.change.policy_text)
        if isinstance(policy, PatchFailure):
            return RepoResult(key, FleetStatus.REFUSED, errors=(policy,))
    if unit.change.kind is ChangeKind.RECIPE:
        result = _recipe(unit, root, policy)
    else:
        result = _proposal(unit, root, policy)
    if result.status is not FleetStatus.CHANGED or not unit.change.verify_profiles:
        return result
    return _verified(unit, root, result)


def _recipe(unit: WorkUnit, root: Path, policy: object) -> RepoResult:
    from patchsmith.codemod import run_recipe
    from patchsmith.codemod.recipe import parse_recipe
    from patchsmith.codemod.report import RecipeStatus
    from patchsmith.policy import Policy

    recipe = parse_recipe(unit.change.text, source=unit.change.name)
    if isinstance(recipe, PatchFailure):
        return RepoResult(unit.repo.key, FleetStatus.REFUSED, errors=(recipe,))
    # handed over as its file (beside the checkout, not in it): a `Recipe` object would
    # be dumped back to YAML on every run
    source = root.parent / "recipe.yaml"
    source.write_text(unit.change.text, encoding="utf-8")
    rules = policy if isinstance(policy, Policy) else None
    report = run_recipe(
        source,
        root,
        apply=True,
        record=False,
        policy=rules,
        verify=bool(unit.change.verify_profiles),
        trust=_trust(unit, root),
    )
    data = report.to_json()
    data.pop("seconds", None)
    if report.status is RecipeStatus.APPLIED:
        status = FleetStatus.CHANGED
    elif report.status is RecipeStatus.NO_CHANGE:
        status = FleetStatus.NO_OP
    else:
        status = _refusal(report.errors)
    files = tuple(f.path for f in report.files) if status is FleetStatus.CHANGED else ()
    diff = report.diff if status is FleetStatus.CHANGED else ""
    return RepoResult(
        unit.repo.key, status, diff=diff, files=files, errors=report.errors, report=data
    )


def _proposal(unit: WorkUnit, root: Path, policy: object) -> RepoResult:
    from patchsmith.attempt.propose import propose
    from patchsmith.model.report import ApplyStatus
    from patchsmith.policy import Policy

    rules = policy if isinstance(policy, Policy) else None
    report = propose(
        json.loads(unit.change.text),
        root,
        record=False,
        policy=rules,
        verify=bool(unit.change.verify_profiles),
        trust=_trust(unit, root),
    )
    data = report.to_json()
    if report.status is ApplyStatus.APPLIED and report.diff:
        status = FleetStatus.CHANGED
    elif report.status in (ApplyStatus.APPLIED, ApplyStatus.ALREADY_APPLIED) or (
        report.errors and all(e.code is FailureCode.NO_CHANGE for e in report.errors)
    ):
        status = FleetStatus.NO_OP
    else:
        status = _refusal(report.errors)
    changed = status is FleetStatus.CHANGED
    files = tuple(f.path for f in report.files) if changed else ()
    return RepoResult(
        unit.repo.key,
        status,
        diff=report.diff if changed else "",
        files=files,
        errors=report.errors,
        report=data,
    )


def _trust(unit: WorkUnit, root: Path) -> bool | None:
    """True with `--trust`, or when the checkout's configuration is that of a local
    repository the user trusted; else `None` (the trust store decides, which knows no
    fresh checkout unless `$PATCHSMITH_TRUSTED_PATHS` covers it)."""
    from patchsmith.runtime.trust import trusted_as

    if unit.trust:
        return True
    if "://" in unit.repo.source or not Path(unit.repo.source).is_dir():
        return None
    return True if trusted_as(root, unit.repo.source) else None


_VERIFICATION_CHECKS = ("compiles", "tests_pass", "parses")


def _refusal(errors: Sequence[PatchFailure]) -> FleetStatus:
    """`verification_failed` when verification refused the change, `error` when it could
    not run (an untrusted repository: retried after trust), `verification_error` when it
    ran but could not establish anything, `skipped` when no profile here could decide a
    check the recipe asks for, else `refused`."""
    if any(e.code is FailureCode.UNTRUSTED_REPOSITORY for e in errors):
        return FleetStatus.ERROR
    if any(e.code is FailureCode.VERIFICATION_ERROR for e in errors):
        return FleetStatus.VERIFICATION_ERROR
    checks = [
        e.rule or ""
        for e in errors
        if e.code is FailureCode.POSTCONDITION_FAILED
        and (e.rule or "").startswith(_VERIFICATION_CHECKS)
    ]
    if any(e.code is FailureCode.VERIFICATION_FAILED for e in errors) or any(
        ":" not in rule for rule in checks
    ):
        return FleetStatus.VERIFICATION_FAILED
    if any(rule.endswith(":error") for rule in checks):
        return FleetStatus.VERIFICATION_ERROR
    if checks and len(checks) == len(errors):
        return FleetStatus.SKIPPED  # every refusal is a check no profile here decides
    return FleetStatus.REFUSED


def _verified(unit: WorkUnit, root: Path, result: RepoResult) -> RepoResult:
    """Run the verification profiles on the changed checkout against its clean commit."""
    from patchsmith.verify.workflow import verify

    report = verify(root, list(unit.change.verify_profiles), base="HEAD", trust=_trust(unit, root))
    data = report.to_json()
    introduced = [
        PatchFailure(
            FailureCode.VERIFICATION_FAILED,
            f"profile {outcome.profile!r}: the change introduced failures",
            rule=outcome.profile,
            hint="`patchsmith verify` in a checkout with the diff applied lists them",
        )
        for outcome in report.outcomes
        if outcome.verdict is Verdict.FAILED
    ]
    unestablished = [
        PatchFailure(
            FailureCode.VERIFICATION_ERROR,
            f"profile {outcome.profile!r} could not establish anything: {outcome.reason}",
            rule=outcome.profile,
            hint="make the profile runnable in this repository (docs/verify.md)",
        )
        for outcome in report.outcomes
        if outcome.verdict is Verdict.ERROR
    ]
    errors = (*result.errors, *report.errors, *introduced, *unestablished)
    missing = any(e.code is FailureCode.UNKNOWN_PROFILE for e in report.errors)
    if introduced:
        status = FleetStatus.VERIFICATION_FAILED
    elif missing and not unestablished:
        # the repository has no such profile: nothing ran, nothing is claimed
        status = FleetStatus.SKIPPED
    elif report.status is Verdict.ERROR:
        # nothing was proven: never counted as changed
        status = FleetStatus.VERIFICATION_ERROR
    else:
        status = result.status
    if any(e.code is FailureCode.UNTRUSTED_REPOSITORY for e in report.errors):
        status = FleetStatus.ERROR
    return RepoResult(
        result.key,
        status,
        diff=result.diff,
        files=result.files,
        errors=errors,
        report=result.report,
        verification=data,
    )


# -- isolation: units in a child process ---------------------------------------------------------

UNITS_PER_CHILD = 200
"""A child process is replaced after this many units, so a slow leak cannot grow without end."""


class WorkerProcess:
    """One child process (`python -m patchsmith.fleet.worker`) that runs units one at a time.

    Started on first use and kept for the next units, so the interpreter and patchsmith's
    imports are paid once per child, not once per repository. A unit that outlives its
    timeout gets the child killed (with every process it started: it leads its own
    process group) and a TIMED_OUT result; a child that dies without answering gives
    WORKER_FAILED with the end of its stderr. Either way the next unit gets a new child.
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._reader: _LineReader | None = None
        self._served = 0

    def _start(self) -> subprocess.Popen[bytes]:
        # kept open for the child's life, read only if it dies; closed by close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, "-m", "patchsmith.fleet.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", PARENT_ENV: str(os.getpid())},
        )
        assert process.stdout is not None
        self._process = process
        self._reader = _LineReader(process.stdout)
        self._served = 0
        return process

    def run(self, unit: WorkUnit) -> RepoResult:
        """Run `unit` in the child; one result, never raises."""
        process = self._process if self._process is not None else self._start()
        assert process.stdin is not None and self._reader is not None
        started = time.monotonic()
        try:
            process.stdin.write((json.dumps(unit.to_json()) + "\n").encode("utf-8"))
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._crashed(unit)
        line = self._reader.line(deadline=started + unit.timeout)
        if line is None:
            self.close(kill=True)
            return _timed_out(unit)
        if not line:
            return self._crashed(unit)
        self._served += 1
        if self._served >= UNITS_PER_CHILD:
            self.close()
        return RepoResult.from_json(json.loads(line))

    def _crashed(self, unit: WorkUnit) -> RepoResult:
        assert self._process is not None and self._stderr is not None
        self._process.wait()
        code = self._process.returncode
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace")[-2000:].strip()
        self.close()
        failure = PatchFailure(
            FailureCode.WORKER_FAILED,
            f"{unit.repo.key}: the worker process ended (exit status {code}) without a result",
            file=unit.repo.key,
            hint="the end of its error output is in `excerpt`; the other repositories went on",
            excerpt=tail or None,
            rule="worker",
        )
        return RepoResult.failed(unit.repo.key, failure)

    def interrupt(self) -> None:
        """Kill the child's process group now, from any thread; its owner sees WORKER_FAILED."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    def close(self, *, kill: bool = False) -> None:
        """Stop the child: by closing its input (it ends after its unit), or `kill` it now.

        Whatever it started and left behind in its process group is killed too.
        """
        process, self._process = self._process, None
        if process is not None:
            assert process.stdin is not None and process.stdout is not None
            with contextlib.suppress(OSError):
                process.stdin.close()
            if not kill:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)
            if process.poll() is None or _group_alive(process.pid):
                _kill(process)
            process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self._reader = None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the child and everything it started (it leads its own process group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


_local = threading.local()
_all_workers: list[WorkerProcess] = []
_all_lock = threading.Lock()


def _thread_worker() -> WorkerProcess:
    """This thread's child process, kept between batches (in the driver or a Dask worker)."""
    worker: WorkerProcess | None = getattr(_local, "worker", None)
    if worker is None:
        worker = WorkerProcess()
        _local.worker = worker
    with _all_lock:
        if worker not in _all_workers:
            _all_workers.append(worker)
    return worker


def interrupt_workers() -> None:
    """Kill every worker child of this process now (a run being aborted)."""
    with _all_lock:
        workers = list(_all_workers)
    for worker in workers:
        worker.interrupt()


def close_workers() -> None:
    """Stop every child process this process started (`atexit` does it too)."""
    with _all_lock:
        workers = list(_all_workers)
        _all_workers.clear()
    for worker in workers:
        worker.close()


atexit.register(close_workers)


def run_batch(units: Sequence[WorkUnit]) -> list[RepoResult]:
    """Run `units` in order in this thread's child process; one result per unit, never raises.

    What every executor calls: a pure function of its units (each result depends only
    on its unit and the repository's content), whatever thread or machine runs it.
    """
    worker = _thread_worker()
    return [worker.run(unit) for unit in units]


class _LineReader:
    """Lines from a pipe, with a deadline for each (a selector, so a hung child cannot block)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buffer = b""
        self._eof = False

    def line(self, *, deadline: float) -> str | None:
        """The next line; "" at end of stream; None when the deadline passed first."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer and not self._eof:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(timeout=left):
                    return None
                chunk = os.read(self._fd, 1 << 16)
                if chunk:
                    self._buffer += chunk
                else:
                    self._eof = True
        if b"\n" not in self._buffer:
            return ""
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8")


def _timed_out(unit: WorkUnit) -> RepoResult:
    failure = PatchFailure(
        FailureCode.TIMED_OUT,
        f"{unit.repo.key}: still running after {unit.timeout:g}s; killed",
        file=unit.repo.key,
        hint="raise --timeout, or look at what hangs in this repository (a hook, a huge tree)",
        rule="timeout",
    )
    return RepoResult.failed(unit.repo.key, failure, seconds=unit.timeout)
