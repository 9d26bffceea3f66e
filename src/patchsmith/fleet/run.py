"""`run_fleet`: one change over many repositories, resumable, each result committed as it lands."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import shutil
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import ChangeKind, ChangeSpec, resolve_change
from patchsmith.fleet.executors import ExecutorKind, default_workers, make_executor
from patchsmith.fleet.lifeline import stop_on_signals
from patchsmith.fleet.repos import RepoSpec, parse_repos, read_repos_file
from patchsmith.fleet.result import FleetStatus, RepoResult
from patchsmith.fleet.store import STORE_FILE, FleetStore
from patchsmith.fleet.summary import FleetSummary
from patchsmith.fleet.unit import CHECKOUT_MARKER, DEFAULT_TIMEOUT, WorkUnit, folder_prefix
from patchsmith.fleet.waves import StopRule, parse_stop_rule, wave
from patchsmith.runtime.statedir import StateDirUnsafe, check_entry, ensure_subdir

__all__ = [
    "DEFAULT_RUNS_DIR",
    "FleetProgress",
    "default_run_id",
    "fleet_summary",
    "open_run",
    "resume_fleet",
    "run_fleet",
]

DEFAULT_RUNS_DIR = "fleet-runs"
"""Where runs live, relative to the current folder: `fleet-runs/RUN_ID/fleet.db`."""

FleetProgress = Callable[[RepoResult | None, int, int], None]
"""Called with (the result that just landed or None at the start, done, total)."""

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
WORK_DIR = "work"
LOCK_FILE = ".lock"


def default_run_id(change: ChangeSpec, repos: Sequence[RepoSpec]) -> str:
    """The same change over the same repositories gets the same id: a rerun resumes it."""
    digest = hashlib.sha256(change.version.encode())
    for repo in repos:
        digest.update(b"\0" + repo.key.encode("utf-8"))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", change.name).strip("-.")[:60] or change.kind.value
    return f"{name}-{digest.hexdigest()[:10]}"


def _usage(message: str, hint: str) -> PatchFailure:
    return PatchFailure(FailureCode.FLEET_RUN_CONFLICT, message, hint=hint, rule="fleet_run")


def _batches(
    units: Sequence[WorkUnit], size: int, halted: Callable[[], bool] = lambda: False
) -> Iterator[list[WorkUnit]]:
    """Batches of `size` units, lazily: none is handed out once `halted()` says stop."""
    for start in range(0, len(units), size):
        if halted():
            return
        yield list(units[start : start + size])


def unsafe_run_folder(exc: StateDirUnsafe) -> PatchFailure:
    """STATE_DIR_UNSAFE for a run folder entry that is a link, the wrong kind or foreign."""
    return PatchFailure(
        FailureCode.STATE_DIR_UNSAFE,
        f"refusing to use {exc.filename}: {exc.reason}",
        hint="a fleet run folder, its work/, .lock and fleet.db are never used through a "
        "link; remove it (nothing was read, written or deleted through it) or pass "
        "another --run-id",
        rule="fleet_run",
    )


def prepare_run_dir(run_dir: Path) -> None:
    """Make (or check) `run_dir` and its `work/`, refusing any link in them.

    Raises `StateDirUnsafe` for a run folder, `work/`, `.lock` or `fleet.db` (and its
    WAL files) that is a symlink, the wrong kind of file or another user's; `OSError`
    when the disk fails. The runs folder above is the caller's choice and may be a link.
    """
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    ensure_subdir(run_dir)
    ensure_subdir(run_dir / WORK_DIR)
    for name in (LOCK_FILE, STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm"):
        check_entry(run_dir / name, directory=False)


class _RunLock:
    """An exclusive lock on the run folder: two processes never run one run at once.

    An advisory `flock`, so the kernel releases it when its holder dies, even by SIGKILL.
    The lock file is never opened through a link (`StateDirUnsafe`).
    """

    def __init__(self, run_dir: Path) -> None:
        self._path = run_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> bool:
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StateDirUnsafe(self._path, "it is a symlink") from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def run_fleet(
    change: str | os.PathLike[str] | ChangeSpec,
    repos: str | os.PathLike[str] | Iterable[str | RepoSpec],
    *,
    run_id: str | None = None,
    runs_dir: str | os.PathLike[str] = DEFAULT_RUNS_DIR,
    executor: ExecutorKind | str = ExecutorKind.LOCAL,
    workers: int | None = None,
    scheduler: str | None = None,
    batch: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    retry_errors: bool = False,
    keep_checkouts: bool = False,
    kind: ChangeKind | str | None = None,
    recipe_dirs: Iterable[str | os.PathLike[str]] = (),
    policy: str | os.PathLike[str] | None = None,
    verify: Iterable[str] = (),
    progress: FleetProgress | None = None,
    trust: bool = False,
    sample: int | None = None,
    seed: int = 0,
    stop_when: str | None = None,
) -> FleetSummary:
    """Run one recipe or proposal over many repositories; returns the run's summary.

    `change` is a recipe id or file, or a proposal file (or a resolved `ChangeSpec`);
    `repos` a repositories file, or the lines of one (local paths or git URLs, each
    optionally `@ref`). Each repository is checked out clean under the run folder
    (`runs_dir/run_id`), changed through the normal transaction, guards and
    verification (`verify` names profiles to run after the change), and its result
    committed to the run's store as soon as it lands. A rerun with the same run id
    (the default id is derived from the change and the repositories) skips the
    repositories already finished (`retry_errors` runs the `error` ones again).

    Waves: `sample` runs only that many of the unfinished repositories (chosen by a
    hash of their names seeded with `seed`) and stops; `stop_when` (`refused>10%`,
    `error>=3`) stops handing out repositories once it holds over the finished ones (a
    share is judged once `sample` of them, or one, have finished). The summary's
    `stopped` says why a run stopped early; a rerun of the same id goes on.

    Never raises for bad input: a change that cannot be resolved, an unreadable
    repositories file, a run id in use by another change or another process, or an
    executor that cannot start are the summary's `errors`; a repository's own failure
    is its result's status.

    The repositories' own programs (recipe postconditions, a proposal's verification
    plan, the `verify` profiles) run only when `verify` names profiles, and only in a
    repository that is trusted: `trust` true for this run, else a local repository
    trusted with `patchsmith trust` whose checkout has the same configuration.
    """
    started = time.perf_counter()
    spec = (
        change
        if isinstance(change, ChangeSpec)
        else resolve_change(
            change,
            kind=ChangeKind(kind) if kind is not None else None,
            recipe_dirs=recipe_dirs,
            policy=policy,
            verify_profiles=verify,
        )
    )
    if isinstance(spec, PatchFailure):
        return _failed(run_id or "", runs_dir, spec)
    listed = _repo_list(repos)
    if isinstance(listed, PatchFailure):
        return _failed(run_id or "", runs_dir, listed, spec)
    run_id = run_id or default_run_id(spec, listed)
    if not _RUN_ID.fullmatch(run_id):
        return _failed(
            run_id,
            runs_dir,
            _usage(
                f"not a run id: {run_id!r}",
                "letters, digits, '.', '_' and '-', starting with a letter or digit",
            ),
            spec,
        )
    try:
        kind_of = ExecutorKind(executor)
    except ValueError:
        return _failed(
            run_id, runs_dir, _usage(f"no executor {executor!r}", "use local or dask"), spec
        )
    rule: StopRule | None = None
    if stop_when is not None:
        parsed = parse_stop_rule(stop_when, minimum=sample or 1)
        if isinstance(parsed, PatchFailure):
            return _failed(run_id, runs_dir, parsed, spec)
        rule = parsed
    if sample is not None and sample < 1:
        return _failed(
            run_id,
            runs_dir,
            PatchFailure(
                FailureCode.FLEET_RUN_CONFLICT,
                f"--sample must be positive, not {sample}",
                hint="e.g. --sample 20: a first wave of 20 repositories",
                rule="sample",
            ),
            spec,
        )
    if batch < 1 or timeout <= 0 or (workers is not None and workers < 1):
        return _failed(
            run_id,
            runs_dir,
            _usage("--batch, --workers and --timeout must be positive", "e.g. --batch 4"),
            spec,
        )
    run_dir = Path(runs_dir) / run_id
    lock = _RunLock(run_dir)
    try:
        prepare_run_dir(run_dir)
        locked = lock.acquire()
    except StateDirUnsafe as exc:
        return _failed(run_id, runs_dir, unsafe_run_folder(exc), spec)
    except OSError as exc:
        return _failed(
            run_id,
            runs_dir,
            PatchFailure(
                FailureCode.IO_ERROR,
                f"cannot prepare the run folder {os.fspath(run_dir)!r}: {exc}",
                hint="check that the runs folder is writable",
                rule="fleet_run",
            ),
            spec,
        )
    if not locked:
        return _failed(
            run_id,
            runs_dir,
            _usage(
                f"run {run_id!r} is in progress in another process",
                "wait for it to finish, or pass another --run-id",
            ),
            spec,
        )
    try:
        return _run(
            spec,
            listed,
            run_id,
            run_dir,
            kind_of,
            workers or default_workers(),
            scheduler,
            batch,
            timeout,
            retry_errors,
            keep_checkouts,
            progress,
            started,
            trust,
            (sample, seed, rule),
        )
    finally:
        lock.release()


def _run(
    spec: ChangeSpec,
    listed: list[RepoSpec],
    run_id: str,
    run_dir: Path,
    kind: ExecutorKind,
    workers: int,
    scheduler: str | None,
    batch: int,
    timeout: float,
    retry_errors: bool,
    keep_checkouts: bool,
    progress: FleetProgress | None,
    started: float,
    trust: bool,
    waves: tuple[int | None, int, StopRule | None],
) -> FleetSummary:
    sample, seed, rule = waves
    store = FleetStore.open(run_dir)
    if isinstance(store, PatchFailure):
        return _failed(run_id, run_dir.parent, store, spec)
    with store:
        try:
            conflict = store.begin(run_id, spec, listed)
            finished = store.finished(retry_errors=retry_errors)
        except STORE_DAMAGE as exc:
            return _failed(run_id, run_dir.parent, damaged_store(store.path, exc), spec)
        if conflict is not None:
            return _failed(run_id, run_dir.parent, conflict, spec)
        todo = [r for r in listed if r.key not in finished]
        skipped = len(listed) - len(todo)
        workdir = os.fspath((run_dir / WORK_DIR).absolute())
        try:
            _sweep(Path(workdir), finished)
        except StateDirUnsafe as exc:
            return _failed(run_id, run_dir.parent, unsafe_run_folder(exc), spec)
        stopped = ""
        if rule is not None and todo:
            landed_counts = checked_counts(store)
            stopped = rule.crossed(landed_counts, sum(landed_counts.values())) or ""
            if stopped:
                todo = []
        if sample is not None and len(todo) > sample:
            todo = wave(todo, sample, seed)
            stopped = f"--sample {sample}: the first wave is done"
        units = [WorkUnit(r, spec, workdir, timeout, keep_checkouts, trust) for r in todo]
        errors: tuple[PatchFailure, ...] = ()
        halt: list[str] = []
        name = kind.value
        used = workers
        if progress is not None:
            progress(None, skipped, len(listed))
        if units:
            with stop_on_signals():
                chosen = make_executor(kind, workers=workers, scheduler=scheduler)
                if isinstance(chosen, PatchFailure):
                    errors = (chosen,)
                else:
                    used = chosen.workers
                    session = store.start_session(name, used)
                    done = skipped
                    landed = 0
                    try:
                        batches = _batches(units, batch, lambda: bool(halt))
                        for results in chosen.run(batches):
                            for result in results:
                                store.record(result, name)
                                done += 1
                                landed += 1
                                if progress is not None:
                                    progress(result, done, len(listed))
                                if rule is not None and not halt:
                                    counts = checked_counts(store)
                                    crossed = rule.crossed(counts, sum(counts.values()))
                                    if crossed:
                                        halt.append(crossed)
                    except BaseException:
                        # Ctrl-C or a failing callback: what landed is committed; stop the rest
                        chosen.close(abort=True)
                        raise
                    else:
                        chosen.close()
                    finally:
                        store.end_session(session, landed)
        summary = checked_summary(store, run_dir)
    if isinstance(summary, PatchFailure):
        return _failed(run_id, run_dir.parent, summary, spec)
    if halt:
        stopped = halt[0]
    if summary.complete:
        stopped = ""
    return FleetSummary(
        summary.run_id,
        summary.run_dir,
        summary.change_kind,
        summary.change_name,
        summary.change_version,
        summary.total,
        summary.results,
        skipped=skipped,
        seconds=time.perf_counter() - started,
        executor=name,
        workers=used,
        errors=errors,
        stopped=stopped,
    )


def checked_counts(store: FleetStore) -> dict[str, int]:
    """Finished repositories per status, read from the store (no `pending`)."""
    counts = {status.value: 0 for status in FleetStatus}
    for status, count in store.status_counts().items():
        counts[status] = count
    return counts


def resume_fleet(
    run: str | os.PathLike[str],
    *,
    runs_dir: str | os.PathLike[str] = DEFAULT_RUNS_DIR,
    **options: object,
) -> FleetSummary:
    """Go on with `run` (a run id under `runs_dir`, a run folder or its `fleet.db`): its
    change and repositories are read from its store; `options` are `run_fleet`'s."""
    opened = open_run(run, runs_dir=runs_dir)
    if isinstance(opened, PatchFailure):
        return _failed("", runs_dir, opened)
    store, folder = opened
    with store:
        try:
            info = store.info()
            change = store.change()
            repos = store.repos()
        except STORE_DAMAGE as exc:
            return _failed("", runs_dir, damaged_store(store.path, exc))
    if info is None or change is None:
        return _failed(
            "",
            runs_dir,
            PatchFailure(
                FailureCode.FILE_NOT_FOUND,
                f"{os.fspath(run)!r} holds no started run",
                hint="start it with `patchsmith fleet run CHANGE --repos FILE`",
            ),
        )
    return run_fleet(change, repos, run_id=info.run_id, runs_dir=folder.parent, **options)  # type: ignore[arg-type]


