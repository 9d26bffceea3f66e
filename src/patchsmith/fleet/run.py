"""`run_fleet`: one change over many repositories, resumable, each result committed as it lands."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.change import ChangeKind, ChangeSpec, resolve_change
from patchsmith.fleet.executors import ExecutorKind, default_workers, make_executor
from patchsmith.fleet.repos import RepoSpec, parse_repos, read_repos_file
from patchsmith.fleet.result import RepoResult
from patchsmith.fleet.store import FleetStore
from patchsmith.fleet.summary import FleetSummary
from patchsmith.fleet.unit import DEFAULT_TIMEOUT, WorkUnit, folder_prefix

__all__ = [
    "DEFAULT_RUNS_DIR",
    "FleetProgress",
    "default_run_id",
    "fleet_summary",
    "open_run",
    "run_fleet",
]

DEFAULT_RUNS_DIR = "fleet-runs"
"""Where runs live, relative to the current folder: `fleet-runs/RUN_ID/fleet.db`."""

FleetProgress = Callable[[RepoResult | None, int, int], None]
"""Called with (the result that just landed or None at the start, done, total)."""

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def default_run_id(change: ChangeSpec, repos: Sequence[RepoSpec]) -> str:
    """The same change over the same repositories gets the same id: a rerun resumes it."""
    digest = hashlib.sha256(change.version.encode())
    for repo in repos:
        digest.update(b"\0" + repo.key.encode("utf-8"))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", change.name).strip("-.")[:60] or change.kind.value
    return f"{name}-{digest.hexdigest()[:10]}"


def _usage(message: str, hint: str) -> PatchFailure:
    return PatchFailure(FailureCode.FLEET_RUN_CONFLICT, message, hint=hint, rule="fleet_run")


def _batches(units: Sequence[WorkUnit], size: int) -> Iterator[list[WorkUnit]]:
    for start in range(0, len(units), size):
        yield list(units[start : start + size])


class _RunLock:
    """An exclusive lock on the run folder: two processes never run one run at once.

    An advisory `flock`, so the kernel releases it when its holder dies, even by SIGKILL.
    """

    def __init__(self, run_dir: Path) -> None:
        self._path = run_dir / ".lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
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
    if batch < 1 or timeout <= 0 or (workers is not None and workers < 1):
        return _failed(
            run_id,
            runs_dir,
            _usage("--batch, --workers and --timeout must be positive", "e.g. --batch 4"),
            spec,
        )
    run_dir = Path(runs_dir) / run_id
    lock = _RunLock(run_dir)
    if not lock.acquire():
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
) -> FleetSummary:
    store = FleetStore.open(run_dir)
    if isinstance(store, PatchFailure):
        return _failed(run_id, run_dir.parent, store, spec)
    with store:
        conflict = store.begin(run_id, spec, listed)
        if conflict is not None:
            return _failed(run_id, run_dir.parent, conflict, spec)
        finished = store.finished(retry_errors=retry_errors)
        todo = [r for r in listed if r.key not in finished]
        skipped = len(listed) - len(todo)
        workdir = os.fspath((run_dir / "work").absolute())
        _sweep(Path(workdir), finished)
        units = [WorkUnit(r, spec, workdir, timeout, keep_checkouts, trust) for r in todo]
        errors: tuple[PatchFailure, ...] = ()
        name = kind.value
        used = workers
        if progress is not None:
            progress(None, skipped, len(listed))
        if units:
            chosen = make_executor(kind, workers=workers, scheduler=scheduler)
            if isinstance(chosen, PatchFailure):
                errors = (chosen,)
            else:
                used = chosen.workers
                session = store.start_session(name, used)
                done = skipped
                landed = 0
                try:
                    for results in chosen.run(_batches(units, batch)):
                        for result in results:
                            store.record(result, name)
                            done += 1
                            landed += 1
                            if progress is not None:
                                progress(result, done, len(listed))
                except BaseException:
                    # Ctrl-C or a failing callback: what landed is committed; stop the rest
                    chosen.close(abort=True)
                    raise
                else:
                    chosen.close()
                finally:
                    store.end_session(session, landed)
        summary = fleet_summary(store, run_dir)
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
    )


def _sweep(workdir: Path, finished: set[str]) -> None:
    """Remove the work folders a killed run left behind (kept checkouts of finished ones stay)."""
    if not workdir.is_dir():
        return
    keep = {folder_prefix(key) for key in finished}
    for folder in workdir.iterdir():
        if not any(folder.name.startswith(prefix) for prefix in keep):
            shutil.rmtree(folder, ignore_errors=True)


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
    candidates = [path.parent] if path.name == "fleet.db" else [path, Path(runs_dir) / path]
    if _RUN_ID.fullmatch(os.fspath(run)):
        candidates.reverse()  # a bare id names a run under runs_dir first
    for folder in candidates:
        if (folder / "fleet.db").is_file():
            store = FleetStore.open(folder, create=False)
            if isinstance(store, PatchFailure):
                return store
            return store, folder
    return PatchFailure(
        FailureCode.FILE_NOT_FOUND,
        f"no fleet run {os.fspath(run)!r} (looked in {', '.join(map(str, candidates))})",
        hint="name a run id under --runs-dir, a run folder, or its fleet.db",
    )


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
