"""Where batches of work units run: a local pool (the default) or a Dask cluster.

Both hand each batch to the same `run_batch`, which runs its units in a child process
with their timeouts, and both yield each batch's results as soon as it ends, in
whatever order batches finish. The driver commits them as they come.

`LocalExecutor` needs nothing beyond the standard library: threads, each waiting on
its batch's child process (the work itself is in the children). `DaskExecutor` uses
`distributed` (`pip install patchsmith[fleet]`), imported only when it is chosen: a
`LocalCluster` on 127.0.0.1 with N worker processes, or the scheduler at `--scheduler`
(whose workers must have patchsmith installed).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import os
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from typing import Any, Protocol

from patchsmith.errors import FailureCode, PatchFailure
from patchsmith.fleet.result import RepoResult
from patchsmith.fleet.unit import WorkUnit, close_workers, interrupt_workers, run_batch

__all__ = [
    "DaskExecutor",
    "Executor",
    "ExecutorKind",
    "LocalExecutor",
    "default_workers",
    "make_executor",
]


class ExecutorKind(StrEnum):
    LOCAL = "local"
    DASK = "dask"


def default_workers() -> int:
    """One worker per CPU this process may use (at least one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class Executor(Protocol):
    """Runs batches; yields each batch's results when it ends."""

    name: str
    workers: int

    def run(self, batches: Iterable[Sequence[WorkUnit]]) -> Iterator[list[RepoResult]]: ...

    def close(self, *, abort: bool = False) -> None:
        """Release the workers; with `abort`, stop the units in flight instead of waiting."""


def _submit_window(workers: int) -> int:
    # enough batches queued to keep every worker busy, few enough that a kill loses little
    return 2 * workers


class LocalExecutor:
    """Batches on a thread pool; each thread runs its batch's child process."""

    name = ExecutorKind.LOCAL.value

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="patchsmith-fleet"
        )

    def run(self, batches: Iterable[Sequence[WorkUnit]]) -> Iterator[list[RepoResult]]:
        queue = iter(batches)
        running: set[concurrent.futures.Future[list[RepoResult]]] = set()
        for batch in queue:
            running.add(self._pool.submit(run_batch, batch))
            if len(running) >= _submit_window(self.workers):
                break
        while running:
            done, running = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                yield future.result()
                more = next(queue, None)
                if more is not None:
                    running.add(self._pool.submit(run_batch, more))

    def close(self, *, abort: bool = False) -> None:
        if abort:
            interrupt_workers()  # the threads then see their children end, and return
        self._pool.shutdown(wait=True, cancel_futures=True)
        close_workers()


class DaskExecutor:
    """Batches as Dask tasks, on a `LocalCluster` or an existing scheduler."""

    name = ExecutorKind.DASK.value

    def __init__(self, client: Any, cluster: Any | None, workers: int) -> None:
        self._client = client
        self._cluster = cluster
        self.workers = workers

    @classmethod
    def start(
        cls, *, workers: int, scheduler: str | None = None, connect_timeout: float = 30.0
    ) -> DaskExecutor | PatchFailure:
        """Connect to `scheduler`, or start a LocalCluster of `workers` processes on 127.0.0.1."""
        try:
            # as `Any`: distributed is untyped, and optional
            distributed: Any = importlib.import_module("distributed")
        except ImportError:
            return PatchFailure(
                FailureCode.NOT_SUPPORTED_YET,
                "the dask executor needs the 'distributed' package",
                hint="pip install 'patchsmith[fleet]', or use --executor local",
                rule="executor",
            )
        try:
            if scheduler:
                client = distributed.Client(scheduler, timeout=f"{connect_timeout}s")
                found = len(client.scheduler_info().get("workers", {})) or workers
                return cls(client, None, found)
            cluster = distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=40,
            )
            return cls(distributed.Client(cluster), cluster, workers)
        except (OSError, TimeoutError) as exc:
            return PatchFailure(
                FailureCode.IO_ERROR,
                f"cannot reach the Dask scheduler {scheduler or 'LocalCluster'}: {exc}",
                hint="check --scheduler ADDR (tcp://HOST:PORT), or use --executor local",
                rule="executor",
            )

    def run(self, batches: Iterable[Sequence[WorkUnit]]) -> Iterator[list[RepoResult]]:
        as_completed: Any = importlib.import_module("distributed").as_completed
        queue = iter(batches)
        units: dict[str, list[WorkUnit]] = {}

        def submit(batch: Sequence[WorkUnit]) -> Any:
            # pure=False: a rerun must run again, never reuse a result Dask kept
            future = self._client.submit(run_batch, list(batch), pure=False)
            units[future.key] = list(batch)
            return future

        first = []
        for batch in queue:
            first.append(submit(batch))
            if len(first) >= _submit_window(self.workers):
                break
        running = as_completed(first)
        for future in running:
            try:
                results: list[RepoResult] = future.result()
            except Exception as exc:  # a worker lost with its task: the batch is answered
                results = _lost(units[future.key], exc)
            del units[future.key]
            future.release()
            yield results
            more = next(queue, None)
            if more is not None:
                running.add(submit(more))

    def close(self, *, abort: bool = False) -> None:
        # the cluster's workers end with it, and their children at the end of their input
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def _lost(units: list[WorkUnit], exc: Exception) -> list[RepoResult]:
    return [
        RepoResult.failed(
            unit.repo.key,
            PatchFailure(
                FailureCode.WORKER_FAILED,
                f"{unit.repo.key}: the Dask task failed: {type(exc).__name__}: {exc}",
                file=unit.repo.key,
                hint="the other repositories went on; rerun the same run id to retry it "
                "with --retry-errors",
                rule="worker",
            ),
        )
        for unit in units
    ]


def make_executor(
    kind: ExecutorKind, *, workers: int, scheduler: str | None = None
) -> Executor | PatchFailure:
    """The executor of `kind` with `workers` workers (a failure when it cannot start)."""
    if kind is ExecutorKind.DASK:
        return DaskExecutor.start(workers=workers, scheduler=scheduler)
    return LocalExecutor(workers)