def _sweep(workdir: Path, finished: set[str]) -> None:
    """Remove the work folders a killed run left behind (kept checkouts of finished ones stay).

    Only folders a worker made (named `repo-…`, holding its marker file) are removed,
    each a real directory opened without following a link, and `shutil.rmtree` never
    follows a link inside one. `StateDirUnsafe` when `work/` itself is a link.
    """
    try:
        fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise StateDirUnsafe(workdir, "it is a symlink or not a directory") from None
        raise
    try:
        keep = {folder_prefix(key) for key in finished}
        with os.scandir(fd) as entries:
            names = [
                e.name
                for e in entries
                if e.name.startswith("repo-") and e.is_dir(follow_symlinks=False)
            ]
        for name in names:
            if any(name.startswith(prefix) for prefix in keep):
                continue
            if _marked(fd, name):
                shutil.rmtree(name, ignore_errors=True, dir_fd=fd)
    finally:
        os.close(fd)


def _marked(work_fd: int, name: str) -> bool:
    """Whether folder `name` holds the marker a worker writes when it makes a checkout folder."""
    try:
        info = os.stat(f"{name}/{CHECKOUT_MARKER}", dir_fd=work_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode)


def _repo_list(
    repos: str | os.PathLike[str] | Iterable[str | RepoSpec],
) -> list[RepoSpec] | PatchFailure:
    if isinstance(repos, str | os.PathLike):
        return read_repos_file(repos)
    specs: list[RepoSpec] = []
    lines: list[str] = []
    for item in repos:
        if isinstance(item, RepoSpec):
            specs.append(item)
        else:
            lines.append(item)
    specs.extend(parse_repos("\n".join(lines), base=Path.cwd()))
    unique: dict[str, RepoSpec] = {}
    for spec in specs:
        unique.setdefault(spec.key, spec)
    return list(unique.values())


def _failed(
    run_id: str,
    runs_dir: str | os.PathLike[str],
    failure: PatchFailure,
    spec: ChangeSpec | None = None,
) -> FleetSummary:
    return FleetSummary(
        run_id,
        os.fspath(Path(runs_dir) / run_id) if run_id else os.fspath(runs_dir),
        spec.kind.value if spec else "",
        spec.name if spec else "",
        spec.version if spec else "",
        0,
        errors=(failure,),
    )


def open_run(
    run: str | os.PathLike[str], *, runs_dir: str | os.PathLike[str] = DEFAULT_RUNS_DIR
) -> tuple[FleetStore, Path] | PatchFailure:
    """The store of `run`: a run id under `runs_dir`, a run folder, or its `fleet.db`."""
    path = Path(run)
    candidates = [path.parent] if path.name == STORE_FILE else [path, Path(runs_dir) / path]
    if _RUN_ID.fullmatch(os.fspath(run)):
        candidates.reverse()  # a bare id names a run under runs_dir first
    for folder in candidates:
        if os.path.lexists(folder / STORE_FILE):
            store = FleetStore.open(folder, create=False)
            if isinstance(store, PatchFailure):
                return store
            return store, folder
    return PatchFailure(
        FailureCode.FILE_NOT_FOUND,
        f"no fleet run {os.fspath(run)!r} (looked in {', '.join(map(str, candidates))})",
        hint="name a run id under --runs-dir, a run folder, or its fleet.db",
    )


STORE_DAMAGE = (
    sqlite3.Error,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    AssertionError,
    RecursionError,
)
"""What reading a tampered or damaged fleet store can raise (a bad row, value or JSON)."""


def damaged_store(path: Path, exc: BaseException) -> PatchFailure:
    """The IO_ERROR for a fleet store whose rows cannot be read back."""
    return PatchFailure(
        FailureCode.IO_ERROR,
        f"the fleet store {os.fspath(path)} is damaged or was edited by hand: "
        f"{type(exc).__name__}: {exc}"[:500],
        file=os.fspath(path),
        hint="restore fleet.db from a copy, or start the run again under another --run-id",
        rule="fleet_store",
    )


def checked_summary(store: FleetStore, run_dir: Path) -> FleetSummary | PatchFailure:
    """`fleet_summary`, rendered once as text and JSON to prove every row reads back.

    A tampered or damaged store (a row that is not JSON, an unknown status, a value of
    the wrong type, a missing table) is an IO_ERROR naming the store, never a traceback.
    """
    try:
        summary = fleet_summary(store, run_dir)
        summary.to_text()
        summary.to_json()
    except STORE_DAMAGE as exc:
        return damaged_store(store.path, exc)
    return summary


def fleet_summary(store: FleetStore, run_dir: Path) -> FleetSummary:
    """The summary of the run in `store` as it stands."""
    info = store.info()
    results = tuple(store.results())
    total = len(store.repos())
    sessions = store.sessions()
    executor, workers = (sessions[-1][2], sessions[-1][3]) if sessions else ("", 0)
    if info is None:
        return FleetSummary("", os.fspath(run_dir), "", "", "", total, results)
    return FleetSummary(
        info.run_id,
        os.fspath(run_dir),
        info.change_kind,
        info.change_name,
        info.change_version,
        total,
        results,
        seconds=sum((ended or started) - started for started, ended, *_ in sessions),
        executor=executor,
        workers=workers,
    )
